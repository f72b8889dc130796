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
use crate::error::Error;
/// Formats unresponsive engines for messages; see [`crate::hits::describe_unresponsive`].
pub use crate::hits::describe_unresponsive;
use crate::hits::{SearchHit, SearchOutcome};
use crate::settings::{SearchBackend, SearchSettings};
use crate::text::{sanitize_line, shorten};

/// The longest an HTML results page may take to read (parse and walk); a page over
/// it is a search failure of that instance (the next one is tried).
pub const HTML_BUDGET: Duration = Duration::from_secs(5);

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
    parse_reply(
        reply.status,
        &reply.body,
        &display_url(settings),
        settings.max_results,
    )
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

/// Why an HTML page is not a SearXNG results page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HtmlPageError {
    /// No result and no results list: a login page, a proxy's error page, a theme we
    /// cannot read.
    #[error(
        "its HTML page has no SearXNG results list (no `#urls`, `#main_results` or result in it)"
    )]
    NotAResultsPage,
}

/// The most text kept of one field of a result (title, snippet, engine name): far
/// more than any real one, and what bounds the memory a hostile page can make us use.
const MAX_FIELD_CHARS: usize = 4096;

/// Parses a SearXNG HTML results page: each `article.result` with its link in `h3 a`,
/// snippet in `p.content` and engines in `div.engines span`. Debian's searx 1.1
/// (`div.result`, `h4.result_header a`, `p.result-content`, `span.label`) parses too.
/// Results that are not http(s) links are skipped, as in the JSON reply.
///
/// Linear in the page's size: the page is parsed through the bounding pass
/// ([`crate::extract::parse_bounded`]) and the tree walked once; a result inside a
/// result is part of the outer one, never read again on its own. A page with no
/// result and no results list (`#urls` in SearXNG, `#main_results` in searx) is not
/// a results page ([`HtmlPageError`]); an empty list is a page with no results.
pub fn parse_html(
    html: &str,
    query: &str,
    max_results: usize,
) -> Result<SearchOutcome, HtmlPageError> {
    use ego_tree::iter::Edge;
    use scraper::Node;

    let (doc, _truncated) = crate::extract::parse_bounded(html);
    let has_class = |el: &scraper::node::Element, name: &str| {
        el.classes().any(|c| c.eq_ignore_ascii_case(name))
    };
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut results_list = false;
    // The result being read: its node, and what was found in it so far.
    let mut current: Option<(ego_tree::NodeId, Fields)> = None;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    if matches!(el.id(), Some("urls" | "main_results")) {
                        results_list = true;
                    }
                    match &mut current {
                        None => {
                            if matches!(el.name(), "article" | "div") && has_class(el, "result") {
                                current = Some((node.id(), Fields::default()));
                            }
                        }
                        Some((_, fields)) => fields.open(node.id(), el, &has_class),
                    }
                }
                Node::Text(text) => {
                    if let Some((_, fields)) = &mut current {
                        fields.text(text);
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                let closes_result = matches!(&current, Some((id, _)) if *id == node.id());
                if closes_result {
                    if let Some((_, fields)) = current.take()
                        && let Some(hit) = fields.into_hit()
                        && !hits.iter().any(|h| h.url == hit.url)
                    {
                        hits.push(hit);
                    }
                    if hits.len() >= max_results {
                        break;
                    }
                } else if let Some((_, fields)) = &mut current {
                    fields.close(node.id());
                }
            }
        }
    }
    if hits.is_empty() && !results_list {
        return Err(HtmlPageError::NotAResultsPage);
    }
    Ok(SearchOutcome {
        query: query.to_string(),
        hits,
        unresponsive_engines: Vec::new(),
        warnings: Vec::new(),
    })
}

