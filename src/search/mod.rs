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
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchOutcome {
    /// The query that ran.
    pub query: String,
    /// Results in rank order, de-duplicated by URL, http(s) only.
    pub hits: Vec<SearchHit>,
    /// Engines that failed, with SearXNG's reason ("timeout", "Suspended: ...").
    pub unresponsive_engines: Vec<(String, String)>,
}
