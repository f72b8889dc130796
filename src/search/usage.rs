//! Monthly usage of the hosted search APIs (Brave: queries, Tavily: credits), counted
//! per calendar month (UTC) in `usage.json` in the state dir, under the state lock
//! (see [`super::state`]).
//!
//! Before a request is sent, [`check`] fails with [`Error::SearchQuotaSpent`] when the
//! month's quota (`[search] monthly_quota`, by default the free tier: Brave 2,000
//! queries, Tavily 1,000 credits; 0 = none) is used up; [`warning`] speaks from 80 %.
//! A successful reply counts one query (Brave) or one credit (Tavily, basic depth);
//! when Brave's reply carries its rate-limit headers (`X-RateLimit-Limit`,
//! `X-RateLimit-Remaining`, `X-RateLimit-Policy`: comma-separated lists, one entry
//! per window, the monthly one the longest), the count becomes the plan's own:
//! limit minus remaining. SearXNG is the user's own and not counted. A usage file
//! that is missing, corrupt or unwritable never stops a search.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::state::{locked, month_of, now_ms};
use crate::error::Error;
use crate::files::write_atomically;
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

/// The monthly quota in force for `backend`: the configured one, else the free tier;
/// `None` when there is none (SearXNG, or `monthly_quota = 0`).
pub fn quota(settings: &SearchSettings, backend: SearchBackend) -> Option<u64> {
    backend.free_tier()?;
    settings
        .monthly_quota
        .or(backend.free_tier())
        .filter(|&q| q > 0)
}

fn read(path: &Path) -> UsageFile {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// `backend`'s count in the month of `now_ms` (zero when nothing is known).
pub fn count_at(dir: &Path, backend: SearchBackend, now_ms: u64) -> Count {
    read(&dir.join(FILE))
        .months
        .remove(&month_of(now_ms))
        .and_then(|mut m| m.remove(backend.id()))
        .unwrap_or_default()
}

/// Fails when this month's quota for the configured service is spent; nothing is
/// to be sent then.
pub fn check(settings: &SearchSettings) -> Result<(), Error> {
    check_at(settings, now_ms())
}

/// [`check`] at the time `now` (Unix milliseconds).
pub fn check_at(settings: &SearchSettings, now: u64) -> Result<(), Error> {
    let backend = settings.backend;
    let (Some(dir), Some(quota)) = (&settings.state_dir, quota(settings, backend)) else {
        return Ok(());
    };
    let used = count_at(dir, backend, now).used;
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
    let quota = quota(settings, backend)?;
    let used = count_at(settings.state_dir.as_deref()?, backend, now).used;
    (used as f64 >= quota as f64 * WARN_AT).then(|| {
        format!(
            "{backend}: {used} of {quota} {} used this month ({} %); `ground usage` shows the counts, [search] monthly_quota sets the quota",
            unit(backend),
            used * 100 / quota
        )
    })
}

/// Counts one reply of a hosted search API: a 2xx adds one query or credit; Brave's
/// rate-limit headers, when present, set the count to the plan's own.
pub fn record(settings: &SearchSettings, status: u16, headers: &reqwest::header::HeaderMap) {
    record_at(settings, status, headers, now_ms());
}

/// [`record`] at the time `now` (Unix milliseconds).
pub fn record_at(
    settings: &SearchSettings,
    status: u16,
    headers: &reqwest::header::HeaderMap,
    now: u64,
) {
    let backend = settings.backend;
    let Some(dir) = settings.state_dir.as_deref() else {
        return;
    };
    if backend.free_tier().is_none() {
        return;
    }
    let plan = monthly_limit_and_remaining(headers);
    if !(200..300).contains(&status) && plan.is_none() {
        return;
    }
    let path = dir.join(FILE);
    locked(dir, || {
        let mut file = read(&path);
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
    });
}

/// The monthly window's (limit, remaining) from Brave's headers: `X-RateLimit-Limit:
/// 1, 15000` and `X-RateLimit-Remaining: 1, 1000` list one entry per window, and
/// `X-RateLimit-Policy: 1;w=1, 15000;w=2592000` names the windows in seconds; the
/// longest window is the month (without a policy, the last entry).
pub fn monthly_limit_and_remaining(headers: &reqwest::header::HeaderMap) -> Option<(u64, u64)> {
    let list = |name: &str| -> Option<Vec<String>> {
        let value = headers.get(name)?.to_str().ok()?;
        Some(value.split(',').map(|s| s.trim().to_string()).collect())
    };
    let numbers =
        |name: &str| -> Option<Vec<u64>> { list(name)?.iter().map(|s| s.parse().ok()).collect() };
    let limits = numbers("x-ratelimit-limit")?;
    let remaining = numbers("x-ratelimit-remaining")?;
    let windows: Option<Vec<u64>> = list("x-ratelimit-policy").and_then(|policies| {
        policies
            .iter()
            .map(|p| {
                p.split(';')
                    .find_map(|part| part.trim().strip_prefix("w="))
                    .and_then(|w| w.trim().parse().ok())
            })
            .collect()
    });
    let index = match windows {
        Some(w) if w.len() == limits.len() => (0..w.len()).max_by_key(|&i| w[i])?,
        _ => limits.len().checked_sub(1)?,
    };
    Some((*limits.get(index)?, *remaining.get(index)?))
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
                quota: quota(settings, backend),
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
            backend,
            api_key: None,
            url: url::Url::parse("http://127.0.0.1:1/").unwrap(),
            fallback_urls: Vec::new(),
            language: None,
            categories: None,
            engines: None,
            time_range: None,
            safesearch: None,
            timeout: std::time::Duration::from_secs(1),
            max_results: 20,
            max_per_minute: 10,
            monthly_quota: quota,
            state_dir: Some(dir.to_path_buf()),
            log_searches: false,
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
            record_at(&s, 200, &none, now);
        }
        // Failed replies are not billed.
        record_at(&s, 500, &none, now);
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
        record_at(&s, 200, &headers, now);
        let count = count_at(dir.path(), SearchBackend::Brave, now);
        assert_eq!((count.used, count.plan_limit), (1650, Some(2000)));
        assert!(
            warning_at(&s, now)
                .unwrap()
                .contains("1650 of 2000 queries")
        );
        // A 429 with headers still updates the count.
        headers.insert("X-RateLimit-Remaining", HeaderValue::from_static("0, 0"));
        record_at(&s, 429, &headers, now);
        assert!(check_at(&s, now).is_err());
    }

    #[test]
    fn header_lists_without_a_policy_take_the_last_window_and_junk_is_ignored() {
        let mut headers = HeaderMap::new();
        headers.insert("x-ratelimit-limit", HeaderValue::from_static("20, 20000"));
        headers.insert(
            "x-ratelimit-remaining",
            HeaderValue::from_static("19, 19990"),
        );
        assert_eq!(monthly_limit_and_remaining(&headers), Some((20000, 19990)));
        headers.insert("x-ratelimit-remaining", HeaderValue::from_static("many"));
        assert_eq!(monthly_limit_and_remaining(&headers), None);
    }

    #[test]
    fn a_corrupt_usage_file_counts_from_zero() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "[1, 2").unwrap();
        let s = settings(dir.path(), SearchBackend::Brave, Some(1));
        assert!(check_at(&s, 0).is_ok());
        record_at(&s, 200, &HeaderMap::new(), 0);
        assert!(check_at(&s, 0).is_err());
    }
}