/// What one result of the HTML page holds, gathered during the one walk: each field
/// is the first of its kind in the result, its text collected until its element
/// closes.
#[derive(Default)]
struct Fields {
    /// Open `h3` / `h4.result_header` elements: a link inside one is the result's.
    headings: Vec<ego_tree::NodeId>,
    /// Open `div.engines` elements: a `span` inside one names an engine.
    engine_lists: Vec<ego_tree::NodeId>,
    href: Option<String>,
    title: Capture,
    snippet: Capture,
    engine: Capture,
    engines: Vec<String>,
    published: Option<Option<String>>,
}

/// Text being collected from one element until it closes.
#[derive(Default)]
struct Capture {
    open: Option<ego_tree::NodeId>,
    done: bool,
    text: String,
}

impl Capture {
    fn start(&mut self, id: ego_tree::NodeId) {
        if !self.done && self.open.is_none() {
            self.open = Some(id);
        }
    }

    fn push(&mut self, text: &str) {
        if self.open.is_some() && self.text.len() < MAX_FIELD_CHARS {
            let room = MAX_FIELD_CHARS - self.text.len();
            let mut end = text.len().min(room);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            self.text.push_str(&text[..end]);
        }
    }

    /// Ends the capture when `id` is its element; returns whether it did.
    fn close(&mut self, id: ego_tree::NodeId) -> bool {
        if self.open == Some(id) {
            self.open = None;
            self.done = true;
            return true;
        }
        false
    }

