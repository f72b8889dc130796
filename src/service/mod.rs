//! What every face needs, per process and per client: the one door that MCP
//! (`ground mcp`), the HTTP API (`ground serve`) and batches go through to the
//! pipeline, and the command line for its search ([`Service::search_here`]) and its
//! model ([`ModelSlot::ready_within`], with a terminal's progress display).
//!
//! A face translates: its protocol's request in, a call here, its protocol's reply
//! out. Everything a second face would otherwise copy lives here:
//!
//! - [`Service`] (one per process): the resolved settings; the model, chosen and
//!   downloaded on the first answer and shared by every request ([`ModelSlot`]); the
//!   conversations' evidence, found by the conversation itself ([`Conversations`]);
//!   the bound on runs at once and waiting ([`Service::admit`], [`admission`]: with
//!   the embedded engine a run's model calls wait in the engine's own queue, its
//!   searches and page reads not).
//! - [`Client`] (one per MCP session, one per server): the search budget
//!   (`--session-searches`), the answers kept for reuse ([`Reused`], keyed by the
//!   question and every option of the request: [`request_key`]; a server's and a
//!   batch's shared by the deployment through Redis when `[state]` names one), and whether its
//!   requests are isolated from each other (`[serve] isolate_clients`: nothing
//!   reused, the embedded model's prompt cache kept per conversation:
//!   [`cache_scope`]).
//! - [`Failure`]: every failed call as one value, with the CLI's words and hint and
//!   the class a face maps onto its own error (a tool error, an HTTP status).
//! - [`Answered`]: the report with its verdict, for a face to render.
//! - [`Searched`]: a search's outcome and the service that ran it, with the one
//!   rule for a search that found nothing ([`Searched::nothing_found`]).
//! - [`Service::check`] (`check.rs`): claims, or another AI tool's cited answer,
//!   checked against the pages read (`ground check`, MCP's `check_claims`).
//! - [`Service::answer_directly`]: the model alone, through the pipeline's no-search
//!   path ([`crate::pipeline::answer_directly`]: the same history block as a run).
//!
//! Calls run the pipeline in a task of their own ([`isolated`]): a panic is a failure,
//! not a dead server, and a caller that stops waiting (a client gone, a deadline)
//! aborts the run, its searches, fetches and generation.

pub mod admission;
pub mod check;
pub mod conversation;
mod failure;
pub mod model;
pub mod reuse;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Semaphore;

pub use self::admission::{Admission, Places};
pub use self::check::{CheckInput, Checked};
pub use self::conversation::{
    ConversationStore, Conversations, Evidence, MAX_TURN_BYTES, Turn, prior_of,
};
pub use self::failure::{Failure, isolated};
pub use self::model::ModelSlot;
pub use self::reuse::{MAX_REUSED_BYTES, MAX_REUSED_RUNS, Reused, request_key, reuse_key};
use crate::error::exit;
use crate::events::Events;
use crate::llm::embedded::models::Progress;
use crate::page::PageAttempt;
pub use crate::pipeline::Direct;
use crate::pipeline::{Question, RunWith, Unwatched, Watch};
use crate::report::{Report, Strictness, Verdict, verdict};
use crate::search::SearchOutcome;
use crate::settings::{LlmSettings, SearchSettings, Settings};

/// One process's service: shared by every client and request.
#[derive(Debug)]
pub struct Service {
    settings: Arc<Settings>,
    model: ModelSlot,
    conversations: Conversations,
    /// The bound on runs at once and waiting.
    places: Places,
}

/// What one client may still spend and has already got: its search budget and its
/// answers kept for reuse.
#[derive(Debug)]
pub struct Client {
    /// Searches left, and the budget they came from; `None` for no budget.
    budget: Option<(AtomicUsize, usize)>,
    reused: Reused,
    reuse_ttl: Duration,
    /// Whether the requests through this client come from people who must not learn
    /// about each other (`ground serve` with `[serve] isolate_clients`): no answer is
    /// reused, and the embedded model's cached prompt prefix is kept per
    /// conversation ([`cache_scope`]).
    isolated: bool,
    /// This client among the process's clients, for [`cache_scope`].
    id: u64,
}

/// A new client's [`Client::id`].
fn next_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

