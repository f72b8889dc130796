//! What `ground index` reads, and how: a file's format from its name, its text (HTML
//! through ground's extractor, PDF through the sandboxed reader), and its title.
//!
//! A file is a document when its extension says Markdown, plain text,
//! reStructuredText, HTML or PDF, or when it has no extension (README, LICENSE);
//! anything else in a folder is passed over without a word (source code, data). A
//! file named on the command line is read as plain text whatever its extension.

use std::path::Path;

use crate::extract;

/// Largest document read, in bytes (a PDF: [`crate::pdf::MAX_PDF_BYTES`], the same).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A document's format, chosen by its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `.md`, `.markdown`, `.mdx`, ...: lines as written, `#` headings.
    Markdown,
    /// `.txt`, `.text`, no extension, or a file named on the command line.
    Text,
    /// `.rst`, `.rest`: lines as written, underlined titles.
    Rst,
    /// `.html`, `.htm`, `.xhtml`: main text through [`extract::extract_html`].
    Html,
    /// `.pdf`: text through the sandboxed reader ([`crate::pdf::Sandbox`]).
    Pdf,
}

impl Format {
    /// The format of `path` by its extension; `None` for a file that is not a
    /// document (read only when named on the command line).
    pub fn of(path: &Path) -> Option<Format> {
        let Some(ext) = path.extension() else {
            return Some(Format::Text);
        };
        let ext = ext.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" | "mdx" => Format::Markdown,
            "txt" | "text" => Format::Text,
            "rst" | "rest" => Format::Rst,
            "html" | "htm" | "xhtml" => Format::Html,
            "pdf" => Format::Pdf,
            _ => return None,
        })
    }
}

/// Why a file was read but not indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Bytes that are not text (a NUL in its first 8 KiB).
    Binary,
    /// No text at all (an empty file, a PDF without a text layer).
    Empty,
    /// The PDF reader refused it, or it could not be read; the reason.
    Failed(String),
}

/// A document's text as indexed and as quoted: one block per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocText {
    /// The first heading, the HTML title, else the file name.
    pub title: String,
    /// The text. For Markdown, text and reStructuredText it is the file as written
    /// (so line numbers are the file's); for HTML and PDF the extracted text (the
    /// lines `ground extract FILE` prints).
    pub text: String,
    /// Whether the text was extracted (HTML, PDF) rather than being the file's own
    /// lines: the index keeps an extracted passage's text, and reads the others'
    /// lines from the file when a hit is shown.
    pub extracted: bool,
}

/// Reads `bytes` of a file at `path` in `format`. PDF goes through the sandboxed
/// worker process (blocking: call it off the async runtime).
pub fn read(path: &Path, format: Format, bytes: Vec<u8>) -> Result<DocText, Unreadable> {
    let name = file_name(path);
    let is_pdf = crate::pdf::looks_like_pdf(&bytes);
    if !is_pdf && is_binary(&bytes) {
        return Err(Unreadable::Binary);
    }
    let extracted = is_pdf || format == Format::Pdf || format == Format::Html;
    let (title, text) = if is_pdf || format == Format::Pdf {
        if !is_pdf {
            return Err(Unreadable::Failed("it does not start like a PDF".into()));
        }
        let doc = crate::pdf::Sandbox::from_env()
            .read_blocking(bytes)
            .map_err(|e| Unreadable::Failed(e.to_string()))?;
        let title = first_line(&doc.text);
        (title, doc.text)
    } else if format == Format::Html {
        let html = extract::decode_body(&bytes, None);
        let main = extract::extract_html(&html, None);
        (main.title, main.text)
    } else {
        let text = extract::decode_body(&bytes, None);
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
        let title = match format {
            Format::Rst => rst_title(&text),
            _ => markdown_title(&text),
        };
        (title, text)
    };
    if text.trim().is_empty() {
        return Err(Unreadable::Empty);
    }
    let title = title
        .map(|t| crate::text::clean_inline(&t))
        .filter(|t| !t.is_empty())
        .map(|t| crate::text::shorten(&t, 200))
        .unwrap_or(name);
    Ok(DocText {
        title,
        text,
        extracted,
    })
}

