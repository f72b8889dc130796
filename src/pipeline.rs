//! `ground answer`, top to bottom:
//! search -> fetch + extract -> context -> llm -> grounding, returning a [`Report`]
//! that the faces (render, MCP) print. Each stage is its own module and they exchange plain
//! data, so each can be tested alone; this file only sequences them.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::task::JoinSet;

use crate::answer::{ModelAnswer, parse_questions_for_user};
use crate::cache::{Cache, SearchKey};
use crate::calibration::{self, Calibration};
use crate::context::{self, SourceText};
use crate::error::Error;
use crate::events::{Events, Stage};
use crate::fetch::{Fetcher, RetrievalStatus, elapsed_ms};
use crate::grounding::{self, GroundedAnswer};
use crate::hits::SearchHit;
use crate::language;
use crate::llm::{self, Backend, ChatBackend, ModelReply, ModelRequest};
use crate::page::{PageAttempt, fetch_and_extract, status_summary};
use crate::plan::{self, Decision, PlanRun, StopReason};
use crate::report::{
    AnswerMode, Failed, ModelInfo, PackEntry, Partial, Report, SearchRun, Timings,
};
use crate::search;
use crate::settings::{PlanMode, Settings};

/// Watches the answer call while the model writes: the command line's live progress
/// and its statement-by-statement printing. Every method has an empty default.
pub trait Watch: Send + Sync {
    /// An answer attempt begins: 1, or 2 for the retry (see [`llm::ask_streaming`]).
    fn attempt(&self, _attempt: u32) {}
    /// Reply text arrived; `pieces` counts the pieces (about one token each) of this
    /// attempt so far.
    fn writing(&self, _pieces: u64) {}
    /// A statement of `attempt` is complete and checked against the sources. It is
    /// what the final answer will show at `index` unless the retry or the whole-reply
    /// parse changes it, so a printer must reconcile with the [`Report`] at the end.
    fn statement(&self, _attempt: u32, _index: usize, _statement: &grounding::Statement) {}
}

/// Nobody watching.
pub struct Unwatched;

impl Watch for Unwatched {}

/// Runs the whole pipeline for `question`, reporting stages to `events`.
pub async fn answer(question: &str, settings: &Settings, events: &Events) -> Result<Report, Error> {
    let mut run = Run::default();
    steps(
        question,
        settings,
        events,
        &Unwatched,
        &mut run,
        Instant::now(),
    )
    .await
}

/// Runs the whole pipeline within `deadline`, with `watch` told about the answer call
/// as it streams. On failure (the deadline included) the error comes back with what
/// the run had got to: its searches, each page tried with its status, timings and
/// warnings, so `--json` can show why each page failed.
pub async fn answer_within(
    question: &str,
    settings: &Settings,
    events: &Events,
    watch: &dyn Watch,
    deadline: std::time::Duration,
) -> Result<Report, Box<Failed>> {
    let started = Instant::now();
    let mut run = Run::default();
    let outcome = tokio::time::timeout(
        deadline,
        steps(question, settings, events, watch, &mut run, started),
    )
    .await
    .unwrap_or_else(|_| {
        Err(Error::Deadline {
            seconds: deadline.as_secs(),
            stage: events.current(),
        })
    });
    outcome.map_err(|error| {
        run.timings.total = elapsed_ms(started);
        Box::new(Failed {
            error,
            partial: Partial {
                queries: run.queries,
                searches: run.searches,
                pages: run.pages,
                timings: run.timings,
                warnings: run.warnings,
            },
        })
    })
}

