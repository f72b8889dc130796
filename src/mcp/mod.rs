//! `ground mcp`: the search, fetch and answer stages as tools for AI agents, served
//! over the Model Context Protocol on stdin/stdout (newline-delimited JSON-RPC).
//!
//! Five tools, each the MCP twin of a command, returning the very object that
//! command prints with `--json` as the result's `structuredContent` (and as JSON text,
//! for clients that only read `content`):
//!
//! | tool               | command                  | arguments                  |
//! |--------------------|--------------------------|----------------------------|
//! | `web_search`       | `ground search --json`   | `query`, `limit` (1-10)    |
//! |                    | (`--images`)             | `category` (web, images)   |
//! | `web_fetch`        | `ground fetch --json`    | `url`                      |
//! | `grounded_answer`  | `ground answer --json`   | `question`, `conversation` |
//! |                    | (`--docs`, `--no-web`)   | `docs`, `no_web`           |
//! | `document_search`  | `ground index search     | `query`, `collection`, `n` |
//! |                    | --json`                  |                            |
//! | `check_claims`     | `ground check --json`    | `claims` or `cited_text`   |
//!
//! - **Local documents are the operator's choice.** `ground mcp --docs=NAME` (or
//!   `[docs] collections`) names the collections served; `grounded_answer` answers
//!   from them beside the web unless its `docs` names fewer (`[]`: the web alone),
//!   and `document_search` searches them. A call can name no other collection.
//!
//! Design decisions a reader would otherwise have to reconstruct:
//!
//! - **A thin face over [`crate::service`]**: the rules every long-lived face shares
//!   (the search budget, answer reuse, conversation evidence, the lazily made-ready
//!   model, failure objects) live there; this module translates MCP in and out.
//! - **It answers `initialize` at once.** Settings are resolved by the binary; the
//!   model is chosen (and the embedded one downloaded, with MCP progress
//!   notifications when the client sent a `progressToken`) on the first
//!   `grounded_answer`, so `web_search` and `web_fetch` work with no model at all, and
//!   a model that cannot be had is that call's tool error with the hint.
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
//! - **Follow-ups.** A `grounded_answer` with `conversation` (earlier
//!   question/answer pairs) is a follow-up, as in `ground chat`: rewritten to stand
//!   alone, answered from the pages read for that conversation when they hold the
//!   answer, else searched; its result gains `conversation {standalone_question,
//!   reused_sources, searched}`. The evidence is found by the conversation's own turns
//!   ([`crate::service::conversation`]), so parallel calls and several conversations
//!   in one session never renumber each other's sources.
//! - **stdout is the protocol.** Nothing else is ever written to it; the few log
//!   lines (start, stop, failed calls) go to stderr, which MCP clients keep as the
//!   server's log.
//!
//! - **Every tool declares its `outputSchema`** ([`schemas`]): the shape of its
//!   structured content, result or error, so clients validate what they get.
//!
//! The parts: this module holds the server and its other tools (`check.rs`
//! holds `check_claims`, with its own router); [`stdio`] is the line
//! guard in front of the JSON-RPC, [`schemas`] the output schemas, the private
//! `arguments` module checks the tools' arguments beyond their schemas and `failure`
//! turns every [`Failure`] into its tool result.

mod arguments;
mod check;
mod failure;
pub mod schemas;
pub(crate) mod stdio;

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use self::arguments::{parse_collections, parse_limit, parse_passages, parse_sites};
use self::failure::{failure, log_failure};
use crate::error::Error;
use crate::report::Report;
use crate::service::{AnswerRequest, Client, Service, Turn};
use crate::settings::Settings;
use crate::text::sanitize_line;

pub use crate::service::MAX_TURN_BYTES;

/// Most results `web_search` returns (and its default).
pub const MAX_SEARCH_RESULTS: usize = 10;

/// What the server tells a client about itself at `initialize`.
const INSTRUCTIONS: &str = "\
web_search finds pages (url, title, snippet) for a query. web_fetch reads one page \
and returns its main text. grounded_answer searches, reads the top pages and asks a \
model, returning an answer whose statements carry citations verified against the \
pages (answer, citations[].source_url, citations[].text, groundingMetadata). \
Prefer grounded_answer for a question, web_search + web_fetch to read sources yourself. \
document_search finds passages in the local document collections this server serves \
(path and lines); grounded_answer cites them beside the web (docs, no_web). \
check_claims fact-checks claims, or another AI's cited answer, against the web.";

