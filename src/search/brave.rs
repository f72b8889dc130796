//! Brave Search API (`GET {base}/res/v1/web/search`, key in `X-Subscription-Token`).
//!
//! Replies carry results under `web.results[]` (`title`, `url`, `description`,
//! `page_age`/`age`); errors are `{"type": "ErrorResponse", "error": {"code",
//! "detail", "status"}}` with 401/403/422 for a bad key, 402 for a used-up plan and
//! 429 for the rate limit.

use serde::Deserialize;

use super::client::http_client;
use super::hosted::{self, Refusal};
use crate::error::Error;
use crate::hits::{MAX_CORRECTIONS, SearchHit, SearchOutcome, collect_hits, merge_queries};
use crate::settings::{SearchBackend, SearchSettings, TimeRange};

/// Brave returns at most this many results per request.
pub const MAX_COUNT: usize = 20;

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    web: Option<Web>,
    #[serde(default)]
    query: Option<QueryInfo>,
}

/// Brave's `query` object: what it did with the query (only `altered` is read).
#[derive(Deserialize)]
struct QueryInfo {
    #[serde(default)]
    altered: Option<String>,
}

/// Brave's public results page for `query`.
pub fn public_search_page(query: &str) -> String {
    let mut url = url::Url::parse("https://search.brave.com/search").expect("a valid URL");
    url.query_pairs_mut().append_pair("q", query);
    url.to_string()
}

#[derive(Deserialize)]
struct Web {
    #[serde(default)]
    results: Vec<WebResult>,
}

#[derive(Deserialize)]
struct WebResult {
    url: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    page_age: Option<String>,
    #[serde(default)]
    age: Option<String>,
}

/// Searches Brave for `query`.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let mut url = hosted::endpoint(settings, "/res/v1/web/search");
    {
        let mut pairs = url.query_pairs_mut();
        pairs
            .append_pair("q", query)
            .append_pair("count", &settings.max_results.min(MAX_COUNT).to_string());
        if let Some(language) = &settings.language {
            pairs.append_pair("search_lang", language);
        }
        if let Some(range) = &settings.time_range {
            let freshness = match range {
                TimeRange::Day => "pd",
                TimeRange::Week => "pw",
                TimeRange::Month => "pm",
                TimeRange::Year => "py",
            };
            pairs.append_pair("freshness", freshness);
        }
        if let Some(level) = settings.safesearch {
            pairs.append_pair(
                "safesearch",
                ["off", "moderate", "strict"][usize::from(level.min(2))],
            );
        }
    }
    let request = http_client(settings)?
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .header("X-Subscription-Token", hosted::key(settings));
    hosted::call(settings, query, request, parse_reply).await
}

/// Turns Brave's status and body into hits or the matching error.
pub fn parse_reply(
    status: u16,
    body: &[u8],
    url: &str,
    query: &str,
    max_results: usize,
) -> Result<SearchOutcome, Error> {
    let backend = SearchBackend::Brave;
    if status != 200 {
        return Err(hosted::refused(backend, url, status, body, refusal));
    }
    let reply: Reply = hosted::json(backend, url, body)?;
    // Brave's `query.altered`: the query it searched instead of the one sent (a
    // spelling fix), the "did you mean" of its reply.
    let mut altered = Vec::new();
    if let Some(q) = &reply.query
        && let Some(changed) = q.altered.as_deref().filter(|a| a.trim() != query.trim())
    {
        merge_queries(&mut altered, [changed.to_string()], MAX_CORRECTIONS);
    }
    let results = reply.web.map(|w| w.results).unwrap_or_default();
    let hits = collect_hits(
        results.into_iter().map(|r| {
            let hit = SearchHit {
                url: String::new(),
                title: html_to_text(&r.title),
                snippet: html_to_text(&r.description),
                engines: vec!["brave".into()],
                published: r.page_age.or(r.age),
            };
            (r.url, hit)
        }),
        max_results,
    );
    Ok(SearchOutcome {
        corrections: altered,
        search_page: Some(public_search_page(query)),
        ..SearchOutcome::of(query, hits)
    })
}

/// What Brave's refusal means, by its status (and message): its web and image
/// searches share the table.
pub(crate) fn refusal(status: u16, message: &str) -> Option<Refusal> {
    match status {
        401 | 403 => Some(Refusal::Auth),
        422 if message.to_ascii_lowercase().contains("token") => Some(Refusal::Auth),
        402 => Some(Refusal::Quota),
        429 => Some(Refusal::RateLimited),
        _ => None,
    }
}

/// Brave marks matches with `<strong>` and escapes entities; people and models want
/// the plain text.
fn html_to_text(fragment: &str) -> String {
    if !fragment.contains(['<', '&']) {
        return fragment.to_string();
    }
    let parsed = scraper::Html::parse_fragment(fragment);
    crate::text::clean_inline(&parsed.root_element().text().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reply in the shape of Brave's Web Search API documentation: `query` holds
    /// what Brave did with the query, `altered` when it searched a spelling fix.
    fn reply(altered: Option<&str>) -> Vec<u8> {
        let mut query = serde_json::json!({"original": "quilfeather lighthose", "show_strict_warning": false, "is_navigational": false});
        if let Some(altered) = altered {
            query["altered"] = serde_json::json!(altered);
        }
        serde_json::to_vec(&serde_json::json!({
            "type": "search",
            "query": query,
            "web": {"type": "search", "results": [
                {"title": "Quillfeather <strong>Lighthouse</strong>", "url": "https://example.org/q",
                 "description": "A lighthouse.", "page_age": "2024-01-02T00:00:00"}
            ]}
        }))
        .unwrap()
    }

    #[test]
    fn an_altered_query_is_a_correction_and_the_public_page_is_named() {
        let url = "https://api.search.brave.com";
        let found = parse_reply(
            200,
            &reply(Some("quillfeather lighthouse")),
            url,
            "quilfeather lighthose",
            10,
        )
        .unwrap();
        assert_eq!(found.corrections, ["quillfeather lighthouse"]);
        assert!(found.suggestions.is_empty() && found.infoboxes.is_empty());
        assert_eq!(
            found.search_page.as_deref(),
            Some("https://search.brave.com/search?q=quilfeather+lighthose")
        );
        let plain = parse_reply(200, &reply(None), url, "quilfeather lighthose", 10).unwrap();
        assert!(plain.corrections.is_empty());
        let same = parse_reply(
            200,
            &reply(Some("quilfeather lighthose")),
            url,
            "quilfeather lighthose",
            10,
        )
        .unwrap();
        assert!(
            same.corrections.is_empty(),
            "an unaltered query is no correction"
        );
    }
}
