//! Source blocks as the model reads them: the header (tag, URL, title) of each
//! source, kept small as every source sent pays for one, and the rendering of a
//! source's chosen passages with `[…]` for the gaps.
//!
//! A header's URL is short ([`short_url`]): the host and the page's slug, which say
//! which page it is, without the dates, ids and query that cost a token a digit and
//! tell the model nothing. On real news questions (rtqa-dev) the full URL line cost
//! ~32 tokens a source; the short one leaves that budget to page text. The full URL
//! stays in `--json` and the sources list, and a citation by the short form resolves.

use super::passages::Passage;
use super::{SKIPPED, SourceKind, SourceText, neutralise};

/// Characters of a title shown in a header; a longer one is cut at a word with `…`.
pub(super) const TITLE_MAX_CHARS: usize = 160;
/// Characters of a shortened URL in a header; a longer one is cut with `…`.
pub(super) const URL_MAX_CHARS: usize = 56;

/// Below this budget (in tokens) headers are compact: the title at most
/// [`COMPACT_TITLE_MAX_CHARS`].
pub const COMPACT_HEADERS_BELOW: u32 = 1200;
/// Characters of a title in a compact header.
const COMPACT_TITLE_MAX_CHARS: usize = 80;

/// The sources block: for each source with a passage sent, its header, its chosen
/// passages in reading order with a `[…]` line for each gap, and its closing tag. A
/// source with nothing sent has no block.
pub(super) fn render(
    headers: &[String],
    passages: &[Vec<Passage>],
    chosen: &[Vec<bool>],
) -> String {
    let mut text = String::new();
    for (i, header) in headers.iter().enumerate() {
        if !chosen[i].iter().any(|&c| c) {
            continue;
        }
        text.push_str(header);
        let mut body = String::new();
        let mut gap = false;
        for (p, passage) in passages[i].iter().enumerate() {
            if chosen[i][p] {
                body.push_str(&passage.text);
                body.push('\n');
                gap = false;
            } else if !gap {
                body.push_str(SKIPPED);
                body.push('\n');
                gap = true;
            }
        }
        text.push_str(body.trim_end());
        text.push_str(CLOSE);
    }
    text.trim_end().to_string()
}

/// What closes a source block.
pub(super) const CLOSE: &str = "\n</source>\n\n";

/// A source's header: its tag (with `kind="…"` for any source but a page), its URL
/// shortened ([`short_url`]) and its title, each on one line (the labels the model
/// needs and no more), then a blank line. `compact` (a small window) shortens the
/// title.
pub(super) fn header(source: &SourceText, kind: SourceKind, compact: bool) -> String {
    let mut header = match kind {
        SourceKind::Page => format!("<source id=\"{}\">\n", source.number),
        _ => format!(
            "<source id=\"{}\" kind=\"{}\">\n",
            source.number,
            kind.name()
        ),
    };
    let url = short_url(&source.url);
    let (url_max, title_max) = if compact {
        (URL_MAX_CHARS, COMPACT_TITLE_MAX_CHARS)
    } else {
        (URL_MAX_CHARS, TITLE_MAX_CHARS)
    };
    for (line, label, max) in [
        (url.as_str(), "", url_max),
        (&source.title, "Title: ", title_max),
    ] {
        let line = one_line(line, max);
        if !line.is_empty() {
            header.push_str(label);
            header.push_str(&neutralise(&line));
            header.push('\n');
        }
    }
    header.push('\n');
    header
}