/// The stages in order; `run` collects what each one produced as it goes, so a
/// failure part-way still has it.
async fn steps(
    question: &str,
    settings: &Settings,
    events: &Events,
    watch: &dyn Watch,
    run: &mut Run,
    started: Instant,
) -> Result<Report, Error> {
    let question = question.trim();
    if question.is_empty() {
        return Err(Error::EmptyQuestion);
    }
    check_question_length(question)?;
    let client = Backend::new(&settings.llm)?;
    let cache = Cache::open(&settings.cache);

    // 0. Decide (only with --auto): does this question need the web at all?
    let mut decision = None;
    // Queries the planner is asked for, and how many of them may run.
    let mut planned_count = settings.run.queries;
    let mut query_budget = settings.run.queries.min(settings.run.max_searches);
    if settings.run.auto {
        events.stage(Stage::Deciding, "deciding whether to search");
        let t = Instant::now();
        let (verdict, warning) =
            plan::decide(&client, question, settings.llm.context_tokens).await?;
        run.calls += 1;
        run.timings.llm += elapsed_ms(t);
        run.warnings.extend(warning);
        events.emit("decided", json!({"need_search": verdict.need_search, "reason_codes": verdict.reason_codes, "max_queries": verdict.max_queries}));
        query_budget = query_budget.min(verdict.max_queries);
        planned_count = planned_count.min(verdict.max_queries);
        let skip = !verdict.need_search;
        decision = Some(verdict);
        if skip {
            let report = offline(
                question,
                settings,
                &client,
                AnswerMode::NoSearchNeeded,
                decision,
                run,
                started,
                events,
            )
            .await?;
            return Ok(report);
        }
    }

    // 1. Plan.
    let (plan, warning) = if query_budget > 1 {
        events.stage(Stage::Planning, "planning queries");
        let t = Instant::now();
        let planned = plan::plan_queries(
            &client,
            question,
            planned_count,
            settings.search.language.as_deref(),
            settings.run.region.as_deref(),
            settings.llm.context_tokens,
        )
        .await?;
        run.calls += 1;
        run.timings.llm += elapsed_ms(t);
        planned
    } else {
        (plan::Plan::as_asked(question), None)
    };
    run.warnings.extend(warning);
    // --max-searches (with --queries and the gate's max_queries) is the hard cap.
    let queries: Vec<String> = plan.queries.iter().take(query_budget).cloned().collect();
    let over_budget: Vec<String> = plan.queries.iter().skip(query_budget).cloned().collect();
    // Rounds need something to check: without must-have evidence every query runs,
    // so they run at once.
    let rounds = settings.run.plan_mode == PlanMode::Rounds
        && queries.len() > 1
        && !plan.must_have_evidence.is_empty();
    let agree = plan::agree_count(&plan.stop_conditions);
    run.queries = queries.clone();
    events.emit(
        "query_planned",
        json!({"queries": queries, "must_have_evidence": plan.must_have_evidence, "stop_conditions": plan.stop_conditions, "mode": if rounds { "rounds" } else { "concurrent" }}),
    );

    // 2 + 3. Search, then fetch and extract (replacing failed pages with the next
    // results): all queries at once, or one round per query.
    let fetcher = Fetcher::new(&settings.fetch)?;
    let searched = if rounds {
        search_in_rounds(
            settings, &cache, &fetcher, &queries, &plan, agree, run, events,
        )
        .await
    } else {
        search_at_once(settings, &cache, &fetcher, &queries, run, events).await
    };
    let (hits, searches, mut pages, plan_run) = match searched {
        Ok((hits, searches, pages, mut plan_run)) => {
            plan_run.queries_not_run.extend(over_budget.iter().cloned());
            let found = matches!(
                plan_run.stopped_because,
                Some(StopReason::EvidenceFound | StopReason::SourcesAgree)
            );
            if !found && !over_budget.is_empty() {
                plan_run.stopped_because = Some(StopReason::SearchBudget);
            }
            if searches.iter().any(|s| !s.cached) {
                run.warnings
                    .extend(search::usage::warning(&settings.search));
            }
            (hits, searches, pages, plan_run)
        }
        Err(error)
            if settings.run.fallback_offline
                && matches!(
                    error.exit_code(),
                    crate::error::exit::SEARCH | crate::error::exit::RATE_LIMITED
                ) =>
        {
            let reason = error.to_string();
            run.warnings.push(format!(
                "search failed, answering without sources: {reason}"
            ));
            let mode = AnswerMode::Offline { reason };
            return offline(
                question, settings, &client, mode, decision, run, started, events,
            )
            .await;
        }
        Err(error) => return Err(error),
    };
    // Only the queries that ran are the run's queries.
    let queries: Vec<String> = queries
        .into_iter()
        .filter(|q| !plan_run.queries_not_run.contains(q))
        .collect();
    let plan_run = (query_budget > 1).then(|| PlanRun {
        mode: if rounds {
            PlanMode::Rounds
        } else {
            PlanMode::Concurrent
        },
        must_have_evidence: plan.must_have_evidence.clone(),
        stop_conditions: plan.stop_conditions.clone(),
        agree,
        ..plan_run
    });
    let mut sources = Vec::new();
    for page in pages
        .iter_mut()
        .filter(|p| p.status == RetrievalStatus::Success)
    {
        let number = sources.len() + 1;
        page.index = Some(number);
        sources.push(SourceText {
            number,
            url: page.final_url.clone().unwrap_or_else(|| page.url.clone()),
            title: page.title.clone(),
            text: std::mem::take(&mut page.text),
        });
    }
    run.pages = pages.clone();
    if sources.is_empty() {
        return Err(Error::NoUsableSources {
            tried: pages.len(),
            summary: status_summary(&pages),
        });
    }
    if sources.len() < settings.fetch.pages {
        run.warnings.push(format!(
            "only {} of the {} pages asked for could be used",
            sources.len(),
            settings.fetch.pages
        ));
    }

    // 4. Context, fitted to the window.
    events.stage(Stage::Building, "building the context");
    let llm_settings = &settings.llm;
    let mut overhead = llm::prompt_overhead_tokens(question);
    if settings.run.pack {
        // The pack's instructions ride on the system prompt.
        overhead += context::estimate_tokens(llm::PACK_NOTE);
    }
    // The estimate scaled to the model's own tokens when earlier runs measured them.
    let calibration = Calibration::open(&settings.cache, llm_settings);
    let ratio = calibration.load();
    let budget = calibration::source_budget(
        llm_settings.context_tokens,
        llm_settings.max_answer_tokens,
        overhead,
        ratio.as_ref(),
    );
    // Results that were not read still carry their engine's title and snippet: cheap
    // evidence, sent as short sources of their own kind after the pages read.
    let pages_read = sources.len();
    let read: HashSet<String> = pages
        .iter()
        .filter(|p| p.index.is_some())
        .map(|p| search::normalize_url(&p.url))
        .collect();
    let snippets: Vec<SourceText> = hits
        .iter()
        .filter(|hit| !hit.snippet.trim().is_empty())
        .filter(|hit| !read.contains(&search::normalize_url(&hit.url)))
        .take(MAX_SNIPPET_SOURCES)
        .enumerate()
        .map(|(i, hit)| SourceText {
            number: pages_read + 1 + i,
            url: hit.url.clone(),
            title: hit.title.clone(),
            text: hit.snippet.clone(),
        })
        .collect();
    let (context, snippets_sent) =
        context::build_with_snippets(&sources, &snippets, question, budget);
    sources.extend(snippets.into_iter().take(snippets_sent));
    let cut: Vec<usize> = context
        .sources
        .iter()
        .filter(|s| s.truncated && s.number <= pages_read)
        .map(|s| s.number)
        .collect();
    if !cut.is_empty() {
        run.warnings.push(format!(
            "{} of {} sources were shortened to fit the {}-token context window (raise --context-tokens to send more)",
            cut.len(),
            pages_read,
            llm_settings.context_tokens
        ));
    }
    events.emit(
        "context_built",
        json!({"tokens": context.estimated_tokens + overhead, "budget": budget, "sources": sources.len(), "dropped": cut}),
    );

    // 5. Model.
    events.stage(
        Stage::Asking,
        &format!(
            "asking {} ({} sources, ~{} tokens)",
            llm_settings.model,
            sources.len(),
            context.estimated_tokens + overhead
        ),
    );
    let t = Instant::now();
    let mut request = ModelRequest {
        system: llm::SYSTEM_PROMPT.to_string(),
        user: llm::user_message(&context.text, question),
        schema: llm::answer_schema(
            sources.len(),
            llm::AnswerBounds::for_tokens(llm_settings.max_answer_tokens),
        ),
        context_tokens: llm_settings.context_tokens,
        max_answer_tokens: llm_settings.max_answer_tokens,
    };
    let answer_language = language::choose(settings.llm.answer_language.as_deref(), question);
    if let Some(language) = &answer_language {
        request.system.push_str(&language::instruction(language));
    }
    if settings.run.pack {
        request.system.push_str(llm::PACK_NOTE);
        request.schema = llm::with_pack_buckets(llm::with_questions_for_user(request.schema));
    }
    let mut pieces = 0u64;
    // The sources' normal forms, computed once for every check below.
    let checker = grounding::Checker::new(&sources);
    let asked = llm::ask_streaming(&client, &request, &mut |event| match event {
        llm::AskEvent::Attempt(n) => {
            pieces = 0;
            watch.attempt(n);
        }
        llm::AskEvent::Text(_) => {
            pieces += 1;
            watch.writing(pieces);
        }
        llm::AskEvent::Statement {
            attempt,
            index,
            statement,
        } => {
            let one = ModelAnswer {
                answerable: true,
                statements: vec![statement],
                unknowns: Vec::new(),
                over_bounds: 0,
            };
            if let Some(checked) = checker.verify(&one).statements.first() {
                watch.statement(attempt, index, checked);
            }
        }
    })
    .await?;
    let ask_user = if settings.run.pack {
        parse_questions_for_user(&asked.reply.content)
    } else {
        Vec::new()
    };
    run.calls += asked.attempts;
    run.timings.llm += elapsed_ms(t);
    if asked.answer.over_bounds > 0 {
        run.warnings.push(format!(
            "the model's reply went past the answer schema's bounds: {} statements, citations or unknowns beyond them were dropped",
            asked.answer.over_bounds
        ));
    }
    let estimated_prompt_tokens = overhead + context.estimated_tokens;
    if let Some(counted) = asked.reply.prompt_tokens {
        // Ollama keeps the end of an over-long prompt; a count at the window's edge
        // (less the output reserve) means the front, where sources start, was lost.
        let usable = llm_settings
            .context_tokens
            .saturating_sub(llm_settings.max_answer_tokens);
        // A count below the whole window is exact; one at it is only a lower bound.
        let cut = counted >= llm_settings.context_tokens;
        calibration.record(estimated_prompt_tokens, counted, cut);
        // A calibrated budget aims below the edge, so reaching it means a cut prompt.
        if counted >= usable && (estimated_prompt_tokens > counted || ratio.is_some() || cut) {
            run.warnings.push(format!(
                "the model server counted {counted} prompt tokens against an estimate of {estimated_prompt_tokens}: the prompt was probably cut; lower --pages or raise --context-tokens"
            ));
        }
    }

    // 6. Grounding.
    events.stage(Stage::Checking, "checking citations");
    let answer = checker.verify(&asked.answer);
    let pack_items = if settings.run.pack {
        pack_entries(&asked.reply.content, &checker)
    } else {
        Vec::new()
    };
    events.emit(
        "answer_shown",
        json!({"grounded": answer.grounded(), "statements": answer.statements.len(), "supports": answer.statements.iter().filter(|s| s.supported()).count()}),
    );

    run.timings.total = elapsed_ms(started);
    let mut model = model_info(
        &client,
        settings,
        &asked.reply,
        estimated_prompt_tokens,
        run.calls,
    );
    if let Some(r) = ratio {
        (model.token_ratio, model.token_ratio_calibrated) = (r.ratio, true);
    }
    Ok(Report {
        question: question.to_string(),
        mode: AnswerMode::Grounded,
        decision,
        queries,
        searches,
        hits,
        pages,
        sources,
        snippets: snippets_sent,
        model,
        context,
        answer,
        timings: run.timings.clone(),
        warnings: std::mem::take(&mut run.warnings),
        ask_user,
        answer_language,
        plan: plan_run,
        pack_items,
    })
}

