//! `ground usage` for people and scripts: this month's hosted search API counts
//! against their quotas, the rate limit, and where the state files and the opt-in
//! search log are.
//!
//! The counts and the files' names come as a plain [`UsageReport`] that the search
//! stage gathers (it reads the state folder); nothing here touches the stage.

use serde_json::{Value, json};

use crate::hits::{ServiceUsage, UsageReport};
use crate::settings::SearchSettings;

/// One line per hosted service ("Brave Search  12 of 2000 queries (0 %)"), then the
/// rate limit and where the state and the search log live.
pub fn describe(settings: &SearchSettings, report: &UsageReport) -> String {
    let mut out = String::new();
    match &report.month {
        Some(month) => {
            out.push_str(&format!("Usage in {} (UTC):\n", month.month));
            for s in &month.services {
                out.push_str(&format!("  {}\n", service_line(s)));
            }
        }
        None => {
            out.push_str("Usage: not counted (no state folder: set HOME or GROUND_STATE_DIR)\n")
        }
    }
    out.push_str(&format!("Rate limit: {}\n", rate_line(settings)));
    let dir = crate::render::cache::display_dir(&settings.state_dir);
    let [usage_file, limit_file, log_file] = report.files;
    out.push_str(&format!(
        "State folder: {dir} ({usage_file}, {limit_file}, {log_file})\n"
    ));
    let log_path = crate::render::cache::display_dir(&report.log_path);
    out.push_str(&if settings.log_searches {
        format!("Search log: on, {log_path} (delete the file to delete the log)\n")
    } else {
        format!("Search log: off ([privacy] log_searches = true or --log-searches; it would be {log_path})\n")
    });
    out
}

/// "12 of 2000 queries used (0 %)", or "... (no quota)".
pub fn service_line(s: &ServiceUsage) -> String {
    let plan = s
        .plan_limit
        .map(|l| format!("; the plan reports {l} a month"))
        .unwrap_or_default();
    match s.quota {
        Some(q) => format!(
            "{:<13} {} of {q} {} used ({} %){plan}",
            s.name,
            s.used,
            s.unit,
            s.used * 100 / q.max(1)
        ),
        None => format!("{:<13} {} {} used (no quota){plan}", s.name, s.used, s.unit),
    }
}

/// "10 searches a minute, shared by all ground runs" or "none", with the rule for
/// the default (public services only).
pub fn rate_line(settings: &SearchSettings) -> String {
    let shared = "shared by all ground runs; over it a search waits for a free slot (cached searches are free)";
    match (settings.max_per_minute, settings.rate_limit()) {
        (Some(0), _) => "none ([search] max_per_minute = 0)".into(),
        (Some(n), _) => format!("{n} searches a minute, {shared}"),
        (None, 0) => format!(
            "none for your own SearXNG at {} (it has its own limiter); {} a minute for public services, {shared}",
            crate::http::display_url(&settings.url),
            crate::settings::DEFAULT_MAX_PER_MINUTE
        ),
        (None, n) => format!(
            "{n} searches a minute for public services (none for a SearXNG of your own), {shared}"
        ),
    }
}

/// The same as one JSON object.
pub fn json(settings: &SearchSettings, report: &UsageReport) -> Value {
    json!({
        "usage": report.month,
        "max_per_minute": settings.rate_limit(),
        "state_dir": settings.state_dir,
        "search_log": {"enabled": settings.log_searches, "path": report.log_path},
    })
}