impl Client {
    /// A client with `settings`' session budget (`--session-searches`) and reuse
    /// window (`--reuse-secs`): one agent's MCP session.
    pub fn with_budget(settings: &Settings) -> Self {
        Client {
            budget: Some((
                AtomicUsize::new(settings.run.session_searches),
                settings.run.session_searches,
            )),
            reused: Reused::default(),
            reuse_ttl: settings.run.session_reuse,
            isolated: false,
            id: next_id(),
        }
    }

    /// A server's client, with no search budget (its rate limits bound it): answers
    /// reused within `settings`' reuse window across every request, unless
    /// `[serve] isolate_clients` says its requests must not learn about each other
    /// (then nothing is reused, and the model's prompt cache is kept per
    /// conversation).
    pub fn unbudgeted(settings: &Settings) -> Self {
        Client {
            isolated: settings.serve.isolate_clients,
            ..Client::one_user(settings)
        }
    }

    /// One person's client with no search budget (`ground batch`: its questions are
    /// one user's, whatever `[serve] isolate_clients` says), reusing answers within
    /// `settings`' reuse window, shared with the deployment's other processes through
    /// the Redis `[state]` names, if any.
    pub fn one_user(settings: &Settings) -> Self {
        Client {
            budget: None,
            reused: Reused::shared_through(settings.state.as_ref()),
            reuse_ttl: settings.run.session_reuse,
            isolated: false,
            id: next_id(),
        }
    }

    /// Whether its requests are kept from learning about each other.
    pub fn isolated(&self) -> bool {
        self.isolated
    }

    /// Takes up to `wanted` searches from the budget: as many as are left, or the
    /// failure when none are.
    fn take_up_to(&self, wanted: usize) -> Result<usize, Failure> {
        let Some((left, total)) = &self.budget else {
            return Ok(wanted);
        };
        let mut granted = 0;
        left.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
            granted = now.min(wanted);
            (granted > 0).then(|| now - granted)
        })
        .map(|_| granted)
        .map_err(|now| Failure::budget_spent(now, *total, wanted.max(1)))
    }

    /// Gives back searches taken but not made.
    fn give_back(&self, count: usize) {
        if let Some((left, _)) = &self.budget {
            left.fetch_add(count, Ordering::SeqCst);
        }
    }
}

/// One question for [`Service::answer`].
pub struct AnswerRequest<'a> {
    /// The question as asked.
    pub question: &'a str,
    /// The conversation's earlier turns, oldest first (empty for a question of its own).
    pub conversation: &'a [Turn],
    /// Where the run's stage events go.
    pub events: Events,
    /// Who watches the answer call as it streams (live statements).
    pub watch: Arc<dyn Watch>,
    /// Told how a first download of the embedded model goes.
    pub download: &'a mut (dyn FnMut(Progress) + Send),
    /// Told which model was chosen, and why, when the first answer chooses it.
    pub note: &'a (dyn Fn(&str) + Send + Sync),
    /// The answer text the face will show its client, from the report: the text the
    /// client sends back in a follow-up, by which its conversation is found again.
    pub shown_answer: &'a (dyn Fn(&Report) -> String + Sync),
    /// Settings this request changes (the face's request options), applied to a copy
    /// of the service's.
    pub adjust: Option<&'a (dyn Fn(&mut Settings) + Sync)>,
}

/// A question answered: the report, its verdict (without `--strict`), and whether it
/// is an earlier run's answer reused.
#[derive(Debug)]
pub struct Answered {
    /// The run's report.
    pub report: Arc<Report>,
    /// The verdict on it (lenient: only an answer that cites nothing is refused).
    pub verdict: Verdict,
    /// When reused: how old the earlier run is, and the reuse window.
    pub reused: Option<(Duration, Duration)>,
}

/// The embedded model's cache scope for a request of `client` in `conversation`
/// ([`crate::settings::EmbeddedSettings::cache_scope`]): `None` (shared by every
/// call) unless the client is isolated; then a follow-up's conversation, known by its
/// first turn as the client holds it (its later turns reuse each other's prefix),
/// and a question of its own a scope of its own.
pub fn cache_scope(client: &Client, conversation: &[Turn]) -> Option<String> {
    client.isolated.then(|| scope_of(client.id, conversation))
}

