//! The handle on one Redis: a connection manager (it reconnects by itself), the key
//! prefix, the URL as shown to people (password redacted), and the outage guard.
//! Every command goes through [`Redis::run`]: under the deployment's command timeout ([`SharedState::timeout`]), skipped while
//! Redis is taken as down, and `None` for the caller on any failure.

use std::future::Future;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::outage::{Change, Outage};
use super::{CONNECT_TIMEOUT, keys, month, window};
use crate::settings::SharedState;

/// Why a check of Redis failed (`ground doctor`).
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// No reply within the time allowed.
    #[error("no reply from {url} within {} ms", .within.as_millis())]
    Timeout {
        /// The URL, password redacted.
        url: String,
        /// The time allowed.
        within: Duration,
    },
    /// The connection or the command failed.
    #[error("{url}: {reason}")]
    Failed {
        /// The URL, password redacted.
        url: String,
        /// What the client said, secrets redacted.
        reason: String,
    },
}

/// One Redis of shared state (see the module doc).
pub struct Redis {
    shared: SharedState,
    client: redis::Client,
    /// The URL for messages: the password redacted.
    shown: String,
    manager: OnceLock<ConnectionManager>,
    outage: Outage,
    /// Process-wide counter for rate-window members.
    sends: AtomicU64,
    /// Whether a command was ever answered (until then commands may take
    /// [`CONNECT_TIMEOUT`]: the first one connects).
    answered_once: AtomicBool,
    /// The clock the outage guard reads.
    started: Instant,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis")
            .field("url", &self.shown)
            .field("prefix", &self.shared.prefix)
            .finish()
    }
}

impl Redis {
    /// A handle on the Redis `shared` names; nothing is connected yet. `None` (with a
    /// warning) when the client refuses the URL.
    pub(super) fn new(shared: &SharedState) -> Option<Redis> {
        let shown = crate::http::display_url(&shared.redis_url);
        match redis::Client::open(shared.redis_url.as_str()) {
            Ok(client) => Some(Redis {
                shared: shared.clone(),
                client,
                shown,
                manager: OnceLock::new(),
                outage: Outage::default(),
                sends: AtomicU64::new(0),
                answered_once: AtomicBool::new(false),
                started: Instant::now(),
            }),
            Err(e) => {
                crate::error::log_line(&crate::error::warning(&format!(
                    "shared state: {shown} cannot be used ({}); every replica keeps its own state",
                    crate::text::redact_known(&e.to_string(), &[])
                )));
                None
            }
        }
    }

    /// Whether this handle is the one for `shared`.
    pub(super) fn serves(&self, shared: &SharedState) -> bool {
        self.shared == *shared
    }

    /// The URL as shown to people (password redacted).
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// The key of `local` of `kind` under this deployment's prefix.
    pub fn key(&self, kind: keys::Kind, local: &str) -> String {
        keys::key(&self.shared.prefix, kind, local)
    }

