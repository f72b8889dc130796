//! Image search results as plain data (`ground search --images`, `answer --images`,
//! the servers' image fields): what the search stage's images search returns and what
//! the faces print, so that printing them never needs the stage itself.
//!
//! An image is only ever a link: ground never downloads one (no request to an image
//! or a thumbnail address, ever), so the user's address is told to no image host.
//! Every address kept is an http(s) URL written as such ([`http_url`]): a `data:` or
//! `javascript:` URL, or one with spaces or control characters, is dropped, never
//! shown as a link. Text is kept as the service gave it, bounded; the faces escape it
//! for a terminal like other web text.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Most images kept from one search.
pub const MAX_IMAGES: usize = 50;
/// Longest URL kept (a longer one is dropped, not cut).
pub const MAX_URL_CHARS: usize = 2_000;
/// Characters of an image's title kept.
pub const MAX_TITLE_CHARS: usize = 300;
/// Characters of a format or an engine's name kept.
const MAX_NAME_CHARS: usize = 40;
/// The largest side length believed, in pixels (larger is no resolution).
const MAX_SIDE: u32 = 1_000_000;

/// One image result, in the shape of `--json`'s `images` list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageHit {
    /// The image itself (SearXNG's `img_src`, Brave's `properties.url`), http(s).
    pub image_url: String,
    /// A smaller preview (SearXNG's `thumbnail_src`, Brave's `thumbnail.src`).
    pub thumbnail_url: Option<String>,
    /// The page the image is on (the result's `url`).
    pub origin_url: Option<String>,
    /// The result's title (may be empty).
    pub title: String,
    /// Width in pixels, when the service said.
    pub width: Option<u32>,
    /// Height in pixels, when the service said.
    pub height: Option<u32>,
    /// The image format as the service named it ("JPG", "png", "image/jpeg").
    pub format: Option<String>,
    /// The engine that found it ("bing images", "brave").
    pub engine: Option<String>,
}

impl ImageHit {
    /// The image in Perplexity's `images` shape (`return_images`): `image_url`,
    /// `origin_url`, `height`, `width`.
    pub fn perplexity(&self) -> Value {
        json!({
            "image_url": self.image_url,
            "origin_url": self.origin_url,
            "height": self.height,
            "width": self.width,
        })
    }

    /// The host of the page the image is on (else of the image), for Gemini's
    /// `groundingChunks[].image.domain`.
    pub fn domain(&self) -> Option<String> {
        let url = self.origin_url.as_deref().unwrap_or(&self.image_url);
        url::Url::parse(url).ok()?.host_str().map(str::to_string)
    }

    /// The address a site filter judges the image by: its page, else itself.
    pub fn site_url(&self) -> &str {
        self.origin_url.as_deref().unwrap_or(&self.image_url)
    }
}

/// An http(s) URL written as such (`http://` or `https://`, no spaces or control
/// characters, at most [`MAX_URL_CHARS`]), in its normal form (characters such as
/// `<`, `>` and `"` percent-encoded, so it can stand in a Markdown autolink), or
/// `None`: every other scheme (`data:`, `javascript:`, `file:`), a protocol-relative
/// `//host/x` and anything unparsable.
pub fn http_url(text: &str) -> Option<String> {
    let url = text.trim();
    let prefix = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let written = prefix.starts_with("http://") || prefix.starts_with("https://");
    let clean =
        url.len() <= MAX_URL_CHARS && !url.chars().any(|c| c.is_control() || c.is_whitespace());
    let parsed = url::Url::parse(url).ok()?;
    let http = matches!(parsed.scheme(), "http" | "https") && parsed.host_str().is_some();
    (written && clean && http).then(|| parsed.to_string())
}

/// Width and height from a resolution as the engines spell it: "1920x1080",
/// "1920 x 1080", "1920×1080", "1920 X 1080 px"; `None` for anything else ("",
/// "NonexNone", "large", a zero side).
pub fn resolution(text: &str) -> Option<(u32, u32)> {
    let text = text.trim();
    let text = text.strip_suffix("px").unwrap_or(text).trim_end();
    let (width, height) = text.split_once(['x', 'X', '×'])?;
    let side = |s: &str| {
        let s = s.trim();
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse::<u32>().ok().filter(|n| (1..=MAX_SIDE).contains(n))
    };
    Some((side(width)?, side(height)?))
}