/// The cache scope of a request of client `id` in `conversation` (see
/// [`cache_scope`]).
fn scope_of(id: u64, conversation: &[Turn]) -> String {
    static REQUESTS: AtomicU64 = AtomicU64::new(0);
    match conversation.first() {
        Some(first) => format!(
            "client {id} conversation {}",
            conversation::conversation_key(std::slice::from_ref(first))
        ),
        None => format!(
            "client {id} request {}",
            REQUESTS.fetch_add(1, Ordering::Relaxed)
        ),
    }
}

impl Service {
    /// A service answering with `settings`, at most `concurrency` runs at once and
    /// `queue` more waiting. The embedded engine writes up to `concurrency` replies at
    /// once, in one batch ([`crate::settings::EmbeddedSettings::parallel`]); with it,
    /// every admitted run searches and reads its pages at once, and its model calls
    /// wait in the engine's own queue beyond that ([`Service::admit`]).
    pub fn new(settings: Settings, concurrency: usize, queue: usize) -> Self {
        Service::build(settings, concurrency, queue, concurrency)
    }

    /// A service with no bound on runs at once (one client's session: MCP); the
    /// embedded engine writes one reply at a time for it, as the command line does.
    pub fn unbounded(settings: Settings) -> Self {
        Service::build(settings, Semaphore::MAX_PERMITS, 0, 1)
    }

    fn build(mut settings: Settings, concurrency: usize, queue: usize, parallel: usize) -> Self {
        settings.llm.embedded.parallel = parallel;
        Service {
            model: ModelSlot::new(settings.llm.clone()),
            conversations: Conversations::for_state(settings.state.as_ref()),
            settings: Arc::new(settings),
            places: Places::new(concurrency, queue),
        }
    }

    /// The settings every request starts from.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The model, as far as known (for a start-up line).
    pub fn model(&self) -> &ModelSlot {
        &self.model
    }

    /// The conversations' evidence.
    pub fn conversations(&self) -> &Conversations {
        &self.conversations
    }

    /// A place for one run, or `None` (the face says "busy, retry") when
    /// `concurrency + queue` are admitted already. With a server model the run waits
    /// until fewer than the concurrency run; with the embedded engine it starts at
    /// once, and only its model calls wait, in the engine's own queue (see
    /// [`admission`]).
    pub async fn admit(&self) -> Option<Admission> {
        self.places.take(!self.model.queues_its_calls()).await
    }

    /// Requests admitted now: running or waiting (for tests and logs).
    pub fn admitted(&self) -> usize {
        self.places.admitted()
    }

    /// `ground search`'s search for `query` (MCP's `web_search`), with at least
    /// `limit` results asked for, within the run's deadline; costs one search of
    /// `client`'s budget. A search that finds nothing is a failure.
    pub async fn search(
        &self,
        client: &Client,
        query: &str,
        limit: usize,
        sites: Option<crate::sites::SiteFilter>,
        log_wait: &'static (dyn Fn(&str) + Send + Sync),
    ) -> Result<(SearchOutcome, SearchSettings), Failure> {
        if query.is_empty() {
            return Err(Failure::usage(
                "the query is empty",
                "pass the words to search for",
            ));
        }
        client.take_up_to(1)?;
        let settings = Arc::clone(&self.settings);
        let query = query.to_string();
        isolated(async move {
            let mut searched = searched(&settings, &query, limit, sites, log_wait, &|_| {}).await?;
            if let Some(error) = searched.nothing_found() {
                return Err(error);
            }
            searched.outcome.warnings.splice(0..0, searched.note);
            Ok((searched.outcome, searched.settings))
        })
        .await
    }

