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
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':' || c == '.'))
        .unwrap_or(rest.len());
    (end > 0).then(|| rest[..end].to_string())
}

/// Extracts the title and main text of an HTML document. `base_url` is the page's
/// address (used only as a hint; extraction never fetches anything).
pub fn extract_html(html: &str, _base_url: Option<&url::Url>) -> Extracted {
    basic::extract(html)
}

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
    Extracted { title: None, text: out.trim_end().to_string() }
}

/// Collapses whitespace runs to one space and drops soft hyphens and zero-width
/// characters, which would otherwise break quote matching.
pub fn clean_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending_space = false;
    for c in text.chars() {
        if matches!(c, '\u{00AD}' | '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}') {
            continue;
        }
        if c.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            out.push(' ');
            pending_space = false;
        }
        out.push(c);
    }
    out
}

mod basic {
    use super::{Extracted, clean_inline};
    use scraper::{ElementRef, Html, Node, Selector};

    const SKIP: &[&str] = &[
        "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
        "button", "iframe", "svg", "select", "textarea", "head", "menu", "dialog", "canvas",
        "video", "audio", "object", "embed",
    ];
    const BLOCK: &[&str] = &[
        "p", "div", "section", "article", "main", "h1", "h2", "h3", "h4", "h5", "h6", "li",
        "ul", "ol", "dl", "dt", "dd", "tr", "table", "blockquote", "pre", "figure",
        "figcaption", "br", "hr", "body", "td", "th", "caption", "address", "details",
        "summary",
    ];

    pub fn extract(html: &str) -> Extracted {
        let doc = Html::parse_document(html);
        let title = first_text(&doc, "title")
            .or_else(|| {
                let sel = Selector::parse(r#"meta[property="og:title"]"#).ok()?;
                doc.select(&sel).next()?.value().attr("content").map(clean_inline)
            })
            .or_else(|| first_text(&doc, "h1"))
            .filter(|t| !t.is_empty());
        let root = ["article", "main", "[role=main]", "body"]
            .iter()
            .filter_map(|s| Selector::parse(s).ok())
            .find_map(|sel| doc.select(&sel).next())
            .unwrap_or_else(|| doc.root_element());
        Extracted { title, text: block_text(root) }
    }

    fn first_text(doc: &Html, selector: &str) -> Option<String> {
        let sel = Selector::parse(selector).ok()?;
        let el = doc.select(&sel).next()?;
        Some(clean_inline(&el.text().collect::<String>()))
    }

    fn hidden(el: &scraper::node::Element) -> bool {
        el.attr("hidden").is_some()
            || el.attr("aria-hidden") == Some("true")
            || matches!(el.attr("role"), Some("navigation" | "banner" | "contentinfo"))
    }

    /// Walks the tree iteratively (no recursion, so deep nesting cannot overflow the
    /// stack) and emits one line per block.
    fn block_text(root: ElementRef) -> String {
        let mut lines: Vec<String> = Vec::new();
        let mut current = String::new();
        let mut in_pre = 0usize;
        // (node, entering)
        let mut stack = vec![(*root, true)];
        while let Some((node, entering)) = stack.pop() {
            match node.value() {
                Node::Text(t) if entering => current.push_str(t),
                Node::Element(el) => {
                    let name = el.name();
                    let is_block = BLOCK.contains(&name);
                    if entering {
                        if SKIP.contains(&name) || hidden(el) {
                            continue;
                        }
                        if is_block {
                            flush(&mut current, &mut lines, in_pre > 0);
                        }
                        if name == "pre" {
                            in_pre += 1;
                        }
                        stack.push((node, false));
                        let children: Vec<_> = node.children().collect();
                        for child in children.into_iter().rev() {
                            stack.push((child, true));
                        }
                    } else {
                        if is_block {
                            flush(&mut current, &mut lines, in_pre > 0);
                        }
                        if name == "pre" {
                            in_pre -= 1;
                        }
                    }
                }
                _ => {}
            }
        }
        flush(&mut current, &mut lines, false);
        lines.join("\n")
    }

    fn flush(current: &mut String, lines: &mut Vec<String>, preformatted: bool) {
        if preformatted {
            for line in current.lines() {
                let line = line.trim_end();
                if !line.trim().is_empty() {
                    lines.push(line.to_string());
                }
            }
        } else {
            let line = clean_inline(current);
            if !line.is_empty() {
                lines.push(line);
            }
        }
        current.clear();
    }
}
