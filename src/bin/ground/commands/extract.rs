//! `ground extract`: local HTML (or PDF) to main text, without any network.
//!
//! Three ways in, one engine ([`ground::extract`]):
//! - `ground extract FILE...` prints the main text of each file (a blank line between
//!   files); a PDF (by its `%PDF-` start) is read with [`ground::pdf`], in a sandboxed
//!   worker process like a fetched one;
//! - `ground extract` with no file reads one page from stdin;
//! - `ground extract --input-dir D --output-dir O` writes `O/<stem>.txt` for every
//!   `D/*.html` (the shape of trafilatura's batch CLI, which is what the extraction
//!   scorer drives). If `D/urls.tsv` exists (`<id>\t<url>` lines), each page gets its
//!   URL as base URL. The summed in-process extraction time (file I/O excluded) is
//!   printed on stderr as `extract_seconds=<float>`.
//!
//! Output file names come only from input file stems, never from page content, so a
//! hostile page cannot choose where its text is written.

use std::collections::HashMap;
use std::fs;
use std::io::{self, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ground::extract::{self, Extracted};

use std::process::ExitCode;

use crate::cli::ExtractArgs;
use crate::output::code;

/// Why `ground extract` failed; each message names the cause and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ExtractCommandError {
    #[error("cannot read {}: {source}; check the path and its permissions", path.display())]
    ReadInput { path: PathBuf, source: io::Error },
    #[error("cannot read the page from stdin: {0}; pass a FILE argument instead")]
    ReadStdin(io::Error),
    #[error("cannot list {}: {source}; give an existing folder to --input-dir", path.display())]
    ReadDir { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}; check that --output-dir is writable", path.display())]
    WriteOutput { path: PathBuf, source: io::Error },
    #[error("cannot read {} as a PDF: {reason}{}", path.display(), hint.map(|h| format!("; {h}")).unwrap_or_default())]
    Pdf {
        path: PathBuf,
        reason: String,
        hint: Option<&'static str>,
    },
    #[error("cannot write to stdout: {0}")]
    WriteStdout(io::Error),
    #[error("--input-dir needs --output-dir (and the other way round); give both folders")]
    DirPairIncomplete,
    #[error("FILE arguments cannot be combined with --input-dir; use one or the other")]
    FilesWithInputDir,
    #[error("--url {url:?} is not an absolute URL ({reason}); give e.g. https://example.com/page")]
    InvalidUrl {
        url: String,
        reason: url::ParseError,
    },
}

/// Runs `ground extract`: exit 0, or 2 with the error on stderr.
pub fn run_command(args: ExtractArgs) -> ExitCode {
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            code(ground::error::exit::USAGE)
        }
    }
}

/// Runs `ground extract` (see the module docs for the three modes).
pub fn run(args: &ExtractArgs) -> Result<(), ExtractCommandError> {
    let base_url = match &args.url {
        Some(raw) => {
            Some(
                url::Url::parse(raw).map_err(|reason| ExtractCommandError::InvalidUrl {
                    url: raw.clone(),
                    reason,
                })?,
            )
        }
        None => None,
    };
    match (&args.input_dir, &args.output_dir) {
        (Some(input), Some(output)) => {
            if !args.files.is_empty() {
                return Err(ExtractCommandError::FilesWithInputDir);
            }
            let stats = extract_dir(input, output, base_url.as_ref())?;
            for (path, reason) in &stats.skipped {
                eprintln!(
                    "ground extract: skipped {}: {reason}",
                    ground::text::sanitize_line(&path.to_string_lossy())
                );
            }
            eprintln!("extract_seconds={:.6}", stats.extract_time.as_secs_f64());
            Ok(())
        }
        (None, None) => print_pages(&args.files, base_url.as_ref()),
        _ => Err(ExtractCommandError::DirPairIncomplete),
    }
}

/// What a batch run did: how many pages, how many bytes of HTML, and the time spent
/// inside the extractor (parse + extraction, no file I/O).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirStats {
    pub pages: usize,
    pub bytes: u64,
    pub extract_time: Duration,
    /// Inputs not extracted, each with the reason (a name that is not UTF-8, an
    /// output path that is a symbolic link).
    pub skipped: Vec<(PathBuf, String)>,
}