/// The pack's bucket items of the reply `content`, each checked against `sources`
/// with the same quote check as the answer's statements.
fn pack_entries(content: &str, checker: &grounding::Checker) -> Vec<PackEntry> {
    let mut entries = Vec::new();
    for bucket in llm::PACK_BUCKETS {
        let items = crate::answer::parse_pack_bucket(
            content,
            bucket,
            llm::MAX_BUCKET_ITEMS as usize,
            llm::MAX_BUCKET_CITATIONS as usize,
        );
        let flags: Vec<bool> = items.iter().map(|i| i.policy_or_legal).collect();
        let checked = checker.verify(&ModelAnswer {
            answerable: true,
            statements: items.into_iter().map(|i| i.statement).collect(),
            unknowns: Vec::new(),
            over_bounds: 0,
        });
        for (statement, flagged) in checked.statements.into_iter().zip(flags) {
            let policy_or_legal = flagged || grounding::reads_like_policy(&statement.text);
            entries.push(PackEntry {
                bucket,
                statement,
                policy_or_legal,
            });
        }
    }
    entries
}

/// What searching and reading produced: the merged results, every search call, every
/// page tried, and how the plan went.
type Gathered = (Vec<SearchHit>, Vec<SearchRun>, Vec<PageAttempt>, PlanRun);