    fn collapsed(&self) -> String {
        self.text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

impl Fields {
    fn open(
        &mut self,
        id: ego_tree::NodeId,
        el: &scraper::node::Element,
        has_class: &dyn Fn(&scraper::node::Element, &str) -> bool,
    ) {
        match el.name() {
            "h3" => self.headings.push(id),
            "h4" if has_class(el, "result_header") => self.headings.push(id),
            "a" if !self.headings.is_empty()
                && self.href.is_none()
                && self.title.open.is_none() =>
            {
                self.href = Some(el.attr("href").unwrap_or_default().to_string());
                self.title.start(id);
            }
            "p" if has_class(el, "content") || has_class(el, "result-content") => {
                self.snippet.start(id);
            }
            "div" if has_class(el, "engines") => self.engine_lists.push(id),
            "span"
                if (!self.engine_lists.is_empty() || has_class(el, "label"))
                    && self.engine.open.is_none() =>
            {
                self.engine = Capture::default();
                self.engine.start(id);
            }
            "time" if self.published.is_none() => {
                self.published = Some(el.attr("datetime").map(str::to_string));
            }
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        self.title.push(text);
        self.snippet.push(text);
        self.engine.push(text);
    }

    fn close(&mut self, id: ego_tree::NodeId) {
        if self.headings.last() == Some(&id) {
            self.headings.pop();
        }
        if self.engine_lists.last() == Some(&id) {
            self.engine_lists.pop();
        }
        self.title.close(id);
        self.snippet.close(id);
        if self.engine.close(id) {
            let name = self.engine.collapsed();
            if !name.is_empty() {
                self.engines.push(name);
            }
        }
    }

    fn into_hit(self) -> Option<SearchHit> {
        let raw = RawResult {
            url: Some(self.href?),
            title: Some(self.title.collapsed()),
            content: self.snippet.done.then(|| self.snippet.collapsed()),
            engine: None,
            engines: Some(self.engines),
            published_date: self.published.flatten().map(Value::String),
            pubdate: None,
        };
        to_hit(raw)
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
        )
        .unwrap();
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
        )
        .unwrap();
        assert!(found.hits.is_empty());
    }

    #[test]
    fn the_other_html_captures_parse_and_max_results_bounds_them() {
        for rel in [
            "searxng/noformat-html.body.html",
            "searxng/limiter-html-passing-headers.body.html",
        ] {
            let found = parse_html(&capture(rel), "sqlite", 20).unwrap();
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
            assert_eq!(
                parse_html(&capture(rel), "sqlite", 2).unwrap().hits.len(),
                2
            );
        }
    }

    #[test]
    fn searx_1_1_html_parses_too() {
        let found = parse_html(&capture("searx11/unknown-format.body.html"), "sqlite", 20).unwrap();
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
        let found = parse_html(html, "q", 20).unwrap();
        assert_eq!(found.hits.len(), 1);
        assert_eq!(found.hits[0].url, "https://example.org/a");
    }

    #[test]
    fn a_page_that_is_no_results_page_is_an_error_not_zero_results() {
        for page in [
            "<html><body><h1>Log in</h1><form><input name=user></form></body></html>",
            "",
            "<article class=result><h3>no link</h3></article>",
        ] {
            assert_eq!(
                parse_html(page, "q", 20).unwrap_err(),
                HtmlPageError::NotAResultsPage,
                "{page}"
            );
        }
    }

    /// `depth` results nested in each other, each with its link and snippet, and
    /// `pad` bytes of text in the innermost one.
    pub(crate) fn nested_results(depth: usize) -> String {
        let mut page = String::from("<html><body><div id=urls>");
        for i in 0..depth {
            page.push_str(&format!(
                "<div class=\"result\"><h3><a href=\"https://example.org/{i}\">Result {i}</a></h3><p class=\"content\">snippet {i}</p>"
            ));
        }
        page.push_str(&"</div>".repeat(depth));
        page.push_str("</div></body></html>");
        page
    }

    /// Pieces of SearXNG-like markup, opened and closed in any order.
    const PIECES: &[&str] = &[
        "<div class=\"result\">",
        "<article class=\"result result-default\">",
        "<div id=urls>",
        "<h3>",
        "<h4 class=\"result_header\">",
        "<a href=\"https://example.org/p\">",
        "<a href=\"http://example.net/\">",
        "<a href=\"javascript:x\">",
        "<p class=\"content\">",
        "<p class=\"result-content\">",
        "<div class=\"engines\">",
        "<span>",
        "<span class=\"label\">",
        "<time datetime=\"2024-01-02\">",
        "<b>",
        "<table><tr><td>",
        "</div>",
        "</article>",
        "</a>",
        "</h3>",
        "</p>",
        "</span>",
        "words and more words ",
        "&amp; ",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24),
            failure_persistence: None,
            max_shrink_iters: 500,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// However the pieces nest (thousands deep, unclosed, misnested), a page is
        /// read within a time bound proportional to its size, and what comes out is
        /// unique http(s) results within the limit.
        #[test]
        fn any_results_page_is_read_in_bounded_time(
            unit in proptest::collection::vec(proptest::sample::select(PIECES), 1..48),
            times in 1usize..4000,
            max in 1usize..30,
        ) {
            let page = unit.concat().repeat(times);
            let bound = std::time::Duration::from_millis(500)
                + std::time::Duration::from_micros(2 * page.len() as u64);
            let started = std::time::Instant::now();
            let read = parse_html(&page, "q", max);
            let took = started.elapsed();
            proptest::prop_assert!(took < bound, "{} bytes took {:?}", page.len(), took);
            if let Ok(found) = read {
                proptest::prop_assert!(found.hits.len() <= max);
                for (i, hit) in found.hits.iter().enumerate() {
                    proptest::prop_assert!(hit.url.starts_with("http"));
                    proptest::prop_assert!(found.hits[..i].iter().all(|h| h.url != hit.url));
                }
            }
        }
    }

    #[test]
    fn nested_results_are_read_once_in_linear_time() {
        // Issue 24, finding 6: 1.56 MB of nested `div.result` took 68.8 s (every
        // result's subtree searched again for each result around it).
        let page = nested_results(13_000);
        assert!(page.len() > 1_500_000, "{}", page.len());
        let started = std::time::Instant::now();
        let found = parse_html(&page, "q", 20).unwrap();
        let took = started.elapsed();
        // The outer result holds the rest: it is the one hit.
        assert_eq!(found.hits.len(), 1);
        assert_eq!(found.hits[0].url, "https://example.org/0");
        assert_eq!(found.hits[0].snippet, "snippet 0");
        assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    }
}
