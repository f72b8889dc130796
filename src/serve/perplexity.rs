//! Perplexity's fields on the OpenAI face's replies (perplexity-py's types): `citations`
//! (the sources' URLs, numbered as the text's `[n]` markers), `search_results`
//! (`{title, url, date, snippet}`), and, only when the request asks, `images`
//! (`return_images`: `{image_url, origin_url, height, width}`) and
//! `related_questions` (`return_related_questions`: the search service's suggestions).

use serde_json::{Value, json};

use crate::report::Report;

/// Perplexity's `citations` (every source's URL, numbered as the markers) and
/// `search_results` (title, url, date, snippet of each).
pub(super) fn fields(report: &Report) -> (Value, Value) {
    let urls: Vec<&str> = report.sources.iter().map(|s| s.url.as_str()).collect();
    let results: Vec<Value> = report
        .sources
        .iter()
        .map(|s| {
            let hit = report.hits.iter().find(|h| h.url == s.url);
            json!({
                "title": s.title,
                "url": s.url,
                "date": hit.and_then(|h| h.published.clone()),
                "snippet": hit.map(|h| h.snippet.clone()).unwrap_or_default(),
            })
        })
        .collect();
    (json!(urls), json!(results))
}

/// Adds to `reply` Perplexity's `images` when `images` (`return_images`) and
/// `related_questions` when `related` (`return_related_questions`) were asked for;
/// neither key otherwise.
pub(super) fn extras(images: bool, related: bool, report: &Report, reply: &mut Value) {
    if images {
        let found = report.images.as_deref().unwrap_or_default();
        reply["images"] = json!(found.iter().map(|i| i.perplexity()).collect::<Vec<_>>());
    }
    if related {
        reply["related_questions"] = json!(report.extras.suggestions);
    }
}