/// Every query at once ([`search_all`]), then the pages ([`gather`]).
async fn search_at_once(
    settings: &Settings,
    cache: &Cache,
    fetcher: &Fetcher,
    queries: &[String],
    run: &mut Run,
    events: &Events,
) -> Result<Gathered, Error> {
    events.stage(
        Stage::Searching,
        &format!("searching {}", settings.search.backend),
    );
    let t = Instant::now();
    let searched = search_all(settings, cache, queries, events).await;
    run.timings.search = elapsed_ms(t);
    let (hits, searches, warnings) = match searched {
        Ok(found) => found,
        Err((error, searches)) => {
            run.searches = searches;
            return Err(error);
        }
    };
    run.warnings.extend(warnings);
    run.searches = searches.clone();
    let pages = fetch_pages(settings, cache, fetcher, &hits, 0, run, events).await;
    run.pages = pages.clone();
    Ok((hits, searches, pages, PlanRun::default()))
}

/// Fetches up to `--pages` of `hits` (hedged, see [`gather`]), numbering their ranks
/// from `first_rank`, and reports them.
async fn fetch_pages(
    settings: &Settings,
    cache: &Cache,
    fetcher: &Fetcher,
    hits: &[SearchHit],
    first_rank: usize,
    run: &mut Run,
    events: &Events,
) -> Vec<PageAttempt> {
    events.stage(
        Stage::Fetching,
        &format!(
            "fetching {} of {} results",
            settings.fetch.pages.min(hits.len()),
            hits.len()
        ),
    );
    let t = Instant::now();
    let fetched = gather(fetcher, cache, hits, settings.fetch.pages).await;
    run.timings.fetch += elapsed_ms(t);
    run.timings.extract += fetched.iter().map(|p| p.1).sum::<u64>();
    let pages: Vec<PageAttempt> = fetched
        .into_iter()
        .map(|(mut p, _)| {
            p.rank += first_rank;
            p
        })
        .collect();
    events.emit(
        "pages_fetched",
        json!({"pages": pages.iter().map(|p| json!({"url": p.url, "status": p.status, "http_status": p.http_status, "cached": p.cached, "ms": p.ms})).collect::<Vec<_>>()}),
    );
    pages
}

