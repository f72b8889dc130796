//! Searching and reading: every planned query at once, or one per round while the
//! must-have evidence is missing; then the pages of the results, fetched concurrently
//! and hedged, so one slow page costs a grace period instead of the page timeout.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinSet;

use super::Run;
use super::queries::Planned;
use crate::cache::{Cache, SearchKey};
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::{Fetcher, RetrievalStatus, elapsed_ms};
use crate::hits::{SearchExtras, SearchHit, normalise_url};
use crate::page::{PageAttempt, fetch_and_extract};
use crate::plan::{self, PlanRun, StopReason};
use crate::report::SearchRun;
use crate::search::{self, Pace, Waiting};
use crate::settings::{SearchBackend, SearchSettings};

/// What searching and reading produced.
pub(super) struct Gathered {
    /// The queries that ran, in order.
    pub queries: Vec<String>,
    /// Search results, merged, in rank order.
    pub hits: Vec<SearchHit>,
    /// Every search call.
    pub searches: Vec<SearchRun>,
    /// Every page tried, in rank order.
    pub pages: Vec<PageAttempt>,
    /// How the plan went (`None` for a single query).
    pub plan: Option<PlanRun>,
    /// What the searches returned besides results (infoboxes, answers, suggestions).
    pub extras: SearchExtras,
}

impl Gathered {
    /// No search and no page: a follow-up answered from the evidence already read.
    pub fn nothing() -> Self {
        Gathered {
            queries: Vec::new(),
            hits: Vec::new(),
            searches: Vec::new(),
            pages: Vec::new(),
            plan: None,
            extras: SearchExtras::default(),
        }
    }
}

/// Searching's raw outcome before the plan's record is finished.
struct Searched {
    hits: Vec<SearchHit>,
    searches: Vec<SearchRun>,
    pages: Vec<PageAttempt>,
    plan: PlanRun,
    extras: SearchExtras,
}

/// A merged search: results, every call, the searches' own warnings, and what they
/// returned besides results.
type Merged = (Vec<SearchHit>, Vec<SearchRun>, Vec<String>, SearchExtras);

