//! DuckDuckGo's HTML results page (`POST {base}/html/`), the page DuckDuckGo serves
//! to browsers without JavaScript. No key, the whole web, but **a page made for
//! people, not an API**: DuckDuckGo blocks clients it takes for bots (a challenge
//! page, or HTTP 202) and may change the page at any time. So it is opt-in only
//! (`--search duckduckgo`); `--search auto` never picks it.
//!
//! The request is the one SearXNG's own engine sends (`searx/engines/duckduckgo.py`):
//! form fields `q` (bangs quoted, at most [`MAX_QUERY_CHARS`]), `b` (empty: the first
//! page), `kl` (the region, `wt-wt` for all) and `df` (the time range: d, w, m or y),
//! with the headers a browser's form submission carries (`Sec-Fetch-*`, `Referer`,
//! `Accept-Language`), and the region and time range also as cookies. The
//! User-Agent stays our own honest one. Redirects are not followed: a search never
//! leads elsewhere.
//!
//! The reply is read like any untrusted page: off the async runtime within
//! [`super::searxng::HTML_BUDGET`], through the extraction's bounding pass
//! ([`crate::extract::parse_bounded`]), and walked once. Results are the
//! `div.web-result`s under `div#links` (SearXNG's selector): the link and title from
//! the `h2`'s `a`, the snippet from `a.result__snippet`; ads (`result--ad`) are
//! dropped, and redirect links (`//duckduckgo.com/l/?uddg=<the URL>&rut=...`) are
//! decoded to the page they lead to. A challenge page (`form#challenge-form`) or an
//! HTTP 202 is [`Error::SearchChallenged`], never an empty result; a page with
//! neither results nor `#links` is [`Error::SearchInvalidReply`].

use std::time::Duration;

use url::Url;

use super::client::{display_url, send};
use super::searxng_html::Capture;
use crate::error::Error;
use crate::hits::{SearchHit, SearchOutcome, collect_hits};
use crate::settings::{SearchBackend, SearchSettings, TimeRange};

/// DuckDuckGo does not take queries of 500 characters or more (SearXNG's engine);
/// longer ones are cut at a word.
pub const MAX_QUERY_CHARS: usize = 499;

/// Why a DuckDuckGo page gave no results.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PageError {
    /// The challenge page: DuckDuckGo takes the client for a bot.
    #[error("a challenge page (`form#challenge-form`)")]
    Challenge,
    /// No results list and no result: not a results page.
    #[error("its page has no results list (no `#links` and no result in it)")]
    NotAResultsPage,
}

