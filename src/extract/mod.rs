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
    /// Set when the page was edited or cut before parsing because it passed one of the
    /// parser's work caps (a hostile or machine-made page; real pages never do), so a
    /// caller can say why a page came out short or empty. `None` for plain text.
    pub truncated: Option<Truncation>,
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
/// Never panics, and the work is linear in the input size: a first pass (see the
/// `bound` module) keeps the parser below [`MAX_NESTING`] open elements, a few dozen
/// open formatting elements and a few hundred thousand elements in all, editing or
/// cutting a hostile page so (reported in [`Extracted::truncated`]); the main-text
/// walk reads at most [`main_text::MAX_NODES`] nodes.
pub fn extract_html(html: &str, _base_url: Option<&url::Url>) -> Extracted {
    let (doc, truncated) = parse_bounded(html);
    let title = page_title(&doc);
    let mut text = main_text::main_text(&doc);
    if let Some(title) = &title {
        drop_leading_title(&mut text, title);
    }
    Extracted {
        title,
        text,
        truncated,
    }
}

/// Parses an untrusted HTML document in time linear in its size: the same first pass
/// as [`extract_html`] (see the `bound` module) edits or cuts a hostile page so the
/// parser's lists stay short, and says what it left out. For every reader of HTML
/// that a server controls (pages, SearXNG's results page).
pub fn parse_bounded(html: &str) -> (scraper::Html, Option<Truncation>) {
    let bounded = bound::bound(html);
    (
        scraper::Html::parse_document(&bounded.html),
        bounded.truncation,
    )
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
        truncated: None,
    }
}

mod bound;

pub use bound::{MAX_NESTING, Truncation, TruncationReason};
mod filler;
mod hints;
mod main_text;

pub use crate::text::clean_inline;
