//! Main-text extraction: turn a fetched HTML (or plain-text) page into its title and
//! readable text.
//!
//! The input is already decoded to a `&str` (see [`decode_body`]); the output is plain
//! text with one block (paragraph, heading, list item, table row, preformatted block)
//! per line, so later stages can split it into passages on block boundaries.

use encoding_rs::Encoding;

/// The readable content of one page: what the model will read and what citations are
/// checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The page's title (`<title>`, else `og:title`, else the first `<h1>`), if any.
    pub title: Option<String>,
    /// The main text, one block per line, whitespace collapsed inside blocks.
    pub text: String,
}

/// Decodes a page body to text using, in order: a byte-order mark, the charset of the
/// `Content-Type` header, a `<meta charset>` / `http-equiv` declaration in the first
/// 4 KiB, and finally UTF-8 (invalid bytes replaced, never an error).
pub fn decode_body(bytes: &[u8], content_type: Option<&str>) -> String {
    let declared = content_type
        .and_then(charset_param)
        .or_else(|| meta_charset(bytes))
        .and_then(|label| Encoding::for_label(label.trim().as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    // `decode` sniffs a BOM first, which wins over any declaration.
    let (text, _, _) = declared.decode(bytes);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim()
            .eq_ignore_ascii_case("charset")
            .then(|| value.trim().trim_matches(['"', '\'']).to_string())
    })
}

fn meta_charset(bytes: &[u8]) -> Option<String> {
    let head = &bytes[..bytes.len().min(4096)];
    let head = String::from_utf8_lossy(head).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let rest = head[at..].trim_start_matches(['"', '\'', ' ']);
    let end = rest
        .find(|c: char| {
            !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':' || c == '.')
        })
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

/// Extracts the title and main text of an HTML document. `base_url` is the page's
/// address (used only as a hint; extraction never fetches anything).
///
/// Never panics; the work is bounded by the input size, [`MAX_NESTING`] and
/// [`main_text::MAX_NODES`].
pub fn extract_html(html: &str, _base_url: Option<&url::Url>) -> Extracted {
    let html = limit_nesting(html);
    let doc = scraper::Html::parse_document(html);
    let title = page_title(&doc);
    let mut text = main_text::main_text(&doc);
    if let Some(title) = &title {
        drop_leading_title(&mut text, title);
    }
    Extracted { title, text }
}

/// Whether a page has enough main text to read: at least [`MIN_SUBSTANTIAL_WORDS`]
/// words (a CJK character counts as one word). A JavaScript-only shell, a consent
/// wall or an error stub falls below it.
pub fn is_substantial(extracted: &Extracted) -> bool {
    word_count(&extracted.text) >= MIN_SUBSTANTIAL_WORDS
}

/// Below this many words of main text a page is not substantial (see
/// [`is_substantial`]); a short news item has well over 100.
pub const MIN_SUBSTANTIAL_WORDS: usize = 25;

