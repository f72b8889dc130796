//! PDF pages to text: the PDF counterpart of [`crate::extract`], a pure function of
//! the bytes.
//!
//! Text comes from the `pdf-extract` crate (pure Rust, on `lopdf`): it applies each
//! font's ToUnicode map or encoding, so subset fonts and accents come out as written.
//! (The README says why this crate and not the other one compared.) PDFs are bounded
//! like HTML pages, and more, because a PDF is a program as much as a document:
//! - **bytes**: the fetch reads at most [`MAX_PDF_BYTES`]; a PDF cut there is not read;
//! - **decompression**: before parsing, every stream is inflated with a cap, and a file
//!   whose streams would grow past [`MAX_INFLATED_BYTES`] in all is refused (a zip bomb
//!   stops there, not in the parser);
//! - **pages**: at most [`MAX_PAGES`] are read;
//! - **time**: callers run [`extract`] off the async runtime with a deadline
//!   ([`EXTRACT_TIMEOUT`]); the parser's panics on malformed files become errors.
//!
//! A PDF with no text at all (a scan) is not an error but an empty result, which the
//! page stage reports as `EMPTY` with the reason.

use std::io::Read;
use std::time::Duration;

/// Largest PDF body fetched and read (PDFs run larger than HTML pages).
pub const MAX_PDF_BYTES: usize = 16 * 1024 * 1024;

/// Most bytes all of a PDF's streams may inflate to, together.
pub const MAX_INFLATED_BYTES: usize = 64 * 1024 * 1024;

/// Most pages read from one PDF; the rest are left out (and said so).
pub const MAX_PAGES: u32 = 100;

/// Deadline for reading one PDF.
pub const EXTRACT_TIMEOUT: Duration = Duration::from_secs(20);

/// What a PDF holds.
#[derive(Debug, Clone, PartialEq)]
pub struct PdfText {
    /// `/Title` from the document information, if it has a usable one.
    pub title: Option<String>,
    /// The text of the pages read, pages separated by a blank line, whitespace tidied.
    pub text: String,
    /// Pages in the document.
    pub pages: u32,
    /// Pages read (at most [`MAX_PAGES`]).
    pub pages_read: u32,
}

/// Why a PDF could not be read: a one-line reason for the page's `error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PdfError(pub String);

/// Whether `bytes` start like a PDF (`%PDF-`, after any leading whitespace).
pub fn looks_like_pdf(bytes: &[u8]) -> bool {
    let start = &bytes[..bytes.len().min(1024)];
    let skipped = start
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(start.len());
    start[skipped..].starts_with(b"%PDF-")
}

/// Reads the text and title of a PDF, within the bounds in the module doc (all but
/// time, which is the caller's). Blocking and CPU-bound: run it off the async runtime.
pub fn extract(bytes: &[u8]) -> Result<PdfText, PdfError> {
    if !looks_like_pdf(bytes) {
        return Err(PdfError(
            "the body does not start like a PDF (%PDF-)".into(),
        ));
    }
    check_inflated_size(bytes, MAX_INFLATED_BYTES)?;
    // The parser has `unwrap`s on malformed input: a panic is a broken file, not a
    // crash, and not a backtrace on the user's terminal either.
    quiet_panics_here();
    QUIET.with(|q| q.set(true));
    let read = std::panic::catch_unwind(|| read_pages(bytes));
    QUIET.with(|q| q.set(false));
    let read = read.map_err(|_| {
        PdfError("the PDF is malformed (its structure could not be followed)".into())
    })?;
    let (title, pages, texts) = read?;
    let pages_read = texts.len() as u32;
    let text = texts
        .iter()
        .map(|t| tidy(t))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(PdfText {
        title,
        text,
        pages,
        pages_read,
    })
}

/// [`extract`] on a thread of its own, given up after `deadline` (for callers that
/// are not async, such as `ground extract`). The thread is left to finish alone.
pub fn extract_within(bytes: Vec<u8>, deadline: Duration) -> Result<PdfText, PdfError> {
    let (send, receive) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = send.send(extract(&bytes));
    });
    match receive.recv_timeout(deadline) {
        Ok(result) => result,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(timed_out(deadline)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(PdfError(
            "the PDF is malformed (its structure could not be followed)".into(),
        )),
    }
}

/// The error for a PDF not read within `deadline`.
pub fn timed_out(deadline: Duration) -> PdfError {
    PdfError(format!(
        "reading the PDF took longer than {} s",
        deadline.as_secs()
    ))
}

thread_local! {
    /// Set while this thread parses a PDF: its panics are caught and reported as errors.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics on a thread that is
/// parsing a PDF and passes every other panic to the hook that was there before.
fn quiet_panics_here() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
}

type Pages = (Option<String>, u32, Vec<String>);

fn read_pages(bytes: &[u8]) -> Result<Pages, PdfError> {
    let mut doc = pdf_extract::Document::load_mem(bytes).map_err(|e| {
        PdfError(format!(
            "the PDF cannot be read ({}); it may be cut short or damaged",
            crate::text::shorten(&e.to_string(), 120)
        ))
    })?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err(PdfError(
            "the PDF is encrypted with a password; it cannot be read".into(),
        ));
    }
    let title = info_title(&doc);
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    let pages = numbers.len() as u32;
    let mut texts = Vec::new();
    for number in numbers.into_iter().take(MAX_PAGES as usize) {
        let mut text = String::new();
        {
            let mut output = pdf_extract::PlainTextOutput::new(&mut text);
            // One unreadable page does not spoil the others.
            if pdf_extract::output_doc_page(&doc, &mut output, number).is_err() {
                continue;
            }
        }
        texts.push(text);
    }
    Ok((title, pages, texts))
}

