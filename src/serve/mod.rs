//! `ground serve`: the grounded answer as an HTTP API that applications already
//! speak: OpenAI's Chat Completions (with Perplexity's `citations` and
//! `search_results`) and Gemini's `generateContent` with Grounding with Google Search.
//!
//! A thin face over [`crate::service`], as MCP is: a request is translated into a
//! service call and the report back into the protocol's reply. Design decisions:
//!
//! - **Safe by default.** It listens on 127.0.0.1:8088; any other address refuses to
//!   start without an API key, which every request must then carry (`Authorization:
//!   Bearer`, `x-goog-api-key` or `?key=`), compared in constant time. Bodies are
//!   read up to [`MAX_BODY_BYTES`]; conversations are cut as MCP's are; every run
//!   keeps the `--timeout` deadline; no CORS unless `--cors ORIGIN`.
//! - **Bounded connections** (`connections`): at most `max_connections` open (a
//!   newcomer closes the one that has waited longest for a request); headers must
//!   come within `header_timeout`, a kept-alive connection waits `idle_timeout` for
//!   its next request; on shutdown the requests under way get `shutdown_grace`.
//! - **Bounded runs.** [`crate::service::Service::admit`] lets `concurrency` runs
//!   go at once and `queue` more wait; beyond that a request is refused at once with
//!   429 and `Retry-After`, so nothing hangs. The embedded engine writes up to
//!   `concurrency` answers at once, in one batch per step (continuous batching), and
//!   keeps the queue itself: with it every admitted request (`concurrency + queue`)
//!   searches and reads its pages at once, and only its model calls wait, in the
//!   engine's queue ([`crate::service::admission`]).
//! - **A client that leaves cancels its run**: the run is a task that is aborted
//!   when its request's future or stream is dropped.
//! - **The model is made ready on the first answer**, never at start-up, and shared
//!   by every request.
//! - **One access-log line per request** on stderr: method, path (never the query,
//!   which may hold a key), status and milliseconds; the question only with
//!   `--verbose`.
//!
//! The parts: [`openai`] and [`gemini`] the two faces, `http` what they share
//! (authentication, bodies, ids, the access log), `connections` the accept loop.

mod connections;
mod file_search;
pub mod gemini;
mod http;
pub mod openai;
mod perplexity;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

use crate::error::Error;
use crate::service::{Client, Service};
use crate::settings::Settings;

/// Largest request body read, in bytes.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What a refused request is told to wait before retrying.
pub const RETRY_AFTER: Duration = Duration::from_secs(5);

/// What every request handler shares.
pub(crate) struct App {
    service: Service,
    client: Client,
    api_key: Option<String>,
    cors: Option<String>,
    /// The port the server listens on: a keyless server answers only requests whose
    /// `Host` names it on loopback.
    port: u16,
    verbose: bool,
}

impl App {
    /// Answers a client's `question` in its conversation (`turns`) through the
    /// service, as every face does: no stage events, no download progress (a server
    /// has no terminal), the model's choice noted in the log; `watch` sees the answer
    /// as it streams, `shown_answer` is the text the face shows its client, `adjust`
    /// applies the request's options.
    pub(crate) async fn answer(
        &self,
        question: &str,
        turns: &[crate::service::Turn],
        watch: Arc<dyn crate::pipeline::Watch>,
        shown_answer: &(dyn Fn(&crate::report::Report) -> String + Sync),
        adjust: &(dyn Fn(&mut Settings) + Sync),
    ) -> Result<crate::service::Answered, crate::service::Failure> {
        let mut no_download = |_| {};
        self.service
            .answer(
                &self.client,
                crate::service::AnswerRequest {
                    question,
                    conversation: turns,
                    events: crate::events::Events::silent(),
                    watch,
                    download: &mut no_download,
                    note: &http::note,
                    shown_answer,
                    adjust: Some(adjust),
                },
            )
            .await
    }
}

/// The server's routes over `app`'s state.
fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/health", get(http::health))
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .route("/v1beta/models", get(gemini::models))
        .route("/v1beta/models/{call}", post(gemini::generate))
        .route("/v1/models/{call}", post(gemini::generate))
        .fallback(http::not_found)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            http::guard,
        ))
        .with_state(app)
}

/// `GET /v1/models`: OpenAI's list, or Gemini's when the request carries Gemini's
/// key (Gemini's v1 lists its models on the same path).
async fn models(
    headers: axum::http::HeaderMap,
    query: axum::extract::Query<serde_json::Map<String, serde_json::Value>>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if headers.contains_key("x-goog-api-key") || query.contains_key("key") {
        gemini::models().await.into_response()
    } else {
        openai::models().into_response()
    }
}

/// Whether `listen` is reachable only from this machine.
fn loopback_only(listen: &SocketAddr) -> bool {
    listen.ip().is_loopback()
}

/// Serves the API on `settings.serve.listen` until `shutdown` completes (Ctrl-C),
/// then gives the requests under way `shutdown_grace` to finish and closes every
/// connection. `verbose` logs each question.
pub async fn serve(
    settings: Settings,
    verbose: bool,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), Error> {
    let options = settings.serve.clone();
    if !loopback_only(&options.listen) && options.api_key.is_none() {
        return Err(Error::Usage {
            message: format!(
                "refusing to listen on {} without an API key: anyone who can reach it could use your search and model",
                options.listen
            ),
            hint: "set a key with --api-key, GROUND_SERVE_API_KEY or [serve] api_key (clients send it as `Authorization: Bearer KEY`), or listen on 127.0.0.1".into(),
        });
    }
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|e| Error::Usage {
            message: format!("cannot listen on {}: {e}", options.listen),
            hint:
                "choose another address with --listen HOST:PORT (is another ground serve running?)"
                    .into(),
        })?;
    let bound = listener.local_addr().unwrap_or(options.listen);
    let service = Service::new(settings, options.concurrency, options.queue);
    let client = Client::unbudgeted(service.settings());
    crate::error::log_line(&format!(
        "ground serve: listening on http://{bound} (OpenAI: /v1/chat/completions, Gemini: /v1beta/models/MODEL:generateContent; model: {}; local documents: {}; {} at once, {} waiting{})",
        service.model().describe(),
        service.settings().docs.describe(),
        options.concurrency,
        options.queue,
        if options.api_key.is_some() {
            ", API key required"
        } else {
            ""
        }
    ));
    if let Some(shared) = &service.settings().state {
        crate::error::log_line(&format!(
            "ground serve: sharing state through Redis at {} (prefix {:?}): conversations, reused answers, the search and page cache, the search rate limit and quota counts",
            crate::http::display_url(&shared.redis_url),
            shared.prefix
        ));
        // Connected before the first request needs it (a warning now if it does not
        // answer); never waited for: serving does not depend on it.
        if let Some(redis) = crate::state::redis(Some(shared)) {
            tokio::spawn(async move { redis.connect().await });
        }
    }
    let app = Arc::new(App {
        service,
        client,
        api_key: options.api_key.as_ref().map(|k| k.expose().to_string()),
        cors: options.cors.clone(),
        port: bound.port(),
        verbose,
    });
    let limits = connections::Limits {
        max_connections: options.max_connections,
        header_timeout: options.header_timeout,
        idle_timeout: options.idle_timeout,
        shutdown_grace: options.shutdown_grace,
    };
    connections::run(listener, routes(app), limits, shutdown).await;
    Ok(())
}