fn word_count(text: &str) -> usize {
    let mut words = 0;
    for token in text.split_whitespace() {
        let cjk = token.chars().filter(|&c| is_cjk(c)).count();
        words += if cjk > 0 { cjk } else { 1 };
    }
    words
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

/// The deepest nesting of block tags kept from a page. The HTML parser checks the
/// whole stack of open elements on each block start tag, so a page nesting 100,000
/// `<div>`s would take minutes; real pages stay below 100.
pub const MAX_NESTING: usize = 1_000;

/// Cuts the page where its block-tag nesting would pass [`MAX_NESTING`] (a cheap
/// scan that skips comments, scripts and styles).
fn limit_nesting(html: &str) -> &str {
    let bytes = html.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    // `str::find` with an ASCII char is a fast memchr; every index stays on a
    // char boundary because it points at or just past an ASCII byte.
    while let Some(off) = html.get(i..).and_then(|rest| rest.find('<')) {
        let at = i + off;
        let rest = &bytes[at + 1..];
        i = at + 1;
        if rest.starts_with(b"!--") {
            i = find_ci(html, i, b"-->").map_or(bytes.len(), |e| e + 3);
            continue;
        }
        let closing = rest.first() == Some(&b'/');
        let name_start = at + 1 + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take(12)
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        let mut lower = [0u8; 12];
        lower[..name_len].copy_from_slice(&bytes[name_start..name_start + name_len]);
        lower.make_ascii_lowercase();
        let name = &lower[..name_len];
        if !closing && (name == b"script" || name == b"style") {
            let close: &[u8] = if name == b"script" {
                b"</script"
            } else {
                b"</style"
            };
            i = find_ci(html, i, close).unwrap_or(bytes.len());
            continue;
        }
        if !matches!(
            name,
            b"div"
                | b"section"
                | b"article"
                | b"ul"
                | b"ol"
                | b"blockquote"
                | b"dl"
                | b"table"
                | b"main"
                | b"aside"
                | b"nav"
                | b"figure"
                | b"center"
                | b"header"
                | b"footer"
                | b"details"
                | b"fieldset"
                | b"address"
                | b"menu"
        ) {
            continue;
        }
        if closing {
            depth = depth.saturating_sub(1);
        } else {
            depth += 1;
            if depth > MAX_NESTING {
                return &html[..at];
            }
        }
    }
    html
}

/// Finds `needle` (whose first byte is ASCII and not a letter) from `from` on, ASCII
/// case-insensitively; the scan jumps from one first-byte match to the next.
fn find_ci(html: &str, from: usize, needle: &[u8]) -> Option<usize> {
    let (&first, _) = needle.split_first()?;
    let bytes = html.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        at += html.get(at..)?.find(char::from(first))?;
        if bytes
            .get(at..at + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
        {
            return Some(at);
        }
        at += 1;
    }
    None
}

/// `<title>`, else `og:title`, else the first `<h1>`.
fn page_title(doc: &scraper::Html) -> Option<String> {
    let first_text = |selector: &str| -> Option<String> {
        let sel = scraper::Selector::parse(selector).ok()?;
        let el = doc.select(&sel).next()?;
        Some(clean_inline(&el.text().collect::<String>()))
    };
    first_text("title")
        .filter(|t| !t.is_empty())
        .or_else(|| {
            let sel = scraper::Selector::parse(r#"meta[property="og:title"]"#).ok()?;
            doc.select(&sel)
                .next()?
                .value()
                .attr("content")
                .map(clean_inline)
        })
        .filter(|t| !t.is_empty())
        .or_else(|| first_text("h1"))
        .filter(|t| !t.is_empty())
}

/// The article's own headline is the page title, not main text: among the first
/// [`HEADLINE_WINDOW`] lines, drop the first one that the title contains (at least 15
/// characters long) or that contains the title without its site name.
fn drop_leading_title(text: &mut String, title: &str) {
    let core = title
        .split(['|', '–', '—'])
        .flat_map(|part| part.split(" - "))
        .map(str::trim)
        .max_by_key(|part| part.len())
        .unwrap_or(title);
    let mut offset = 0;
    for line in text.split('\n').take(HEADLINE_WINDOW) {
        let headline = (line.len() >= 15 && title.contains(line))
            || (core.len() >= 15 && line.len() <= core.len() + 40 && line.contains(core));
        if headline {
            let end = (offset + line.len() + 1).min(text.len());
            text.replace_range(offset..end, "");
            if text.ends_with('\n') {
                text.pop();
            }
            return;
        }
        offset += line.len() + 1;
    }
}

/// How many leading lines of main text are searched for a repeated headline.
const HEADLINE_WINDOW: usize = 5;

/// Wraps plain text (text/plain pages) as an [`Extracted`] document: invisible
/// characters dropped, runs of blank lines folded.
pub fn extract_plain_text(text: &str) -> Extracted {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = clean_inline(line);
        if line.is_empty() {
            continue;
        }
        out.push_str(&line);
        out.push('\n');
    }
    Extracted {
        title: None,
        text: out.trim_end().to_string(),
    }
}

mod hints;
mod main_text;

pub use crate::text::clean_inline;