/// A URL as a header shows it, short: its scheme, its host without `www.` and its
/// last path segment (the slug, which says what the page is), `…` for the segments
/// between, no query or fragment: `https://news.example.com/…/tardigrades-space.html`.
/// Dates and ids in the path cost a token a digit and tell the model nothing; the
/// scheme stays, so the estimate costs the line by its URL rule.
pub fn short_url(url: &str) -> String {
    let bare = url.split(['?', '#']).next().unwrap_or("");
    let (scheme, rest) = bare
        .split_once("://")
        .map_or(("", bare), |(s, rest)| (s, rest));
    let rest = rest.strip_prefix("www.").unwrap_or(rest);
    let mut parts = rest.split('/').filter(|p| !p.is_empty());
    let host = parts.next().unwrap_or("");
    let segments: Vec<&str> = parts.collect();
    let scheme = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}://")
    };
    match segments.as_slice() {
        [] => format!("{scheme}{host}"),
        [only] => format!("{scheme}{host}/{only}"),
        [.., last] => format!("{scheme}{host}/…/{last}"),
    }
}

/// `text` on one line (runs of whitespace become one space) and at most `max`
/// characters: a longer one is cut at its last space in the allowed length (or at the
/// length, when it has none late enough) and ends with `…`.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut = line
        .char_indices()
        .nth(max.saturating_sub(1))
        .map_or(line.len(), |(i, _)| i);
    let at_space = line[..cut].rfind(' ').filter(|&i| i >= cut / 2);
    format!("{}…", line[..at_space.unwrap_or(cut)].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::build_for_question;
    use crate::context::estimate_tokens;
    use crate::context::tests::src;

    #[test]
    fn urls_are_shown_short() {
        for (url, short) in [
            (
                "https://www.news.example.com/2024/05/01/12345678/tardigrades-space.html?utm_source=a#top",
                "https://news.example.com/…/tardigrades-space.html",
            ),
            ("https://example.com/about", "https://example.com/about"),
            ("http://example.com/", "http://example.com"),
            ("https://example.com/a/b/", "https://example.com/…/b"),
            ("example.com/a/b", "example.com/…/b"),
            ("", ""),
        ] {
            assert_eq!(short_url(url), short, "{url}");
        }
    }

    #[test]
    fn compact_headers_at_small_windows() {
        let mut source = src(1, "Tardigrades survive in space.");
        source.url = "https://news.example.com/2024/05/01/12345678/tardigrades-space-story.html?utm_source=a&id=987654321#top".into();
        source.title = "Tardigrades ".repeat(20);
        let full = header(&source, SourceKind::Page, false);
        let compact = header(&source, SourceKind::Page, true);
        for h in [&full, &compact] {
            assert!(
                h.contains("\nhttps://news.example.com/…/tardigrades-space-story.html\n"),
                "{h}"
            );
        }
        assert!(estimate_tokens(&compact) < estimate_tokens(&full));
        assert!(
            compact
                .lines()
                .all(|l| l.chars().count() <= "Title: ".len() + 81)
        );
        let small = build_for_question(std::slice::from_ref(&source), "tardigrades", 600);
        assert!(small.text.contains(&compact), "{}", small.text);
        let large = build_for_question(std::slice::from_ref(&source), "tardigrades", 3000);
        assert!(large.text.contains(&full), "{}", large.text);
    }

    #[test]
    fn headers_are_one_line_each_and_bounded() {
        let mut source = src(1, "Text.");
        source.url = format!("https://example.com/{}", "a-long-slug-".repeat(30));
        source.title = format!("A title\nover two lines {}", "and more words ".repeat(30));
        let header = header(&source, SourceKind::Page, false);
        let lines: Vec<&str> = header.lines().collect();
        assert_eq!(lines.len(), 4, "{header}");
        assert!(
            lines[1].starts_with("https://example.com/a-long-slug-") && lines[1].ends_with('…')
        );
        assert!(lines[1].chars().count() <= URL_MAX_CHARS + 1);
        assert!(
            lines[2].starts_with("Title: A title over two lines and")
                && lines[2].ends_with("words…")
        );
        assert!(lines[2].chars().count() <= "Title: ".len() + TITLE_MAX_CHARS + 1);
        let bare = SourceText {
            url: String::new(),
            title: String::new(),
            ..src(2, "")
        };
        assert_eq!(
            super::header(&bare, SourceKind::Page, false),
            "<source id=\"2\">\n\n"
        );
    }
}
