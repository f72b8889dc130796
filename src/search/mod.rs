//! The search stage: a query in, ranked [`SearchHit`]s out.
//!
//! Three services are spoken: the user's own SearXNG ([`searxng`], the default), and
//! the hosted Brave Search ([`brave`]) and Tavily ([`tavily`]) APIs. Each maps its own
//! error replies to [`Error`]s with hints; the types here are all the rest of the
//! pipeline sees.

pub mod brave;
pub mod searxng;
pub mod tavily;

use serde::Serialize;
use serde_json::Value;

use crate::config::{SearchBackend, SearchSettings};
use crate::error::{Error, shorten};

/// Runs `query` on the configured search service.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    match settings.backend {
        SearchBackend::Searxng => searxng::search(settings, query).await,
        SearchBackend::Brave => brave::search(settings, query).await,
        SearchBackend::Tavily => tavily::search(settings, query).await,
    }
}

/// A URL in the form used to recognise the same page across queries and in the
/// cache: scheme and host lower-cased and the default port dropped (the parser does
/// that), fragment dropped, tracking parameters (`utm_*`, `fbclid`, `gclid`,
/// `mc_cid`, `mc_eid`) removed while the others keep their order and encoding, and a
/// trailing slash on a longer path dropped. Unparsable input is returned trimmed.
pub fn normalize_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url.trim()) else {
        return url.trim().to_string();
    };
    parsed.set_fragment(None);
    let kept: Vec<String> = parsed
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
            !(name.is_empty()
                || name.starts_with("utm_")
                || matches!(name.as_str(), "fbclid" | "gclid" | "mc_cid" | "mc_eid"))
        })
        .map(str::to_string)
        .collect();
    parsed.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
    let path = parsed.path().to_string();
    if path.len() > 1 && path.ends_with('/') {
        parsed.set_path(path.trim_end_matches('/'));
    }
    parsed.to_string()
}

/// Why a search found nothing: its engines failed (a search failure, naming them),
/// or there was simply nothing (no sources). The two are different problems with
/// different fixes and exit codes.
pub fn no_hits_error(query: &str, unresponsive: &[(String, String)]) -> Error {
    if unresponsive.is_empty() {
        Error::NoResults {
            query: query.to_string(),
        }
    } else {
        Error::SearchEnginesFailed {
            engines: searxng::describe_unresponsive(unresponsive),
        }
    }
}

/// Keeps the http(s) results in order, each URL once, at most `max` of them. Each
/// item is the provider's URL and the hit to fill it into.
pub(crate) fn collect_hits(
    results: impl Iterator<Item = (Option<String>, SearchHit)>,
    max: usize,
) -> Vec<SearchHit> {
    let mut hits: Vec<SearchHit> = Vec::new();
    for (url, mut hit) in results {
        let Some(url) = url.filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        else {
            continue;
        };
        if hits.len() >= max {
            break;
        }
        if !hits.iter().any(|h| h.url == url) {
            hit.url = url;
            hits.push(hit);
        }
    }
    hits
}

/// The base URL without a trailing slash, for messages.
pub(crate) fn display_url(settings: &SearchSettings) -> String {
    settings.url.as_str().trim_end_matches('/').to_string()
}

/// The HTTP client for search calls: our User-Agent and the configured time limits.
pub(crate) fn http_client(settings: &SearchSettings) -> Result<reqwest::Client, Error> {
    reqwest::Client::builder()
        .user_agent(searxng::USER_AGENT)
        .connect_timeout(settings.timeout.min(std::time::Duration::from_secs(10)))
        .timeout(settings.timeout)
        .build()
        .map_err(|e| unreachable_error(settings, &e))
}

/// A transport failure as the matching error.
pub(crate) fn unreachable_error(settings: &SearchSettings, err: &reqwest::Error) -> Error {
    Error::SearchUnreachable {
        backend: settings.backend,
        url: display_url(settings),
        reason: crate::error::describe_reqwest(err),
    }
}

/// Sends a request and reads the whole reply (bounded by the client's timeout and
/// by [`MAX_REPLY_BYTES`]).
pub(crate) async fn send(
    settings: &SearchSettings,
    request: reqwest::RequestBuilder,
) -> Result<(u16, Vec<u8>), Error> {
    let mut response = request
        .send()
        .await
        .map_err(|e| unreachable_error(settings, &e))?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| unreachable_error(settings, &e))?
    {
        if body.len() + chunk.len() > MAX_REPLY_BYTES {
            return Err(Error::SearchInvalidReply {
                backend: settings.backend,
                url: display_url(settings),
                detail: format!(
                    "the reply is larger than {} MiB",
                    MAX_REPLY_BYTES / 1024 / 1024
                ),
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok((status, body))
}

/// Largest search reply read.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// A provider's error text: the first string found under the usual keys
/// (`error.detail`, `detail.error`, `error.message`, `message`, `error`, `detail`),
/// sanitised to one short line.
pub(crate) fn provider_message(body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let candidates = [
        &value["error"]["detail"],
        &value["detail"]["error"],
        &value["error"]["message"],
        &value["message"],
        &value["error"],
        &value["detail"],
    ];
    let text = candidates
        .iter()
        .find_map(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    crate::render::sanitize_line(&shorten(&text, 200))
}

/// One search result, as the later stages need it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchHit {
    /// The result's address (http or https).
    pub url: String,
    /// The result's title as the engine gave it.
    pub title: String,
    /// The engine's snippet (SearXNG's `content`).
    pub snippet: String,
    /// The engines that returned it.
    pub engines: Vec<String>,
    /// Publication date when the engine knew it (ISO 8601 in SearXNG, a display
    /// string in old searx).
    pub published: Option<String>,
}

/// The outcome of one search call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchOutcome {
    /// The query that ran.
    pub query: String,
    /// Results in rank order, de-duplicated by URL, http(s) only.
    pub hits: Vec<SearchHit>,
    /// Engines that failed, with SearXNG's reason ("timeout", "Suspended: ...").
    pub unresponsive_engines: Vec<(String, String)>,
}

#[cfg(test)]
mod tests {
    use super::normalize_url;

    #[test]
    fn urls_are_normalised_for_merging() {
        assert_eq!(
            normalize_url("HTTPS://Example.ORG:443/a/?utm_source=x&id=3#top"),
            "https://example.org/a?id=3"
        );
        assert_eq!(
            normalize_url("https://example.org/a/"),
            normalize_url("https://example.org/a")
        );
        assert_eq!(
            normalize_url("https://example.org/"),
            normalize_url("https://example.org")
        );
        assert_eq!(
            normalize_url("https://example.org/?fbclid=1&gclid=2"),
            "https://example.org/"
        );
        assert_ne!(
            normalize_url("https://example.org/a?id=1"),
            normalize_url("https://example.org/a?id=2")
        );
        assert_eq!(normalize_url(" not a url "), "not a url");
    }
}
