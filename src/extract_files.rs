//! `ground extract`'s work on local files, without any network: one HTML, text or PDF
//! file to its main text, and the batch of a folder (`--input-dir D --output-dir O`:
//! `O/<stem>.txt` for every `D/*.html`, the shape of trafilatura's batch CLI, which
//! is what the extraction scorer drives).
//!
//! It lives in the library, not in the binary, so that the file handling (reading
//! folders, writing the output folder without ever following a symbolic link, skipping
//! what cannot be named) is tested like the rest, and its failures are
//! [`Error`]s with their hints and exit code. The binary only parses the arguments and
//! prints.
//!
//! Output file names come only from input file stems, never from page content, so a
//! hostile page cannot choose where its text is written.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use url::Url;

use crate::error::Error;
use crate::extract::{self, Extracted};

/// The main text of one local file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileText {
    /// The main text (empty for a PDF without a text layer).
    pub text: String,
    /// For a PDF without a text layer (a scan, images only): its page count, so the
    /// caller can warn that nothing was read.
    pub textless_pdf_pages: Option<u32>,
}

/// Reads `path` and returns its main text ([`extract_bytes`]).
pub fn extract_path(path: &Path, base_url: Option<&Url>) -> Result<FileText, Error> {
    let bytes = fs::read(path).map_err(|e| Error::ReadFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    extract_bytes(bytes, path, base_url)
}

/// The main text of one file's `bytes` (`path` names it in errors, `-` for stdin): a
/// PDF (by its `%PDF-` start) through [`crate::pdf`], in a sandboxed worker process
/// with its deadline like a fetched one; anything else as HTML, or as plain text when it
/// does not look like HTML.
pub fn extract_bytes(
    bytes: Vec<u8>,
    path: &Path,
    base_url: Option<&Url>,
) -> Result<FileText, Error> {
    if !crate::pdf::looks_like_pdf(&bytes) {
        return Ok(FileText {
            text: extract_page(&bytes, base_url).text,
            textless_pdf_pages: None,
        });
    }
    if bytes.len() > crate::pdf::MAX_PDF_BYTES {
        return Err(Error::ReadPdf {
            path: path.to_path_buf(),
            reason: format!(
                "it is larger than {} MiB, the most read",
                crate::pdf::MAX_PDF_BYTES / 1024 / 1024
            ),
            hint: None,
        });
    }
    let doc = crate::pdf::Sandbox::from_env()
        .read_blocking(bytes)
        .map_err(|e| Error::ReadPdf {
            path: path.to_path_buf(),
            reason: e.to_string(),
            hint: e.hint(),
        })?;
    let textless_pdf_pages = doc.text.is_empty().then_some(doc.pages);
    Ok(FileText {
        text: doc.text,
        textless_pdf_pages,
    })
}

/// Decodes and extracts one page; plain text (no `<` before the first letter) is
/// passed through [`extract::extract_plain_text`].
fn extract_page(bytes: &[u8], base_url: Option<&Url>) -> Extracted {
    let text = extract::decode_body(bytes, None);
    if looks_like_html(&text) {
        extract::extract_html(&text, base_url)
    } else {
        extract::extract_plain_text(&text)
    }
}

/// Whether decoded text is HTML: it starts with a tag, or a common tag is near its
/// start.
fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(4096)
        .collect::<String>()
        .to_ascii_lowercase();
    head.trim_start().starts_with('<')
        || ["<html", "<body", "<p", "<div", "<!doctype", "<head"]
            .iter()
            .any(|t| head.contains(t))
}

/// What a batch run did: how many pages, how many bytes of HTML, and the time spent
/// inside the extractor (parse + extraction, no file I/O).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirStats {
    /// Pages extracted.
    pub pages: usize,
    /// Bytes of HTML read.
    pub bytes: u64,
    /// Time inside the extractor, file I/O excluded.
    pub extract_time: Duration,
    /// Inputs not extracted, each with the reason (a name that is not UTF-8, an
    /// output path that is a symbolic link).
    pub skipped: Vec<(PathBuf, String)>,
}

