//! `ground serve`'s arguments.

use clap::Args;

use super::RunArgs;

/// `ground serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen, HOST:PORT [default: 127.0.0.1:8088]. An address other than
    /// loopback needs an API key [[serve] listen, GROUND_SERVE_LISTEN].
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,

    /// The key every request must carry (`Authorization: Bearer KEY`, Gemini's
    /// `x-goog-api-key` or `?key=`) [[serve] api_key, GROUND_SERVE_API_KEY].
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Requests that may wait for a place; more are refused with 429 and Retry-After
    /// [default: 8] [[serve] queue].
    #[arg(long, value_name = "N")]
    pub queue: Option<usize>,

    /// Runs at once [default: 4]; the embedded model writes as many replies together
    /// in one batch, as far as memory holds a window for each [[serve] concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// Allow this browser origin to call the API (CORS); none by default
    /// [[serve] cors].
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,

    /// Connections open at once, 1-65536; when all are taken, a new client closes the
    /// one that has waited longest for a request (never one with a request under way)
    /// [default: 512] [[serve] max_connections, GROUND_SERVE_MAX_CONNECTIONS].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,

    /// Seconds a client has to send a request's headers (a new connection's first
    /// request from when it connects, a later one from its first byte), 1-3600; then
    /// the connection is closed [default: 10] [[serve] header_timeout_secs,
    /// GROUND_SERVE_HEADER_TIMEOUT_SECS].
    #[arg(long, value_name = "SECS")]
    pub header_timeout: Option<u64>,

    /// Seconds a kept-alive connection may wait for its next request (and a client
    /// may leave a reply unread), 1-3600 [default: 30] [[serve] idle_timeout_secs,
    /// GROUND_SERVE_IDLE_TIMEOUT_SECS].
    #[arg(long, value_name = "SECS")]
    pub idle_timeout: Option<u64>,

    /// On SIGTERM or Ctrl-C, seconds the requests under way may take to finish before
    /// their connections are closed, 0-3600; a second signal stops at once
    /// [default: 10] [[serve] shutdown_grace_secs, GROUND_SERVE_SHUTDOWN_GRACE_SECS].
    #[arg(long, value_name = "SECS")]
    pub shutdown_grace: Option<u64>,

    /// Keep clients from learning about each other through the server's caches: no
    /// answer reused from another request, the embedded model's prompt cache kept
    /// within one conversation [default: true off loopback, false on loopback]
    /// [[serve] isolate_clients, GROUND_SERVE_ISOLATE_CLIENTS].
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub isolate_clients: Option<bool>,

    /// Each request's deadline in seconds, 1-3600 [default: 600] [[run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Pages read per question, 1-20 [default: 3] [[fetch] pages].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Seconds an answer is reused for the same question (asked as a question of its
    /// own, with the same options, by any client; never with --isolate-clients)
    /// without searching; 0 = never [default: 600] [[run] reuse_secs].
    #[arg(long, value_name = "SECS")]
    pub reuse_secs: Option<u64>,

    /// The Redis whose state replicas of this server share (conversations, the search
    /// and page cache, the search rate limit): redis://[:PASSWORD@]HOST[:PORT][/DB],
    /// or rediss:// for TLS; while it does not answer, this process uses its own
    /// [[state] redis_url, GROUND_REDIS_URL].
    #[arg(long, value_name = "URL")]
    pub redis_url: Option<String>,

    /// Log each request's question on stderr (by default only method, path, status
    /// and time).
    #[arg(short, long)]
    pub verbose: bool,

    /// The options every run takes (config, search, fetch, model).
    #[command(flatten)]
    pub run: RunArgs,
}