    /// The connection manager, made on first use (inside the runtime); it connects
    /// lazily and reconnects by itself.
    fn manager(&self) -> Result<ConnectionManager, redis::RedisError> {
        if let Some(manager) = self.manager.get() {
            return Ok(manager.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(self.shared.timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let made = ConnectionManager::new_lazy_with_config(self.client.clone(), config)?;
        Ok(self.manager.get_or_init(|| made).clone())
    }

    fn now_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Runs `command` on Redis within the deployment's command timeout ([`SharedState::timeout`]) ([`CONNECT_TIMEOUT`] until a
    /// first command was answered): its value, or `None` when
    /// Redis is taken as down, fails or is slow (the caller uses local state). Logs
    /// one warning when an outage starts and one line when it ends.
    pub async fn run<T, F, Fut>(&self, what: &str, command: F) -> Option<T>
    where
        F: FnOnce(ConnectionManager) -> Fut,
        Fut: Future<Output = redis::RedisResult<T>>,
    {
        if !self.outage.should_try(self.now_ms()) {
            return None;
        }
        let within = if self.answered_once.load(Ordering::Relaxed) {
            self.shared.timeout
        } else {
            CONNECT_TIMEOUT.max(self.shared.timeout)
        };
        let outcome = match self.manager() {
            Ok(manager) => match tokio::time::timeout(within, command(manager)).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(crate::text::redact_known(&e.to_string(), &[])),
                Err(_) => Err(format!("no reply within {} ms", within.as_millis())),
            },
            Err(e) => Err(crate::text::redact_known(&e.to_string(), &[])),
        };
        match outcome {
            Ok(value) => {
                self.answered_once.store(true, Ordering::Relaxed);
                if self.outage.answered() == Change::Up {
                    crate::error::log_line(&format!(
                        "ground: shared state: {} answers again; state is shared again",
                        self.shown
                    ));
                }
                Some(value)
            }
            Err(reason) => {
                if self.outage.failed(self.now_ms()) == Change::Down {
                    crate::error::log_line(&crate::error::warning(&format!(
                        "shared state: Redis at {} does not answer ({what}: {reason}); this process uses its own state until it does (requests are still answered); `ground doctor` checks it",
                        self.shown
                    )));
                }
                None
            }
        }
    }

    /// The value at `key`: `Some(None)` when there is none, `None` when Redis did not
    /// answer.
    pub async fn get(&self, key: &str) -> Option<Option<Vec<u8>>> {
        self.run("GET", |mut c| async move {
            redis::cmd("GET").arg(key).query_async(&mut c).await
        })
        .await
    }

    /// Stores `value` at `key` for `ttl` (`SET key value PX ms`); values over
    /// [`super::MAX_VALUE_BYTES`] and a zero `ttl` are not stored. Whether it was.
    pub async fn set(&self, key: &str, value: &[u8], ttl: Duration) -> bool {
        let ms = ttl.as_millis() as u64;
        if ms == 0 || value.len() > super::MAX_VALUE_BYTES {
            return false;
        }
        self.run("SET", |mut c| async move {
            redis::cmd("SET")
                .arg(key)
                .arg(value)
                .arg("PX")
                .arg(ms)
                .query_async::<()>(&mut c)
                .await
        })
        .await
        .is_some()
    }

    /// Sets `key` for `ttl` unless it exists (`SET key 1 NX PX ms`): whether it was
    /// set (this caller holds the claim), `None` when Redis did not answer.
    pub async fn claim(&self, key: &str, ttl: Duration) -> Option<bool> {
        let ms = ttl.as_millis().max(1) as u64;
        let reply: Option<String> = self
            .run("SET NX", |mut c| async move {
                redis::cmd("SET")
                    .arg(key)
                    .arg(1)
                    .arg("NX")
                    .arg("PX")
                    .arg(ms)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        Some(reply.is_some())
    }

    /// Whether `key` exists, or `None` when Redis did not answer.
    pub async fn exists(&self, key: &str) -> Option<bool> {
        self.run("EXISTS", |mut c| async move {
            redis::cmd("EXISTS").arg(key).query_async(&mut c).await
        })
        .await
    }

    /// Deletes `key` (best effort).
    pub async fn delete(&self, key: &str) {
        self.run("DEL", |mut c| async move {
            redis::cmd("DEL").arg(key).query_async::<()>(&mut c).await
        })
        .await;
    }

    /// Takes a slot of the deployment's one search window (`limit` in `window`):
    /// `Some(None)` when taken, `Some(Some(wait))` when the window is full, `None` when
    /// Redis did not answer (the caller uses the local limiter).
    pub async fn take_slot(&self, limit: u32, window: Duration) -> Option<Option<Duration>> {
        let key = self.key(keys::Kind::RateWindow, window::WINDOW);
        let now_ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let member = window::member(
            std::process::id(),
            self.sends.fetch_add(1, Ordering::Relaxed),
            now_ns,
        );
        let window_ms = window.as_millis() as u64;
        let reply = self
            .run("rate window", |mut c| async move {
                redis::Script::new(window::SCRIPT)
                    .key(&key)
                    .arg(limit)
                    .arg(window_ms)
                    .arg(&member)
                    .invoke_async::<i64>(&mut c)
                    .await
            })
            .await?;
        Some(window::wait_of(reply))
    }

    /// Adds `by` to `service`'s count of the month of `now_ms` (raised to `at_least`
    /// when the service reported more), the key expiring after the month: the new
    /// count, or `None` when Redis did not answer.
    pub async fn add_to_month(
        &self,
        service: &str,
        by: u64,
        at_least: u64,
        now_ms: u64,
    ) -> Option<u64> {
        let key = self.key(keys::Kind::Quota, &month::counter(service, now_ms));
        let expiry = month::expiry_ms(now_ms);
        self.run("quota count", |mut c| async move {
            redis::Script::new(month::SCRIPT)
                .key(&key)
                .arg(by)
                .arg(at_least)
                .arg(expiry)
                .invoke_async::<u64>(&mut c)
                .await
        })
        .await
    }

    /// `service`'s count of the month of `now_ms` (0 when none), or `None` when Redis
    /// did not answer.
    pub async fn month_count(&self, service: &str, now_ms: u64) -> Option<u64> {
        let key = self.key(keys::Kind::Quota, &month::counter(service, now_ms));
        let count = self
            .run("GET", |mut c| async move {
                redis::cmd("GET")
                    .arg(&key)
                    .query_async::<Option<u64>>(&mut c)
                    .await
            })
            .await?;
        Some(count.unwrap_or(0))
    }

    /// Connects now with a `PING` through the outage guard (a server's start-up), so
    /// that the first requests do not pay for the connection and a Redis that does
    /// not answer is said at once. Whether it answered.
    pub async fn connect(&self) -> bool {
        self.run("PING", |mut c| async move {
            redis::cmd("PING").query_async::<String>(&mut c).await
        })
        .await
        .is_some()
    }

    /// `PING` outside the outage guard, within `within`: how long the reply took
    /// (`ground doctor`).
    pub async fn ping(&self, within: Duration) -> Result<Duration, StateError> {
        let failed = |reason: String| StateError::Failed {
            url: self.shown.clone(),
            reason: crate::text::redact_known(&reason, &[]),
        };
        let mut manager = self.manager().map_err(|e| failed(e.to_string()))?;
        let start = Instant::now();
        let reply = tokio::time::timeout(
            within,
            redis::cmd("PING").query_async::<String>(&mut manager),
        )
        .await
        .map_err(|_| StateError::Timeout {
            url: self.shown.clone(),
            within,
        })?;
        reply.map_err(|e| failed(e.to_string()))?;
        Ok(start.elapsed())
    }
}
