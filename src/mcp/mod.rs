//! `ground mcp`: the search, fetch and answer stages as tools for AI agents, served
//! over the Model Context Protocol on stdin/stdout (newline-delimited JSON-RPC).
//!
//! Three tools, each the MCP twin of a command, returning the very object that
//! command prints with `--json` as the result's `structuredContent` (and as JSON text,
//! for clients that only read `content`):
//!
//! | tool               | command                  | arguments                  |
//! |--------------------|--------------------------|----------------------------|
//! | `web_search`       | `ground search --json`   | `query`, `limit` (1-10)    |
//! | `web_fetch`        | `ground fetch --json`    | `url`                      |
//! | `grounded_answer`  | `ground answer --json`   | `question`, `conversation` |
//!
//! Design decisions a reader would otherwise have to reconstruct:
//!
//! - **Settings are resolved once**, by the binary, from flags, environment and
//!   config file exactly like the other commands; the server only reads them.
//! - **A failure is a tool result, never a dead server.** Search failures, bad URLs,
//!   unusable pages and model errors come back as `isError: true` with a text that
//!   says what failed, on which input, and a `hint:` line (the same words as the
//!   CLI's), plus the CLI's `--json` error object as structured content. Each call
//!   runs in its own task, so even a panic in a stage becomes an error result and the
//!   session goes on. Arguments that do not fit the input schema are also tool errors
//!   (rmcp reports undeserialisable ones the same way); an unknown tool name is a
//!   JSON-RPC error, as the protocol says.
//! - **Evidence is reused within a session.** A `grounded_answer` whose question
//!   normalises ([`reuse_key`]) to that of an earlier grounded run in the same session,
//!   within `--reuse-secs`, gets that run's result again (its pages, answer and
//!   citations) without searching or asking the model, marked `"reused"`; it costs no
//!   search budget. Runs that fell back to the model alone are not reused.
//! - **Follow-ups within a session.** A `grounded_answer` with `conversation`
//!   (earlier question/answer pairs) is a follow-up, as in `ground chat`: rewritten
//!   to stand alone, answered from the pages this session read for the conversation
//!   when they hold the answer, else searched; its result gains `conversation
//!   {standalone_question, reused_sources, searched}`. A call without
//!   `conversation` starts the conversation's evidence afresh (one conversation per
//!   session).
//! - **stdout is the protocol.** Nothing else is ever written to it; the few log
//!   lines (start, stop, failed calls) go to stderr, which MCP clients keep as the
//!   server's log.
//!
//! - **Every tool declares its `outputSchema`** ([`schemas`]): the shape of its
//!   structured content, result or error, so clients validate what they get.
//!
//! The parts: this module holds the server and its three tools; [`stdio`] is the line
//! guard in front of the JSON-RPC, [`reuse`] the session's reused runs, [`schemas`]
//! the output schemas, and a private `failure` module turns every failed call into
//! its tool result.

mod failure;
pub(crate) mod reuse;
pub mod schemas;
pub(crate) mod stdio;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use self::failure::{Failure, failure, isolated, log_failure, parse_limit};
use self::reuse::Reused;
pub use self::reuse::{MAX_REUSED_RUNS, reuse_key};
use crate::context::SourceText;
use crate::error::Error;
use crate::pipeline::{MAX_PRIOR_TURNS, Prior, PriorTurn};
use crate::settings::Settings;
use crate::text::sanitize_line;

/// Most results `web_search` returns (and its default).
pub const MAX_SEARCH_RESULTS: usize = 10;

/// What the server tells a client about itself at `initialize`.
const INSTRUCTIONS: &str = "\
web_search finds pages (url, title, snippet) for a query. web_fetch reads one page \
and returns its main text. grounded_answer searches, reads the top pages and asks a \
model, returning an answer whose statements carry citations verified against the \
pages (answer, citations[].source_url, citations[].text, groundingMetadata). \
Prefer grounded_answer for a question, web_search + web_fetch to read sources yourself.";

/// `web_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    /// What to search for.
    pub query: String,
    /// How many results to return, 1-10 (default 10).
    #[schemars(with = "Option<u8>", range(min = 1, max = 10), extend("default" = 10))]
    pub limit: Option<Value>,
}

/// `web_fetch` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebFetchArgs {
    /// The page's address (http or https).
    pub url: String,
}

/// `grounded_answer` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct GroundedAnswerArgs {
    /// The question to answer from the web.
    pub question: String,
    /// Earlier questions and answers of this conversation, oldest first: the question
    /// is then a follow-up, rewritten to stand alone, and the pages this session read
    /// for the conversation are tried before any search (the last 40 are used).
    #[serde(default)]
    pub conversation: Option<Vec<ConversationTurn>>,
}

