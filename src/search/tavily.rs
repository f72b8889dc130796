//! Tavily search API (`POST {base}/search`, key as a Bearer token).
//!
//! We ask for `search_depth: "basic"` (one credit), `max_results`, and `topic`
//! ("general", or "news" when SearXNG-style `categories` say news). Replies carry
//! `results[]` (`url`, `title`, `content`, `score`, optional `published_date`);
//! errors are `{"detail": {"error": "..."}}` with 401 for a bad key, 429 for the rate
//! limit and 432/433 for plan and pay-as-you-go limits.

use serde::Deserialize;
use serde_json::json;

use super::client::http_client;
use super::hosted::{self, Refusal};
use crate::error::Error;
use crate::hits::{SearchHit, SearchOutcome, collect_hits};
use crate::settings::{SearchBackend, SearchSettings};

/// Tavily returns at most this many results per request.
pub const MAX_RESULTS: usize = 20;

#[derive(Deserialize)]
struct Reply {
    #[serde(default)]
    results: Vec<TavilyResult>,
}

#[derive(Deserialize)]
struct TavilyResult {
    url: Option<String>,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    published_date: Option<String>,
}

/// Searches Tavily for `query`.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let topic = match settings.categories.as_deref() {
        Some(c) if c.split(',').any(|c| c.trim() == "news") => "news",
        _ => "general",
    };
    let mut body = json!({
        "query": query,
        "search_depth": "basic",
        "max_results": settings.max_results.min(MAX_RESULTS),
        "topic": topic,
        "include_answer": false,
        "include_raw_content": false,
    });
    if !settings.sites.sites.is_empty() {
        body["include_domains"] = json!(settings.sites.sites);
    }
    if !settings.sites.exclude_sites.is_empty() {
        body["exclude_domains"] = json!(settings.sites.exclude_sites);
    }
    if let Some(range) = &settings.time_range {
        body["time_range"] = json!(range.as_str());
    }
    let request = http_client(settings)?
        .post(hosted::endpoint(settings, "/search"))
        .bearer_auth(hosted::key(settings))
        .json(&body);
    hosted::call(settings, query, request, parse_reply).await
}

/// Turns Tavily's status and body into hits or the matching error.
pub fn parse_reply(
    status: u16,
    body: &[u8],
    url: &str,
    query: &str,
    max_results: usize,
) -> Result<SearchOutcome, Error> {
    let backend = SearchBackend::Tavily;
    if status != 200 {
        return Err(hosted::refused(
            backend,
            url,
            status,
            body,
            |status, _| match status {
                401 | 403 => Some(Refusal::Auth),
                429 => Some(Refusal::RateLimited),
                432 | 433 => Some(Refusal::Quota),
                _ => None,
            },
        ));
    }
    let reply: Reply = hosted::json(backend, url, body)?;
    let hits = collect_hits(
        reply.results.into_iter().map(|r| {
            let hit = SearchHit {
                url: String::new(),
                title: r.title,
                snippet: r.content,
                engines: vec!["tavily".into()],
                published: r.published_date,
            };
            (r.url, hit)
        }),
        max_results,
    );
    // Tavily is an API only: no results page a person could open.
    Ok(SearchOutcome::of(query, hits))
}