/// Searches DuckDuckGo for `query`.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let client = crate::http::client_builder(
        settings.timeout.min(Duration::from_secs(10)),
        Some(settings.timeout),
    )
    .redirect(reqwest::redirect::Policy::none())
    .build()
    .map_err(|e| Error::Internal {
        message: format!(
            "cannot build the HTTP client for search: {}",
            crate::http::describe_error(&e)
        ),
    })?;
    let sent = sent_query(query);
    let region = region(settings.language.as_deref());
    let time = settings.time_range.map(|r| match r {
        TimeRange::Day => "d",
        TimeRange::Week => "w",
        TimeRange::Month => "m",
        TimeRange::Year => "y",
    });
    let form = form_body(&sent, &region, time);
    let mut cookies = Vec::new();
    if region != "wt-wt" {
        cookies.push(format!("kl={region}"));
    }
    if let Some(time) = time {
        cookies.push(format!("df={time}"));
    }
    let endpoint = endpoint(&settings.url);
    let mut request = client
        .post(endpoint.clone())
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .header(
            reqwest::header::ACCEPT,
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        )
        .header(
            reqwest::header::ACCEPT_LANGUAGE,
            accept_language(settings.language.as_deref()),
        )
        .header("Sec-Fetch-Dest", "document")
        .header("Sec-Fetch-Mode", "navigate")
        .header("Sec-Fetch-Site", "same-origin")
        .header("Sec-Fetch-User", "?1")
        .header(reqwest::header::REFERER, endpoint.as_str())
        .body(form);
    if !cookies.is_empty() {
        request = request.header(reqwest::header::COOKIE, cookies.join("; "));
    }
    let reply = send(settings, request).await?;
    let url = display_url(settings);
    match reply.status {
        200 => {}
        202 => {
            return Err(Error::SearchChallenged {
                backend: SearchBackend::DuckDuckGo,
                query: query.to_string(),
            });
        }
        429 => {
            return Err(Error::SearchApiRateLimited {
                backend: SearchBackend::DuckDuckGo,
                message: "HTTP 429 Too Many Requests".into(),
            });
        }
        status => {
            let detail = (300..400)
                .contains(&status)
                .then(|| "it redirected the search elsewhere".to_string());
            return Err(Error::SearchHttp {
                backend: SearchBackend::DuckDuckGo,
                detail,
                url,
                status,
            });
        }
    }
    let (owned, max_results) = (query.to_string(), settings.max_results);
    let body = reply.body;
    let read = tokio::task::spawn_blocking(move || {
        parse_page(&String::from_utf8_lossy(&body), &owned, max_results)
    });
    let budget = super::searxng::HTML_BUDGET;
    match tokio::time::timeout(budget, read).await {
        Ok(Ok(Ok(mut found))) => {
            found.search_page = Some(public_search_page(query));
            Ok(found)
        }
        Ok(Ok(Err(PageError::Challenge))) => Err(Error::SearchChallenged {
            backend: SearchBackend::DuckDuckGo,
            query: query.to_string(),
        }),
        Ok(Ok(Err(other))) => Err(Error::SearchInvalidReply {
            backend: SearchBackend::DuckDuckGo,
            url,
            detail: other.to_string(),
        }),
        Ok(Err(panicked)) => std::panic::resume_unwind(panicked.into_panic()),
        Err(_) => Err(Error::SearchInvalidReply {
            backend: SearchBackend::DuckDuckGo,
            url,
            detail: format!(
                "reading its results page took longer than {} s",
                budget.as_secs()
            ),
        }),
    }
}

/// The form's fields as a browser posts them: `q`, `b` (empty: the first page),
/// `kl` and, for a time range, `df`.
fn form_body(query: &str, region: &str, time: Option<&str>) -> String {
    let mut form = url::form_urlencoded::Serializer::new(String::new());
    form.append_pair("q", query)
        .append_pair("b", "")
        .append_pair("kl", region);
    if let Some(time) = time {
        form.append_pair("df", time);
    }
    form.finish()
}

