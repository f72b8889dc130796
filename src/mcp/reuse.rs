//! Evidence reused within one MCP session: a `grounded_answer` whose question
//! normalises to that of an earlier grounded run gets that run's report again,
//! without searching or asking the model.
//!
//! Kept apart from the server so that the two rules it holds (what counts as the same
//! question, and how long and how many runs are kept) can be read and tested alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::report::Report;

/// Most grounded runs one session keeps for reuse; the oldest goes first.
pub const MAX_REUSED_RUNS: usize = 64;

/// The key under which a question's run is reused: its words (letters and digits),
/// normalised ([`crate::text::normalise`]: case, quotes, dashes, spaces) and joined by
/// single spaces, so "Do tardigrades survive in space?" and "do tardigrades survive
/// in space" share one.
pub fn reuse_key(question: &str) -> String {
    crate::text::normalise(question)
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A session's grounded runs by [`reuse_key`], each with when it finished; shared by
/// every call of the session.
#[derive(Debug, Default)]
pub struct Reused {
    runs: Mutex<HashMap<String, (Instant, Arc<Report>)>>,
}

impl Reused {
    /// An earlier grounded run for `key`, with its age, while it is younger than `ttl`
    /// (older runs are dropped on the way).
    pub fn earlier(&self, key: &str, ttl: Duration) -> Option<(Duration, Arc<Report>)> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|_, (at, _)| at.elapsed() < ttl);
        runs.get(key)
            .map(|(at, report)| (at.elapsed(), Arc::clone(report)))
    }

    /// Keeps a grounded run for reuse, dropping the oldest past [`MAX_REUSED_RUNS`];
    /// nothing is kept when `ttl` is zero (reuse is off).
    pub fn remember(&self, key: String, report: Arc<Report>, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.len() >= MAX_REUSED_RUNS
            && let Some(oldest) = runs
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
        {
            runs.remove(&oldest);
        }
        runs.insert(key, (Instant::now(), report));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_that_differ_in_case_and_punctuation_share_a_key() {
        assert_eq!(
            reuse_key("Do tardigrades  survive in space?"),
            reuse_key("do tardigrades survive in space")
        );
        assert_ne!(
            reuse_key("tardigrades in space"),
            reuse_key("tardigrades on earth")
        );
    }
}
