//! SearXNG's HTML results page, read when an instance has JSON off (403 to
//! `format=json`). The page is the server's to shape, so it is read like any untrusted
//! page: parsed through the extraction's bounding pass ([`crate::extract::parse_bounded`])
//! and walked once, top-level results only, so the work is linear in its size however
//! the results nest; every field is capped. The caller ([`super::searxng`]) runs it off
//! the async runtime within its time budget.

use serde_json::Value;

use super::searxng_result::{RawResult, to_hit};
use crate::hits::{SearchHit, SearchOutcome};

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
pub(super) const MAX_FIELD_CHARS: usize = 4096;

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
    Ok(SearchOutcome::of(query, hits))
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

/// Text being collected from one element until it closes (at most
/// [`MAX_FIELD_CHARS`]): the one-walk readers of results pages (this one and
/// DuckDuckGo's) fill one per field.
#[derive(Default)]
pub(super) struct Capture {
    open: Option<ego_tree::NodeId>,
    done: bool,
    text: String,
}

impl Capture {
    /// Starts collecting the text inside the element `id` (unless done or busy).
    pub(super) fn start(&mut self, id: ego_tree::NodeId) {
        if !self.done && self.open.is_none() {
            self.open = Some(id);
        }
    }

    /// Adds `text` when collecting.
    pub(super) fn push(&mut self, text: &str) {
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
    pub(super) fn close(&mut self, id: ego_tree::NodeId) -> bool {
        if self.open == Some(id) {
            self.open = None;
            self.done = true;
            return true;
        }
        false
    }

    /// Whether the element was seen and closed.
    pub(super) fn done(&self) -> bool {
        self.done
    }

    /// Whether the element is open now.
    pub(super) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// The text with whitespace collapsed to single spaces.
    pub(super) fn collapsed(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(rel: &str) -> String {
        crate::testing::fixture_text(&format!("searxng/{rel}"))
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
            // Ten times what a loaded debug build needs, far below the minutes a
            // quadratic read of such a page takes: it catches the blow-up, not a slow
            // machine (speed itself is measured by a benchmark, not a test).
            let bound = std::time::Duration::from_secs(2)
                + std::time::Duration::from_micros(20 * page.len() as u64);
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
