//! SearXNG's JSON API (`GET /search?q=..&format=json`), for both current SearXNG and
//! Debian's searx 1.1, whose replies differ in small ways (see GUIDE 3).
//!
//! The request carries headers that SearXNG's bot detection accepts (Accept with
//! text/html, Accept-Encoding, Accept-Language) and an honest `ground/<version>`
//! User-Agent; each failure mode SearXNG has (403 JSON off, 429 limiter, 400 bad
//! parameter, engines failing behind a 200) becomes its own [`Error`] with a hint.

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::client::{display_url, http_client, send};
use crate::error::Error;
use crate::hits::{SearchHit, SearchOutcome};
use crate::settings::{SearchBackend, SearchSettings};
use crate::text::{sanitize_line, shorten};

/// Searches SearXNG for `query` with the configured parameters. The reply is read
/// through the shared, size-bounded [`send`].
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let client = http_client(settings)?;
    let language = settings.language.as_deref().unwrap_or("en");
    let request = client
        .get(request_url(settings, query))
        .header(reqwest::header::ACCEPT, "application/json, text/html;q=0.1")
        .header(
            reqwest::header::ACCEPT_LANGUAGE,
            format!("{language}, en;q=0.5"),
        );
    let (status, body) = send(settings, request).await?;
    parse_reply(status, &body, &display_url(settings), settings.max_results)
}

/// Builds `{base}/search?q=..&format=json` plus the optional parameters.
pub fn request_url(settings: &SearchSettings, query: &str) -> Url {
    let mut url = settings.url.clone();
    let path = format!("{}/search", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    {
        let mut pairs = url.query_pairs_mut();
        pairs.append_pair("q", query).append_pair("format", "json");
        let optional = [
            ("language", settings.language.clone()),
            ("categories", settings.categories.clone()),
            ("engines", settings.engines.clone()),
            (
                "time_range",
                settings.time_range.map(|r| r.as_str().to_string()),
            ),
            ("safesearch", settings.safesearch.map(|s| s.to_string())),
        ];
        for (name, value) in optional {
            if let Some(value) = value {
                pairs.append_pair(name, &value);
            }
        }
    }
    url
}

#[derive(Deserialize)]
struct Reply {
    query: Option<Value>,
    results: Vec<RawResult>,
    #[serde(default)]
    unresponsive_engines: Vec<Value>,
}

#[derive(Deserialize)]
struct RawResult {
    url: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    engine: Option<String>,
    #[serde(default)]
    engines: Option<Vec<String>>,
    #[serde(default, rename = "publishedDate")]
    published_date: Option<Value>,
    #[serde(default)]
    pubdate: Option<Value>,
}

#[derive(Deserialize)]
struct ErrorReply {
    error: String,
}

/// Turns an HTTP status and body from SearXNG into hits or the matching error.
/// `max_results` bounds how many results are kept.
pub fn parse_reply(
    status: u16,
    body: &[u8],
    url: &str,
    max_results: usize,
) -> Result<SearchOutcome, Error> {
    match status {
        200 => {}
        403 => return Err(Error::SearchJsonDisabled { url: url.into() }),
        429 => return Err(Error::SearchRateLimited { url: url.into() }),
        400 => {
            let message = serde_json::from_slice::<ErrorReply>(body)
                .map(|e| e.error)
                .unwrap_or_else(|_| shorten(&String::from_utf8_lossy(body), 120));
            return Err(Error::SearchBadRequest {
                message: sanitize_line(&message),
            });
        }
        _ => {
            return Err(Error::SearchHttp {
                backend: SearchBackend::Searxng,
                detail: None,
                url: url.into(),
                status,
            });
        }
    }
    let reply: Reply = serde_json::from_slice(body).map_err(|e| {
        let start = String::from_utf8_lossy(&body[..body.len().min(200)]).to_string();
        let detail = if start.trim_start().starts_with('<') {
            "it is HTML, not JSON".to_string()
        } else {
            format!("{e}")
        };
        Error::SearchInvalidReply {
            backend: SearchBackend::Searxng,
            url: url.into(),
            detail,
        }
    })?;

    let mut hits: Vec<SearchHit> = Vec::new();
    for raw in reply.results {
        if hits.len() >= max_results {
            break;
        }
        let Some(hit) = to_hit(raw) else { continue };
        if !hits.iter().any(|h| h.url == hit.url) {
            hits.push(hit);
        }
    }
    let unresponsive_engines = reply
        .unresponsive_engines
        .iter()
        .filter_map(|pair| {
            let pair = pair.as_array()?;
            let name = pair.first()?.as_str()?.to_string();
            let reason = pair
                .get(1)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            Some((name, reason))
        })
        .collect();
    let query = reply
        .query
        .and_then(|q| q.as_str().map(str::to_string))
        .unwrap_or_default();
    Ok(SearchOutcome {
        query,
        hits,
        unresponsive_engines,
    })
}

fn to_hit(raw: RawResult) -> Option<SearchHit> {
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

/// Formats unresponsive engines as "name (reason), ..." for messages.
pub fn describe_unresponsive(engines: &[(String, String)]) -> String {
    engines
        .iter()
        .map(|(name, reason)| format!("{name} ({reason})"))
        .collect::<Vec<_>>()
        .join(", ")
}
