//! One SearXNG result as a [`SearchHit`], whichever way it came: an entry of the JSON
//! reply ([`super::searxng`]) or a result read off the HTML page
//! ([`super::searxng_html`]). Both readers fill a [`RawResult`] and call [`to_hit`], so
//! the rules for a usable result (an http(s) link written as such, the engines, the
//! date in either of its fields) are written once.

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::hits::SearchHit;

/// A result as SearXNG (or searx 1.1) writes it; every field may be missing.
#[derive(Deserialize)]
pub(super) struct RawResult {
    pub(super) url: Option<String>,
    #[serde(default)]
    pub(super) title: Option<String>,
    #[serde(default)]
    pub(super) content: Option<String>,
    #[serde(default)]
    pub(super) engine: Option<String>,
    #[serde(default)]
    pub(super) engines: Option<Vec<String>>,
    #[serde(default, rename = "publishedDate")]
    pub(super) published_date: Option<Value>,
    #[serde(default)]
    pub(super) pubdate: Option<Value>,
}

/// The hit of `raw`, or `None` when its link is not an http(s) URL written as one.
pub(super) fn to_hit(raw: RawResult) -> Option<SearchHit> {
    let url = raw.url?;
    // The URL must be written as http(s)://...: the parser also accepts "http:host"
    // or "http:\\host", which would be shown as given but fetched as something else.
    let prefix = url.get(..8).unwrap_or(&url).to_ascii_lowercase();
    if !(prefix.starts_with("http://") || prefix.starts_with("https://")) {
        return None;
    }
    let parsed = Url::parse(&url).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return None;
    }
    let engines = match (raw.engines, raw.engine) {
        (Some(list), _) if !list.is_empty() => list,
        (_, Some(one)) => vec![one],
        _ => Vec::new(),
    };
    let as_date = |v: Option<Value>| {
        v.and_then(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.is_empty())
    };
    Some(SearchHit {
        url,
        title: raw.title.unwrap_or_default(),
        snippet: raw.content.unwrap_or_default(),
        engines,
        published: as_date(raw.published_date).or_else(|| as_date(raw.pubdate)),
    })
}