/// `web_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WebSearchArgs {
    /// What to search for.
    pub query: String,
    /// How many results to return, 1-10 (default 10).
    #[schemars(with = "Option<u8>", range(min = 1, max = 10), extend("default" = 10))]
    pub limit: Option<Value>,
    /// Only results from these sites (domains cover their subdomains; a bare host or
    /// IP address matches exactly), e.g. ["docs.python.org"]. Replaces the server's
    /// own filter ([search] sites) when given.
    #[serde(default)]
    pub sites: Option<Vec<String>>,
    /// No results from these sites (subdomains included), e.g. ["pinterest.com"].
    #[serde(default)]
    pub exclude_sites: Option<Vec<String>>,
    /// What to search: "web" pages (the default) or "images" (SearXNG's images
    /// category or Brave's image search; links only, never downloaded).
    #[serde(default)]
    #[schemars(with = "Option<SearchCategory>")]
    pub category: Option<Value>,
}

/// `web_search`'s categories (for its input schema).
#[derive(Debug, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
pub enum SearchCategory {
    /// Web pages.
    Web,
    /// Images.
    Images,
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
    /// is then a follow-up, rewritten to stand alone, and the pages read for the
    /// conversation are tried before any search (the last 40 are used, each question
    /// and answer up to 8,000 bytes).
    #[serde(default)]
    pub conversation: Option<Vec<Turn>>,
    /// Only read and cite these sites (domains cover their subdomains; a bare host or
    /// IP address matches exactly), e.g. ["docs.python.org"]. Replaces the server's
    /// own filter ([search] sites) when given.
    #[serde(default)]
    pub sites: Option<Vec<String>>,
    /// Never read or cite these sites (subdomains included).
    #[serde(default)]
    pub exclude_sites: Option<Vec<String>>,
    /// The local document collections to answer from beside the web, each one the
    /// server serves (started with --docs=NAME); absent: all it serves; []: the web
    /// alone.
    #[serde(default)]
    pub docs: Option<Vec<String>>,
    /// Answer from the local documents alone: no web search at all (needs a
    /// collection).
    #[serde(default)]
    pub no_web: Option<bool>,
}

/// `document_search` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct DocumentSearchArgs {
    /// What to look for, in a person's words.
    pub query: String,
    /// The collection to search, one the server serves (absent: all it serves).
    #[serde(default)]
    pub collection: Option<String>,
    /// How many passages to return, 1-20 (default 5).
    #[schemars(with = "Option<u8>", range(min = 1, max = 20), extend("default" = 5))]
    pub n: Option<Value>,
}

/// The MCP server: the process's service, this client session's budget and reused
/// answers, and the tool table that rmcp's macros build from the `#[tool]` methods.
#[derive(Clone)]
pub struct GroundServer {
    service: Arc<Service>,
    client: Arc<Client>,
    tool_router: ToolRouter<Self>,
}

