//! `ground check` and MCP's `check_claims`: claims checked against the web, the one
//! way every face runs it ([`Service::check`]).
//!
//! - **Claims** ([`CheckInput::Claims`]): each claim is the query of its own search
//!   (no model is asked, so none is needed); the top pages of each are read with the
//!   pipeline's stages (fetch, extract, the page cache, the address rule and the
//!   site filter), each URL once; then every claim is judged against every page read
//!   by the one matcher ([`crate::grounding::Checker::judge`]) and given a verdict
//!   counting voices ([`crate::grounding::judged`]).
//! - **A cited answer** ([`CheckInput::Cited`]): the answer's own list of sources is
//!   read (under the same rules), and each cited sentence is judged first by the
//!   sources it cites, then told which other source read supports it (with `search`,
//!   each sentence is also searched for, and the pages found count as other sources).
//!
//! The work is bounded before it starts (the caps of [`crate::claims`]), searches are
//! made one at a time within the run's rate limit, pages are read
//! [`FETCHES_AT_ONCE`] at a time, the matching runs on the blocking pool, and the whole
//! call is held to the run's deadline (`--timeout`).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::task::JoinSet;

use super::{Client, Failure, Service, isolated, searched};
use crate::cache::Cache;
use crate::claims::{self, ClaimsError};
use crate::context::SourceText;
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::{Fetcher, RetrievalStatus};
use crate::grounding::{Checker, Findings, Judged, judged};
use crate::hits::{SearchHit, normalise_url};
use crate::page::{PageAttempt, fetch_and_extract};
use crate::settings::Settings;

/// Pages read at once.
pub const FETCHES_AT_ONCE: usize = 6;
/// Most pages read for one claim (the run's `--pages`, at most this).
pub const MAX_PAGES_PER_CLAIM: usize = 5;

/// What to check.
#[derive(Debug, Clone)]
pub enum CheckInput {
    /// Claims, each searched for.
    Claims(Vec<String>),
    /// An answer from an AI tool with `[n]` markers and its numbered URLs.
    Cited {
        /// The answer.
        text: String,
        /// Also search each cited sentence (one search each): the pages found are
        /// read beside the answer's own, numbered after them, and can support a
        /// sentence elsewhere.
        search: bool,
    },
}

/// One source read (or tried): its number (the answer's own for `--cited`, else in
/// the order first found) and the page attempt.
#[derive(Debug, Clone)]
pub struct CheckedSource {
    /// The source's number.
    pub number: usize,
    /// What happened when it was read.
    pub page: PageAttempt,
}

/// One claim and what the sources read say of it.
#[derive(Debug, Clone)]
pub struct CheckedClaim {
    /// The claim.
    pub text: String,
    /// For `--cited`: the sources its markers name.
    pub cited: Option<Vec<usize>>,
    /// Who supports it and who says otherwise.
    pub findings: Findings,
    /// The verdict.
    pub judged: Judged,
}

/// A finished check.
#[derive(Debug, Clone)]
pub struct Checked {
    /// Whether it checked a cited answer (`--cited`).
    pub cited: bool,
    /// The claims in order.
    pub claims: Vec<CheckedClaim>,
    /// Every source tried, by number.
    pub sources: Vec<CheckedSource>,
    /// What the user should know (a search that failed for one claim, markers naming
    /// no listed source).
    pub warnings: Vec<String>,
}

impl Checked {
    /// Whether every claim is supported: the exit code's rule (0, else 6).
    pub fn all_supported(&self) -> bool {
        self.claims
            .iter()
            .all(|c| c.judged.verdict == crate::grounding::ClaimVerdict::Supported)
    }
}

impl Service {
    /// Checks `input` (see the module's documentation) in a task of its own, within
    /// the run's deadline, searching and reading only within `sites` when given (else
    /// the service's own filter); searched claims cost one search each of `client`'s
    /// budget (MCP's `check_claims`).
    pub async fn check(
        &self,
        client: &Client,
        input: CheckInput,
        sites: Option<crate::sites::SiteFilter>,
    ) -> Result<Checked, Failure> {
        let parsed = parse(input)?;
        let wanted = match &parsed {
            Parsed::Claims(claims) => claims.len(),
            Parsed::Cited(answer, true) => answer.claims.len(),
            Parsed::Cited(_, false) => 0,
        };
        if wanted > 0 {
            let granted = client.take_up_to(wanted)?;
            if granted < wanted {
                client.give_back(granted);
                let total = client.budget.as_ref().map_or(granted, |(_, total)| *total);
                return Err(Failure::budget_spent(granted, total, wanted));
            }
        }
        let mut settings = (*self.settings).clone();
        if let Some(sites) = sites {
            settings.search.sites = sites;
        }
        isolated(async move { within_deadline(&settings, parsed).await }).await
    }