/// A side length given as a number (Brave's `width`, `height`), when believable.
pub fn side(value: Option<&Value>) -> Option<u32> {
    let n = value?.as_u64()?;
    u32::try_from(n).ok().filter(|n| (1..=MAX_SIDE).contains(n))
}

/// A short name (a format, an engine) as one line, cut; `None` when empty.
pub fn name(text: &str) -> Option<String> {
    let bounded: String = text.chars().take(MAX_NAME_CHARS * 4).collect();
    let line = crate::text::shorten(&crate::text::sanitize_line(&bounded), MAX_NAME_CHARS);
    (!line.is_empty()).then_some(line)
}

/// A title as one line of plain text (engines may mark matches with `<b>` and
/// escape entities, which SearXNG's template strips), cut to [`MAX_TITLE_CHARS`].
pub fn title(text: &str) -> String {
    let bounded: String = text.chars().take(MAX_TITLE_CHARS * 4).collect();
    let plain = if bounded.contains(['<', '&']) {
        let parsed = scraper::Html::parse_fragment(&bounded);
        parsed.root_element().text().collect::<String>()
    } else {
        bounded
    };
    crate::text::shorten(&crate::text::sanitize_line(&plain), MAX_TITLE_CHARS)
}

/// Adds `image` to `images` unless its image URL is there already or the list
/// holds `max`; returns whether it was added.
pub fn push_unique(images: &mut Vec<ImageHit>, image: ImageHit, max: usize) -> bool {
    if images.len() >= max || images.iter().any(|i| i.image_url == image.image_url) {
        return false;
    }
    images.push(image);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_a_resolution_reads() {
        for spelled in [
            "1920x1080",
            "1920 x 1080",
            "1920×1080",
            "1920 × 1080",
            " 1920X1080 ",
            "1920 x 1080 px",
        ] {
            assert_eq!(resolution(spelled), Some((1920, 1080)), "{spelled:?}");
        }
        for bad in [
            "",
            "NonexNone",
            "large",
            "1920",
            "0x100",
            "-1x5",
            "1920x",
            "x1080",
            "1e3x5",
            "1920x1080x3",
            "99999999999x1",
        ] {
            assert_eq!(resolution(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_http_urls_written_as_such_are_kept() {
        assert_eq!(
            http_url(" https://img.example.org/a.jpg ").as_deref(),
            Some("https://img.example.org/a.jpg")
        );
        assert_eq!(
            http_url("HTTP://example.org/a.png?q=<b>").as_deref(),
            Some("http://example.org/a.png?q=%3Cb%3E")
        );
        for bad in [
            "javascript:alert(1)",
            "data:image/png;base64,iVBORw0KGgo=",
            "//img.example.org/a.jpg",
            "http:img.example.org",
            "file:///etc/passwd",
            "https://exa mple.org/a.jpg",
            "https://example.org/\u{1b}[2Ja.jpg",
            "",
        ] {
            assert_eq!(http_url(bad), None, "{bad:?}");
        }
        let long = format!("https://example.org/{}", "a".repeat(MAX_URL_CHARS));
        assert_eq!(http_url(&long), None);
    }

    #[test]
    fn the_perplexity_shape_and_the_domain() {
        let image = ImageHit {
            image_url: "https://img.example.org/a.jpg".into(),
            thumbnail_url: None,
            origin_url: Some("https://www.example.org/page".into()),
            title: "A".into(),
            width: Some(640),
            height: None,
            format: None,
            engine: None,
        };
        assert_eq!(
            image.perplexity(),
            json!({"image_url": "https://img.example.org/a.jpg",
                   "origin_url": "https://www.example.org/page", "height": null, "width": 640})
        );
        assert_eq!(image.domain().as_deref(), Some("www.example.org"));
    }

    #[test]
    fn titles_lose_their_markup() {
        assert_eq!(
            title("The light <b>flashes</b> &amp; turns"),
            "The light flashes & turns"
        );
        assert_eq!(title("plain\nline"), "plain line");
    }
}
