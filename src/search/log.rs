//! The opt-in search log (`[privacy] log_searches = true` or `--log-searches`): one
//! JSON line per search appended to `searches.jsonl` in the state dir, for the user's
//! own review. Off by default.
//!
//! A line holds the time (UTC), the service, the query, the number of results (or
//! the error's kind) and whether it came from the cache. Never an API key, a
//! password or the service's address. Deleting the file deletes the log.

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::json;

use super::state::{now_ms, rfc3339};
use crate::settings::SearchSettings;

/// The file's name in the state dir.
pub const FILE: &str = "searches.jsonl";

/// Where the log is written when on: `None` without a state dir.
pub fn path(settings: &SearchSettings) -> Option<PathBuf> {
    Some(settings.state_dir.as_ref()?.join(FILE))
}

/// Appends one line for a search of `query` (when the log is on): `results` is the
/// hit count, or the error kind when it failed. Failures to write are ignored.
pub fn record(settings: &SearchSettings, query: &str, results: Result<usize, &str>, cached: bool) {
    if !settings.log_searches {
        return;
    }
    let Some(path) = path(settings) else {
        return;
    };
    let mut line = json!({
        "time": rfc3339(now_ms()),
        "backend": settings.backend.id(),
        "query": query,
        "cached": cached,
    });
    match results {
        Ok(count) => line["results"] = json!(count),
        Err(kind) => line["error"] = json!(kind),
    }
    let mut text = line.to_string();
    // The one redaction point: a query pasted with a key in it stays out of the log.
    if let Some(key) = &settings.api_key {
        text = crate::text::redact(&text, &[key.expose()]);
    }
    text.push('\n');
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One write of a short line in append mode: lines of concurrent runs do not mix.
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = file.write_all(text.as_bytes());
    }
}