/// One earlier turn of a `grounded_answer` conversation.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ConversationTurn {
    /// The question asked.
    pub question: String,
    /// The answer given (its `[n]` markers name this session's sources).
    pub answer: String,
}

/// Longest question or answer of a conversation turn used, in characters.
pub const MAX_CONVERSATION_CHARS: usize = 8000;

/// The prior of a `grounded_answer` call: the last turns of `conversation`, each cut
/// to [`MAX_CONVERSATION_CHARS`], and the session's conversation sources.
fn prior_of(conversation: &[ConversationTurn], evidence: &Evidence) -> Prior {
    let cut = |text: &str| {
        text.chars()
            .take(MAX_CONVERSATION_CHARS)
            .collect::<String>()
    };
    let skip = conversation.len().saturating_sub(MAX_PRIOR_TURNS);
    Prior {
        turns: conversation[skip..]
            .iter()
            .map(|t| PriorTurn {
                question: cut(&t.question),
                answer: cut(&t.answer),
            })
            .collect(),
        sources: evidence.sources.clone(),
        short: evidence.short.clone(),
    }
}

/// The sources of this session's conversation, numbered as its answers cite them, and
/// which of them were short sources (snippets, infoboxes, instant answers).
#[derive(Debug, Default)]
struct Evidence {
    sources: Vec<SourceText>,
    short: Vec<usize>,
}

/// The MCP server: the resolved settings, shared by every call, and the tool table
/// that rmcp's macros build from the `#[tool]` methods below.
#[derive(Clone)]
pub struct GroundServer {
    settings: Arc<Settings>,
    /// Searches this client session may still make (`--session-searches`).
    searches_left: Arc<AtomicUsize>,
    /// This session's grounded runs by [`reuse_key`], with when they finished.
    answered: Arc<Reused>,
    /// The sources of this session's conversation, numbered as its answers cite
    /// them: a `grounded_answer` without `conversation` starts them afresh, one with
    /// it adds its new pages.
    evidence: Arc<std::sync::Mutex<Evidence>>,
    /// Held by a follow-up for its whole run: two follow-ups at once would both
    /// number their new pages after the same evidence, so they take turns, each
    /// seeing the pages the one before it added.
    follow_up_turn: Arc<tokio::sync::Mutex<()>>,
    tool_router: ToolRouter<Self>,
}