impl Run<'_> {
    /// Searches the planned queries (at once or in rounds) and reads their pages. With
    /// `--search auto` the service is picked first (and a fallback told once), so
    /// every query of the run, and its cache entry, is the same service's; Wikipedia
    /// searches the wiki of the question's language.
    pub(super) async fn search_and_read(
        &mut self,
        question: &str,
        planned: &Planned,
    ) -> Result<Gathered, Error> {
        let chosen = search::auto::choose(&self.settings.search).await;
        let mut service = chosen.settings;
        if service.backend == SearchBackend::Wikipedia && service.language.is_none() {
            service.language = crate::language::detect(question).map(|l| l.code);
        }
        if self.settings.search.backend == SearchBackend::Auto {
            self.events.emit(
                "search_chosen",
                json!({"backend": service.backend, "note": chosen.note}),
            );
        }
        self.warn_all(chosen.note);
        let Searched {
            hits,
            searches,
            pages,
            plan: mut plan_run,
            extras,
        } = if planned.rounds {
            self.search_in_rounds(&service, planned).await?
        } else {
            self.search_at_once(&service, &planned.queries).await?
        };
        plan_run
            .queries_not_run
            .extend(planned.over_budget.iter().cloned());
        let found = matches!(
            plan_run.stopped_because,
            Some(StopReason::EvidenceFound | StopReason::SourcesAgree)
        );
        if !found && !planned.over_budget.is_empty() {
            plan_run.stopped_because = Some(StopReason::SearchBudget);
        }
        if searches.iter().any(|s| !s.cached) {
            let quota = search::usage::warning(&service);
            self.warn_all(quota);
        }
        // Only the queries that ran are the run's queries.
        let queries = planned
            .queries
            .iter()
            .filter(|q| !plan_run.queries_not_run.contains(q))
            .cloned()
            .collect();
        Ok(Gathered {
            queries,
            hits,
            searches,
            pages,
            plan: planned.outcome(plan_run),
            extras,
        })
    }

    /// Every query at once ([`Run::search_all`]), then the pages ([`Run::fetch_pages`]).
    async fn search_at_once(
        &mut self,
        service: &SearchSettings,
        queries: &[String],
    ) -> Result<Searched, Error> {
        self.events
            .stage(Stage::Searching, &format!("searching {}", service.backend));
        let t = Instant::now();
        let searched = self.search_all(service, queries).await;
        self.so_far.timings.search = elapsed_ms(t);
        let (hits, searches, warnings, extras) = match searched {
            Ok(found) => found,
            Err((error, searches, extras)) => {
                self.so_far.searches = searches;
                self.so_far.extras = extras;
                return Err(error);
            }
        };
        self.warn_all(warnings);
        self.so_far.searches = searches.clone();
        self.so_far.extras = extras.clone();
        let pages = self.fetch_pages(&hits, 0).await;
        self.so_far.pages = pages.clone();
        Ok(Searched {
            hits,
            searches,
            pages,
            plan: PlanRun::default(),
            extras,
        })
    }

    /// One query per round: search it ([`Run::search_all`] with one query), read the
    /// pages of its new results, and check the must-have evidence in every page read
    /// and every snippet so far; the next query runs only while the evidence is
    /// missing. A round whose search fails or finds nothing new is recorded and the
    /// next one runs; the run fails only when every round's search failed.
    async fn search_in_rounds(
        &mut self,
        service: &SearchSettings,
        planned: &Planned,
    ) -> Result<Searched, Error> {
        let queries = &planned.queries;
        let agree = planned.agree;
        let mut hits: Vec<SearchHit> = Vec::new();
        let mut searches: Vec<SearchRun> = Vec::new();
        let mut pages: Vec<PageAttempt> = Vec::new();
        let mut seen: HashSet<String> = HashSet::new();
        let mut first_error = None;
        let mut outcome = PlanRun::default();
        let mut extras = SearchExtras::default();
        for (round, query) in queries.iter().enumerate() {
            self.events.stage(
                Stage::Searching,
                &format!(
                    "searching {} (round {} of {})",
                    service.backend,
                    round + 1,
                    queries.len()
                ),
            );
            let t = Instant::now();
            let searched = self.search_all(service, std::slice::from_ref(query)).await;
            self.so_far.timings.search += elapsed_ms(t);
            outcome.rounds += 1;
            let fresh: Vec<SearchHit> = match searched {
                Ok((found, runs, warnings, more)) => {
                    searches.extend(runs);
                    extras.merge(more);
                    self.warn_all(warnings);
                    found
                        .into_iter()
                        .filter(|hit| seen.insert(normalise_url(&hit.url)))
                        .collect()
                }
                Err((error, runs, more)) => {
                    searches.extend(runs);
                    extras.merge(more);
                    first_error.get_or_insert(error);
                    Vec::new()
                }
            };
            self.so_far.searches = searches.clone();
            if !fresh.is_empty() {
                let read = self.fetch_pages(&fresh, hits.len()).await;
                pages.extend(read);
                hits.extend(fresh);
                self.so_far.pages = pages.clone();
            }
            // The searches' infoboxes and instant answers are sources too.
            let said = crate::context::search_sources(&extras);
            let mut texts = evidence_texts(&hits, &pages);
            texts.extend(
                said.iter()
                    .map(|(s, _)| (crate::http::host_of(&s.url), s.text.as_str())),
            );
            outcome.evidence = plan::check_evidence(&planned.plan.must_have_evidence, &texts);
            let met = plan::evidence_met(&outcome.evidence, agree);
            if met {
                outcome.stopped_because = Some(if agree > 1 {
                    StopReason::SourcesAgree
                } else {
                    StopReason::EvidenceFound
                });
                outcome.queries_not_run = queries[round + 1..].to_vec();
            } else if round + 1 == queries.len() {
                outcome.stopped_because = Some(StopReason::QueriesExhausted);
            }
            self.events.emit(
                "evidence_checked",
                json!({"round": round + 1, "query": query, "evidence": outcome.evidence, "agree": agree, "met": met, "stopped_because": outcome.stopped_because, "queries_not_run": outcome.queries_not_run}),
            );
            if met {
                break;
            }
        }
        if searches.iter().all(|s| s.error.is_some())
            && let Some(error) = first_error
        {
            return Err(error);
        }
        // Kept for a failure's report too: a correction is what to try next.
        self.so_far.extras = extras.clone();
        // No result, but an infobox or instant answer: evidence all the same.
        if hits.is_empty() && !extras.has_sources() {
            return Err(search::no_hits_error(&queries.join(" | "), &[]));
        }
        if searches.iter().any(|s| s.error.is_some()) {
            self.so_far
                .warnings
                .push("some searches failed; answering from the others".to_string());
        }
        pages.sort_by_key(|p| p.rank);
        Ok(Searched {
            hits,
            searches,
            pages,
            plan: outcome,
            extras,
        })
    }

    /// Fetches up to `--pages` of `hits` not read yet (hedged, see [`gather`]), numbering their
    /// ranks from `first_rank`, and reports them.
    async fn fetch_pages(&mut self, hits: &[SearchHit], first_rank: usize) -> Vec<PageAttempt> {
        // In a conversation, pages read in earlier turns are not fetched again.
        let unread = self.unread(hits);
        let hits = unread.as_slice();
        let wanted = self.settings.fetch.pages;
        self.events.stage(
            Stage::Fetching,
            &format!(
                "fetching {} of {} results",
                wanted.min(hits.len()),
                hits.len()
            ),
        );
        let t = Instant::now();
        let fetched = gather(&self.fetcher, &self.cache, hits, wanted).await;
        self.so_far.timings.fetch += elapsed_ms(t);
        self.so_far.timings.extract += fetched.iter().map(|p| p.1).sum::<u64>();
        let pages: Vec<PageAttempt> = fetched
            .into_iter()
            .map(|(mut p, _)| {
                p.rank += first_rank;
                p
            })
            .collect();
        self.events.emit(
            "pages_fetched",
            json!({"pages": pages.iter().map(|p| json!({"url": p.url, "status": p.status, "http_status": p.http_status, "cached": p.cached, "ms": p.ms})).collect::<Vec<_>>()}),
        );
        pages
    }

    /// Runs every query concurrently on `service` and merges the results by normalised
    /// URL, ranked by their best position in any query (ties: the earlier query).
    /// Fails only when every query failed or nothing was found. Over the rate limit a
    /// query waits for its slot within the run's deadline, and says so.
    async fn search_all(
        &self,
        service: &SearchSettings,
        queries: &[String],
    ) -> Result<Merged, (Error, Vec<SearchRun>, SearchExtras)> {
        let settings = self.settings;
        let cache = &self.cache;
        let events = self.events;
        let deadline = tokio::time::Instant::from_std(self.started + settings.run.timeout);
        let on_wait = move |waiting: &Waiting| {
            events.stage(Stage::Searching, &waiting.to_string());
            events.emit(
                "search_paced",
                json!({"wait_ms": waiting.wait.as_millis() as u64, "limit": waiting.limit, "window_ms": waiting.window.as_millis() as u64}),
            );
        };
        let pace = Pace::until(deadline).telling(&on_wait);
        let calls = queries.iter().map(|query| async move {
            let t = Instant::now();
            let mut key = SearchKey::new(service, query, service.max_results);
            key.region = settings.run.region.clone();
            if let Some(mut found) = cache.find_search(&key).await {
                // Entries are written filtered; checked again all the same.
                found.keep_sites(&service.sites);
                // A log that cannot be written never stops a cached search.
                let _ = search::log::record(service, query, Ok(found.hits.len()), true);
                return (query.clone(), Ok(found), elapsed_ms(t), true);
            }
            let outcome = search::search(service, query, &pace).await;
            // Only complete answers are kept: not failures, not results with engines down.
            let complete = outcome
                .as_ref()
                .ok()
                .filter(|f| !f.hits.is_empty() && f.unresponsive_engines.is_empty());
            if let Some(found) = complete {
                cache.keep_search(&key, found).await;
            }
            (query.clone(), outcome, elapsed_ms(t), false)
        });
        let results = futures_util::future::join_all(calls).await;

        let mut runs = Vec::new();
        let mut first_error = None;
        let mut unresponsive: Vec<(String, String)> = Vec::new();
        let mut notes: Vec<String> = Vec::new(); // the searches' own warnings, each once
        let mut ranked: Vec<(usize, usize, SearchHit)> = Vec::new(); // (position, query index, hit)
        let mut extras = SearchExtras {
            sites: service.sites.clone(),
            ..SearchExtras::default()
        };
        for (qi, (query, outcome, ms, cached)) in results.into_iter().enumerate() {
            let run = match outcome {
                Ok(found) => {
                    extras.merge(SearchExtras::of(&query, &found));
                    for note in found.warnings {
                        if !notes.contains(&note) {
                            notes.push(note);
                        }
                    }
                    for (name, reason) in found.unresponsive_engines {
                        if !unresponsive.iter().any(|(n, _)| *n == name) {
                            unresponsive.push((name, reason));
                        }
                    }
                    let count = found.hits.len();
                    for (position, hit) in found.hits.into_iter().enumerate() {
                        ranked.push((position, qi, hit));
                    }
                    SearchRun {
                        query,
                        backend: service.backend,
                        results: count,
                        cached,
                        ms,
                        error: None,
                    }
                }
                Err(error) => {
                    let run = SearchRun {
                        query,
                        backend: service.backend,
                        results: 0,
                        cached: false,
                        ms,
                        error: Some(error.to_string()),
                    };
                    first_error.get_or_insert(error);
                    run
                }
            };
            self.events.emit("search_called", json!({"query": run.query, "backend": run.backend, "results": run.results, "cached": run.cached, "ms": run.ms, "error": run.error}));
            runs.push(run);
        }
        if let Some(error) = first_error
            .take()
            .filter(|_| runs.iter().all(|r| r.error.is_some()))
        {
            return Err((error, runs, extras));
        }
        ranked.sort_by_key(|(position, qi, _)| (*position, *qi));
        let mut hits: Vec<SearchHit> = Vec::new();
        let mut seen: Vec<String> = Vec::new();
        for (_, _, hit) in ranked {
            let key = normalise_url(&hit.url);
            if !seen.contains(&key) {
                seen.push(key);
                hits.push(hit);
            }
        }
        if hits.is_empty() && !extras.has_sources() {
            return Err((
                search::no_hits_error(&queries.join(" | "), &unresponsive),
                runs,
                extras,
            ));
        }
        let mut warnings = notes;
        if !unresponsive.is_empty() {
            warnings.push(format!(
                "some search engines failed: {}",
                crate::hits::describe_unresponsive(&unresponsive)
            ));
        }
        if runs.iter().any(|r| r.error.is_some()) {
            warnings.push("some searches failed; answering from the others".to_string());
        }
        Ok((hits, runs, warnings, extras))
    }
}

