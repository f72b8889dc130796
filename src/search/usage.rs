//! Monthly usage of the hosted search APIs (Brave: queries, Tavily: credits), counted
//! per calendar month (UTC) in `usage.json` in the state dir, under the state lock
//! (see [`super::state`]).
//!
//! Before a request is sent, [`check`] fails with [`Error::SearchQuotaSpent`] when the
//! month's quota is used up; [`warning`] speaks from 80 %. The quota in force
//! ([`quota_for`]) is `[search] monthly_quota` when set (0 = none), else the plan's own
//! monthly limit as the service last reported it, else the free tier (Brave 2,000
//! queries, Tavily 1,000 credits). A successful reply counts one query (Brave) or one
//! credit (Tavily, basic depth).
//!
//! Brave's replies carry rate-limit headers for two windows at once, as
//! comma-separated lists with one entry per window: `X-RateLimit-Limit: 20, 20000`,
//! `X-RateLimit-Remaining: 19, 15000`, `X-RateLimit-Policy: 20;w=1, 20000;w=2592000`
//! (the per-second window, then the monthly one). They are read per window
//! ([`RateLimits`]); only the monthly window speaks about the quota, and the count
//! becomes the plan's own: its limit minus what remains. The per-second window is
//! the service's own business (its 429 says when it is passed). SearXNG is the user's
//! own and not counted. A usage file that is missing, corrupt or unwritable never
//! stops a search; one that cannot be used (see [`super::state`]) is reported.
//!
//! Replicas of `ground serve` that share state in Redis (`[state] redis_url`) also
//! count there, one counter per service and month ([`crate::state::month`]), and a
//! search is refused when the deployment's count has spent the quota
//! ([`check_shared`], [`record_shared`]).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::state::{StateFileError, locked, month_of, now_ms};
use crate::error::Error;
use crate::files::{read_small, write_atomically};
/// This month's counts, as plain data the faces read (they live with the search results).
pub use crate::hits::{MonthUsage, ServiceUsage, UsageReport};
use crate::settings::{SearchBackend, SearchSettings};

/// The file's name in the state dir.
pub const FILE: &str = "usage.json";

/// Share of the quota from which [`warning`] speaks.
pub const WARN_AT: f64 = 0.8;

/// One service's count in one month.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Count {
    /// Queries (Brave) or credits (Tavily) used.
    #[serde(default)]
    pub used: u64,
    /// The plan's monthly limit as the service last reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_limit: Option<u64>,
    /// What the service last said remains this month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_remaining: Option<u64>,
}

/// The whole file: month (`YYYY-MM`) -> service (`brave`, `tavily`) -> count.
#[derive(Debug, Default, Serialize, Deserialize)]
struct UsageFile {
    #[serde(default)]
    months: BTreeMap<String, BTreeMap<String, Count>>,
}

/// `queries` or `credits`: what a service's quota counts.
pub fn unit(backend: SearchBackend) -> &'static str {
    match backend {
        SearchBackend::Tavily => "credits",
        _ => "queries",
    }
}

/// The monthly quota in force for `backend` given this month's `count`: the
/// configured one, else the plan's own monthly limit (from its headers), else the
/// free tier; `None` when there is none (SearXNG, or `monthly_quota = 0`).
pub fn quota_for(settings: &SearchSettings, backend: SearchBackend, count: &Count) -> Option<u64> {
    let free_tier = backend.free_tier()?;
    match settings.monthly_quota {
        Some(0) => None,
        Some(configured) => Some(configured),
        None => Some(count.plan_limit.filter(|&l| l > 0).unwrap_or(free_tier)),
    }
}

/// The largest usage file read (it holds a few lines a month).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The usage file: empty when missing or corrupt, the reason when it cannot be used.
fn read(path: &Path) -> Result<UsageFile, StateFileError> {
    Ok(read_small(path, MAX_FILE_BYTES)?
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default())
}

/// `backend`'s count in the month of `now_ms`: zero when nothing is known, the reason
/// when the file cannot be used.
pub fn try_count_at(
    dir: &Path,
    backend: SearchBackend,
    now_ms: u64,
) -> Result<Count, StateFileError> {
    Ok(read(&dir.join(FILE))?
        .months
        .remove(&month_of(now_ms))
        .and_then(|mut m| m.remove(backend.id()))
        .unwrap_or_default())
}

