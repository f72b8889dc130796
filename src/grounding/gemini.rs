//! Gemini's `groundingMetadata`, in its REST shape (camelCase), made from a checked
//! answer: what `--json` carries so that renderers written for Gemini's grounding
//! work on ground's answers unchanged. Segment offsets are UTF-8 byte offsets into the
//! answer, start inclusive, end exclusive (the statements' own offsets).

use serde_json::{Value, json};

use super::GroundedAnswer;
use crate::context::{SourceKind, SourceText};

/// Gemini's `groundingMetadata` (REST, camelCase): one chunk per source given to the
/// model (chunk index = source number - 1), one support per supported statement,
/// listing its supporting sources ([`Statement::supporting_sources`]), and the
/// `searchEntryPoint` of the queries that ran ([`search_entry_point`], absent when
/// none did). `kinds` are the sources' kinds in order (a source past its end is a
/// page); `search_pages` each query's results page. Each support also says what
/// supports it (`"support": "quote"` or `"match"`), a key of ours that Gemini's
/// renderers ignore; a statement whose quotes it contradicts has none.
pub fn grounding_metadata(
    answer: &GroundedAnswer,
    sources: &[SourceText],
    kinds: &[SourceKind],
    queries: &[String],
    search_pages: &[(String, Option<String>)],
) -> Value {
    let chunks: Vec<Value> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let web =
                json!({"uri": s.url, "title": s.title, "domain": crate::http::host_of(&s.url)});
            match kinds.get(i).copied().unwrap_or(SourceKind::Page) {
                SourceKind::Page => json!({"web": web}),
                // Not Gemini's: a short source the search gave, not a page read.
                short => json!({"web": web, "kind": short.name()}),
            }
        })
        .collect();
    let supports: Vec<Value> = answer
        .statements
        .iter()
        .filter(|s| s.supported())
        .map(|s| {
            let supporting = s.supporting_sources();
            json!({
                "segment": {"startIndex": s.start, "endIndex": s.end, "text": s.text},
                "groundingChunkIndices": supporting.iter().map(|(n, _)| n - 1).collect::<Vec<_>>(),
                "confidenceScores": supporting.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
                "support": s.support.name(),
            })
        })
        .collect();
    let mut metadata = json!({
        "webSearchQueries": queries,
        "groundingChunks": chunks,
        "groundingSupports": supports,
    });
    if let Some(entry) = search_entry_point(queries, search_pages) {
        metadata["searchEntryPoint"] = entry;
    }
    metadata
}

/// The stylesheet of the search entry point: chips, light by default and dark when
/// the reader's system is (its class names are ours, so the page's own are untouched).
const ENTRY_POINT_STYLE: &str = "<style>\
.ground-search{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin:8px 0;\
font-family:system-ui,-apple-system,'Segoe UI',Roboto,Arial,sans-serif;font-size:14px;line-height:20px}\
.ground-search .ground-search-label{color:#5f6368;margin-right:2px}\
.ground-search .ground-search-chip{display:inline-block;max-width:100%;overflow:hidden;\
text-overflow:ellipsis;white-space:nowrap;padding:4px 12px;border:1px solid #dadce0;\
border-radius:16px;background:#ffffff;color:#1f1f1f;text-decoration:none}\
.ground-search a.ground-search-chip:hover{background:#f1f3f4}\
@media (prefers-color-scheme: dark){\
.ground-search .ground-search-label{color:#9aa0a6}\
.ground-search .ground-search-chip{background:#202124;border-color:#5f6368;color:#e8eaed}\
.ground-search a.ground-search-chip:hover{background:#303134}}\
</style>";

/// Gemini's `searchEntryPoint`: `{"renderedContent": html}`, a self-contained HTML
/// fragment (its own `<style>`, light and dark) with one chip per web search query,
/// each a link to that query's results page on the service that answered (a query
/// whose service has no page is a chip without a link). Every query and address is
/// HTML-escaped, and only http(s) addresses become links: the queries come from a
/// person and a model. `None` when no search ran.
pub fn search_entry_point(
    queries: &[String],
    search_pages: &[(String, Option<String>)],
) -> Option<Value> {
    if queries.is_empty() {
        return None;
    }
    let mut html = String::from(ENTRY_POINT_STYLE);
    html.push_str(
        "<div class=\"ground-search\"><span class=\"ground-search-label\">Searches:</span>",
    );
    for query in queries {
        let page = search_pages
            .iter()
            .find(|(q, _)| q == query)
            .and_then(|(_, page)| page.as_deref())
            .filter(|p| {
                let lower = p.to_ascii_lowercase();
                lower.starts_with("https://") || lower.starts_with("http://")
            });
        let shown = escape_html(&crate::text::shorten(
            &crate::text::sanitize_line(query),
            120,
        ));
        match page {
            Some(page) => html.push_str(&format!(
                "<a class=\"ground-search-chip\" href=\"{}\" target=\"_blank\" rel=\"noopener noreferrer\">{shown}</a>",
                escape_html(page)
            )),
            None => html.push_str(&format!("<span class=\"ground-search-chip\">{shown}</span>")),
        }
    }
    html.push_str("</div>");
    Some(json!({"renderedContent": html}))
}

/// `text` safe inside HTML text and double- or single-quoted attributes.
fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::search_entry_point;

    #[test]
    fn the_entry_point_is_inert_html_with_one_chip_per_query() {
        let hostile = r#"tardigrades</a><script>alert("x")</script>' onmouseover="alert(1)"#;
        let queries = vec![
            hostile.to_string(),
            "plain query".to_string(),
            "no page".to_string(),
        ];
        let pages = vec![
            (
                hostile.to_string(),
                Some(format!(
                    "https://searx.example/search?q={}&x=\"><script>",
                    url::form_urlencoded::byte_serialize(hostile.as_bytes()).collect::<String>()
                )),
            ),
            (
                "plain query".to_string(),
                Some("javascript:alert(1)".to_string()),
            ),
            ("no page".to_string(), None),
        ];
        let entry = search_entry_point(&queries, &pages).unwrap();
        let html = entry["renderedContent"].as_str().unwrap();
        let fragment = scraper::Html::parse_fragment(html);
        let select = |css: &str| scraper::Selector::parse(css).unwrap();
        assert_eq!(fragment.select(&select("script")).count(), 0, "{html}");
        assert!(
            fragment
                .root_element()
                .descendants()
                .filter_map(|n| n.value().as_element())
                .all(|e| e.attrs().all(|(name, _)| !name.starts_with("on"))),
            "{html}"
        );
        // Three chips, the query as their text; only the http(s) page is a link.
        let chips: Vec<String> = fragment
            .select(&select(".ground-search-chip"))
            .map(|c| c.text().collect())
            .collect();
        assert_eq!(chips, [hostile, "plain query", "no page"]);
        let links: Vec<&str> = fragment
            .select(&select("a"))
            .filter_map(|a| a.value().attr("href"))
            .collect();
        assert_eq!(links.len(), 1);
        assert!(links[0].starts_with("https://searx.example/search?q=tardigrades%3C%2Fa%3E"));
        assert!(
            links[0].ends_with("&x=\"><script>"),
            "the href holds it as text"
        );
        // Light and dark, inside the fragment.
        assert_eq!(fragment.select(&select("style")).count(), 1);
        assert!(html.contains("@media (prefers-color-scheme: dark)"));
        assert!(search_entry_point(&[], &[]).is_none());
    }
}
