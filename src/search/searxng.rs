//! SearXNG's JSON API (`GET /search?q=..&format=json`), for both current SearXNG and
//! Debian's searx 1.1, whose replies differ in small ways (see GUIDE 3).
//!
//! Two things real setups need are handled here too. SearXNG ships with JSON off
//! (403 to `format=json`): then its HTML results page is read instead ([`parse_html`])
//! and the outcome carries a warning naming the `formats` setting. And a user may
//! have several instances: they are tried in order, the next one when one is
//! unreachable, answers 5xx or 429, or has every engine failing; a warning names each
//! instance that failed.
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

/// Searches SearXNG for `query`, trying the configured instances in order (see the
/// module doc), and each one's HTML results page when its JSON format is off.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let instances: Vec<&Url> = std::iter::once(&settings.url)
        .chain(settings.fallback_urls.iter())
        .collect();
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
            Err(e) if worth_the_next_instance(e) => Some(e.to_string()),
            Err(_) => None,
        };
        match (failed, last) {
            (Some(reason), false) => {
                let next = crate::http::display_url(instances[i + 1]);
                warnings.push(format!(
                    "SearXNG at {shown} failed ({}); trying the next instance, {next}",
                    sanitize_line(&shorten(&reason, 200))
                ));
                if let Err(e) = outcome {
                    first_error.get_or_insert(e);
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
                    Err(e) => Err(first_error.unwrap_or(e)),
                };
            }
        }
    }
    unreachable!("the last instance always returns")
}

/// Whether a failure of one instance is worth trying the next one for: it is down,
/// overloaded or rate-limited. A bad parameter would fail everywhere.
fn worth_the_next_instance(error: &Error) -> bool {
    match error {
        Error::SearchUnreachable { .. }
        | Error::SearchRateLimited { .. }
        | Error::SearchInvalidReply { .. }
        | Error::SearchJsonDisabled { .. } => true,
        Error::SearchHttp { status, .. } => *status >= 500,
        _ => false,
    }
}

/// One instance: its JSON API, or its HTML results page when JSON is off.
async fn search_one(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    match search_json(settings, query).await {
        Err(json_off @ Error::SearchJsonDisabled { .. }) => {
            match search_html(settings, query).await {
                Ok(mut found) => {
                    found.warnings.push(format!(
                        "SearXNG at {} has its JSON format off (HTTP 403 to format=json), so its HTML results page was read instead; set `formats: [html, json]` under `search:` in its settings.yml and restart it",
                        display_url(settings)
                    ));
                    Ok(found)
                }
                Err(_) => Err(json_off),
            }
        }
        other => other,
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
    parse_reply(
        reply.status,
        &reply.body,
        &display_url(settings),
        settings.max_results,
    )
}

/// Reads one instance's HTML results page (the same query without `format`), with
/// the headers a browser sends so the limiter lets it through.
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
    let html = String::from_utf8_lossy(&reply.body);
    Ok(parse_html(&html, query, settings.max_results))
}

