//! The search stage: a query in, ranked [`SearchHit`]s out.
//!
//! Five services are spoken, one file each: the user's own SearXNG ([`searxng`]),
//! the hosted Brave Search ([`brave`]) and Tavily ([`tavily`]) APIs, Wikipedia's own
//! search through MediaWiki's Action API ([`wikipedia`]) and DuckDuckGo's HTML
//! results page ([`duckduckgo`], opt-in only). `--search auto`, the default, picks
//! one at run time ([`auto`]): SearXNG when one answers, else a hosted API whose key
//! is set, else Wikipedia, saying so once. Each service maps its own error replies to
//! [`Error`]s with hints; the types here are all the rest of the pipeline sees.
//!
//! Every search sent goes through [`search`], which first waits for a slot of the
//! shared rate limit ([`limit`]: over the limit it paces, within the run's deadline)
//! and checks the month's quota of a hosted API ([`usage`]), and writes the opt-in
//! search log ([`log`]) after. Cached searches never reach it (the callers look in the
//! cache first, under the key of the service [`auto::choose`] picked) and cost
//! nothing. The state files behind these are shared with other processes and are read
//! off the async runtime within a bounded wait ([`state`]); one that cannot be used
//! lets the search through with a warning.

pub mod auto;
pub mod brave;
pub(crate) mod client;
pub mod duckduckgo;
pub(crate) mod hosted;
pub mod images;
pub(crate) mod limit;
pub(crate) mod log;
pub mod searxng;
pub(crate) mod searxng_extras;
pub(crate) mod searxng_html;
pub(crate) mod searxng_result;
pub(crate) mod state;
pub mod tavily;
pub mod usage;
pub mod wikipedia;

pub use crate::hits::{SearchHit, SearchOutcome};
pub use limit::{Pace, Waiting};

use crate::error::Error;
use crate::settings::{SearchBackend, SearchSettings};

/// Runs `query` on the configured search service (with `auto`, the one
/// [`auto::choose`] picks, its note among the outcome's warnings), within the rate
/// limit (waiting for a slot as `pace` allows) and the month's quota (both settled
/// before anything is sent), and logs it when the search log is on.
pub async fn search(
    settings: &SearchSettings,
    query: &str,
    pace: &Pace<'_>,
) -> Result<SearchOutcome, Error> {
    if settings.backend != SearchBackend::Auto {
        return search_on(settings, query, pace).await;
    }
    let chosen = auto::choose(settings).await;
    search_on(&chosen.settings, query, pace)
        .await
        .map(|mut found| {
            found.warnings.splice(0..0, chosen.note);
            found
        })
}

/// [`search`] on a service already chosen.
async fn search_on(
    settings: &SearchSettings,
    query: &str,
    pace: &Pace<'_>,
) -> Result<SearchOutcome, Error> {
    // `auto` may have picked Wikipedia, which cannot search other sites.
    let wikipedia_host = settings.url.host_str();
    settings.sites.check_service(
        settings.backend == crate::settings::SearchBackend::Wikipedia,
        wikipedia_host,
    )?;
    let allowed = allow(settings, pace).await;
    let sent = site_query(&settings.sites, settings.backend, query);
    let outcome = match allowed {
        Err(refused) => Err(refused),
        Ok(notes) => match settings.backend {
            SearchBackend::Searxng | SearchBackend::Auto => searxng::search(settings, &sent).await,
            SearchBackend::Brave => brave::search(settings, &sent).await,
            SearchBackend::Tavily => tavily::search(settings, &sent).await,
            SearchBackend::Wikipedia => wikipedia::search(settings, &sent).await,
            SearchBackend::DuckDuckGo => duckduckgo::search(settings, &sent).await,
        }
        .map(|mut found| {
            found.warnings.splice(0..0, notes);
            // The services' `site:` terms are a request; this is the guarantee.
            found.query = query.to_string();
            let dropped = found.keep_sites(&settings.sites);
            if dropped > 0 {
                found.warnings.push(dropped_warning(dropped));
            }
            found
        }),
    };
    logged(
        settings,
        query,
        outcome,
        |o| o.hits.len(),
        |o| &mut o.warnings,
    )
}