/// The document information's `/Title`, decoded (PDFDocEncoding or UTF-16BE).
fn info_title(doc: &pdf_extract::Document) -> Option<String> {
    let info = doc.trailer.get(b"Info").ok()?;
    let info = match info {
        pdf_extract::Object::Reference(id) => doc.get_dictionary(*id).ok()?,
        pdf_extract::Object::Dictionary(d) => d,
        _ => return None,
    };
    let title = match info.get(b"Title").ok()? {
        pdf_extract::Object::String(bytes, _) => decode_text_string(bytes),
        pdf_extract::Object::Reference(id) => match doc.get_object(*id).ok()? {
            pdf_extract::Object::String(bytes, _) => decode_text_string(bytes),
            _ => return None,
        },
        _ => return None,
    };
    let title = tidy(&title);
    (!title.is_empty()).then_some(title)
}

/// A PDF text string: UTF-16BE with a BOM, UTF-8 with a BOM, else PDFDocEncoding
/// (taken as Latin-1, which it equals for letters).
fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| b as char).collect()
}

/// One page's text as paragraphs: lines trimmed, runs of spaces collapsed (justified
/// PDF text is full of them), control characters dropped, and wrapped lines joined.
/// PDF text has no paragraphs, only lines (and `pdf-extract` puts a blank line after
/// each), so a line is taken as wrapped, and joined to the next, when it is nearly
/// as long as the page's longest line and does not end a sentence; other lines end
/// a paragraph. Paragraphs are separated by a blank line.
fn tidy(text: &str) -> String {
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            line.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
        })
        .filter(|line| !line.is_empty())
        .collect();
    let longest = lines.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        if i + 1 == lines.len() {
            break;
        }
        let full = line.chars().count() * 10 >= longest * 7;
        let ends_sentence = line.ends_with(['.', '!', '?', ':', ';']);
        out.push_str(if full && !ends_sentence { " " } else { "\n\n" });
    }
    out
}

/// Inflates every Flate stream in the raw file with a cap, so a PDF whose streams
/// would grow past `cap` bytes in all is refused before the parser inflates them
/// (it has no cap of its own). Streams are found by their `stream` / `endstream`
/// keywords; those that are not zlib data (images, other filters) count as their
/// raw size.
fn check_inflated_size(bytes: &[u8], cap: usize) -> Result<(), PdfError> {
    let mut total = 0usize;
    let mut at = 0usize;
    while let Some(found) = find(&bytes[at..], b"stream") {
        let mut start = at + found + b"stream".len();
        // `endstream` also contains `stream`: skip it.
        if at + found >= 3 && &bytes[at + found - 3..at + found] == b"end" {
            at = start;
            continue;
        }
        if bytes.get(start) == Some(&b'\r') {
            start += 1;
        }
        if bytes.get(start) == Some(&b'\n') {
            start += 1;
        }
        let end = find(&bytes[start..], b"endstream")
            .map(|e| start + e)
            .unwrap_or(bytes.len());
        let data = &bytes[start..end];
        let left = cap.saturating_sub(total) as u64 + 1;
        let mut inflater = flate2::read::ZlibDecoder::new(data).take(left);
        let mut sink = std::io::sink();
        let grown = match std::io::copy(&mut inflater, &mut sink) {
            Ok(n) if n > 0 => n as usize,
            _ => data.len(),
        };
        total = total.saturating_add(grown);
        if total > cap {
            return Err(PdfError(format!(
                "the PDF's compressed streams inflate to more than {} MiB; it was not read",
                cap / 1024 / 1024
            )));
        }
        at = end;
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pdf_signatures() {
        assert!(looks_like_pdf(b"%PDF-1.7\n..."));
        assert!(looks_like_pdf(b"\r\n %PDF-1.3"));
        assert!(!looks_like_pdf(b"<html>%PDF-"));
        assert!(!looks_like_pdf(b""));
    }

    #[test]
    fn text_strings_decode() {
        assert_eq!(
            decode_text_string(&[0xFE, 0xFF, 0, b'G', 0, 0xF6]),
            "G\u{f6}"
        );
        assert_eq!(decode_text_string(b"Caf\xe9"), "Café");
    }

    #[test]
    fn tidy_collapses_spaces_and_joins_wrapped_lines() {
        let page = "\n\nA short title\n\nThis  line is long  and wraps into\n\nthe next one, which ends here.\n\nThis line is about as long as the first.\n\nLast \u{7}line";
        assert_eq!(
            tidy(page),
            "A short title\n\nThis line is long and wraps into the next one, which ends here.\n\nThis line is about as long as the first.\n\nLast line"
        );
        assert_eq!(tidy(" \n\n "), "");
    }

    #[test]
    fn a_deflate_bomb_is_refused_before_parsing() {
        use std::io::Write;
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![b' '; 2 * 1024 * 1024]).unwrap();
        let bomb = encoder.finish().unwrap();
        let mut pdf = b"%PDF-1.4\n1 0 obj\n<< /Filter /FlateDecode >>\nstream\n".to_vec();
        pdf.extend_from_slice(&bomb);
        pdf.extend_from_slice(b"\nendstream\nendobj\n");
        assert!(check_inflated_size(&pdf, 4 * 1024 * 1024).is_ok());
        let e = check_inflated_size(&pdf, 1024 * 1024).unwrap_err();
        assert!(e.0.contains("inflate to more than 1 MiB"), "{e}");
        assert!(extract(&pdf).is_err());
    }
}