/// The texts the evidence check reads, each with its host: the pages read, and the
/// snippets of results not read (they go to the model as sources of their own).
fn evidence_texts<'a>(hits: &'a [SearchHit], pages: &'a [PageAttempt]) -> Vec<(String, &'a str)> {
    let read: HashSet<String> = pages
        .iter()
        .filter(|p| p.status == RetrievalStatus::Success)
        .map(|p| normalise_url(&p.url))
        .collect();
    pages
        .iter()
        .filter(|p| p.status == RetrievalStatus::Success)
        .map(|p| {
            let url = p.final_url.as_deref().unwrap_or(&p.url);
            (crate::http::host_of(url), p.text.as_str())
        })
        .chain(
            hits.iter()
                .filter(|h| !read.contains(&normalise_url(&h.url)))
                .filter(|h| !h.snippet.trim().is_empty())
                .map(|h| (crate::http::host_of(&h.url), h.snippet.as_str())),
        )
        .collect()
}

/// Results fetched beyond `--pages` at the same time, as spares for pages that fail
/// or lag.
pub const SPARE_FETCHES: usize = 2;
/// The grace a lagging page gets once one page is usable, as a multiple of the time
/// that first page took, within [`GRACE_MIN`] and [`GRACE_MAX`].
pub const GRACE_FACTOR: u32 = 2;
/// Spares start once the laggards have taken as long again as the first usable page,
/// and never sooner than this after it (pages that finish together start none).
pub const HEDGE_MIN: Duration = Duration::from_millis(250);
/// Shortest grace: fast local pages still get a moment to finish together.
pub const GRACE_MIN: Duration = Duration::from_millis(500);
/// Longest grace: a page this far behind the first usable one is not waited for.
pub const GRACE_MAX: Duration = Duration::from_secs(2);
/// Hedged fetching: fetches `wanted` results concurrently, each failure starting the
/// next result, and stops as soon as `wanted` pages are usable. Once one page is
/// usable while others still load, the laggards get a grace period derived from that
/// first page (`GRACE_FACTOR` times its time, within `GRACE_MIN`..`GRACE_MAX`), and
/// [`SPARE_FETCHES`] more results start halfway through it (at least `HEDGE_MIN`
/// after the first page), in case they finish first; pages still loading after it are not
/// waited for and come back as `NOT_WAITED`, never read. When every page is fast
/// nothing changes: the top `wanted` results, in rank order. The per-page timeout
/// stays the hard limit while no page is usable.
///
/// Returns the attempts in rank order, each with its extraction time in ms.
async fn gather(
    fetcher: &Fetcher,
    cache: &Cache,
    hits: &[SearchHit],
    wanted: usize,
) -> Vec<(PageAttempt, u64)> {
    let started = Instant::now();
    let mut in_flight: JoinSet<(PageAttempt, u64)> = JoinSet::new();
    let mut loading: Vec<usize> = Vec::new(); // ranks in flight
    let mut next = 0usize;
    let mut done: Vec<(PageAttempt, u64)> = Vec::new();
    let mut usable = 0usize;
    // Set when the first page is usable: when spares start, and when waiting ends.
    let mut hedge: Option<(tokio::time::Instant, tokio::time::Instant)> = None;
    let mut spares = false;
    loop {
        // Keep enough fetches going to reach `wanted`; once a page is usable and others
        // lag, also spares, which may finish before the laggards.
        let at_once = wanted + if spares { SPARE_FETCHES } else { 0 };
        while next < hits.len() && usable + in_flight.len() < at_once {
            let rank = next;
            let hit = hits[rank].clone();
            let (fetcher, cache) = (fetcher.clone(), cache.clone());
            in_flight.spawn(async move { fetch_and_extract(&fetcher, &cache, rank, &hit).await });
            loading.push(rank);
            next += 1;
        }
        if usable >= wanted || in_flight.is_empty() {
            break;
        }
        let joined = match hedge {
            Some((spares_at, _)) if !spares => tokio::select! {
                joined = in_flight.join_next() => joined,
                _ = tokio::time::sleep_until(spares_at) => {
                    spares = true;
                    continue;
                }
            },
            Some((_, grace_ends)) => tokio::select! {
                joined = in_flight.join_next() => joined,
                _ = tokio::time::sleep_until(grace_ends) => break,
            },
            None => in_flight.join_next().await,
        };
        let Some(joined) = joined else { break };
        let Ok(result) = joined else { continue }; // a panicked task is a lost page, not a crash
        loading.retain(|&rank| rank != result.0.rank);
        if result.0.status == RetrievalStatus::Success {
            usable += 1;
            if hedge.is_none() {
                let first = started.elapsed();
                let now = tokio::time::Instant::now();
                let grace = (first * GRACE_FACTOR).clamp(GRACE_MIN, GRACE_MAX);
                hedge = Some((now + first.max(HEDGE_MIN).min(grace / 2), now + grace));
            }
        }
        done.push(result);
    }
    // Whatever is still loading is not waited for, and says so.
    in_flight.abort_all();
    let waited_ms = elapsed_ms(started);
    for rank in loading {
        let mut attempt = PageAttempt::of(rank, &hits[rank]);
        attempt.status = RetrievalStatus::NotWaited;
        attempt.error = Some(format!(
            "still loading after {waited_ms} ms, when {usable} other page{} {} usable",
            if usable == 1 { "" } else { "s" },
            if usable == 1 { "was" } else { "were" }
        ));
        attempt.ms = waited_ms;
        done.push((attempt, 0));
    }
    done.sort_by_key(|(p, _)| p.rank);
    done
}