/// `backend`'s count in the month of `now_ms` (zero when nothing is known).
pub fn count_at(dir: &Path, backend: SearchBackend, now_ms: u64) -> Count {
    try_count_at(dir, backend, now_ms).unwrap_or_default()
}

/// Fails when this month's quota for the configured service is spent; nothing is
/// to be sent then. `Ok(Err(problem))`: the usage file cannot be used, so the search
/// goes on unchecked (and the caller warns).
pub fn check(settings: &SearchSettings) -> Result<Result<(), StateFileError>, Error> {
    check_at(settings, now_ms())
}

/// [`check`] at the time `now` (Unix milliseconds).
pub fn check_at(settings: &SearchSettings, now: u64) -> Result<Result<(), StateFileError>, Error> {
    let backend = settings.backend;
    let (Some(dir), Some(_)) = (&settings.state_dir, backend.free_tier()) else {
        return Ok(Ok(()));
    };
    match try_count_at(dir, backend, now) {
        Ok(count) => judge(settings, &count, now).map(Ok),
        Err(problem) => Ok(Err(problem)),
    }
}

/// [`check`] against the deployment's count in Redis, for replicas of `ground serve`
/// that share state (`[state] redis_url`): fails when the month's quota is spent
/// across all of them (the larger of the shared count and this user's file). Nothing
/// to check without a Redis, for a service without a quota, or while Redis does not
/// answer (then [`check`]'s local count alone decides).
pub async fn check_shared(settings: &SearchSettings) -> Result<(), Error> {
    let backend = settings.backend;
    if backend.free_tier().is_none() {
        return Ok(());
    }
    let Some(redis) = crate::state::redis(settings.shared.as_ref()) else {
        return Ok(());
    };
    let now = now_ms();
    let Some(used) = redis.month_count(backend.id(), now).await else {
        return Ok(());
    };
    let local = match settings.state_dir.clone() {
        Some(dir) => super::state::off_runtime(move || count_at(&dir, backend, now)).await,
        None => Count::default(),
    };
    let count = Count {
        used: local.used.max(used),
        ..local
    };
    judge(settings, &count, now)
}

/// [`record`] in the deployment's count in Redis (see [`check_shared`]): a 2xx adds
/// one, Brave's monthly window raises the count to the plan's own. Best effort:
/// nothing while Redis does not answer.
pub async fn record_shared(
    settings: &SearchSettings,
    status: u16,
    headers: &reqwest::header::HeaderMap,
) {
    let backend = settings.backend;
    if backend.free_tier().is_none() {
        return;
    }
    let Some(redis) = crate::state::redis(settings.shared.as_ref()) else {
        return;
    };
    let plan = RateLimits::from_headers(headers)
        .monthly
        .map(|w| w.limit.saturating_sub(w.remaining));
    let by = u64::from((200..300).contains(&status));
    if by == 0 && plan.is_none() {
        return;
    }
    redis
        .add_to_month(backend.id(), by, plan.unwrap_or(0), now_ms())
        .await;
}

/// Fails when `count` has used up the quota in force.
fn judge(settings: &SearchSettings, count: &Count, now: u64) -> Result<(), Error> {
    let backend = settings.backend;
    let Some(quota) = quota_for(settings, backend, count) else {
        return Ok(());
    };
    let used = count.used;
    if used >= quota {
        return Err(Error::SearchQuotaSpent {
            backend,
            used,
            quota,
            unit: unit(backend),
            month: month_of(now),
        });
    }
    Ok(())
}

/// A warning once this month's use of the configured service reaches 80 % of its
/// quota, e.g. "Brave Search: 1,650 of 2,000 queries used this month (82 %)".
pub fn warning(settings: &SearchSettings) -> Option<String> {
    warning_at(settings, now_ms())
}

/// [`warning`] at the time `now` (Unix milliseconds).
pub fn warning_at(settings: &SearchSettings, now: u64) -> Option<String> {
    let backend = settings.backend;
    backend.free_tier()?;
    let count = count_at(settings.state_dir.as_deref()?, backend, now);
    let quota = quota_for(settings, backend, &count)?;
    let used = count.used;
    (used as f64 >= quota as f64 * WARN_AT).then(|| {
        format!(
            "{backend}: {used} of {quota} {} used this month ({} %); `ground usage` shows the counts, [search] monthly_quota sets the quota",
            unit(backend),
            used * 100 / quota
        )
    })
}

