//! `ground answer`, top to bottom: decide, plan, search and read, fit the context, ask
//! the model, check its quotes, and return a [`Report`] that the faces (render, MCP)
//! print.
//!
//! Every stage is its own module elsewhere and they exchange plain data, so each can be
//! tested alone. This folder only sequences them. One `Run` owns what every stage
//! needs for the length of a run (the settings, the events, the model client, the
//! cache and the page fetcher) and what the run has got to so far, so a failure
//! part-way still reports its searches and pages; the stages are its methods:
//! - `followup.rs`: a follow-up rewritten to stand alone, the evidence already read
//!   tried before any search, and the conversation's sources numbered once;
//! - `queries.rs`: the search gate (`--auto`) and the query planner;
//! - `gather.rs`: searches (at once or in rounds) and hedged page fetching;
//! - `images.rs`: the images search beside them (`--images`), never shown to the model;
//! - `sources.rs`: the sources numbered and fitted to the window;
//! - `ask.rs`: the model request, streamed, and what its reply says of the budget;
//! - `verify.rs`: the quote check of the answer and the pack's items;
//! - `local.rs`: local documents (`--docs`) searched and read again as sources;
//! - `offline.rs`: the model's answer with no sources, labelled as such.

mod ask;
mod direct;
mod followup;
mod gather;
mod images;
mod local;
mod offline;
mod queries;
mod sources;
mod verify;

use std::time::{Duration, Instant};

use crate::cache::Cache;
use crate::error::{Error, exit};
use crate::events::Events;
use crate::fetch::{Fetcher, elapsed_ms};
use crate::grounding;
use crate::llm::Backend;
use crate::report::{AnswerMode, Failed, Partial, Report};
use crate::settings::Settings;

pub use direct::{Direct, answer_directly, direct_prompt};
pub use followup::{
    Evidence, MAX_PRIOR_TURNS, MAX_SESSION_SOURCES, NewSource, Prior, PriorTurn, new_sources,
};
pub use images::ANSWER_IMAGES;

/// Watches the answer call while the model writes: the command line's live progress
/// and its statement-by-statement printing. Every method has an empty default.
pub trait Watch: Send + Sync {
    /// An answer attempt begins: 1, or 2 for the retry (see [`crate::llm::ask_streaming`]).
    fn attempt(&self, _attempt: u32) {}
    /// The model has read `prefill.done` of the prompt's `prefill.total` tokens, the
    /// prompt holding `sources` sources (backends that say: the embedded model). Comes
    /// after [`Self::attempt`] and before the attempt's text, at most
    /// [`PREFILL_REPORTS`] times per attempt.
    fn reading(&self, _sources: usize, _prefill: crate::llm::Prefill) {}
    /// Reply text arrived; `pieces` counts the pieces (about one token each) of this
    /// attempt so far.
    fn writing(&self, _pieces: u64) {}
    /// A statement of `attempt` is complete and checked against the sources. It is
    /// what the final answer will show at `index` unless the retry or the whole-reply
    /// parse changes it, so a printer must reconcile with the [`Report`] at the end.
    fn statement(&self, _attempt: u32, _index: usize, _statement: &grounding::Statement) {}
    /// A follow-up was rewritten into `standalone`, the question searched for and
    /// answered (before any search or answer call).
    fn rewritten(&self, _standalone: &str) {}
    /// The run added `warning` to its report's warnings, now (each text once): a
    /// terminal shows it when it happens (a SearXNG with JSON off, a fallback to
    /// Wikipedia, results dropped by the site filter) rather than after the answer.
    fn warning(&self, _warning: &str) {}
}

/// Most [`Watch::reading`] reports per answer attempt: the embedded engine's first
/// report and its thinned steps (`engine::PREFILL_STEPS`).
pub const PREFILL_REPORTS: usize = 33;

/// Nobody watching.
pub struct Unwatched;

impl Watch for Unwatched {}

