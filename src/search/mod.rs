//! The search stage: a query in, ranked [`SearchHit`]s out.
//!
//! Only SearXNG's JSON API is spoken today ([`searxng`]); the types here are what the
//! rest of the pipeline sees, so other backends can be added without touching it.

pub mod searxng;

use serde::Serialize;

/// One search result, as the later stages need it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchHit {
    /// The result's address (http or https).
    pub url: String,
    /// The result's title as the engine gave it.
    pub title: String,
    /// The engine's snippet (SearXNG's `content`).
    pub snippet: String,
    /// The engines that returned it.
    pub engines: Vec<String>,
    /// Publication date when the engine knew it (ISO 8601 in SearXNG, a display
    /// string in old searx).
    pub published: Option<String>,
}

/// The outcome of one search call.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchOutcome {
    /// The query that ran.
    pub query: String,
    /// Results in rank order, de-duplicated by URL, http(s) only.
    pub hits: Vec<SearchHit>,
    /// Engines that failed, with SearXNG's reason ("timeout", "Suspended: ...").
    pub unresponsive_engines: Vec<(String, String)>,
}