/// Batch mode: `input/*.html` -> `output/<stem>.txt`. Files are handled in name order.
pub fn extract_dir(
    input: &Path,
    output: &Path,
    fallback_url: Option<&url::Url>,
) -> Result<DirStats, ExtractCommandError> {
    let read_dir_err = |source| ExtractCommandError::ReadDir {
        path: input.to_path_buf(),
        source,
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
    fs::create_dir_all(output).map_err(|source| ExtractCommandError::WriteOutput {
        path: output.to_path_buf(),
        source,
    })?;

    let mut stats = DirStats::default();
    for page in pages {
        let Some(stem) = page.file_stem().and_then(|s| s.to_str()) else {
            stats
                .skipped
                .push((page.clone(), "its file name is not UTF-8".into()));
            continue;
        };
        let bytes = fs::read(&page).map_err(|source| ExtractCommandError::ReadInput {
            path: page.clone(),
            source,
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
        write_new(&target, text.as_bytes()).map_err(|source| ExtractCommandError::WriteOutput {
            path: target,
            source,
        })?;
    }
    Ok(stats)
}

/// Writes `target` without ever following a link at it: the text goes to a new file
/// beside it (created exclusively, so nothing already there is opened) and is then
/// renamed over `target`, which replaces a directory entry and never writes through
/// a symbolic link, even one created after the check above.
fn write_new(target: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = target.parent().unwrap_or(Path::new("."));
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    let written = file
        .write_all(bytes)
        .and_then(|()| fs::rename(&temp, target));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Reads `<id>\t<url>` lines; a missing or unreadable file, or a bad line, is skipped
/// (the URL is only a hint).
fn read_urls_tsv(path: &Path) -> HashMap<String, url::Url> {
    let Ok(text) = fs::read_to_string(path) else {
        return HashMap::new();
    };
    text.lines()
        .filter_map(|line| {
            let (id, raw) = line.split_once('\t')?;
            Some((id.trim().to_string(), url::Url::parse(raw.trim()).ok()?))
        })
        .collect()
}

/// File/stdin mode: prints each page's main text, a blank line between pages.
fn print_pages(files: &[PathBuf], base_url: Option<&url::Url>) -> Result<(), ExtractCommandError> {
    let mut texts = Vec::with_capacity(files.len().max(1));
    if files.is_empty() {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(ExtractCommandError::ReadStdin)?;
        texts.push(extract_file(bytes, Path::new("-"), base_url)?);
    }
    for path in files {
        let bytes = fs::read(path).map_err(|source| ExtractCommandError::ReadInput {
            path: path.clone(),
            source,
        })?;
        texts.push(extract_file(bytes, path, base_url)?);
    }
    let stdout = io::stdout();
    let to_terminal = stdout.is_terminal();
    let mut out = stdout.lock();
    for (i, extracted) in texts.iter().enumerate() {
        let mut block = String::new();
        if i > 0 {
            block.push('\n');
        }
        block.push_str(extracted);
        block.push('\n');
        if to_terminal {
            block = ground::text::sanitize_text(&block);
        }
        out.write_all(block.as_bytes())
            .map_err(ExtractCommandError::WriteStdout)?;
    }
    out.flush().map_err(ExtractCommandError::WriteStdout)
}

/// The main text of one file: a PDF through [`ground::pdf`] (in a sandboxed worker,
/// with its deadline; no text is said on stderr), anything else through
/// [`extract_bytes`].
fn extract_file(
    bytes: Vec<u8>,
    path: &Path,
    base_url: Option<&url::Url>,
) -> Result<String, ExtractCommandError> {
    if !ground::pdf::looks_like_pdf(&bytes) {
        return Ok(extract_bytes(&bytes, base_url).text);
    }
    if bytes.len() > ground::pdf::MAX_PDF_BYTES {
        return Err(ExtractCommandError::Pdf {
            path: path.to_path_buf(),
            reason: format!(
                "it is larger than {} MiB, the most read",
                ground::pdf::MAX_PDF_BYTES / 1024 / 1024
            ),
            hint: None,
        });
    }
    let doc = ground::pdf::Sandbox::from_env()
        .read_blocking(bytes)
        .map_err(|e| ExtractCommandError::Pdf {
            path: path.to_path_buf(),
            reason: e.to_string(),
            hint: e.hint(),
        })?;
    if doc.text.is_empty() {
        eprintln!(
            "warning: {} has no text layer ({} pages, no text: a scan or images only)",
            path.display(),
            doc.pages
        );
    }
    Ok(doc.text)
}

/// Decodes and extracts one page; plain text (no `<` before the first letter) is
/// passed through [`extract::extract_plain_text`].
fn extract_bytes(bytes: &[u8], base_url: Option<&url::Url>) -> Extracted {
    let text = extract::decode_body(bytes, None);
    if looks_like_html(&text) {
        extract::extract_html(&text, base_url)
    } else {
        extract::extract_plain_text(&text)
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_output_keeps_newline_and_tab_only() {
        let clean = ground::text::sanitize_text("a\u{1b}[31mb\tc\n\u{9b}d");
        assert_eq!(clean, "a[31mb\tc\nd");
    }

    #[test]
    fn plain_text_is_not_taken_for_html() {
        assert!(!looks_like_html("just some words"));
        assert!(looks_like_html("  <!DOCTYPE html><p>x"));
    }

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/extract")
            .join(name);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
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
    fn half_a_directory_pair_is_a_usage_error() {
        let args = ExtractArgs {
            input_dir: Some("in".into()),
            ..ExtractArgs::default()
        };
        let err = run(&args).unwrap_err();
        assert!(matches!(err, ExtractCommandError::DirPairIncomplete));
        assert_eq!(
            err.to_string(),
            "--input-dir needs --output-dir (and the other way round); give both folders"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let args = ExtractArgs {
            files: vec!["/nonexistent/page.html".into()],
            ..ExtractArgs::default()
        };
        let err = run(&args).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read /nonexistent/page.html: "),
            "{err}"
        );
        assert!(err.ends_with("check the path and its permissions"), "{err}");
    }

    #[test]
    fn bad_url_is_refused() {
        let args = ExtractArgs {
            url: Some("not a url".into()),
            ..ExtractArgs::default()
        };
        assert!(matches!(
            run(&args),
            Err(ExtractCommandError::InvalidUrl { .. })
        ));
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