/// Serves MCP on stdin/stdout until the client closes the connection. Answers
/// `initialize` at once: nothing about the model is looked at before the first
/// `grounded_answer`.
pub async fn serve(settings: Settings) -> Result<(), Error> {
    let search = match settings.search.backend {
        crate::settings::SearchBackend::Auto => "auto, SearXNG first".to_string(),
        named => named.to_string(),
    };
    let server = GroundServer::new(settings);
    crate::error::log_line(&format!(
        "ground mcp: serving web_search, web_fetch, grounded_answer and document_search on stdio \
         (search: {} at {}, model: {}, local documents: {})",
        search,
        crate::http::display_url(&server.service.settings().search.url),
        server.service.model().describe(),
        server.service.settings().docs.describe(),
    ));
    let running = server
        .serve(stdio::guard(tokio::io::stdin(), tokio::io::stdout()))
        .await
        .map_err(|e| transport_error(&e.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|e| transport_error(&e.to_string()))?;
    crate::error::log_line(&format!("ground mcp: session ended ({reason:?})"));
    Ok(())
}

/// The server could not speak MCP at all (stdin closed before `initialize`, or not
/// MCP on it): the only failure that ends `ground mcp` with an error.
fn transport_error(detail: &str) -> Error {
    Error::McpTransport {
        detail: sanitize_line(detail),
    }
}

/// The answer text an agent holds: `--json`'s `answer`, which it sends back in a
/// follow-up's `conversation`.
fn shown_answer(report: &Report) -> String {
    report.answer.answer.clone()
}

/// Sends a first download's progress as MCP progress notifications, at most one per
/// percent, when the client asked for them with a `progressToken`.
fn download_progress(
    context: &RequestContext<RoleServer>,
) -> impl FnMut(crate::llm::embedded::models::Progress) + Send + use<> {
    let token = context.meta.get_progress_token();
    let peer = context.peer.clone();
    let mut last_percent = None;
    move |progress| {
        let Some(token) = token.clone() else { return };
        let percent = progress
            .total
            .filter(|t| *t > 0)
            .map(|t| progress.done.saturating_mul(100) / t);
        if percent.is_some() && percent == last_percent {
            return;
        }
        last_percent = percent;
        let mut param = ProgressNotificationParam::new(token, progress.done as f64)
            .with_message("downloading the embedded model (once)");
        if let Some(total) = progress.total {
            param = param.with_total(total as f64);
        }
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }
}

/// Sends the embedded model's prompt reading as MCP progress notifications when the
/// call carried a `progressToken` (a long first prefill on a CPU shows nothing
/// otherwise); other backends say nothing.
struct PrefillProgress {
    token: rmcp::model::ProgressToken,
    /// To the one task that sends them, in order (it ends with the call).
    send: tokio::sync::mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl crate::pipeline::Watch for PrefillProgress {
    fn reading(&self, sources: usize, prefill: crate::llm::Prefill) {
        let message = format!(
            "the model is reading {sources} sources: {}/{} prompt tokens",
            prefill.done, prefill.total
        );
        let param = ProgressNotificationParam::new(self.token.clone(), f64::from(prefill.done))
            .with_total(f64::from(prefill.total))
            .with_message(message);
        let _ = self.send.send(param);
    }
}

/// What watches a `grounded_answer` call: its prompt reading as progress
/// notifications when the client sent a `progressToken`, else nobody.
fn watch_for(context: &RequestContext<RoleServer>) -> Arc<dyn crate::pipeline::Watch> {
    let Some(token) = context.meta.get_progress_token() else {
        return crate::service::unwatched();
    };
    let (send, mut sending) = tokio::sync::mpsc::unbounded_channel();
    let peer = context.peer.clone();
    tokio::spawn(async move {
        while let Some(param) = sending.recv().await {
            let _ = peer.notify_progress(param).await;
        }
    });
    Arc::new(PrefillProgress { token, send })
}

#[tool_router]
impl GroundServer {
    /// A server answering with `settings`: one client session on its own service.
    pub fn new(settings: Settings) -> Self {
        let client = Arc::new(Client::with_budget(&settings));
        GroundServer {
            // An agent's calls of one session run as they come; the embedded engine
            // writes their replies one at a time (parallel 1: one window of memory).
            service: Arc::new(Service::unbounded(settings)),
            client,
            tool_router: Self::tool_router() + Self::check_router(),
        }
    }

    /// `ground search --json` as a tool.
    #[tool(
        description = "Search the web. Returns {query, backend, results: [{url, title, \
                       snippet, engines, published}], unresponsive_engines, answers: [{answer, \
                       url, engine}], infoboxes: [{title, content, attributes: [{label, value}], \
                       urls: [{title, url}], engines}], suggestions, corrections}, at most 10 \
                       results. With category \"images\": {query, backend, images: [{image_url, \
                       thumbnail_url, origin_url, title, width, height, format, engine}]} \
                       (SearXNG or Brave only; links, never downloaded).",
        output_schema = schemas::web_search(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn web_search(&self, params: Parameters<WebSearchArgs>) -> CallToolResult {
        let WebSearchArgs {
            query,
            limit,
            sites,
            exclude_sites,
            category,
        } = params.0;
        let query = query.trim().to_string();
        let limit = match parse_limit(limit.as_ref()) {
            Ok(limit) => limit,
            Err(problem) => return failure("web_search", "query", &query, problem),
        };
        let sites = match parse_sites(sites.as_deref(), exclude_sites.as_deref()) {
            Ok(sites) => sites,
            Err(problem) => return failure("web_search", "query", &query, problem),
        };
        let images = match arguments::parse_category(category.as_ref()) {
            Ok(images) => images,
            Err(problem) => return failure("web_search", "query", &query, problem),
        };
        let log_wait: &'static (dyn Fn(&str) + Send + Sync) =
            &|waiting: &str| crate::error::log_line(&format!("ground mcp: {waiting}"));
        if images {
            return match self
                .service
                .images(&self.client, &query, limit, sites, log_wait)
                .await
            {
                Ok(found) if found.images.is_empty() => {
                    let none = crate::error::Error::NoResults {
                        query: query.clone(),
                    };
                    failure("web_search", "query", &query, none.into())
                }
                Ok(found) => {
                    let settings = &self.service.settings().search;
                    CallToolResult::structured(crate::render::images::json(
                        &found, &query, settings, limit,
                    ))
                }
                Err(problem) => failure("web_search", "query", &query, problem),
            };
        }
        match self
            .service
            .search(&self.client, &query, limit, sites, log_wait)
            .await
        {
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
        match self.service.fetch(&url).await {
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
                       snippet) and retrieval status, search {suggestions, corrections, sites, \
                       exclude_sites, dropped}, \
                       groundingMetadata (Gemini's shape), model, timings_ms.",
        output_schema = schemas::grounded_answer(),
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn grounded_answer(
        &self,
        params: Parameters<GroundedAnswerArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let GroundedAnswerArgs {
            question,
            conversation,
            sites,
            exclude_sites,
            docs,
            no_web,
        } = params.0;
        let question = question.trim().to_string();
        let conversation = conversation.unwrap_or_default();
        let sites = match parse_sites(sites.as_deref(), exclude_sites.as_deref()) {
            Ok(sites) => sites,
            Err(problem) => return failure("grounded_answer", "question", &question, problem),
        };
        let served = &self.service.settings().docs.collections;
        let docs = match parse_collections(docs, served) {
            Ok(docs) => docs,
            Err(problem) => return failure("grounded_answer", "question", &question, problem),
        };
        let no_web = no_web.unwrap_or(false) || self.service.settings().docs.no_web;
        if no_web && docs.is_empty() {
            let problem = crate::service::Failure::usage(
                "no_web needs a local document collection to answer from",
                "name one in docs, or leave no_web out",
            );
            return failure("grounded_answer", "question", &question, problem);
        }
        let narrow = move |settings: &mut crate::settings::Settings| {
            if let Some(sites) = &sites {
                settings.search.sites = sites.clone();
            }
            settings.docs.collections = docs.clone();
            settings.docs.no_web = no_web;
        };
        let mut download = download_progress(&context);
        let note =
            |why: &str| crate::error::log_line(&format!("ground mcp: {}", sanitize_line(why)));
        let request = AnswerRequest {
            question: &question,
            conversation: &conversation,
            events: crate::events::Events::silent(),
            watch: watch_for(&context),
            download: &mut download,
            note: &note,
            shown_answer: &shown_answer,
            adjust: Some(&narrow),
        };
        // A client's `notifications/cancelled` cancels the request's token (rmcp does
        // not drop the handler): dropping the answer aborts its run.
        let answered = tokio::select! {
            answered = self.service.answer(&self.client, request) => answered,
            _ = context.ct.cancelled() => {
                let problem = crate::service::Failure::usage(
                    "the call was cancelled by the client",
                    "call grounded_answer again to get an answer",
                );
                return failure("grounded_answer", "question", &question, problem);
            }
        };
        let answered = match answered {
            Ok(answered) => answered,
            Err(problem) => return failure("grounded_answer", "question", &question, problem),
        };
        CallToolResult::structured(crate::render::json::answered(&answered))
    }

    /// `ground index search --json` as a tool, over the collections the server serves.
    #[tool(
        description = "Search the local document collections this server serves (ground \
                       mcp --docs=NAME) for passages. Returns {query, results: [{collection, \
                       path, title, line_start, line_end, snippet, score}]}, best first, at \
                       most 20. Nothing leaves the machine.",
        output_schema = schemas::document_search(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn document_search(&self, params: Parameters<DocumentSearchArgs>) -> CallToolResult {
        let DocumentSearchArgs {
            query,
            collection,
            n,
        } = params.0;
        let query = query.trim().to_string();
        let served = &self.service.settings().docs.collections;
        let collections = match parse_collections(collection.map(|c| vec![c]), served) {
            Ok(collections) => collections,
            Err(problem) => return failure("document_search", "query", &query, problem),
        };
        if collections.is_empty() {
            let problem = crate::service::Failure::usage(
                "this server serves no local document collection",
                "start ground mcp with --docs=NAME (or set [docs] collections), NAME a collection made by ground index add",
            );
            return failure("document_search", "query", &query, problem);
        }
        let n = match parse_passages(n.as_ref()) {
            Ok(n) => n,
            Err(problem) => return failure("document_search", "query", &query, problem),
        };
        match self.service.documents(&collections, &query, n).await {
            Ok(hits) => CallToolResult::structured(crate::render::documents::json(&query, &hits)),
            Err(problem) => failure("document_search", "query", &query, problem),
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