/// Counts one reply of a hosted search API: a 2xx adds one query or credit; Brave's
/// monthly rate-limit window, when its headers carry one, sets the count to the
/// plan's own. Blocks for up to [`super::state::LOCK_WAIT`]: call it off the async
/// runtime. `Err`: the usage file could not be used, so the reply was not counted.
pub fn record(
    settings: &SearchSettings,
    status: u16,
    headers: &reqwest::header::HeaderMap,
) -> Result<(), StateFileError> {
    record_at(settings, status, headers, now_ms())
}

/// [`record`] at the time `now` (Unix milliseconds).
pub fn record_at(
    settings: &SearchSettings,
    status: u16,
    headers: &reqwest::header::HeaderMap,
    now: u64,
) -> Result<(), StateFileError> {
    let backend = settings.backend;
    let Some(dir) = settings.state_dir.as_deref() else {
        return Ok(());
    };
    if backend.free_tier().is_none() {
        return Ok(());
    }
    let plan = RateLimits::from_headers(headers)
        .monthly
        .map(|w| (w.limit, w.remaining));
    if !(200..300).contains(&status) && plan.is_none() {
        return Ok(());
    }
    let path = dir.join(FILE);
    locked(dir, || {
        // Not a state file: left alone, and this reply goes uncounted.
        let mut file = read(&path)?;
        let count = file
            .months
            .entry(month_of(now))
            .or_default()
            .entry(backend.id().to_string())
            .or_default();
        if (200..300).contains(&status) {
            count.used += 1;
        }
        if let Some((limit, remaining)) = plan {
            count.used = limit.saturating_sub(remaining);
            count.plan_limit = Some(limit);
            count.plan_remaining = Some(remaining);
        }
        if let Ok(bytes) = serde_json::to_vec_pretty(&file) {
            // A failed write never blocks a search (the state is a best effort).
            let _ = write_atomically(&path, &bytes);
        }
        Ok(())
    })?
}

/// One rate-limit window of Brave's headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Requests the window allows.
    pub limit: u64,
    /// Requests left in it.
    pub remaining: u64,
    /// Its length in seconds, when `X-RateLimit-Policy` says (`w=`).
    pub seconds: Option<u64>,
}

/// Brave's rate-limit headers read per window: `X-RateLimit-Limit: 20, 20000`,
/// `X-RateLimit-Remaining: 19, 15000` and `X-RateLimit-Policy: 20;w=1,
/// 20000;w=2592000` list one entry per window, in the same order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// The shortest window (per second on every plan).
    pub per_second: Option<Window>,
    /// The longest window: the month, the one the quota is judged on.
    pub monthly: Option<Window>,
}

/// The longest window with a policy that Brave calls monthly could be (its plans
/// say 30 days); without a policy, a list of two or more entries ends with the month.
const MIN_MONTH_SECS: u64 = 28 * 86_400;

impl RateLimits {
    /// Reads the headers. Lists whose lengths differ, or entries that are not
    /// numbers, give nothing; so does a single entry without a policy (it could be
    /// either window).
    pub fn from_headers(headers: &reqwest::header::HeaderMap) -> RateLimits {
        Self::read(headers).unwrap_or_default()
    }

    fn read(headers: &reqwest::header::HeaderMap) -> Option<RateLimits> {
        let list = |name: &str| -> Option<Vec<String>> {
            let value = headers.get(name)?.to_str().ok()?;
            Some(value.split(',').map(|s| s.trim().to_string()).collect())
        };
        let numbers = |name: &str| -> Option<Vec<u64>> {
            list(name)?.iter().map(|s| s.parse().ok()).collect()
        };
        let limits = numbers("x-ratelimit-limit")?;
        let remaining = numbers("x-ratelimit-remaining")?;
        if limits.len() != remaining.len() || limits.is_empty() {
            return None;
        }
        let seconds: Option<Vec<u64>> = list("x-ratelimit-policy")
            .and_then(|policies| {
                policies
                    .iter()
                    .map(|p| {
                        p.split(';')
                            .find_map(|part| part.trim().strip_prefix("w="))
                            .and_then(|w| w.trim().parse().ok())
                    })
                    .collect()
            })
            .filter(|w: &Vec<u64>| w.len() == limits.len());
        let window = |i: usize| Window {
            limit: limits[i],
            remaining: remaining[i],
            seconds: seconds.as_ref().map(|w| w[i]),
        };
        let last = limits.len() - 1;
        Some(match &seconds {
            Some(w) => {
                let shortest = (0..w.len()).min_by_key(|&i| w[i])?;
                let longest = (0..w.len()).max_by_key(|&i| w[i])?;
                RateLimits {
                    per_second: (w[shortest] <= 1).then(|| window(shortest)),
                    monthly: (w[longest] >= MIN_MONTH_SECS).then(|| window(longest)),
                }
            }
            None if last == 0 => RateLimits::default(),
            None => RateLimits {
                per_second: Some(window(0)),
                monthly: Some(window(last)),
            },
        })
    }
}