/// Writes a search's `outcome` to the search log (when it is on): how many results
/// (`count`) or which error; a log that cannot be written is a warning on the
/// outcome (`warnings`), never a failed search. Web and images searches alike.
fn logged<T>(
    settings: &SearchSettings,
    query: &str,
    outcome: Result<T, Error>,
    count: impl Fn(&T) -> usize,
    warnings: impl Fn(&mut T) -> &mut Vec<String>,
) -> Result<T, Error> {
    let written = log::record(
        settings,
        query,
        outcome.as_ref().map(&count).map_err(Error::kind),
        false,
    );
    match (outcome, written) {
        (Ok(mut found), Err(problem)) => {
            warnings(&mut found).push(state::warning(
                "this search was not written to the search log",
                &problem,
            ));
            Ok(found)
        }
        (outcome, _) => outcome,
    }
}

/// Runs an images search for `query` ([`images`]): on SearXNG's images category or
/// Brave's image search (with `auto`, on the service [`auto::choose`] picks, which must
/// be one of them; any other is [`Error::ImagesUnsupported`] before anything is
/// sent), within the rate limit and the month's quota like [`search`], at most `max`
/// images, and logged when the search log is on. ground never fetches the images.
pub async fn images(
    settings: &SearchSettings,
    query: &str,
    max: usize,
    pace: &Pace<'_>,
) -> Result<images::ImagesOutcome, Error> {
    let chosen = auto::choose(settings).await;
    let settings = &chosen.settings;
    if !images::supported(settings.backend) {
        return Err(Error::ImagesUnsupported {
            backend: settings.backend,
        });
    }
    let allowed = allow(settings, pace).await;
    let sent = site_query(&settings.sites, settings.backend, query);
    let outcome = match allowed {
        Err(refused) => Err(refused),
        Ok(notes) => images::send_search(settings, &sent, max)
            .await
            .map(|mut found| {
                found
                    .warnings
                    .splice(0..0, chosen.note.clone().into_iter().chain(notes));
                found.query = query.to_string();
                found.backend = Some(settings.backend);
                let dropped = found.keep_sites(&settings.sites);
                if dropped > 0 {
                    found.warnings.push(dropped_warning(dropped));
                }
                found
            }),
    };
    logged(
        settings,
        query,
        outcome,
        |o| o.images.len(),
        |o| &mut o.warnings,
    )
}

/// The warning about `dropped` results outside `--site` / `--exclude-site`.
pub fn dropped_warning(dropped: usize) -> String {
    let results = if dropped == 1 { "result" } else { "results" };
    format!("{dropped} search {results} outside --site / --exclude-site dropped unread")
}

/// Settles whether a search may be sent: the month's quota of a hosted API first
/// (a spent one needs no wait), then a slot of the rate limit, waited for as `pace`
/// allows. The warnings are about state files that could not be used.
async fn allow(settings: &SearchSettings, pace: &Pace<'_>) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    let quota = {
        let settings = settings.clone();
        state::off_runtime(move || usage::check(&settings)).await?
    };
    if let Err(problem) = quota {
        notes.push(state::warning(
            "the month's search quota was not checked",
            &problem,
        ));
    }
    // The deployment's count, when replicas share state in Redis.
    usage::check_shared(settings).await?;
    if let Some(problem) = limit::pace(settings, pace).await? {
        notes.insert(
            0,
            state::warning("the search rate limit was not applied", &problem),
        );
    }
    Ok(notes)
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

/// `query` as sent to `backend` under `filter`: with `site:` terms for the services that read
/// them from the query (SearXNG, Brave, DuckDuckGo), unchanged for Tavily (which
/// takes the lists in its request) and Wikipedia (one site already).
pub fn site_query(
    filter: &crate::sites::SiteFilter,
    backend: crate::settings::SearchBackend,
    query: &str,
) -> String {
    match backend {
        crate::settings::SearchBackend::Tavily | crate::settings::SearchBackend::Wikipedia => {
            query.to_string()
        }
        _ => {
            let terms = filter.query_terms();
            if terms.is_empty() {
                query.to_string()
            } else {
                format!("{} {terms}", query.trim())
            }
        }
    }
}