/// Serves MCP on stdin/stdout until the client closes the connection.
pub async fn serve(settings: Settings) -> Result<(), Error> {
    let search = match settings.search.backend {
        crate::settings::SearchBackend::Auto => "auto, SearXNG first".to_string(),
        named => named.to_string(),
    };
    eprintln!(
        "ground mcp: serving web_search, web_fetch and grounded_answer on stdio \
         (search: {} at {}, model: {} at {})",
        search,
        crate::http::display_url(&settings.search.url),
        settings.llm.model,
        crate::http::display_url(&settings.llm.url),
    );
    let running = GroundServer::new(settings)
        .serve(stdio::guard(tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| transport_error(&e.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|e| transport_error(&e.to_string()))?;
    eprintln!("ground mcp: session ended ({reason:?})");
    Ok(())
}

/// The server could not speak MCP at all (stdin closed before `initialize`, or not
/// MCP on it): the only failure that ends `ground mcp` with an error.
fn transport_error(detail: &str) -> Error {
    Error::McpTransport {
        detail: sanitize_line(detail),
    }
}

#[tool_router]
impl GroundServer {
    /// A server answering with `settings`.
    pub fn new(settings: Settings) -> Self {
        GroundServer {
            searches_left: Arc::new(AtomicUsize::new(settings.run.session_searches)),
            answered: Arc::new(Reused::default()),
            evidence: Arc::default(),
            follow_up_turn: Arc::default(),
            settings: Arc::new(settings),
            tool_router: Self::tool_router(),
        }
    }

    /// Takes `count` searches from the session's budget, or says it is spent.
    fn take_searches(&self, count: usize) -> Result<(), Failure> {
        self.searches_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(count)
            })
            .map(|_| ())
            .map_err(|left| self.budget_spent(left, count))
    }

    /// The failure of a call that needs `needed` searches when `left` remain.
    fn budget_spent(&self, left: usize, needed: usize) -> Failure {
        Failure {
            kind: "search_budget_spent",
            message: format!(
                "this session's search budget is spent: {left} of {} searches left, {needed} needed",
                self.settings.run.session_searches
            ),
            hint: Some(
                "start a new MCP session, or raise the budget with --session-searches / [run] session_searches".into(),
            ),
        }
    }

    /// Takes up to `wanted` searches from the session's budget: as many as are left,
    /// or says it is spent when none are.
    fn take_up_to(&self, wanted: usize) -> Result<usize, Failure> {
        let mut granted = 0;
        let taken = self
            .searches_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                granted = left.min(wanted);
                (granted > 0).then(|| left - granted)
            });
        taken
            .map(|_| granted)
            .map_err(|left| self.budget_spent(left, wanted.max(1)))
    }

    /// Keeps `report`'s sources as the conversation's evidence: afresh for a call
    /// without a conversation, its new pages added for a follow-up (numbered after
    /// the earlier ones, as the run numbered them). Every source is kept, short ones
    /// (snippets, infoboxes, instant answers) too: the answer the agent holds cites
    /// them by number, so a follow-up's new pages must be numbered after them. A run
    /// that was not grounded leaves no evidence (a fresh call still clears it).
    fn keep_evidence(&self, report: &crate::report::Report, follow_up: bool) {
        let Ok(mut evidence) = self.evidence.lock() else {
            return;
        };
        if !follow_up {
            *evidence = Evidence::default();
        }
        if report.mode != crate::report::AnswerMode::Grounded {
            return;
        }
        for source in &report.sources {
            if source.number == evidence.sources.len() + 1
                && evidence.sources.len() < crate::pipeline::MAX_SESSION_SOURCES
            {
                if report.is_short(source.number) {
                    evidence.short.push(source.number);
                }
                evidence.sources.push(source.clone());
            }
        }
    }

    /// Gives back searches that were reserved but not made.
    fn return_searches(&self, count: usize) {
        self.searches_left.fetch_add(count, Ordering::SeqCst);
    }

    /// `ground search --json` as a tool.
    #[tool(
        description = "Search the web. Returns {query, backend, results: [{url, title, \
                       snippet, engines, published}], unresponsive_engines, answers: [{answer, \
                       url, engine}], infoboxes: [{title, content, attributes: [{label, value}], \
                       urls: [{title, url}], engines}], suggestions, corrections}, at most 10 \
                       results.",
        output_schema = schemas::web_search(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn web_search(&self, params: Parameters<WebSearchArgs>) -> CallToolResult {
        let WebSearchArgs { query, limit } = params.0;
        let query = query.trim().to_string();
        let limit = match parse_limit(limit.as_ref()) {
            Ok(limit) => limit,
            Err(problem) => return failure("web_search", "query", &query, problem),
        };
        if query.is_empty() {
            let problem = Failure::usage(
                "the query is empty",
                "pass the words to search for in `query`",
            );
            return failure("web_search", "query", &query, problem);
        }
        if let Err(problem) = self.take_searches(1) {
            return failure("web_search", "query", &query, problem);
        }
        let mut search = self.settings.search.clone();
        search.max_results = search.max_results.max(limit);
        // Over the rate limit the search waits for its slot, within the run's deadline
        // ([run] timeout_secs) as grounded_answer's searches do.
        let deadline = tokio::time::Instant::now() + self.settings.run.timeout;
        let outcome = {
            let query = query.clone();
            isolated(async move {
                let chosen = crate::search::auto::choose(&search).await;
                let log_wait =
                    |waiting: &crate::search::Waiting| eprintln!("ground mcp: {waiting}");
                let pace = crate::search::Pace::until(deadline).telling(&log_wait);
                let mut found = crate::search::search(&chosen.settings, &query, &pace).await?;
                found.warnings.splice(0..0, chosen.note);
                Ok((found, chosen.settings))
            })
            .await
        };
        match outcome {
            Ok((outcome, _)) if outcome.hits.is_empty() => {
                let error = crate::search::no_hits_error(&query, &outcome.unresponsive_engines);
                failure("web_search", "query", &query, error.into())
            }
            Ok((outcome, service)) => CallToolResult::structured(crate::render::results::json(
                &outcome, &query, &service, limit,
            )),
            Err(problem) => failure("web_search", "query", &query, problem),
        }
    }

    /// `ground fetch --json` as a tool: same limits, statuses and address policy.
    #[tool(
        description = "Fetch one web page and extract its main text. Returns {url, final_url, \
                       status (SUCCESS, ERROR, TIMEOUT, UNSUPPORTED, BLOCKED, EMPTY), \
                       http_status, content_type, title, text, chars}. Private and loopback \
                       addresses are blocked unless the server was started with \
                       --allow-private-addresses.",
        output_schema = schemas::web_fetch(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn web_fetch(&self, params: Parameters<WebFetchArgs>) -> CallToolResult {
        let url = params.0.url.trim().to_string();
        let fetched = {
            let (settings, url) = (Arc::clone(&self.settings), url.clone());
            isolated(async move { crate::page::fetch_one(&settings, &url).await }).await
        };
        match fetched {
            Ok(fetched) if crate::render::page::succeeded(&fetched) => {
                CallToolResult::structured(crate::render::page::json(&fetched))
            }
            Ok(fetched) => {
                // The page was tried and is unusable: an error, with the page's
                // status and sizes as the structured content.
                let text = crate::render::page::failure_report(&fetched);
                let reason = fetched.error.as_deref().unwrap_or("no usable text");
                log_failure("web_fetch", "url", &url, reason);
                let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
                result.structured_content = Some(crate::render::page::json(&fetched));
                result
            }
            Err(problem) => failure("web_fetch", "url", &url, problem),
        }
    }

    /// `ground answer --json` as a tool.
    #[tool(
        description = "Answer a question from live web search with verified citations: \
                       searches, reads the top pages, asks the configured model and checks \
                       every quote against the pages. Returns the same object as `ground \
                       answer --json`: answer, grounded, statements, citations[{source_url, \
                       text, verified}], sources with their kind (page, infobox, answer, \
                       snippet) and retrieval status, search {suggestions, corrections}, \
                       groundingMetadata (Gemini's shape), model, timings_ms.",
        output_schema = schemas::grounded_answer(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn grounded_answer(&self, params: Parameters<GroundedAnswerArgs>) -> CallToolResult {
        let question = params.0.question.trim().to_string();
        let conversation = params.0.conversation.unwrap_or_default();
        if question.is_empty() {
            let problem =
                Failure::usage("the question is empty", "pass the question in `question`");
            return failure("grounded_answer", "question", &question, problem);
        }
        // The same question earlier in this session: its evidence, without searching
        // (a follow-up's words mean something else in each conversation: not reused).
        let key = reuse_key(&question).filter(|_| conversation.is_empty());
        let ttl = self.settings.run.session_reuse;
        if let Some((age, earlier)) = key.as_ref().and_then(|k| self.answered.earlier(k, ttl)) {
            let judged = crate::report::verdict(&earlier, crate::report::Strictness::Lenient);
            let mut result = crate::render::json(&earlier, &judged);
            result["reused"] = json!({
                "question": earlier.question,
                "age_secs": age.as_secs(),
                "ttl_secs": self.settings.run.session_reuse.as_secs(),
            });
            // The agent now holds this answer: a follow-up continues from its sources.
            self.keep_evidence(&earlier, false);
            return CallToolResult::structured(result);
        }
        // Reserve the most searches the run may make, or what is left of the session's
        // budget when that is less (the run then makes fewer); give back what it did
        // not use.
        let wanted = self
            .settings
            .run
            .queries
            .min(self.settings.run.max_searches);
        let reserved = match self.take_up_to(wanted) {
            Ok(granted) => granted,
            Err(problem) => return failure("grounded_answer", "question", &question, problem),
        };
        let settings = if reserved < wanted {
            let mut fewer = (*self.settings).clone();
            fewer.run.max_searches = reserved;
            Arc::new(fewer)
        } else {
            Arc::clone(&self.settings)
        };
        let _turn = if conversation.is_empty() {
            None
        } else {
            Some(self.follow_up_turn.lock().await)
        };
        let prior = (!conversation.is_empty()).then(|| match self.evidence.lock() {
            Ok(evidence) => prior_of(&conversation, &evidence),
            Err(_) => prior_of(&conversation, &Evidence::default()),
        });
        let report = {
            let question = question.clone();
            // The run's deadline ([run] timeout_secs, --timeout) holds here as in the
            // CLI: the pipeline enforces it.
            isolated(async move {
                let events = crate::events::Events::silent();
                crate::pipeline::answer_in_conversation(
                    &question,
                    prior.as_ref(),
                    &settings,
                    &events,
                    &crate::pipeline::Unwatched,
                    settings.run.timeout,
                )
                .await
                .map_err(|failed| failed.error)
            })
            .await
        };
        // Searches answered from the cache cost the search engine nothing.
        let used = report
            .as_ref()
            .map(|r| r.searches.iter().filter(|s| !s.cached).count())
            .unwrap_or(reserved);
        self.return_searches(reserved.saturating_sub(used));
        match report {
            Ok(report) => {
                // The CLI's rule without --strict: agents read it from the result.
                let judged = crate::report::verdict(&report, crate::report::Strictness::Lenient);
                let mut value = crate::render::json(&report, &judged);
                if let Some(followup) = &report.followup {
                    value["conversation"] = crate::render::json::follow_up(Some(followup));
                }
                self.keep_evidence(&report, !conversation.is_empty());
                let result = CallToolResult::structured(value);
                if report.mode == crate::report::AnswerMode::Grounded
                    && let Some(key) = key
                {
                    self.answered.remember(key, Arc::new(report), ttl);
                }
                result
            }
            // A failed call leaves the evidence as it was: the last answer the agent
            // holds is still the one before.
            Err(problem) => failure("grounded_answer", "question", &question, problem),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for GroundServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("ground", env!("CARGO_PKG_VERSION"))
                    .with_title("ground: grounded web answers"),
            )
            .with_instructions(INSTRUCTIONS)
    }
}
