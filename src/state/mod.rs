//! State shared by the replicas of one deployment of `ground serve`, kept in Redis
//! (`--redis-url`, `GROUND_REDIS_URL`, `[state] redis_url`): conversation evidence,
//! cache entries, the search rate limit's window and the monthly quota counters of
//! hosted search APIs. Without a Redis named, nothing
//! here is used and every process keeps its own state, as before.
//!
//! Shared state is an optimisation, never a dependency: every call here answers
//! `None` when Redis does not answer within its command timeout ([`SharedState::timeout`]), and the caller goes on with
//! its local state (memory, the state dir, the cache folder). One warning is logged
//! per outage, not per request ([`outage`]), and another line when Redis answers
//! again; while it is down, Redis is tried again at most once per
//! [`outage::RETRY_AFTER`], so requests do not each wait for the timeout.
//!
//! A handle's connection lives on the async runtime that first used it: a `ground`
//! process runs one.
//!
//! The parts: [`Redis`] (the handle: one connection manager per URL and prefix in a
//! process, every command under the timeout), [`outage`] (when to warn and when to
//! try again, pure), [`window`] (the shared rate limit's script and its waits),
//! [`month`] (the monthly quota counters), [`keys`] (what each kind of state is
//! stored under).

pub mod keys;
pub mod month;
pub mod outage;
mod redis;
pub mod window;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use self::redis::{Redis, StateError};
use crate::settings::SharedState;

/// How long a command may take while no connection has answered yet: connecting
/// (TCP, TLS for `rediss://`, authentication) takes longer than a command.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// Largest value stored in Redis (a conversation's evidence, a cached page); larger
/// ones stay local. Bounds what one entry can cost the shared server.
pub const MAX_VALUE_BYTES: usize = 4 * 1024 * 1024;

/// The process's handles, one per URL and prefix: every stage that names the same
/// Redis shares one connection and one outage flag.
static HANDLES: Mutex<Vec<Arc<Redis>>> = Mutex::new(Vec::new());

/// The handle of the Redis `shared` names (`None` when it names none, or its URL is
/// one the Redis client refuses: then a warning is logged once, and state is local).
pub fn redis(shared: Option<&SharedState>) -> Option<Arc<Redis>> {
    let shared = shared?;
    let mut handles = HANDLES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(found) = handles.iter().find(|h| h.serves(shared)) {
        return Some(Arc::clone(found));
    }
    let made = Arc::new(Redis::new(shared)?);
    handles.push(Arc::clone(&made));
    Some(made)
}
