//! The client-side search rate limit: at most `max_per_minute` searches in any rolling
//! minute, shared by every `ground` process of the user through
//! `recent-searches.json` in the state dir (see [`super::state`]).
//!
//! Over the limit a search fails at once with [`Error::SearchRateLimitedLocally`]
//! (its own exit code, 8), saying in how many seconds a slot frees up; it never
//! waits. Cached searches never get here, so they are free. A state file that is
//! missing, corrupt or unwritable counts as "no recent searches": it never blocks one.
//! One that cannot be used at all (its lock held elsewhere past
//! [`super::state::LOCK_WAIT`], a FIFO or device at its name, a huge file) lets the
//! search through unlimited and is reported as a warning; it is left as it is.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::state::{StateFileError, locked, now_ms};
use crate::error::Error;
use crate::files::{read_small, write_atomically};
use crate::settings::SearchSettings;

/// The rolling window.
pub const WINDOW_MS: u64 = 60_000;

/// The file's name in the state dir.
pub const FILE: &str = "recent-searches.json";

#[derive(Default, Serialize, Deserialize)]
struct Recent {
    /// When each search of the last minute was sent, in Unix milliseconds.
    #[serde(default)]
    sent_ms: Vec<u64>,
}

/// The largest recent-searches file read (10,000 times a minute is the most allowed,
/// about 140 KB).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// What [`acquire`] decided when it does not refuse the search: a slot was taken
/// (or there is no limit), or the state could not be used and the search goes on
/// without the limit.
pub type Taken = Result<(), StateFileError>;

/// Takes one slot for a search about to be sent, or fails when the last minute's
/// searches already reached the limit. Blocks for up to
/// [`super::state::LOCK_WAIT`]: call it off the async runtime.
pub fn acquire(settings: &SearchSettings) -> Result<Taken, Error> {
    let (Some(dir), limit) = (settings.state_dir.as_deref(), settings.max_per_minute) else {
        return Ok(Ok(()));
    };
    if limit == 0 {
        return Ok(Ok(()));
    }
    acquire_at(dir, limit, now_ms)
}

/// [`acquire`] with the clock `now` (Unix milliseconds), read once the lock is held:
/// a time taken before waiting for the lock would be older than what the process
/// that held it just wrote.
pub fn acquire_at(dir: &Path, limit: u32, now: impl FnOnce() -> u64) -> Result<Taken, Error> {
    let path = dir.join(FILE);
    let verdict = locked(dir, || {
        let now = now();
        let mut recent: Recent = match read_small(&path, MAX_FILE_BYTES) {
            // Not a state file: left alone, and the search goes on without it.
            Err(problem) => return Ok(Err(problem)),
            Ok(bytes) => bytes
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .unwrap_or_default(),
        };
        // Times over a minute in the future (a clock set back) are dropped like old
        // ones.
        recent
            .sent_ms
            .retain(|&t| now.saturating_sub(t) < WINDOW_MS && t < now + WINDOW_MS);
        recent.sent_ms.sort_unstable();
        if recent.sent_ms.len() >= limit as usize {
            let oldest = recent.sent_ms[recent.sent_ms.len() - limit as usize];
            let wait_ms = (oldest + WINDOW_MS).saturating_sub(now);
            return Err(Error::SearchRateLimitedLocally {
                limit,
                retry_after_secs: wait_ms.div_ceil(1000).max(1),
            });
        }
        recent.sent_ms.push(now);
        if let Ok(bytes) = serde_json::to_vec(&recent) {
            // A failed write never blocks a search (the state is a best effort).
            let _ = write_atomically(&path, &bytes);
        }
        Ok(Ok(()))
    });
    // No lock (an unwritable state dir, a lock held elsewhere) never blocks a search.
    verdict.unwrap_or_else(|problem| Ok(Err(problem)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn retry_after(result: Result<Taken, Error>) -> Option<u64> {
        match result {
            Err(Error::SearchRateLimitedLocally {
                retry_after_secs, ..
            }) => Some(retry_after_secs),
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => None,
        }
    }

    #[test]
    fn the_eleventh_search_in_a_minute_waits_for_the_first_to_age_out() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_000_000;
        for i in 0..10 {
            assert_eq!(
                retry_after(acquire_at(dir.path(), 10, || t0 + i * 1000)),
                None
            );
        }
        assert_eq!(
            retry_after(acquire_at(dir.path(), 10, || t0 + 10_000)),
            Some(50)
        );
        assert_eq!(
            retry_after(acquire_at(dir.path(), 10, || t0 + 59_999)),
            Some(1)
        );
        // A minute after the first, its slot is free again; the second's is not.
        assert_eq!(
            retry_after(acquire_at(dir.path(), 10, || t0 + 60_000)),
            None
        );
        assert_eq!(
            retry_after(acquire_at(dir.path(), 10, || t0 + 60_500)),
            Some(1)
        );
    }

    #[test]
    fn a_corrupt_or_unwritable_state_file_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        assert_eq!(retry_after(acquire_at(dir.path(), 1, || 5_000)), None);
        // The corrupt file was replaced by a good one, which now counts.
        assert_eq!(retry_after(acquire_at(dir.path(), 1, || 6_000)), Some(59));

        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"x").unwrap();
        for t in 0..5 {
            assert_eq!(retry_after(acquire_at(&file, 1, || t)), None);
        }
    }

    #[test]
    fn a_state_file_that_is_no_file_is_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(FILE)).unwrap();
        let taken = acquire_at(dir.path(), 1, || 5_000).unwrap();
        assert!(
            matches!(taken, Err(StateFileError::NotAFile { .. })),
            "{taken:?}"
        );
        assert!(dir.path().join(FILE).is_dir());
    }
}