    /// The search of [`Service::search`] as the command line runs it: in place, with
    /// no budget, the stage's own error on failure, and the outcome even when it found
    /// nothing (its "did you mean" corrections are worth showing; see
    /// [`Searched::nothing_found`]). `log_wait` is told each wait for the rate limit,
    /// `note` the service `--search auto` chose and why, as soon as it is chosen.
    pub async fn search_here(
        &self,
        query: &str,
        limit: usize,
        log_wait: &(dyn Fn(&str) + Send + Sync),
        note: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Searched, crate::error::Error> {
        searched(&self.settings, query, limit, None, log_wait, note).await
    }

    /// `ground search --images`'s images search for `query` (MCP's `web_search` with
    /// `category: "images"`), at most `limit` images, within `sites` when given and
    /// the run's deadline; costs one search of `client`'s budget. No image is ever
    /// fetched. A search that finds no image is not a failure here: the face decides.
    pub async fn images(
        &self,
        client: &Client,
        query: &str,
        limit: usize,
        sites: Option<crate::sites::SiteFilter>,
        log_wait: &'static (dyn Fn(&str) + Send + Sync),
    ) -> Result<crate::search::images::ImagesOutcome, Failure> {
        if query.is_empty() {
            return Err(Failure::usage(
                "the query is empty",
                "pass the words to search for",
            ));
        }
        client.take_up_to(1)?;
        let settings = Arc::clone(&self.settings);
        let query = query.to_string();
        isolated(async move { images_searched(&settings, &query, limit, sites, log_wait).await })
            .await
    }

    /// [`Service::images`] as the command line runs it: in place, no budget, the
    /// stage's own error on failure.
    pub async fn images_here(
        &self,
        query: &str,
        limit: usize,
        log_wait: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<crate::search::images::ImagesOutcome, crate::error::Error> {
        images_searched(&self.settings, query, limit, None, log_wait).await
    }

    /// `ground fetch --json`'s page: same limits, statuses and address policy.
    pub async fn fetch(&self, url: &str) -> Result<PageAttempt, Failure> {
        let (settings, url) = (Arc::clone(&self.settings), url.to_string());
        isolated(async move { crate::page::fetch_one(&settings, &url).await }).await
    }

    /// The `n` best passages for `query` in `collections` of the local document index
    /// (`ground index search`), searched off the async runtime. Every collection must
    /// be one this service serves (`--docs`, `[docs] collections`): a face never lets
    /// a request reach another.
    pub async fn documents(
        &self,
        collections: &[String],
        query: &str,
        n: usize,
    ) -> Result<Vec<crate::docs::Hit>, Failure> {
        let served = &self.settings.docs.collections;
        if let Some(other) = collections.iter().find(|c| !served.contains(c)) {
            return Err(not_served(other, served));
        }
        let query = query.trim().to_string();
        if query.is_empty() {
            return Err(Failure::from(crate::error::Error::EmptyQuestion));
        }
        let home = self
            .settings
            .docs
            .home
            .clone()
            .ok_or(crate::docs::IndexError::NoHome)
            .map_err(|e| Failure::from(crate::error::Error::from(e)))?;
        let collections = collections.to_vec();
        tokio::task::spawn_blocking(move || crate::docs::search(&home, &collections, &query, n))
            .await
            .map_err(|e| {
                Failure::from(crate::error::Error::Internal {
                    message: format!("the local search stopped: {e}"),
                })
            })?
            .map_err(|e| Failure::from(crate::error::Error::from(e)))
    }

    /// Answers one question for `client`: an earlier answer to the same question
    /// reused (a question of its own only), else the model made ready (first
    /// answer of the process), the search budget reserved, the conversation's
    /// evidence found, and the pipeline run within the deadline.
    pub async fn answer(
        &self,
        client: &Client,
        request: AnswerRequest<'_>,
    ) -> Result<Answered, Failure> {
        let question = request.question.trim().to_string();
        if question.is_empty() {
            return Err(Failure::usage(
                "the question is empty",
                "pass the question to answer",
            ));
        }
        let conversation = request.conversation;
        // The settings of this request: the service's (with the model as chosen, once
        // it is) and the request's options over them.
        let adjusted = |llm: Option<LlmSettings>| {
            let mut settings = (*self.settings).clone();
            if let Some(llm) = llm {
                settings.llm = llm;
            }
            if let Some(adjust) = request.adjust {
                adjust(&mut settings);
            }
            settings
        };
        let mut settings = adjusted(None);
        // The same question earlier, asked with the same options (an answer read under
        // another site filter, time range or token cap is no answer to this one): its
        // evidence, without searching. A follow-up's words mean something else in each
        // conversation, and an isolated client's requests never see each other's.
        let key = (conversation.is_empty() && !client.isolated)
            .then(|| request_key(&question, &settings))
            .flatten();
        let found = match &key {
            Some(key) => client.reused.find(key, client.reuse_ttl).await,
            None => None,
        };
        if let Some((age, earlier)) = found {
            let judged = verdict(&earlier, Strictness::Lenient);
            let shown = (request.shown_answer)(&earlier);
            self.conversations
                .keep(&[], &Evidence::default(), &question, &shown, &earlier)
                .await;
            return Ok(Answered {
                report: earlier,
                verdict: judged,
                reused: Some((age, client.reuse_ttl)),
            });
        }

        // The model as chosen, the request's options over it (before, its token cap
        // was lost here), and the scope of the engine's prompt cache.
        let ready = self.model.ready(request.note, request.download).await?;
        settings = adjusted(Some(ready));
        settings.llm.embedded.cache_scope = cache_scope(client, conversation);

        // Reserve the most searches the run may make, or what is left of the budget
        // when that is less (the run then makes fewer); give back what it did not use.
        let wanted = settings.run.queries.min(settings.run.max_searches);
        let reserved = client.take_up_to(wanted)?;
        if reserved < wanted {
            settings.run.max_searches = reserved;
        }

        let earlier = self.conversations.evidence(conversation).await;
        let prior = (!conversation.is_empty()).then(|| prior_of(conversation, &earlier));
        let (events, watch) = (request.events, request.watch);
        let run = {
            let question = question.clone();
            isolated(async move {
                let asked = Question {
                    text: &question,
                    prior: prior.as_ref(),
                    deadline: settings.run.timeout,
                };
                let with = RunWith {
                    settings: &settings,
                    events: &events,
                    watch: watch.as_ref(),
                };
                crate::pipeline::answer(asked, &with)
                    .await
                    .map_err(|failed| failed.error)
            })
            .await
        };
        // Searches answered from the cache cost the search engine nothing.
        let used = run
            .as_ref()
            .map(|r| r.searches.iter().filter(|s| !s.cached).count())
            .unwrap_or(reserved);
        client.give_back(reserved.saturating_sub(used));
        let report = Arc::new(run?);
        let judged = verdict(&report, Strictness::Lenient);
        let shown = (request.shown_answer)(&report);
        self.conversations
            .keep(conversation, &earlier, &question, &shown, &report)
            .await;
        if report.mode == crate::report::AnswerMode::Grounded
            && let Some(key) = key
        {
            client
                .reused
                .keep(key, Arc::clone(&report), client.reuse_ttl)
                .await;
        }
        Ok(Answered {
            report,
            verdict: judged,
            reused: None,
        })
    }
}

/// A request named a collection the service does not serve: what it may name instead.
pub fn not_served(collection: &str, served: &[String]) -> Failure {
    let hint = if served.is_empty() {
        "no local documents are served here: start the server with --docs=NAME (or set [docs] collections)".to_string()
    } else {
        format!("name one of: {}", served.join(", "))
    };
    Failure::usage(
        format!(
            "the collection {:?} is not served here",
            crate::text::shorten(collection, 64)
        ),
        hint,
    )
}

/// The client id of [`Service::answer_directly`]'s cache scopes (no client of
/// [`next_id`] has it).
const SERVE_DIRECT_CLIENT: u64 = u64::MAX;

/// A search's outcome and the search service that ran it (`--search auto` chosen).
#[derive(Debug)]
pub struct Searched {
    /// What the search found.
    pub outcome: SearchOutcome,
    /// The search settings it ran with, the service chosen.
    pub settings: SearchSettings,
    /// Which service `--search auto` chose and why, when it chose.
    pub note: Option<String>,
}

impl Searched {
    /// The error of a search that found nothing (no results, or every engine
    /// failed), `None` when it found something: the one rule every face uses.
    pub fn nothing_found(&self) -> Option<crate::error::Error> {
        self.outcome.hits.is_empty().then(|| {
            crate::search::no_hits_error(&self.outcome.query, &self.outcome.unresponsive_engines)
        })
    }
}

/// Runs `query` on the service `settings` name (`auto` chosen here, `note` told why
/// at once), asking for at least `limit` results, within the sites of `sites` when
/// given and the run's deadline (over the rate limit it waits for its slot, telling
/// `log_wait`).
async fn searched(
    settings: &Settings,
    query: &str,
    limit: usize,
    sites: Option<crate::sites::SiteFilter>,
    log_wait: &(dyn Fn(&str) + Send + Sync),
    note: &(dyn Fn(&str) + Send + Sync),
) -> Result<Searched, crate::error::Error> {
    let mut search = settings.search.clone();
    search.max_results = search.max_results.max(limit);
    if let Some(sites) = sites {
        search.sites = sites;
    }
    let deadline = tokio::time::Instant::now() + settings.run.timeout;
    let chosen = crate::search::auto::choose(&search).await;
    if let Some(why) = &chosen.note {
        note(why);
    }
    let tell = |waiting: &crate::search::Waiting| log_wait(&waiting.to_string());
    let pace = crate::search::Pace::until(deadline).telling(&tell);
    let outcome = crate::search::search(&chosen.settings, query, &pace).await?;
    Ok(Searched {
        outcome,
        settings: chosen.settings,
        note: chosen.note,
    })
}

/// Runs the images search for `query` on the service `settings` name, at most
/// `limit` images, within `sites` when given and the run's deadline (telling
/// `log_wait` each wait for the rate limit).
async fn images_searched(
    settings: &Settings,
    query: &str,
    limit: usize,
    sites: Option<crate::sites::SiteFilter>,
    log_wait: &(dyn Fn(&str) + Send + Sync),
) -> Result<crate::search::images::ImagesOutcome, crate::error::Error> {
    let mut search = settings.search.clone();
    if let Some(sites) = sites {
        search.sites = sites;
    }
    let deadline = tokio::time::Instant::now() + settings.run.timeout;
    let tell = |waiting: &crate::search::Waiting| log_wait(&waiting.to_string());
    let pace = crate::search::Pace::until(deadline).telling(&tell);
    crate::search::images(&search, query, limit, &pace).await
}

impl Service {
    /// Answers `question` with the model alone (no search, nothing grounded), the
    /// conversation's earlier `turns` and the application's `instruction` given to
    /// the model as data beneath ground's own rules: the pipeline's no-search path
    /// ([`crate::pipeline::answer_directly`]), its history block and deadline.
    pub async fn answer_directly(
        &self,
        question: &str,
        turns: &[Turn],
        instruction: Option<&str>,
        note: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<Direct, Failure> {
        let question = question.trim().to_string();
        if question.is_empty() {
            return Err(Failure::usage(
                "the question is empty",
                "pass the question to answer",
            ));
        }
        let mut llm = self.model.ready(note, &mut |_| {}).await?;
        // Only `ground serve` answers this way (Gemini's face without a search tool):
        // its clients are isolated as the server's settings say.
        llm.embedded.cache_scope = self
            .settings
            .serve
            .isolate_clients
            .then(|| scope_of(SERVE_DIRECT_CLIENT, turns));
        let turns = prior_of(turns, &Evidence::default()).turns;
        let instruction =
            instruction.map(|i| crate::text::cut_bytes(i.trim(), MAX_TURN_BYTES).to_string());
        let deadline = self.settings.run.timeout;
        isolated(async move {
            crate::pipeline::answer_directly(
                &question,
                &turns,
                instruction.as_deref(),
                &llm,
                deadline,
            )
            .await
        })
        .await
    }
}

/// A watcher that sees nothing, for calls with no live output.
pub fn unwatched() -> Arc<dyn Watch> {
    Arc::new(Unwatched)
}

/// The failure of a request refused because every place is taken.
pub fn busy(retry_after: Duration) -> Failure {
    Failure {
        kind: "busy",
        message: "every place for a run is taken".into(),
        hint: Some(format!(
            "retry in {} s, or raise [serve] concurrency / queue",
            retry_after.as_secs().max(1)
        )),
        exit_code: exit::RATE_LIMITED,
        deadline: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LlmBackend;

    fn service(backend: LlmBackend) -> Service {
        let mut settings =
            crate::config::resolve(&Default::default(), &|_| None).expect("the defaults resolve");
        settings.llm.backend = backend;
        Service::new(settings, 1, 2)
    }

    async fn admitted_at_once(service: &Service) -> usize {
        let mut held = Vec::new();
        while let Ok(Some(admission)) =
            tokio::time::timeout(Duration::from_millis(50), service.admit()).await
        {
            held.push(admission);
        }
        held.len()
    }

    #[tokio::test]
    async fn the_embedded_engine_s_runs_start_at_once_a_server_model_s_one_at_a_time() {
        // The engine keeps its own queue for the model calls: every admitted run
        // (concurrency 1 + queue 2) starts at once.
        assert_eq!(admitted_at_once(&service(LlmBackend::Embedded)).await, 3);
        // A server model: one runs, the others wait for its place.
        assert_eq!(admitted_at_once(&service(LlmBackend::Ollama)).await, 1);
    }
}