/// One query per round: search it ([`search_all`] with one query), read the pages of
/// its new results, and check the must-have evidence in every page read and every
/// snippet so far; the next query runs only while the evidence is missing. A round
/// whose search fails or finds nothing new is recorded and the next one runs; the
/// run fails only when every round's search failed.
#[allow(clippy::too_many_arguments)]
async fn search_in_rounds(
    settings: &Settings,
    cache: &Cache,
    fetcher: &Fetcher,
    queries: &[String],
    plan: &plan::Plan,
    agree: usize,
    run: &mut Run,
    events: &Events,
) -> Result<Gathered, Error> {
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut searches: Vec<SearchRun> = Vec::new();
    let mut pages: Vec<PageAttempt> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut first_error = None;
    let mut outcome = PlanRun::default();
    for (round, query) in queries.iter().enumerate() {
        events.stage(
            Stage::Searching,
            &format!(
                "searching {} (round {} of {})",
                settings.search.backend,
                round + 1,
                queries.len()
            ),
        );
        let t = Instant::now();
        let searched = search_all(settings, cache, std::slice::from_ref(query), events).await;
        let ms = elapsed_ms(t);
        run.timings.search += ms;
        outcome.rounds += 1;
        let fresh: Vec<SearchHit> = match searched {
            Ok((found, runs, warnings)) => {
                searches.extend(runs);
                for warning in warnings {
                    if !run.warnings.contains(&warning) {
                        run.warnings.push(warning);
                    }
                }
                found
                    .into_iter()
                    .filter(|hit| seen.insert(search::normalize_url(&hit.url)))
                    .collect()
            }
            Err((error, runs)) => {
                searches.extend(runs);
                first_error.get_or_insert(error);
                Vec::new()
            }
        };
        run.searches = searches.clone();
        if !fresh.is_empty() {
            let read = fetch_pages(settings, cache, fetcher, &fresh, hits.len(), run, events).await;
            pages.extend(read);
            hits.extend(fresh);
            run.pages = pages.clone();
        }
        outcome.evidence =
            plan::check_evidence(&plan.must_have_evidence, &evidence_texts(&hits, &pages));
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
        events.emit(
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
    if hits.is_empty() {
        return Err(search::no_hits_error(&queries.join(" | "), &[]));
    }
    if searches.iter().any(|s| s.error.is_some()) {
        run.warnings
            .push("some searches failed; answering from the others".to_string());
    }
    pages.sort_by_key(|p| p.rank);
    Ok((hits, searches, pages, outcome))
}

/// The texts the evidence check reads, each with its host: the pages read, and the
/// snippets of results not read (they go to the model as sources of their own).
fn evidence_texts<'a>(hits: &'a [SearchHit], pages: &'a [PageAttempt]) -> Vec<(String, &'a str)> {
    let read: HashSet<String> = pages
        .iter()
        .filter(|p| p.status == RetrievalStatus::Success)
        .map(|p| search::normalize_url(&p.url))
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
                .filter(|h| !read.contains(&search::normalize_url(&h.url)))
                .filter(|h| !h.snippet.trim().is_empty())
                .map(|h| (crate::http::host_of(&h.url), h.snippet.as_str())),
        )
        .collect()
}

