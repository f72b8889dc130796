//! The search stage: a query in, ranked [`SearchHit`]s out.
//!
//! Three services are spoken: the user's own SearXNG ([`searxng`], the default), and
//! the hosted Brave Search ([`brave`]) and Tavily ([`tavily`]) APIs. Each maps its own
//! error replies to [`Error`]s with hints; the types here are all the rest of the
//! pipeline sees.
//!
//! Every search sent goes through [`search`], which first takes a slot of the shared
//! rate limit ([`limit`]) and checks the month's quota of a hosted API ([`usage`]),
//! and writes the opt-in search log ([`log`]) after. Cached searches never reach it
//! (the callers look in the cache first) and cost nothing. The state files behind
//! these are shared with other processes and are read off the async runtime within a
//! bounded wait ([`state`]); one that cannot be used lets the search through with a
//! warning.

pub mod brave;
pub(crate) mod client;
pub(crate) mod limit;
pub(crate) mod log;
pub mod searxng;
pub(crate) mod searxng_html;
pub(crate) mod searxng_result;
pub(crate) mod state;
pub mod tavily;
pub mod usage;

pub use crate::hits::{SearchHit, SearchOutcome};

use crate::error::Error;
use crate::settings::{SearchBackend, SearchSettings};

/// Runs `query` on the configured search service, within the rate limit and the
/// month's quota (both checked before anything is sent), and logs it when the search
/// log is on.
pub async fn search(settings: &SearchSettings, query: &str) -> Result<SearchOutcome, Error> {
    let allowed = {
        let settings = settings.clone();
        state::off_runtime(move || {
            let mut notes = Vec::new();
            if let Err(problem) = limit::acquire(&settings)? {
                notes.push(state::warning(
                    "the search rate limit was not applied",
                    &problem,
                ));
            }
            if let Err(problem) = usage::check(&settings)? {
                notes.push(state::warning(
                    "the month's search quota was not checked",
                    &problem,
                ));
            }
            Ok::<_, Error>(notes)
        })
        .await
    };
    let outcome = match allowed {
        Err(refused) => Err(refused),
        Ok(notes) => match settings.backend {
            SearchBackend::Searxng => searxng::search(settings, query).await,
            SearchBackend::Brave => brave::search(settings, query).await,
            SearchBackend::Tavily => tavily::search(settings, query).await,
        }
        .map(|mut found| {
            found.warnings.splice(0..0, notes);
            found
        }),
    };
    let logged = log::record(
        settings,
        query,
        outcome.as_ref().map(|o| o.hits.len()).map_err(Error::kind),
        false,
    );
    match (outcome, logged) {
        (Ok(mut found), Err(problem)) => {
            found.warnings.push(state::warning(
                "this search was not written to the search log",
                &problem,
            ));
            Ok(found)
        }
        (outcome, _) => outcome,
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
            engines: crate::hits::describe_unresponsive(unresponsive),
        }
    }
}
