//! `ground serve`'s settings (address, key, limits) and where the replicas of one
//! deployment keep their shared state: plain data, resolved by `config`.

use url::Url;

use super::Secret;

/// Where the replicas of one deployment keep their shared state: a Redis server
/// (`--redis-url`, `GROUND_REDIS_URL`, `[state] redis_url`) and the prefix of every
/// key (`[state] redis_prefix`). Plain data; `crate::state` holds the connection.
/// Its `Debug` shows the URL with the password redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedState {
    /// `redis://` or `rediss://` (TLS), password and database number included.
    pub redis_url: Url,
    /// Put before every key, so that deployments can share one Redis.
    pub prefix: String,
    /// How long one command may take before the caller goes on with local state
    /// (`[state] redis_timeout_ms`, `GROUND_REDIS_TIMEOUT_MS`; default
    /// [`DEFAULT_REDIS_TIMEOUT`]).
    pub timeout: std::time::Duration,
}

/// How long one Redis command may take by default: Redis on the same network
/// answers in about a millisecond, so this is an outage, not a slow reply.
pub const DEFAULT_REDIS_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(250);

impl std::fmt::Debug for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedState")
            .field("redis_url", &crate::http::display_url(&self.redis_url))
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The key prefix when `[state] redis_prefix` is not set.
pub const DEFAULT_REDIS_PREFIX: &str = "ground:";

/// `ground serve`'s address, key and limits (`[serve]`, `GROUND_SERVE_*`, flags).
#[derive(Debug, Clone)]
pub struct ServeSettings {
    /// Where to listen: 127.0.0.1:8088 unless told otherwise.
    pub listen: std::net::SocketAddr,
    /// The key clients must send (`Authorization: Bearer`, `x-goog-api-key` or
    /// `?key=`); required for an address other than loopback.
    pub api_key: Option<Secret>,
    /// Requests that may wait for a place beyond those running (default 8); more
    /// are refused with 429 and `Retry-After`.
    pub queue: usize,
    /// Runs at once (default 4); with the embedded model also the replies it writes
    /// together in one batch (continuous batching, bounded by memory).
    pub concurrency: usize,
    /// The one browser origin allowed to call the API (no CORS headers otherwise).
    pub cors: Option<String>,
    /// Connections open at once (default 512). When all are open, another client
    /// closes the one that has waited longest for a request; when every one has a
    /// request under way, newcomers wait in the system's listen queue.
    pub max_connections: usize,
    /// A new connection's first request, and a later request once its first byte has
    /// come, must have sent all its headers within this (default 10 s); otherwise the
    /// connection is closed.
    pub header_timeout: std::time::Duration,
    /// A kept-alive connection with no request under way is closed after this long
    /// without a byte of the next one, and any connection whose client takes in none
    /// of a reply for this long (default 30 s).
    pub idle_timeout: std::time::Duration,
    /// On SIGTERM or Ctrl-C, how long the requests under way may take to finish
    /// before their connections are closed (default 10 s).
    pub shutdown_grace: std::time::Duration,
    /// Whether clients must not learn about each other through the server's caches
    /// (`[serve] isolate_clients`, `GROUND_SERVE_ISOLATE_CLIENTS`,
    /// `--isolate-clients`): no answer reused from another request, and the
    /// embedded model's cached prompt prefix kept only within one conversation.
    /// Off by default on loopback (one person's machine), on by default on any
    /// other address (resolved with `listen`).
    pub isolate_clients: bool,
}

impl Default for ServeSettings {
    fn default() -> Self {
        ServeSettings {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8088)),
            api_key: None,
            queue: 8,
            concurrency: 4,
            cors: None,
            max_connections: 512,
            header_timeout: std::time::Duration::from_secs(10),
            idle_timeout: std::time::Duration::from_secs(30),
            shutdown_grace: std::time::Duration::from_secs(10),
            isolate_clients: false,
        }
    }
}
