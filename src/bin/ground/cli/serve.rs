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

    /// Runs at once [default: 4]; the embedded model writes one answer at a time
    /// whatever this says [[serve] concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// Allow this browser origin to call the API (CORS); none by default
    /// [[serve] cors].
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,

    /// Each request's deadline in seconds, 1-3600 [default: 600] [[run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Pages read per question, 1-20 [default: 3] [[fetch] pages].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Seconds an answer is reused for the same question (asked as a question of its
    /// own, by any client) without searching; 0 = never [default: 600]
    /// [[run] reuse_secs].
    #[arg(long, value_name = "SECS")]
    pub reuse_secs: Option<u64>,

    /// Log each request's question on stderr (by default only method, path, status
    /// and time).
    #[arg(short, long)]
    pub verbose: bool,

    /// The options every run takes (config, search, fetch, model).
    #[command(flatten)]
    pub run: RunArgs,
}