/// Longest question (or search query) accepted, in characters: longer ones are not
/// questions, and would not fit a search URL.
pub const MAX_QUESTION_CHARS: usize = 2000;

/// A usage error for a question over [`MAX_QUESTION_CHARS`].
pub fn check_question_length(question: &str) -> Result<(), Error> {
    let chars = question.chars().count();
    if chars > MAX_QUESTION_CHARS {
        return Err(Error::Usage {
            message: format!(
                "the question is {chars} characters long, more than the {MAX_QUESTION_CHARS} allowed"
            ),
            hint: "ask a shorter question; put long material on a page and use `ground fetch`"
                .into(),
        });
    }
    Ok(())
}

/// What a run accumulates on its way (kept beside the error when it fails).
#[derive(Default)]
struct Run {
    warnings: Vec<String>,
    timings: Timings,
    calls: u32,
    queries: Vec<String>,
    searches: Vec<SearchRun>,
    pages: Vec<PageAttempt>,
}

fn model_info(
    client: &Backend,
    settings: &Settings,
    reply: &ModelReply,
    estimated: u32,
    calls: u32,
) -> ModelInfo {
    ModelInfo {
        backend: client.backend(),
        name: client.model().to_string(),
        prompt_tokens: reply.prompt_tokens,
        completion_tokens: reply.completion_tokens,
        estimated_prompt_tokens: estimated,
        context_window: settings.llm.context_tokens,
        max_answer_tokens: settings.llm.max_answer_tokens,
        attempts: calls,
        done_reason: reply.done_reason.clone(),
        token_ratio: 1.0,
        token_ratio_calibrated: false,
    }
}