    /// [`Service::check`] as the command line runs it: in place, with no budget, the
    /// stage's own error on failure.
    pub async fn check_here(&self, input: CheckInput) -> Result<Checked, Error> {
        within_deadline(&self.settings, parse(input)?).await
    }
}

/// A claims error as the usage error it is, its hint saying how to split the work.
pub fn usage(error: ClaimsError) -> Error {
    Error::Usage {
        message: error.to_string(),
        hint: error.hint(),
    }
}

/// The input read and bounded ([`crate::claims`]).
fn parse(input: CheckInput) -> Result<Parsed, Error> {
    Ok(match input {
        CheckInput::Claims(claims) => Parsed::Claims(claims::plain(&claims).map_err(usage)?),
        CheckInput::Cited { text, search } => {
            let answer = claims::cited::parse(&text).map_err(usage)?;
            // Searched, its sentences are bounded as searched claims are.
            if search && answer.claims.len() > claims::MAX_CLAIMS {
                return Err(usage(ClaimsError::TooManyClaims {
                    max: claims::MAX_CLAIMS,
                }));
            }
            Parsed::Cited(answer, search)
        }
    })
}

/// [`run`] held to the run's deadline: past it, the deadline error naming the stage
/// it was in.
async fn within_deadline(settings: &Settings, parsed: Parsed) -> Result<Checked, Error> {
    let limit = settings.run.timeout;
    let stage = Arc::new(std::sync::Mutex::new(Stage::Searching));
    match tokio::time::timeout(limit, run(settings, parsed, Arc::clone(&stage))).await {
        Ok(checked) => checked,
        Err(_) => Err(Error::Deadline {
            seconds: limit.as_secs(),
            stage: *stage.lock().unwrap_or_else(|e| e.into_inner()),
        }),
    }
}

/// The sources to read: each number with the hit standing for its page.
type ToRead = Vec<(usize, SearchHit)>;
/// The claims to judge, each with the sources it cites (`--cited`).
type ToJudge = Vec<(String, Option<Vec<usize>>)>;

/// The input as read and bounded.
enum Parsed {
    Claims(Vec<String>),
    /// The answer, and whether its sentences are searched for too.
    Cited(claims::CitedAnswer, bool),
}

