//! A PDF's bytes to its text, in this process: the pre-scan ([`super::scan`]), then
//! `pdf-extract` page by page, then tidying. This is what the sandboxed worker
//! runs; nothing else should call it on untrusted bytes outside a worker (the
//! scan bounds what it foresees, only the worker's OS limits bound the rest).
//!
//! Text comes from the `pdf-extract` crate (pure Rust, on `lopdf`): it applies each
//! font's ToUnicode map or encoding, so subset fonts and accents come out as written.
//! Its panics on malformed input are caught and become a reason, without a
//! backtrace on anyone's terminal.

use super::{MAX_PAGES, PdfText, looks_like_pdf, protocol, scan};

/// The reason a PDF was not read, for the page's `error`.
pub type Reason = String;

const MALFORMED: &str = "the PDF is malformed (its structure could not be followed)";

/// Reads the text and title of a PDF: the pre-scan's limits first, then at most
/// [`MAX_PAGES`] pages; the text is cut at [`protocol::MAX_TEXT_BYTES`]. A page the
/// pre-scan refuses is left out; if every page was, the PDF is refused with the
/// first page's reason. Blocking and CPU-bound.
pub fn extract(bytes: &[u8]) -> Result<PdfText, Reason> {
    if !looks_like_pdf(bytes) {
        return Err("the body does not start like a PDF (%PDF-)".into());
    }
    quiet_panics_here();
    QUIET.with(|q| q.set(true));
    let read = std::panic::catch_unwind(|| read_pages(bytes));
    QUIET.with(|q| q.set(false));
    let (title, pages, texts) = read.map_err(|_| MALFORMED.to_string())??;
    let pages_read = texts.len() as u32;
    let text = texts
        .iter()
        .map(|t| tidy(t))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    Ok(PdfText {
        title,
        text: crate::text::cut_bytes(&text, protocol::MAX_TEXT_BYTES).to_string(),
        pages,
        pages_read,
    })
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

fn read_pages(bytes: &[u8]) -> Result<Pages, Reason> {
    let (mut doc, inflate_left) = scan::load(bytes)?;
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Err("the PDF is encrypted with a password; it cannot be read".into());
    }
    scan::check_document(&doc, inflate_left)?;
    let title = info_title(&doc);
    let all = doc.get_pages();
    let pages = all.len() as u32;
    let mut texts = Vec::new();
    let mut refused: Option<Reason> = None;
    for (&number, &id) in all.iter().take(MAX_PAGES as usize) {
        if let Err(reason) = scan::check_page(&doc, id) {
            refused.get_or_insert(reason);
            continue;
        }
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
    match refused {
        Some(reason) if texts.is_empty() => Err(reason),
        _ => Ok((title, pages, texts)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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

    /// A one-page PDF whose content stream is `content`, compressed with `filter`.
    fn one_page(content: &[u8], filter: &str) -> Vec<u8> {
        let mut objects: Vec<Vec<u8>> = vec![
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /Resources << >> /Contents 4 0 R >>".to_vec(),
        ];
        let mut stream = format!("<< /Length {} {filter} >>\nstream\n", content.len()).into_bytes();
        stream.extend_from_slice(content);
        stream.extend_from_slice(b"\nendstream");
        objects.push(stream);
        let mut out = b"%PDF-1.4\n".to_vec();
        let mut offsets = Vec::new();
        for (n, body) in objects.iter().enumerate() {
            offsets.push(out.len());
            out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
            out.extend_from_slice(body);
            out.extend_from_slice(b"\nendobj\n");
        }
        let xref = out.len();
        out.extend_from_slice(
            format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
        );
        for off in offsets {
            out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
        }
        out.extend_from_slice(
            format!(
                "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
                objects.len() + 1
            )
            .as_bytes(),
        );
        out
    }

    #[test]
    fn a_deflate_bomb_is_refused_before_parsing() {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        encoder.write_all(&vec![b' '; 80 * 1024 * 1024]).unwrap();
        let bomb = encoder.finish().unwrap();
        let e = extract(&one_page(&bomb, "/Filter /FlateDecode")).unwrap_err();
        assert!(e.contains("inflate past 64 MiB"), "{e}");
    }

    #[test]
    fn a_flood_of_q_is_refused() {
        let e = extract(&one_page(&b"q\n".repeat(5000), "")).unwrap_err();
        assert!(e.contains("nest more than 4,096 deep"), "{e}");
        let e = extract(&one_page(&b"q Q\n".repeat(600_000), "")).unwrap_err();
        assert!(e.contains("past 1,000,000 operators and operands"), "{e}");
    }
}
