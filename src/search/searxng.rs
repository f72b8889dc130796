//! SearXNG's JSON API (`GET /search?q=..&format=json`), for both current SearXNG and
//! Debian's searx 1.1, whose replies differ in small ways (see GUIDE 3).
//!
//! Two things real setups need are handled here too. SearXNG ships with JSON off
//! (403 to `format=json`): then its HTML results page is read instead ([`parse_html`])
//! and the outcome carries a warning naming the `formats` setting. And a user may
//! have several instances: they are tried in order, the next one when one is
//! unreachable, answers 5xx or 429, has every engine failing, or has JSON off and an
//! HTML page that cannot be read; a warning names each instance that failed and why.
//!
//! The HTML page is the server's to shape, so it is read like any untrusted page: off
//! the async runtime within [`HTML_BUDGET`], parsed through the extraction's bounding
//! pass ([`crate::extract::parse_bounded`]), and walked once, top-level results only,
//! so the work is linear in its size however the results nest.
//!
//! The request carries headers that SearXNG's bot detection accepts (Accept with
//! text/html, Accept-Encoding, Accept-Language) and an honest `ground/<version>`
//! User-Agent; each failure mode SearXNG has (403 JSON off, 429 limiter, 400 bad
//! parameter, engines failing behind a 200) becomes its own [`Error`] with a hint.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use url::Url;

use super::client::{display_url, http_client, send};
use super::searxng_extras;
use super::searxng_html::parse_html;
use super::searxng_result::{RawResult, to_hit};
use crate::error::Error;
use crate::hits::{SearchHit, SearchOutcome, describe_unresponsive};
use crate::settings::{SearchBackend, SearchSettings};
use crate::text::{sanitize_line, shorten};

/// The longest an HTML results page may take to read (parse and walk); a page over
/// it is a search failure of that instance (the next one is tried).
pub const HTML_BUDGET: Duration = Duration::from_secs(5);

/// Searches SearXNG for `query`, trying the configured instances in order (see the
/// module doc), and each one's HTML results page when its JSON format is off.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let instances: Vec<&Url> = settings.searxng_urls().collect();
    let mut warnings = Vec::new();
    let mut first_error = None;
    for (i, url) in instances.iter().enumerate() {
        let last = i + 1 == instances.len();
        let mut one = settings.clone();
        one.url = (*url).clone();
        let shown = display_url(&one);
        let outcome = search_one(&one, query).await;
        let failed = match &outcome {
            Ok(found) if found.hits.is_empty() && !found.unresponsive_engines.is_empty() => {
                Some(format!(
                    "every engine failed: {}",
                    describe_unresponsive(&found.unresponsive_engines)
                ))
            }
            Ok(_) => None,
            Err(failure) if worth_the_next_instance(&failure.error) => Some(failure.reason.clone()),
            Err(_) => None,
        };
        match (failed, last) {
            (Some(reason), false) => {
                let next = crate::http::display_url(instances[i + 1]);
                warnings.push(format!(
                    "SearXNG at {shown} failed ({}); trying the next instance, {next}",
                    sanitize_line(&shorten(&reason, 400))
                ));
                if let Err(failure) = outcome {
                    first_error.get_or_insert(failure.error);
                }
            }
            _ => {
                return match outcome {
                    Ok(mut found) => {
                        warnings.append(&mut found.warnings);
                        found.warnings = warnings;
                        Ok(found)
                    }
                    // Every instance failed: the first one's error, which names the
                    // instance the user put first.
                    Err(failure) => Err(first_error.unwrap_or(failure.error)),
                };
            }
        }
    }
    unreachable!("the last instance always returns")
}

/// Whether a failure of one instance is worth trying the next one for: it is down,
/// overloaded or rate-limited, or gives nothing readable. A bad parameter would fail
/// everywhere.
pub(super) fn worth_the_next_instance(error: &Error) -> bool {
    match error {
        Error::SearchUnreachable { .. }
        | Error::SearchRateLimited { .. }
        | Error::SearchInvalidReply { .. }
        | Error::SearchJsonDisabled { .. } => true,
        Error::SearchHttp { status, .. } => *status >= 500,
        _ => false,
    }
}

/// One instance's failure: the error, and the reason a warning gives when the next
/// instance is tried.
struct Failure {
    error: Error,
    reason: String,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure {
            reason: error.to_string(),
            error,
        }
    }
}

/// The advice for an instance with JSON off.
const FORMATS_ADVICE: &str =
    "set `formats: [html, json]` under `search:` in its settings.yml and restart it";

