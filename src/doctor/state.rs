//! `ground doctor`'s `state` check: when a Redis is named for shared state
//! (`[state] redis_url`, `GROUND_REDIS_URL`), whether it answers a `PING` and how
//! fast. Shared state is an optimisation, so a Redis that does not answer is a
//! warning (replicas use their own state meanwhile), never a failure.

use std::time::Duration;

use super::{Area, Check};
use crate::settings::Settings;

/// How long the `PING` may take.
const PING_WITHIN: Duration = Duration::from_secs(2);

/// The check, or `None` when no Redis is named (nothing is shared: nothing to check).
pub(super) async fn state_check(settings: &Settings) -> Option<Check> {
    let shared = settings.state.as_ref()?;
    let shown = crate::http::display_url(&shared.redis_url);
    let Some(redis) = crate::state::redis(Some(shared)) else {
        return Some(Check::warn(
            "state",
            Area::Config,
            format!("{shown} cannot be used by the Redis client"),
            "check [state] redis_url (redis://HOST:PORT/DB or rediss://...)".into(),
        ));
    };
    Some(match redis.ping(PING_WITHIN).await {
        Ok(took) => Check::ok(
            "state",
            Area::Config,
            format!(
                "Redis at {shown} answers PING in {} ms (prefix {:?}): conversations, reused answers, the cache and the search rate limit are shared",
                took.as_millis(),
                shared.prefix
            ),
        ),
        Err(e) => Check::warn(
            "state",
            Area::Config,
            format!("shared state: {e}; each replica uses its own state until it answers"),
            "start Redis (e.g. `systemctl start redis-server`) or correct --redis-url / GROUND_REDIS_URL / [state] redis_url; test it with `redis-cli -u URL ping`".into(),
        ),
    })
}
