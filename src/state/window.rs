//! The search rate limit's one window for every replica: a sorted set of send times
//! in Redis, read and changed by one Lua script, which Redis runs atomically (no two
//! replicas can both take the last slot). Times are Redis's own clock (`TIME`), so
//! replicas whose clocks differ still share one window.
//!
//! The rule is the local limiter's (`crate::search::limit`): at most `limit` sends in
//! any rolling `window`; over it, the wait until the oldest send that counts ages
//! out.

use std::time::Duration;

/// The script. KEYS[1]: the window; ARGV: the limit, the window in ms, a member
/// naming this send. Returns 0 when a slot was taken, else the wait in ms (at least
/// 1).
pub const SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
local wait = tonumber(oldest[2]) + window - now
if wait < 1 then wait = 1 end
return wait
";

/// The local key of the deployment's one window (all services together, as the
/// local limiter counts them).
pub const WINDOW: &str = "searches";

/// What the script's reply means: `None` for a slot taken, else the wait.
pub fn wait_of(reply: i64) -> Option<Duration> {
    (reply > 0).then(|| Duration::from_millis(reply as u64))
}

/// A member naming one send in the window: unique across processes (the process id,
/// a counter, the time), so two sends in one millisecond are two members.
pub fn member(pid: u32, counter: u64, now_ns: u128) -> String {
    format!("{now_ns}-{pid}-{counter}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_of_zero_is_a_slot_and_any_other_a_wait() {
        assert_eq!(wait_of(0), None);
        assert_eq!(wait_of(1), Some(Duration::from_millis(1)));
        assert_eq!(wait_of(59_000), Some(Duration::from_secs(59)));
        assert_eq!(wait_of(-5), None);
    }

    #[test]
    fn members_of_one_millisecond_differ() {
        assert_ne!(member(7, 1, 1_000), member(7, 2, 1_000));
        assert_ne!(member(7, 1, 1_000), member(8, 1, 1_000));
    }
}