/// One question for the pipeline: its text, the conversation it continues (if any)
/// and how long the whole run may take.
#[derive(Debug, Clone, Copy)]
pub struct Question<'a> {
    /// The question as asked (trimmed here; refused when empty or too long).
    pub text: &'a str,
    /// The conversation it is a turn of: with it, a follow-up is rewritten to stand
    /// alone and the sources already read are tried before any search; `None` is a
    /// run of its own.
    pub prior: Option<&'a Prior>,
    /// The whole run's time bound (`--timeout`, `[run] timeout_secs`).
    pub deadline: Duration,
}

/// What a run reports to and is configured by, held by the face that starts it.
#[derive(Clone, Copy)]
pub struct RunWith<'a> {
    /// The resolved settings (the model among them already chosen).
    pub settings: &'a Settings,
    /// Where stage events go (a terminal's progress, MCP progress, nowhere).
    pub events: &'a Events,
    /// Who watches the answer call as it streams ([`Unwatched`] for nobody).
    pub watch: &'a dyn Watch,
}

/// The one door into the pipeline: runs every stage for `question` within its
/// deadline. On failure (the deadline included) the error comes back with what the
/// run had got to: its searches, each page tried with its status, timings and
/// warnings, so `--json` can show why each page failed. With a
/// [`prior`](Question::prior) the report's [`followup`](Report::followup) says what
/// the follow-up step did.
pub async fn answer(question: Question<'_>, with: &RunWith<'_>) -> Result<Report, Box<Failed>> {
    let failed = |error| {
        Box::new(Failed {
            error,
            partial: Partial::default(),
        })
    };
    let text = checked_question(question.text).map_err(failed)?;
    let mut run = Run::new(with.settings, with.events, with.watch).map_err(failed)?;
    run.prior = question.prior;
    let deadline = question.deadline;
    let outcome = tokio::time::timeout(deadline, run.steps(text))
        .await
        .unwrap_or_else(|_| {
            Err(Error::Deadline {
                seconds: deadline.as_secs(),
                stage: with.events.current(),
            })
        });
    outcome.map_err(|error| {
        run.so_far.timings.total = elapsed_ms(run.started);
        Box::new(Failed {
            error,
            partial: std::mem::take(&mut run.so_far),
        })
    })
}

/// One run of the pipeline: what every stage needs, owned for the run's length, and
/// what the run has got to so far. Built once per question (by [`answer`]); the
/// stages are its methods, in the files of this folder.
struct Run<'a> {
    settings: &'a Settings,
    events: &'a Events,
    watch: &'a dyn Watch,
    client: Backend,
    cache: Cache,
    fetcher: Fetcher,
    started: Instant,
    /// Queries, searches, pages, timings and warnings so far (kept when a run fails).
    so_far: Partial,
    /// Model calls made (the gate, the planner, the answer and its retry).
    calls: u32,
    /// The conversation this run is a turn of, if any.
    prior: Option<&'a Prior>,
    /// The conversation's last turns as prompt text (empty for a run of its own).
    history: String,
    /// What the follow-up step did (a turn of a conversation only).
    followup: Option<crate::report::FollowUp>,
}

impl<'a> Run<'a> {
    fn new(
        settings: &'a Settings,
        events: &'a Events,
        watch: &'a dyn Watch,
    ) -> Result<Self, Error> {
        Ok(Run {
            settings,
            events,
            watch,
            client: Backend::new(&settings.llm)?,
            cache: Cache::open_shared(&settings.cache, settings.state.as_ref()),
            fetcher: Fetcher::with_sites(&settings.fetch, &settings.search.sites)?,
            started: Instant::now(),
            so_far: Partial::default(),
            calls: 0,
            prior: None,
            history: String::new(),
            followup: None,
        })
    }