/// `{base}/html/`.
fn endpoint(base: &Url) -> Url {
    let mut url = base.clone();
    let path = format!("{}/html/", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_query(None);
    url
}

/// The query as sent: `!bang` words quoted, so that DuckDuckGo searches for them
/// instead of redirecting to another site, and cut at a word to [`MAX_QUERY_CHARS`].
pub fn sent_query(query: &str) -> String {
    let mut out = String::new();
    for word in query.split_whitespace() {
        let word = if word.starts_with('!') && word.len() > 1 {
            format!("'{word}'")
        } else {
            word.to_string()
        };
        if out.chars().count() + word.chars().count() + 1 > MAX_QUERY_CHARS {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&word);
    }
    out
}

/// DuckDuckGo's region (`kl`) for a language setting: `de-CH` is `ch-de`; a
/// language without a region, or none, is every region (`wt-wt`).
pub fn region(language: Option<&str>) -> String {
    let Some((lang, country)) = language.and_then(|l| l.trim().split_once(['-', '_'])) else {
        return "wt-wt".into();
    };
    let ok = |s: &str| (2..=3).contains(&s.len()) && s.chars().all(|c| c.is_ascii_alphabetic());
    if ok(lang) && ok(country) {
        format!(
            "{}-{}",
            country.to_ascii_lowercase(),
            lang.to_ascii_lowercase()
        )
    } else {
        "wt-wt".into()
    }
}

/// `Accept-Language` as a browser sends it for the language setting (`de-CH` gives
/// `de-CH,de;q=0.9,en;q=0.5`), English when none is set.
fn accept_language(language: Option<&str>) -> String {
    match language
        .map(str::trim)
        .filter(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
    {
        Some(l) => {
            let base = l.split('-').next().unwrap_or(l);
            if base == l {
                format!("{l},en;q=0.5")
            } else {
                format!("{l},{base};q=0.9,en;q=0.5")
            }
        }
        None => "en-US,en;q=0.5".into(),
    }
}

/// The page a result link leads to: DuckDuckGo's redirect links
/// (`//duckduckgo.com/l/?uddg=<the URL, percent-encoded>&rut=...`) decoded, others as
/// they are (a scheme-relative link made https).
pub fn decode_link(href: &str) -> String {
    let href = href.trim();
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_string()
    };
    let Ok(parsed) = Url::parse(&absolute) else {
        return absolute;
    };
    let ours = parsed
        .host_str()
        .is_some_and(|h| h == "duckduckgo.com" || h.ends_with(".duckduckgo.com"));
    if ours
        && parsed.path() == "/l/"
        && let Some((_, target)) = parsed.query_pairs().find(|(k, _)| k == "uddg")
    {
        return target.into_owned();
    }
    absolute
}

/// Reads a DuckDuckGo HTML results page (see the module doc). Linear in the page's
/// size: parsed through the bounding pass and walked once; a result inside a result
/// is part of the outer one.
pub fn parse_page(html: &str, query: &str, max_results: usize) -> Result<SearchOutcome, PageError> {
    use ego_tree::iter::Edge;
    use scraper::Node;

    let (doc, _truncated) = crate::extract::parse_bounded(html);
    let has_class = |el: &scraper::node::Element, name: &str| {
        el.classes().any(|c| c.eq_ignore_ascii_case(name))
    };
    let mut results: Vec<(Option<String>, SearchHit)> = Vec::new();
    let mut links_list = false;
    // Open `#links` elements: results count only inside one.
    let mut inside_links: Vec<ego_tree::NodeId> = Vec::new();
    let mut current: Option<(ego_tree::NodeId, Fields)> = None;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    if el.name() == "form" && el.id() == Some("challenge-form") {
                        return Err(PageError::Challenge);
                    }
                    if el.id() == Some("links") {
                        links_list = true;
                        inside_links.push(node.id());
                    }
                    match &mut current {
                        None => {
                            if !inside_links.is_empty()
                                && el.name() == "div"
                                && has_class(el, "web-result")
                            {
                                let ad = has_class(el, "result--ad");
                                current = Some((node.id(), Fields::new(ad)));
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
                if inside_links.last() == Some(&node.id()) {
                    inside_links.pop();
                }
                let closes_result = matches!(&current, Some((id, _)) if *id == node.id());
                if closes_result {
                    if let Some((_, fields)) = current.take()
                        && let Some(result) = fields.into_result()
                    {
                        results.push(result);
                    }
                } else if let Some((_, fields)) = &mut current {
                    fields.close(node.id());
                }
            }
        }
    }
    if results.is_empty() && !links_list {
        return Err(PageError::NotAResultsPage);
    }
    Ok(SearchOutcome::of(
        query,
        collect_hits(results.into_iter(), max_results),
    ))
}

/// DuckDuckGo's public results page for `query`.
pub fn public_search_page(query: &str) -> String {
    let mut url = Url::parse("https://duckduckgo.com/").expect("a valid URL");
    url.query_pairs_mut().append_pair("q", query);
    url.to_string()
}

/// What one result holds, gathered during the one walk.
struct Fields {
    ad: bool,
    /// Open `h2` elements: the first link inside one is the result's.
    headings: Vec<ego_tree::NodeId>,
    href: Option<String>,
    title: Capture,
    snippet: Capture,
}

impl Fields {
    fn new(ad: bool) -> Self {
        Fields {
            ad,
            headings: Vec::new(),
            href: None,
            title: Capture::default(),
            snippet: Capture::default(),
        }
    }

    fn open(
        &mut self,
        id: ego_tree::NodeId,
        el: &scraper::node::Element,
        has_class: &dyn Fn(&scraper::node::Element, &str) -> bool,
    ) {
        match el.name() {
            "h2" => self.headings.push(id),
            "a" if !self.headings.is_empty() && self.href.is_none() && !self.title.is_open() => {
                self.href = Some(el.attr("href").unwrap_or_default().to_string());
                self.title.start(id);
            }
            "a" if has_class(el, "result__snippet") => self.snippet.start(id),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        self.title.push(text);
        self.snippet.push(text);
    }

    fn close(&mut self, id: ego_tree::NodeId) {
        if self.headings.last() == Some(&id) {
            self.headings.pop();
        }
        self.title.close(id);
        self.snippet.close(id);
    }

    /// The result as (its link, decoded; the hit to fill it into); ads and results
    /// without a link give none.
    fn into_result(self) -> Option<(Option<String>, SearchHit)> {
        if self.ad {
            return None;
        }
        let href = decode_link(&self.href?);
        // An ad that lacks its class still leads through DuckDuckGo's ad clicks.
        if href.contains("duckduckgo.com/y.js") {
            return None;
        }
        let hit = SearchHit {
            url: String::new(),
            title: self.title.collapsed(),
            snippet: if self.snippet.done() {
                self.snippet.collapsed()
            } else {
                String::new()
            },
            engines: vec!["duckduckgo".into()],
            published: None,
        };
        Some((Some(href), hit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        crate::testing::fixture_text(&format!("duckduckgo/{name}"))
    }

    #[test]
    fn results_are_read_ads_dropped_and_redirect_links_decoded() {
        let found = parse_page(&fixture("results.html"), "tardigrades space", 20).unwrap();
        let urls: Vec<&str> = found.hits.iter().map(|h| h.url.as_str()).collect();
        assert_eq!(
            urls,
            [
                "https://en.wikipedia.org/wiki/Tardigrade",
                "https://www.esa.int/Science_Exploration/Tardigrades_in_space",
                "https://example.org/water-bears?lang=en&x=1",
            ]
        );
        let first = &found.hits[0];
        assert_eq!(first.title, "Tardigrade - Wikipedia");
        assert_eq!(
            first.snippet,
            "Tardigrades, known colloquially as water bears or moss piglets, are a phylum of eight-legged micro-animals."
        );
        assert_eq!(first.engines, ["duckduckgo"]);
        assert!(
            found.hits.iter().all(|h| !h.title.contains("Sponsored")),
            "ads are dropped"
        );
        assert_eq!(
            parse_page(&fixture("results.html"), "q", 1)
                .unwrap()
                .hits
                .len(),
            1
        );
    }

    #[test]
    fn no_results_is_an_empty_list_and_a_challenge_is_an_error() {
        let found = parse_page(&fixture("no-results.html"), "zzqxv", 20).unwrap();
        assert!(found.hits.is_empty());
        assert_eq!(
            parse_page(&fixture("challenge.html"), "q", 20),
            Err(PageError::Challenge)
        );
        assert_eq!(
            parse_page("<html><body><p>Log in</p></body></html>", "q", 20),
            Err(PageError::NotAResultsPage)
        );
    }

    #[test]
    fn links_are_decoded_and_queries_made_safe_to_send() {
        assert_eq!(
            decode_link(
                "//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Fa%3Fb%3D1%26c%3D2&rut=abc"
            ),
            "https://example.org/a?b=1&c=2"
        );
        assert_eq!(
            decode_link("https://example.org/x"),
            "https://example.org/x"
        );
        assert_eq!(decode_link("//example.org/y"), "https://example.org/y");
        assert_eq!(sent_query("!w  tardigrades"), "'!w' tardigrades");
        assert!(sent_query(&"word ".repeat(200)).chars().count() <= MAX_QUERY_CHARS);
        assert_eq!(region(Some("de-CH")), "ch-de");
        assert_eq!(region(Some("en")), "wt-wt");
        assert_eq!(region(None), "wt-wt");
        assert_eq!(accept_language(Some("de-CH")), "de-CH,de;q=0.9,en;q=0.5");
    }

    #[test]
    fn nested_results_are_read_once() {
        let mut html = String::from("<html><body><div id=\"links\">");
        for i in 0..2000 {
            html.push_str(&format!(
                "<div class=\"result web-result\"><h2><a href=\"https://example.org/{i}\">t{i}</a></h2>"
            ));
        }
        html.push_str(&"</div>".repeat(2000));
        html.push_str("</div></body></html>");
        let started = std::time::Instant::now();
        let found = parse_page(&html, "q", 20).unwrap();
        assert_eq!(
            found.hits.len(),
            1,
            "a result inside a result is part of it"
        );
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}