/// This month's usage of Brave and Tavily; `None` without a state dir.
pub fn this_month(settings: &SearchSettings) -> Option<MonthUsage> {
    let dir = settings.state_dir.as_deref()?;
    let now = now_ms();
    let services = [SearchBackend::Brave, SearchBackend::Tavily]
        .into_iter()
        .map(|backend| {
            let count = count_at(dir, backend, now);
            ServiceUsage {
                service: backend.id(),
                name: backend.to_string(),
                used: count.used,
                quota: quota_for(settings, backend, &count),
                unit: unit(backend),
                plan_limit: count.plan_limit,
            }
        })
        .collect();
    Some(MonthUsage {
        month: month_of(now),
        file: dir.join(FILE),
        services,
    })
}

/// What `ground usage` shows of the search stage's state: this month's counts, the
/// state files' names and where the search log is (or would be) written.
pub fn report(settings: &SearchSettings) -> UsageReport {
    UsageReport {
        month: this_month(settings),
        files: [FILE, super::limit::FILE, super::log::FILE],
        log_path: super::log::path(settings),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn settings(dir: &Path, backend: SearchBackend, quota: Option<u64>) -> SearchSettings {
        SearchSettings {
            timeout: std::time::Duration::from_secs(1),
            max_per_minute: Some(10),
            monthly_quota: quota,
            state_dir: Some(dir.to_path_buf()),
            ..crate::testing::search_settings(backend, "http://127.0.0.1:1/")
        }
    }

    #[test]
    fn warning_at_eighty_percent_error_when_spent_new_month_starts_afresh() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), SearchBackend::Tavily, Some(10));
        let now = 1_795_449_909_000; // 2026-11-23
        let none = HeaderMap::new();
        for i in 0..10 {
            assert!(check_at(&s, now).is_ok(), "search {i} is allowed");
            assert_eq!(warning_at(&s, now).is_some(), i >= 8, "after {i} searches");
            record_at(&s, 200, &none, now).unwrap();
        }
        // Failed replies are not billed.
        record_at(&s, 500, &none, now).unwrap();
        assert_eq!(count_at(dir.path(), SearchBackend::Tavily, now).used, 10);
        let err = check_at(&s, now).unwrap_err();
        assert!(matches!(
            err,
            Error::SearchQuotaSpent {
                used: 10,
                quota: 10,
                ..
            }
        ));
        assert_eq!(err.exit_code(), crate::error::exit::SEARCH);
        assert!(err.to_string().contains("10 of 10 credits used in 2026-11"));
        // Brave's count is its own; December starts at zero.
        assert!(check_at(&settings(dir.path(), SearchBackend::Brave, Some(10)), now).is_ok());
        assert!(check_at(&s, now + 10 * 86_400_000).is_ok());
        // Quota 0 = none.
        assert!(check_at(&settings(dir.path(), SearchBackend::Tavily, Some(0)), now).is_ok());
    }

    #[test]
    fn brave_headers_set_the_count_to_the_plans_own() {
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), SearchBackend::Brave, None);
        let mut headers = HeaderMap::new();
        headers.insert("X-RateLimit-Limit", HeaderValue::from_static("1, 2000"));
        headers.insert("X-RateLimit-Remaining", HeaderValue::from_static("0, 350"));
        headers.insert(
            "X-RateLimit-Policy",
            HeaderValue::from_static("1;w=1, 2000;w=2592000"),
        );
        let now = 1_795_449_909_000;
        record_at(&s, 200, &headers, now).unwrap();
        let count = count_at(dir.path(), SearchBackend::Brave, now);
        assert_eq!((count.used, count.plan_limit), (1650, Some(2000)));
        assert!(
            warning_at(&s, now)
                .unwrap()
                .contains("1650 of 2000 queries")
        );
        // A 429 with headers still updates the count.
        headers.insert("X-RateLimit-Remaining", HeaderValue::from_static("0, 0"));
        record_at(&s, 429, &headers, now).unwrap();
        assert!(check_at(&s, now).is_err());
    }

    #[test]
    fn header_lists_are_read_per_window_and_junk_is_ignored() {
        let window = |limit, remaining, seconds| {
            Some(Window {
                limit,
                remaining,
                seconds,
            })
        };
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-limit", HeaderValue::from_static("20, 20000"));
        headers.insert(
            "x-ratelimit-remaining",
            HeaderValue::from_static("19, 19990"),
        );
        let read = RateLimits::from_headers(&headers);
        assert_eq!(read.per_second, window(20, 19, None));
        assert_eq!(read.monthly, window(20000, 19990, None));
        // The policy names the windows, in any order.
        headers.insert(
            "x-ratelimit-policy",
            HeaderValue::from_static("20000;w=2592000, 20;w=1"),
        );
        headers.insert("x-ratelimit-limit", HeaderValue::from_static("20000, 20"));
        headers.insert(
            "x-ratelimit-remaining",
            HeaderValue::from_static("19990, 19"),
        );
        let read = RateLimits::from_headers(&headers);
        assert_eq!(read.per_second, window(20, 19, Some(1)));
        assert_eq!(read.monthly, window(20000, 19990, Some(2_592_000)));
        // One entry without a policy could be either window; lists of different
        // lengths and words are nothing.
        headers.remove("x-ratelimit-policy");
        headers.insert("x-ratelimit-limit", HeaderValue::from_static("20"));
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0"));
        assert_eq!(RateLimits::from_headers(&headers), RateLimits::default());
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("0, 0"));
        assert_eq!(RateLimits::from_headers(&headers), RateLimits::default());
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("many"));
        assert_eq!(RateLimits::from_headers(&headers), RateLimits::default());
    }

    #[test]
    fn the_quota_is_judged_on_the_plans_monthly_window() {
        // Issue 24, finding 13: a paid plan of 20,000 a month with 15,000 left was read
        // as "5000 of 2000 queries" (the free tier's quota) and the next search refused.
        let dir = tempfile::tempdir().unwrap();
        let s = settings(dir.path(), SearchBackend::Brave, None);
        let mut headers = HeaderMap::new();
        headers.insert("X-RateLimit-Limit", HeaderValue::from_static("20, 20000"));
        headers.insert(
            "X-RateLimit-Remaining",
            HeaderValue::from_static("19, 15000"),
        );
        let now = 1_795_449_909_000;
        record_at(&s, 200, &headers, now).unwrap();
        let count = count_at(dir.path(), SearchBackend::Brave, now);
        assert_eq!((count.used, count.plan_limit), (5000, Some(20000)));
        assert!(check_at(&s, now).unwrap().is_ok());
        assert_eq!(warning_at(&s, now), None, "25 % of the plan is no warning");
        assert_eq!(
            this_month(&s).unwrap().services[0].quota,
            Some(20000),
            "the plan's own limit is the quota shown"
        );
        // The per-second window running out says nothing about the month.
        headers.insert(
            "X-RateLimit-Remaining",
            HeaderValue::from_static("0, 14990"),
        );
        record_at(&s, 200, &headers, now).unwrap();
        assert!(check_at(&s, now).unwrap().is_ok());
        // The month running out does.
        headers.insert("X-RateLimit-Remaining", HeaderValue::from_static("5, 0"));
        record_at(&s, 200, &headers, now).unwrap();
        let err = check_at(&s, now).unwrap_err();
        assert!(err.to_string().contains("20000 of 20000 queries"), "{err}");
        // A quota the user set still rules over the plan's.
        let own = settings(dir.path(), SearchBackend::Brave, Some(30000));
        assert!(check_at(&own, now).unwrap().is_ok());
        let none = settings(dir.path(), SearchBackend::Brave, Some(0));
        assert!(check_at(&none, now).unwrap().is_ok());
    }

    #[test]
    fn a_corrupt_usage_file_counts_from_zero() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "[1, 2").unwrap();
        let s = settings(dir.path(), SearchBackend::Brave, Some(1));
        assert!(check_at(&s, 0).is_ok());
        record_at(&s, 200, &HeaderMap::new(), 0).unwrap();
        assert!(check_at(&s, 0).is_err());
    }
}
