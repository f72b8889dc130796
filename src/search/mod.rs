//! The search stage: a query in, ranked [`SearchHit`]s out.
//!
//! Three services are spoken: the user's own SearXNG ([`searxng`], the default), and
//! the hosted Brave Search ([`brave`]) and Tavily ([`tavily`]) APIs. Each maps its own
//! error replies to [`Error`]s with hints; the types here are all the rest of the
//! pipeline sees.

pub mod brave;
pub mod client;
pub mod searxng;
pub mod tavily;

pub use crate::hits::{SearchHit, SearchOutcome, normalize_url};

use crate::error::Error;
use crate::settings::{SearchBackend, SearchSettings};

/// Runs `query` on the configured search service.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    match settings.backend {
        SearchBackend::Searxng => searxng::search(settings, query).await,
        SearchBackend::Brave => brave::search(settings, query).await,
        SearchBackend::Tavily => tavily::search(settings, query).await,
    }
}

/// Why a search found nothing: its engines failed (a search failure, naming them),
/// or there was simply nothing (no sources). The two are different problems with
/// different fixes and exit codes.
pub fn no_hits_error(query: &str, unresponsive: &[(String, String)]) -> Error {
    if unresponsive.is_empty() {
        Error::NoResults {
            query: query.to_string(),
        }
    } else {
        Error::SearchEnginesFailed {
            engines: searxng::describe_unresponsive(unresponsive),
        }
    }
}