/// The check itself: read the sources, then judge every claim.
async fn run(
    settings: &Settings,
    input: Parsed,
    stage: Arc<std::sync::Mutex<Stage>>,
) -> Result<Checked, Error> {
    let mut warnings = Vec::new();
    // (number, hit) of every source to read, and each claim with its citations.
    let (to_read, claims): (ToRead, ToJudge) = match input {
        Parsed::Claims(claims) => {
            let hits = search_each(settings, &claims, &mut warnings).await?;
            let numbered = hits.into_iter().enumerate().map(|(i, h)| (i + 1, h));
            (
                numbered.collect(),
                claims.into_iter().map(|c| (c, None)).collect(),
            )
        }
        Parsed::Cited(answer, search) => {
            let listed: Vec<usize> = answer.sources.iter().map(|(n, _)| *n).collect();
            let mut missing: Vec<usize> = answer
                .claims
                .iter()
                .flat_map(|c| c.cited.iter().copied())
                .filter(|n| !listed.contains(n))
                .collect();
            missing.sort_unstable();
            missing.dedup();
            if !missing.is_empty() {
                let names: Vec<String> = missing.iter().map(|n| format!("[{n}]")).collect();
                warnings.push(format!(
                    "the answer cites {} but lists no URL for {}",
                    names.join(""),
                    if missing.len() == 1 { "it" } else { "them" }
                ));
            }
            let mut hits: ToRead = answer
                .sources
                .into_iter()
                .map(|(n, url)| (n, SearchHit::of_url(&url)))
                .collect();
            if search {
                let texts: Vec<String> = answer.claims.iter().map(|c| c.text.clone()).collect();
                // A failed search costs this check nothing but its pages: the answer's
                // own sources still judge it.
                let found = match search_each(settings, &texts, &mut warnings).await {
                    Ok(found) => found,
                    Err(error) => {
                        warnings.push(format!("the searches for the sentences failed: {error}"));
                        Vec::new()
                    }
                };
                let mut next = listed.iter().max().copied().unwrap_or(0) + 1;
                for hit in found {
                    let key = normalise_url(&hit.url);
                    if !hits.iter().any(|(_, h)| normalise_url(&h.url) == key) {
                        hits.push((next, hit));
                        next += 1;
                    }
                }
            }
            let claims = answer
                .claims
                .into_iter()
                .map(|c| (c.text, Some(c.cited)))
                .collect();
            (hits, claims)
        }
    };
    *stage.lock().unwrap_or_else(|e| e.into_inner()) = Stage::Fetching;
    let sources = read_all(settings, to_read).await?;
    *stage.lock().unwrap_or_else(|e| e.into_inner()) = Stage::Checking;
    let texts: Vec<SourceText> = sources
        .iter()
        .filter(|s| s.page.status == RetrievalStatus::Success)
        .map(|s| SourceText {
            number: s.number,
            url: s
                .page
                .final_url
                .clone()
                .unwrap_or_else(|| s.page.url.clone()),
            title: s.page.title.clone(),
            text: s.page.text.clone(),
        })
        .collect();
    if texts.is_empty() && !sources.is_empty() {
        let pages: Vec<PageAttempt> = sources.iter().map(|s| s.page.clone()).collect();
        return Err(Error::NoUsableSources {
            tried: pages.len(),
            summary: crate::page::status_summary(&pages),
        });
    }
    let urls: BTreeMap<usize, String> = texts.iter().map(|t| (t.number, t.url.clone())).collect();
    let judged_claims = tokio::task::spawn_blocking(move || {
        let checker = Checker::new(&texts);
        claims
            .into_iter()
            .map(|(text, cited)| {
                let findings = checker.judge(&text);
                let url_of = |n: usize| urls.get(&n).map(String::as_str);
                let judged = judged(&findings, cited.as_deref(), url_of);
                CheckedClaim {
                    text,
                    cited,
                    findings,
                    judged,
                }
            })
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|e| Error::Internal {
        message: format!("the check of the claims failed: {e}"),
    })?;
    Ok(Checked {
        cited: judged_claims.iter().any(|c| c.cited.is_some()),
        claims: judged_claims,
        sources,
        warnings,
    })
}

/// Searches each claim (one search each, in order, within the rate limit) and
/// returns the top pages of each, each URL once, in the order first found. A search
/// that fails for one claim is a warning; when every search fails, the first failure
/// is the error.
async fn search_each(
    settings: &Settings,
    claims: &[String],
    warnings: &mut Vec<String>,
) -> Result<Vec<SearchHit>, Error> {
    let pages = settings.fetch.pages.clamp(1, MAX_PAGES_PER_CLAIM);
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut first_failure = None;
    let mut any_ok = false;
    for claim in claims {
        match searched(settings, claim, pages, None, &|_| {}, &|_| {}).await {
            Ok(found) => {
                any_ok = true;
                warnings.extend(found.outcome.warnings);
                for hit in found.outcome.hits.into_iter().take(pages) {
                    let key = normalise_url(&hit.url);
                    if !hits.iter().any(|h| normalise_url(&h.url) == key) {
                        hits.push(hit);
                    }
                }
            }
            Err(error) => {
                warnings.push(format!(
                    "the search for claim \"{}\" failed: {error}",
                    crate::text::shorten(claim, 60)
                ));
                first_failure.get_or_insert(error);
            }
        }
    }
    match first_failure {
        Some(error) if !any_ok => Err(error),
        _ => Ok(hits),
    }
}

/// Reads every source, [`FETCHES_AT_ONCE`] at a time, through the pipeline's fetch,
/// extract and cache (the address rule and the site filter apply; the cache shared
/// by replicas when a Redis is named, as every run's); returns them in number order.
async fn read_all(
    settings: &Settings,
    to_read: Vec<(usize, SearchHit)>,
) -> Result<Vec<CheckedSource>, Error> {
    let fetcher = Fetcher::with_sites(&settings.fetch, &settings.search.sites)?;
    let cache = Cache::open_shared(&settings.cache, settings.state.as_ref());
    let mut pending = to_read.into_iter();
    let mut in_flight: JoinSet<CheckedSource> = JoinSet::new();
    let mut done = Vec::new();
    loop {
        while in_flight.len() < FETCHES_AT_ONCE {
            let Some((number, hit)) = pending.next() else {
                break;
            };
            let (fetcher, cache) = (fetcher.clone(), cache.clone());
            in_flight.spawn(async move {
                let (mut page, _) = fetch_and_extract(&fetcher, &cache, number - 1, &hit).await;
                page.index = Some(number);
                CheckedSource { number, page }
            });
        }
        match in_flight.join_next().await {
            Some(Ok(source)) => done.push(source),
            Some(Err(e)) => {
                return Err(Error::Internal {
                    message: format!("reading a page failed: {e}"),
                });
            }
            None => break,
        }
    }
    done.sort_by_key(|s| s.number);
    Ok(done)
}
