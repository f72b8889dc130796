//! Image results for a person (a numbered list of title, page and image link) and for
//! scripts (`ground search --images --json`, `answer --json`'s `images`).
//!
//! Every text and address came from a search service: each passes through
//! [`sanitize_line`] before it reaches a terminal (Markdown also escaped), like the
//! web results. The addresses are links only: nothing here, or anywhere in ground,
//! fetches an image.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::image_hits::ImageHit;
use crate::render::Style;
use crate::search::images::ImagesOutcome;
use crate::settings::SearchSettings;
use crate::text::sanitize_line;

/// The images as a numbered list: title, then the page and the image's address,
/// then size, format and engine when known.
pub fn person(images: &[ImageHit], limit: usize, style: Style) -> String {
    let mut out = String::new();
    if images.is_empty() {
        out.push_str("No images.\n");
    }
    let escape = |text: &str| match style {
        Style::Markdown => crate::render::person::escape_markdown(&sanitize_line(text)),
        Style::Text { .. } => sanitize_line(text),
    };
    // In Markdown an address is an autolink: `<` and `>` never occur in one kept.
    let link = |url: &str| match style {
        Style::Markdown => format!("<{}>", sanitize_line(url)),
        Style::Text { .. } => sanitize_line(url),
    };
    for (i, image) in images.iter().take(limit).enumerate() {
        let title = if image.title.trim().is_empty() {
            "(untitled)".to_string()
        } else {
            escape(&image.title)
        };
        let _ = writeln!(out, "{:>2}. {title}", i + 1);
        if let Some(page) = &image.origin_url {
            let _ = writeln!(out, "    page:  {}", link(page));
        }
        let _ = writeln!(out, "    image: {}", link(&image.image_url));
        let mut meta = Vec::new();
        if let (Some(width), Some(height)) = (image.width, image.height) {
            meta.push(format!("{width} × {height}"));
        }
        meta.extend(image.format.as_deref().map(escape));
        meta.extend(image.engine.as_deref().map(escape));
        if !meta.is_empty() {
            let _ = writeln!(out, "    [{}]", meta.join(" · "));
        }
    }
    out
}

/// The images after an answer's sources: a heading, then [`person`]'s list; empty
/// when there are none.
pub fn after_sources(images: &[ImageHit], style: Style) -> String {
    if images.is_empty() {
        return String::new();
    }
    let heading = match style {
        Style::Markdown => "**Images**",
        Style::Text { .. } => "Images:",
    };
    format!("\n{heading}\n{}", person(images, images.len(), style))
}

/// The images as `--json`'s list: `image_url`, `thumbnail_url`, `origin_url`,
/// `title`, `width`, `height`, `format`, `engine`.
pub fn list(images: &[ImageHit], limit: usize) -> Value {
    json!(images.iter().take(limit).collect::<Vec<_>>())
}

/// `ground search --images --json`: one object with the query, the service that
/// answered and the images.
pub fn json(
    outcome: &ImagesOutcome,
    query: &str,
    settings: &SearchSettings,
    limit: usize,
) -> Value {
    let mut value = json!({
        "version": crate::render::json::JSON_VERSION,
        "query": query,
        "backend": outcome.backend.unwrap_or(settings.backend),
        "images": list(&outcome.images, limit),
        "search": {
            "sites": settings.sites.sites,
            "exclude_sites": settings.sites.exclude_sites,
            "dropped": outcome.dropped,
        },
    });
    if !outcome.warnings.is_empty() {
        value["warnings"] = json!(outcome.warnings);
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(title: &str) -> ImageHit {
        ImageHit {
            image_url: "https://img.example.org/a.jpg".into(),
            thumbnail_url: Some("https://img.example.org/t.jpg".into()),
            origin_url: Some("https://example.org/page".into()),
            title: title.into(),
            width: Some(1920),
            height: Some(1080),
            format: Some("JPG".into()),
            engine: Some("bing images".into()),
        }
    }

    #[test]
    fn a_title_with_escapes_is_shown_clean() {
        let shown = person(
            &[image("Evil \u{1b}]8;;http://x\u{7}title\u{1b}[2J")],
            10,
            Style::Text { colour: false },
        );
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown:?}"
        );
        assert!(shown.starts_with(" 1. Evil"), "{shown}");
        assert!(
            shown.contains("    page:  https://example.org/page\n"),
            "{shown}"
        );
        assert!(
            shown.contains("    image: https://img.example.org/a.jpg\n"),
            "{shown}"
        );
        assert!(
            shown.contains("[1920 × 1080 · JPG · bing images]"),
            "{shown}"
        );
    }

    #[test]
    fn markdown_escapes_titles_and_links_addresses() {
        let shown = after_sources(&[image("a *bold* [claim](x)")], Style::Markdown);
        assert!(shown.contains("**Images**"), "{shown}");
        assert!(shown.contains(r"a \*bold\* \[claim\](x)"), "{shown}");
        assert!(shown.contains("<https://img.example.org/a.jpg>"), "{shown}");
        assert_eq!(after_sources(&[], Style::Markdown), "");
    }
}