/// The model's answer with no sources (gate said no search, or search failed with
/// `--fallback offline`), labelled as not grounded.
#[allow(clippy::too_many_arguments)]
async fn offline(
    question: &str,
    settings: &Settings,
    client: &Backend,
    mode: AnswerMode,
    decision: Option<Decision>,
    run: &mut Run,
    started: Instant,
    events: &Events,
) -> Result<Report, Error> {
    events.stage(
        Stage::Asking,
        &format!("asking {} without sources", settings.llm.model),
    );
    let t = Instant::now();
    let (text, reply) = plan::answer_offline(
        client,
        question,
        settings.llm.context_tokens,
        settings.llm.max_answer_tokens,
    )
    .await?;
    run.calls += 1;
    run.timings.llm += elapsed_ms(t);
    let answer = GroundedAnswer::ungrounded(text);
    events.emit(
        "answer_shown",
        json!({"grounded": false, "statements": 1, "supports": 0}),
    );
    run.timings.total = elapsed_ms(started);
    let model = model_info(client, settings, &reply, 0, run.calls);
    Ok(Report {
        question: question.to_string(),
        mode,
        decision,
        queries: Vec::new(),
        searches: Vec::new(),
        hits: Vec::new(),
        pages: Vec::new(),
        sources: Vec::new(),
        snippets: 0,
        context: context::build(&[], 0),
        answer,
        model,
        timings: run.timings.clone(),
        warnings: std::mem::take(&mut run.warnings),
        ask_user: Vec::new(),
        answer_language: None,
        plan: None,
        pack_items: Vec::new(),
    })
}

/// Runs every query concurrently and merges the results by normalised URL, ranked
/// by their best position in any query (ties: the earlier query). Fails only when
/// every query failed or nothing was found.
async fn search_all(
    settings: &Settings,
    cache: &Cache,
    queries: &[String],
    events: &Events,
) -> Result<(Vec<SearchHit>, Vec<SearchRun>, Vec<String>), (Error, Vec<SearchRun>)> {
    let calls = queries.iter().map(|query| async move {
        let t = Instant::now();
        let mut key = SearchKey::new(&settings.search, query, settings.search.max_results);
        key.region = settings.run.region.clone();
        if let Some(found) = cache.get_search(&key) {
            search::log::record(&settings.search, query, Ok(found.hits.len()), true);
            return (query.clone(), Ok(found), elapsed_ms(t), true);
        }
        let outcome = search::search(&settings.search, query).await;
        // Only complete answers are kept: not failures, not results with engines down.
        let complete = outcome
            .as_ref()
            .ok()
            .filter(|f| !f.hits.is_empty() && f.unresponsive_engines.is_empty());
        if let Some(found) = complete {
            cache.put_search(&key, found);
        }
        (query.clone(), outcome, elapsed_ms(t), false)
    });
    let results = futures_util::future::join_all(calls).await;

    let mut runs = Vec::new();
    let mut first_error = None;
    let mut unresponsive: Vec<(String, String)> = Vec::new();
    let mut notes: Vec<String> = Vec::new(); // the searches' own warnings, each once
    let mut ranked: Vec<(usize, usize, SearchHit)> = Vec::new(); // (position, query index, hit)
    for (qi, (query, outcome, ms, cached)) in results.into_iter().enumerate() {
        let run = match outcome {
            Ok(found) => {
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
                    backend: settings.search.backend,
                    results: count,
                    cached,
                    ms,
                    error: None,
                }
            }
            Err(error) => {
                let run = SearchRun {
                    query,
                    backend: settings.search.backend,
                    results: 0,
                    cached: false,
                    ms,
                    error: Some(error.to_string()),
                };
                first_error.get_or_insert(error);
                run
            }
        };
        events.emit("search_called", json!({"query": run.query, "backend": run.backend, "results": run.results, "cached": run.cached, "ms": run.ms, "error": run.error}));
        runs.push(run);
    }
    if let Some(error) = first_error
        .take()
        .filter(|_| runs.iter().all(|r| r.error.is_some()))
    {
        return Err((error, runs));
    }
    ranked.sort_by_key(|(position, qi, _)| (*position, *qi));
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (_, _, hit) in ranked {
        let key = search::normalize_url(&hit.url);
        if !seen.contains(&key) {
            seen.push(key);
            hits.push(hit);
        }
    }
    if hits.is_empty() {
        return Err((
            search::no_hits_error(&queries.join(" | "), &unresponsive),
            runs,
        ));
    }
    let mut warnings = notes;
    if !unresponsive.is_empty() {
        warnings.push(format!(
            "some search engines failed: {}",
            search::searxng::describe_unresponsive(&unresponsive)
        ));
    }
    if runs.iter().any(|r| r.error.is_some()) {
        warnings.push("some searches failed; answering from the others".to_string());
    }
    Ok((hits, runs, warnings))
}

/// Most search-result snippets sent as sources of their own beside the pages read.
pub const MAX_SNIPPET_SOURCES: usize = 7;

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