/// Batch mode: `input/*.html` -> `output/<stem>.txt`. Files are handled in name order.
/// If `input/urls.tsv` exists (`<id>\t<url>` lines), each page gets its URL as base
/// URL; the others get `fallback_url`.
pub fn extract_dir(
    input: &Path,
    output: &Path,
    fallback_url: Option<&Url>,
) -> Result<DirStats, Error> {
    let read_dir_err = |e: io::Error| Error::ReadDir {
        path: input.to_path_buf(),
        reason: e.to_string(),
    };
    let mut pages: Vec<PathBuf> = fs::read_dir(input)
        .map_err(read_dir_err)?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| {
            path.is_file()
                && path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                    e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")
                })
        })
        .collect();
    pages.sort();
    let urls = read_urls_tsv(&input.join("urls.tsv"));
    fs::create_dir_all(output).map_err(|e| Error::WriteFile {
        path: output.to_path_buf(),
        reason: e.to_string(),
    })?;

    let mut stats = DirStats::default();
    for page in pages {
        let Some(stem) = page.file_stem().and_then(|s| s.to_str()) else {
            stats
                .skipped
                .push((page.clone(), "its file name is not UTF-8".into()));
            continue;
        };
        let bytes = fs::read(&page).map_err(|e| Error::ReadFile {
            path: page.clone(),
            reason: e.to_string(),
        })?;
        let page_url = urls.get(stem).or(fallback_url);
        let started = Instant::now();
        let html = extract::decode_body(&bytes, None);
        let extracted = extract::extract_html(&html, page_url);
        stats.extract_time += started.elapsed();
        stats.pages += 1;
        stats.bytes += bytes.len() as u64;
        let target = output.join(format!("{stem}.txt"));
        if fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
            stats.skipped.push((
                page.clone(),
                format!(
                    "{} is a symbolic link; not written through",
                    target.display()
                ),
            ));
            continue;
        }
        let mut text = extracted.text;
        text.push('\n');
        // Never through a link at `target`: the text goes to a new file beside it
        // (created exclusively) that is renamed over it, replacing the entry.
        crate::files::write_atomically(&target, text.as_bytes()).map_err(|e| Error::WriteFile {
            path: target,
            reason: e.to_string(),
        })?;
    }
    Ok(stats)
}

/// Reads `<id>\t<url>` lines; a missing or unreadable file, or a bad line, is skipped
/// (the URL is only a hint).
fn read_urls_tsv(path: &Path) -> HashMap<String, Url> {
    let Ok(text) = fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let (id, raw) = line.split_once('\t')?;
            Some((id.trim().to_string(), Url::parse(raw.trim()).ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_not_taken_for_html() {
        assert!(!looks_like_html("just some words"));
        assert!(looks_like_html("  <!DOCTYPE html><p>x"));
    }

    fn fixture(name: &str) -> Vec<u8> {
        crate::testing::fixture(&format!("extract/{name}"))
    }

    #[test]
    fn input_dir_writes_one_txt_per_html_into_a_new_output_dir() {
        let input = tempfile::tempdir().unwrap();
        std::fs::write(input.path().join("a.html"), fixture("news-article.html")).unwrap();
        std::fs::write(input.path().join("b.html"), fixture("code-and-table.html")).unwrap();
        std::fs::write(input.path().join("notes.md"), "not a page").unwrap();
        std::fs::write(
            input.path().join("urls.tsv"),
            "a\thttps://example.com/a\nbad line\n",
        )
        .unwrap();
        let output = tempfile::tempdir().unwrap();
        let out_dir = output.path().join("nested/out");

        let stats = extract_dir(input.path(), &out_dir, None).unwrap();

        assert_eq!(stats.pages, 2);
        let mut names: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["a.txt", "b.txt"]);
        let a = std::fs::read_to_string(out_dir.join("a.txt")).unwrap();
        assert!(a.contains("The city council voted on Tuesday"), "{a}");
    }

    #[test]
    fn output_dir_never_writes_through_a_symlink_and_names_what_it_skips() {
        use std::os::unix::ffi::OsStrExt;
        let input = tempfile::tempdir().unwrap();
        std::fs::write(input.path().join("a.html"), fixture("news-article.html")).unwrap();
        std::fs::write(input.path().join("b.html"), fixture("news-article.html")).unwrap();
        let odd = std::ffi::OsStr::from_bytes(b"bad-\xff.html");
        std::fs::write(input.path().join(odd), fixture("news-article.html")).unwrap();
        let output = tempfile::tempdir().unwrap();
        let victim = output.path().join("victim.txt");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, output.path().join("a.txt")).unwrap();

        let stats = extract_dir(input.path(), output.path(), None).unwrap();

        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            std::fs::read_to_string(output.path().join("b.txt"))
                .unwrap()
                .contains("The city council voted on Tuesday")
        );
        let reasons: Vec<&str> = stats.skipped.iter().map(|(_, r)| r.as_str()).collect();
        assert_eq!(reasons.len(), 2, "{reasons:?}");
        assert!(
            reasons
                .iter()
                .any(|r| r.ends_with("is a symbolic link; not written through"))
        );
        assert!(reasons.contains(&"its file name is not UTF-8"));
        let leftovers = std::fs::read_dir(output.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
    }
}