/// Reads at most [`MAX_FILE_BYTES`] of the regular file at `path` (a file that grew
/// since its size was read is cut there, not read without end), never blocking on a
/// FIFO or opening a device.
pub(crate) fn read_file(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = crate::files::open_regular(
        path,
        std::fs::OpenOptions::new().read(true),
        crate::files::Links::Follow,
    )
    .map_err(|e| std::io::Error::other(e.to_string()))?;
    read_open(file)
}

/// Reads at most [`MAX_FILE_BYTES`] of an open file.
pub(crate) fn read_open(file: std::fs::File) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Whether `bytes` look binary: a NUL byte in the first 8 KiB (git's and ripgrep's rule).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(8192)].contains(&0)
}

/// The file's name, for a document with no title of its own.
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// The first ATX heading (`# Title`) in the first 50 lines, or a setext one (a line
/// over `===`).
fn markdown_title(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(50).collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix('#') {
            let heading = rest.trim_start_matches('#');
            if heading.starts_with(' ') {
                return Some(heading.trim().trim_end_matches('#').trim().to_string());
            }
        }
        if let Some(next) = lines.get(i + 1)
            && !line.trim().is_empty()
            && is_underline(next, &['='])
        {
            return Some(line.trim().to_string());
        }
    }
    None
}

/// reStructuredText's title: the first line underlined (`===`, `---`, `~~~`, ...).
fn rst_title(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(50).collect();
    lines.windows(2).find_map(|pair| {
        let (line, under) = (pair[0].trim(), pair[1]);
        (!line.is_empty()
            && !is_underline(line, &['=', '-', '~', '*', '#', '^'])
            && is_underline(under, &['=', '-', '~', '*', '#', '^'])
            && under.trim().chars().count() >= line.chars().count())
        .then(|| line.to_string())
    })
}

/// A line of at least three of one of `marks` and nothing else.
fn is_underline(line: &str, marks: &[char]) -> bool {
    let line = line.trim();
    let Some(first) = line.chars().next() else {
        return false;
    };
    marks.contains(&first) && line.len() >= 3 && line.chars().all(|c| c == first)
}

/// The first non-empty line (a PDF's title, as near as its text says).
fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| crate::text::shorten(l, 120))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_by_extension() {
        assert_eq!(Format::of(Path::new("a/README")), Some(Format::Text));
        assert_eq!(Format::of(Path::new("a/x.MD")), Some(Format::Markdown));
        assert_eq!(Format::of(Path::new("a/x.rst")), Some(Format::Rst));
        assert_eq!(Format::of(Path::new("a/x.htm")), Some(Format::Html));
        assert_eq!(Format::of(Path::new("a/x.pdf")), Some(Format::Pdf));
        assert_eq!(Format::of(Path::new("a/x.rs")), None);
    }

    #[test]
    fn titles() {
        let md = read(
            Path::new("n.md"),
            Format::Markdown,
            b"intro\n\n## Setup ##\nx".to_vec(),
        );
        assert_eq!(md.unwrap().title, "Setup");
        let rst = read(
            Path::new("n.rst"),
            Format::Rst,
            b"Guide\n=====\n\nbody".to_vec(),
        );
        assert_eq!(rst.unwrap().title, "Guide");
        let plain = read(
            Path::new("dir/notes.txt"),
            Format::Text,
            b"no heading".to_vec(),
        );
        let plain = plain.unwrap();
        assert_eq!(plain.title, "notes.txt");
        assert!(!plain.extracted);
        let html =
            b"<html><head><title>Page T</title></head><body><p>Hello there.</p></body></html>";
        let html = read(Path::new("p.html"), Format::Html, html.to_vec()).unwrap();
        assert_eq!(html.title, "Page T");
        assert!(html.text.contains("Hello there."));
        assert!(html.extracted);
    }

    #[test]
    fn binary_and_empty_are_refused() {
        let bin = read(Path::new("b.txt"), Format::Text, b"ab\0cd".to_vec());
        assert_eq!(bin, Err(Unreadable::Binary));
        let empty = read(Path::new("e.md"), Format::Markdown, b"  \n\n".to_vec());
        assert_eq!(empty, Err(Unreadable::Empty));
    }
}