    /// The stages in order.
    async fn steps(&mut self, as_asked: &str) -> Result<Report, Error> {
        // A follow-up is rewritten to stand alone; when the pages the conversation
        // already read hold its answer, steps 4-6 run on them and nothing is searched.
        let (standalone, reuse) = self.follow_up(as_asked).await?;
        let question = standalone.as_str();
        if reuse {
            let prompt = self.fit_sources(question, gather::Gathered::nothing())?;
            let checker = self.checker(&prompt).await?;
            let answered = self.ask(question, &prompt, &checker).await?;
            let checked = self.verify(&answered, &checker).await?;
            return Ok(self.report(as_asked, None, prompt, answered, checked));
        }
        // --no-web: the local documents alone, and no search request at all.
        if self.settings.docs.no_web {
            let mut gathered = gather::Gathered::nothing();
            gathered.pages = self.read_local(question, 0).await?;
            self.so_far.pages = gathered.pages.clone();
            let prompt = self.fit_sources(question, gathered)?;
            let checker = self.checker(&prompt).await?;
            let asked = self.ask(question, &prompt, &checker).await?;
            let checked = self.verify(&asked, &checker).await?;
            return Ok(self.report(as_asked, None, prompt, asked, checked));
        }
        // 0. Decide (only with --auto): does this question need the web at all?
        let decision = self.decide(question).await?;
        if decision.as_ref().is_some_and(|d| !d.need_search) {
            return self
                .offline(question, AnswerMode::NoSearchNeeded, decision)
                .await;
        }
        // 1. Plan the queries.
        let planned = self.plan(question, decision.as_ref()).await?;
        // 2 + 3. Search, then fetch and extract the pages (at once, or in rounds);
        //    with --images, the images search for the first query beside them.
        let deadline = tokio::time::Instant::now() + self.settings.run.timeout;
        let images = images::beside(
            self.settings,
            planned.queries.first().map(String::as_str),
            deadline,
        );
        let (gathered, images) = tokio::join!(self.search_and_read(question, &planned), images);
        self.so_far.warnings.extend(images.warnings);
        let gathered = match gathered {
            Ok(gathered) => gathered,
            Err(error) if self.may_answer_offline(&error) => {
                let reason = error.to_string();
                self.warn(format!(
                    "search failed, answering without sources: {reason}"
                ));
                let mode = AnswerMode::Offline { reason };
                return self.offline(question, mode, decision).await;
            }
            Err(error) => return Err(error),
        };
        // 3b. The local documents (--docs), searched with the question alone, join
        //     the pages read.
        let mut gathered = gathered;
        let local = self.read_local(question, gathered.hits.len()).await?;
        gathered.pages.extend(local);
        self.so_far.pages = gathered.pages.clone();
        // 4. The sources, numbered and fitted to the window.
        let prompt = self.fit_sources(question, gathered)?;
        // 5. The model, streamed; each statement checked as it arrives.
        let checker = self.checker(&prompt).await?;
        let asked = self.ask(question, &prompt, &checker).await?;
        // 6. Every statement checked against what the model was shown: its quotes,
        //    then ground's own match for those the quotes do not support.
        let checked = self.verify(&asked, &checker).await?;
        let mut report = self.report(as_asked, decision, prompt, asked, checked);
        report.images = self.settings.search.images.then_some(images.images);
        Ok(report)
    }

    /// `--fallback offline` answers without sources when search itself failed.
    fn may_answer_offline(&self, error: &Error) -> bool {
        self.settings.run.fallback_offline
            && matches!(error.exit_code(), exit::SEARCH | exit::RATE_LIMITED)
    }

    /// Adds a warning for the report (a text already there is not added twice) and
    /// tells the watcher at once.
    fn warn(&mut self, warning: String) {
        if self.so_far.warnings.contains(&warning) {
            return;
        }
        self.watch.warning(&warning);
        self.so_far.warnings.push(warning);
    }

    /// [`Run::warn`] for each of `warnings`.
    fn warn_all(&mut self, warnings: impl IntoIterator<Item = String>) {
        for warning in warnings {
            self.warn(warning);
        }
    }
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

/// The question trimmed, refused when empty or too long.
fn checked_question(question: &str) -> Result<&str, Error> {
    let question = question.trim();
    if question.is_empty() {
        return Err(Error::EmptyQuestion);
    }
    check_question_length(question)?;
    Ok(question)
}