/// One instance: its JSON API, or its HTML results page when JSON is off.
async fn search_one(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Failure> {
    match search_json(settings, query).await {
        Err(json_off @ Error::SearchJsonDisabled { .. }) => {
            match search_html(settings, query).await {
                Ok(mut found) => {
                    found.search_page = Some(search_page(settings, query));
                    found.warnings.push(format!(
                        "SearXNG at {} has its JSON format off (HTTP 403 to format=json), so its HTML results page was read instead; {FORMATS_ADVICE}",
                        display_url(settings)
                    ));
                    Ok(found)
                }
                // The JSON error names the fix; the reason says why the page did not
                // do instead, and keeps the advice.
                Err(html) => Err(Failure {
                    reason: format!(
                        "{json_off}, and its HTML results page could not be read: {}; {FORMATS_ADVICE}",
                        html_problem(&html)
                    ),
                    error: json_off,
                }),
            }
        }
        other => other.map_err(Failure::from),
    }
}

/// What went wrong with an HTML results page, in a few words.
fn html_problem(error: &Error) -> String {
    match error {
        Error::SearchInvalidReply { detail, .. } => detail.clone(),
        other => other.to_string(),
    }
}

/// Searches one SearXNG instance (`settings.url`) through its JSON API only, as
/// `ground doctor` checks it. The reply is read through the shared, size-bounded
/// [`send`].
pub async fn search_json(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let client = http_client(settings)?;
    let language = settings.language.as_deref().unwrap_or("en");
    let request = client
        .get(request_url(settings, query))
        .header(reqwest::header::ACCEPT, "application/json, text/html;q=0.1")
        .header(
            reqwest::header::ACCEPT_LANGUAGE,
            format!("{language}, en;q=0.5"),
        );
    let reply = send(settings, request).await?;
    let mut found = parse_reply(
        reply.status,
        &reply.body,
        &display_url(settings),
        settings.max_results,
    )?;
    let page = search_page(settings, query);
    // An answer that names no address is cited as the results page that showed it.
    for answer in found.answers.iter_mut().filter(|a| a.url.is_none()) {
        answer.url = Some(page.clone());
    }
    found.search_page = Some(page);
    Ok(found)
}

/// The instance's results page for `query`, as a person would open it: no `format`,
/// no credentials.
pub fn search_page(settings: &SearchSettings, query: &str) -> String {
    let mut url = settings.url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    let path = format!("{}/search", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    url.set_fragment(None);
    url.query_pairs_mut().append_pair("q", query);
    url.to_string()
}

/// Reads one instance's HTML results page (the same query without `format`), with
/// the headers a browser sends so the limiter lets it through. The page is read on a
/// blocking thread within [`HTML_BUDGET`]; one that is no SearXNG results page, or
/// takes longer, is [`Error::SearchInvalidReply`].
async fn search_html(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let client = http_client(settings)?;
    let language = settings.language.as_deref().unwrap_or("en");
    let mut url = request_url(settings, query);
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .filter(|(k, _)| k != "format")
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
    let request = client
        .get(url)
        .header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header(
            reqwest::header::ACCEPT_LANGUAGE,
            format!("{language}, en;q=0.5"),
        );
    let reply = send(settings, request).await?;
    if reply.status != 200 {
        return parse_reply(
            reply.status,
            &reply.body,
            &display_url(settings),
            settings.max_results,
        );
    }
    let invalid = |detail: String| Error::SearchInvalidReply {
        backend: SearchBackend::Searxng,
        url: display_url(settings),
        detail,
    };
    let (query_owned, max_results) = (query.to_string(), settings.max_results);
    let body = reply.body;
    let read = tokio::task::spawn_blocking(move || {
        parse_html(&String::from_utf8_lossy(&body), &query_owned, max_results)
    });
    match tokio::time::timeout(HTML_BUDGET, read).await {
        Ok(Ok(parsed)) => parsed.map_err(|e| invalid(e.to_string())),
        Ok(Err(panicked)) => std::panic::resume_unwind(panicked.into_panic()),
        // The walk goes on on its thread and is dropped when done.
        Err(_) => Err(invalid(format!(
            "reading its HTML results page took longer than {} s",
            HTML_BUDGET.as_secs()
        ))),
    }
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
    // The rest of the reply, read member by member: any shape parses.
    #[serde(default)]
    infoboxes: Value,
    #[serde(default)]
    answers: Value,
    #[serde(default)]
    suggestions: Value,
    #[serde(default)]
    corrections: Value,
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
    let extras = searxng_extras::read(
        &reply.infoboxes,
        &reply.answers,
        &reply.suggestions,
        &reply.corrections,
    );
    Ok(SearchOutcome {
        query,
        hits,
        unresponsive_engines,
        warnings: Vec::new(),
        infoboxes: extras.infoboxes,
        answers: extras.answers,
        suggestions: extras.suggestions,
        corrections: extras.corrections,
        search_page: None,
        dropped: 0,
    })
}