/// Parses a SearXNG HTML results page: each `article.result` with its link in `h3 a`,
/// snippet in `p.content` and engines in `div.engines span`. Debian's searx 1.1
/// (`div.result`, `h4.result_header a`, `p.result-content`, `span.label`) parses too.
/// Results that are not http(s) links are skipped, as in the JSON reply.
pub fn parse_html(html: &str, query: &str, max_results: usize) -> SearchOutcome {
    use scraper::{Html, Selector};
    let sel = |css: &str| Selector::parse(css).expect("a valid selector");
    let (result, link, snippet, engine, date) = (
        sel("article.result, div.result"),
        sel("h3 a, h4.result_header a"),
        sel("p.content, p.result-content"),
        sel("div.engines span, span.label"),
        sel("time"),
    );
    let text = |el: scraper::ElementRef| -> String {
        el.text()
            .collect::<Vec<_>>()
            .join("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let doc = Html::parse_document(html);
    let mut hits: Vec<SearchHit> = Vec::new();
    for article in doc.select(&result) {
        if hits.len() >= max_results {
            break;
        }
        let Some(a) = article.select(&link).next() else {
            continue;
        };
        let raw = RawResult {
            url: a.value().attr("href").map(str::to_string),
            title: Some(text(a)),
            content: article.select(&snippet).next().map(text),
            engine: None,
            engines: Some(
                article
                    .select(&engine)
                    .map(text)
                    .filter(|e| !e.is_empty())
                    .collect(),
            ),
            published_date: article
                .select(&date)
                .next()
                .and_then(|t| t.value().attr("datetime"))
                .map(|d| Value::String(d.to_string())),
            pubdate: None,
        };
        let Some(hit) = to_hit(raw) else { continue };
        if !hits.iter().any(|h| h.url == hit.url) {
            hits.push(hit);
        }
    }
    SearchOutcome {
        query: query.to_string(),
        hits,
        unresponsive_engines: Vec::new(),
        warnings: Vec::new(),
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
        warnings: Vec::new(),
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

#[cfg(test)]
mod html_tests {
    use super::*;

    fn capture(rel: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/searxng")
            .join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn reads_the_results_page_of_an_instance_with_json_off() {
        let found = parse_html(
            &capture("searxng/nojson-instance-html-results.body.html"),
            "quillfeather lighthouse",
            20,
        );
        let urls: Vec<&str> = found.hits.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8899/pages/quillfeather-lighthouse-history.html",
                "http://127.0.0.1:8899/pages/quillfeather-lighthouse-light.html",
                "http://127.0.0.1:8899/pages/quillfeather-lighthouse-visiting.html",
            ]
        );
        let first = &found.hits[0];
        assert_eq!(first.title, "The Quillfeather Lighthouse: a short history");
        assert_eq!(
            first.snippet,
            "The Quillfeather Lighthouse on Marrowby Point was first lit on 14 October 1911."
        );
        assert_eq!(first.engines, ["localyacy", "local"]);
        assert!(found.unresponsive_engines.is_empty());
    }

    #[test]
    fn a_page_without_results_has_no_hits() {
        let found = parse_html(
            &capture("searxng/nojson-instance-html-noresults.body.html"),
            "zzzqqqxxnothing",
            20,
        );
        assert!(found.hits.is_empty());
    }

    #[test]
    fn the_other_html_captures_parse_and_max_results_bounds_them() {
        for rel in [
            "searxng/noformat-html.body.html",
            "searxng/limiter-html-passing-headers.body.html",
        ] {
            let found = parse_html(&capture(rel), "sqlite", 20);
            assert_eq!(found.hits.len(), 4, "{rel}");
            assert_eq!(
                found.hits[0].url,
                "http://127.0.0.1:8899/pages/sqlite-vacuum.html"
            );
            assert!(
                found
                    .hits
                    .iter()
                    .all(|h| !h.title.is_empty() && !h.snippet.is_empty())
            );
            assert_eq!(parse_html(&capture(rel), "sqlite", 2).hits.len(), 2);
        }
    }

    #[test]
    fn searx_1_1_html_parses_too() {
        let found = parse_html(&capture("searx11/unknown-format.body.html"), "sqlite", 20);
        assert!(!found.hits.is_empty());
        let first = &found.hits[0];
        assert_eq!(first.url, "http://127.0.0.1:8899/pages/sqlite-vacuum.html");
        assert_eq!(first.title, "Reclaiming space in SQLite with VACUUM");
        assert!(first.snippet.starts_with("The VACUUM command rebuilds"));
        assert_eq!(first.engines, ["localyacy", "local"]);
        assert_eq!(first.published.as_deref(), Some("2023-02-17 00:00:00+0000"));
    }

    #[test]
    fn links_that_are_not_http_are_skipped() {
        let html = r#"<article class="result"><h3><a href="javascript:alert(1)">x</a></h3></article>
            <article class="result"><h3><a href="https://example.org/a">A</a></h3><p class="content">a</p></article>"#;
        let found = parse_html(html, "q", 20);
        assert_eq!(found.hits.len(), 1);
        assert_eq!(found.hits[0].url, "https://example.org/a");
    }
}
