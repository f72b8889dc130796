//! The client-side search rate limit: at most [`SearchSettings::rate_limit`] searches
//! in any rolling minute, shared by every `ground` process of the user through
//! `recent-searches.json` in the state dir (see [`super::state`]).
//!
//! Over the limit a search **waits** for the next free slot ([`pace`]): the limit
//! exists to protect public instances and free API tiers, and a script that asks 400
//! questions in a loop should be slowed down, not failed. The wait is a timer on the
//! async runtime (never a blocked thread), so Ctrl-C and the run's deadline stay
//! prompt; the state file is only touched, under its lock, on a blocking thread. Only
//! a wait that would end past the run's deadline is an error,
//! [`Error::SearchRateLimitedLocally`] (exit 8), decided before waiting at all.
//!
//! Replicas of `ground serve` that name one Redis (`--redis-url`, `[state]`) share
//! one window there instead ([`crate::state::window`]): `--max-per-minute 10` is 10
//! for the deployment. While Redis does not answer, each process falls back to its
//! state file.
//!
//! Which searches count: every search sent to a public service (hosted APIs,
//! Wikipedia, DuckDuckGo, a SearXNG on a public address); a SearXNG that is the
//! user's own (loopback, a private network) has its own limiter, so by default no
//! client limit applies to it (`[search] max_per_minute` still sets one). Cached
//! searches never get here, so they are free.
//!
//! A state file that is missing or corrupt counts as "no recent searches": it never
//! holds a search up. One that cannot be used at all (its lock held elsewhere past
//! [`super::state::LOCK_WAIT`], a FIFO or device at its name, a huge file) lets the
//! search through unlimited and is reported as a warning; it is left as it is.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::state::{StateFileError, locked, now_ms, off_runtime};
use crate::error::Error;
use crate::files::{read_small, write_atomically};
use crate::settings::{SearchSettings, describe_rate};

/// The file's name in the state dir.
pub const FILE: &str = "recent-searches.json";

#[derive(Default, Serialize, Deserialize)]
struct Recent {
    /// When each search of the last window was sent, in Unix milliseconds.
    #[serde(default)]
    sent_ms: Vec<u64>,
}

/// The largest recent-searches file read (10,000 times a minute is the most allowed,
/// about 140 KB).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// What [`acquire_at`] found: a slot was taken, or the search must wait this long
/// for the oldest search of the window to age out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// A slot was taken: send the search now.
    Taken,
    /// Every slot of the window is in use; one frees up after this wait.
    Wait(Duration),
}

/// How a search may wait for its slot: until the run's deadline at most, telling
/// `on_wait` (a progress line, an event) before each wait.
#[derive(Clone, Copy, Default)]
pub struct Pace<'a> {
    /// The run's deadline; a wait that would end past it is
    /// [`Error::SearchRateLimitedLocally`]. `None`: no deadline.
    pub deadline: Option<tokio::time::Instant>,
    /// Told of each wait before it starts.
    pub on_wait: Option<&'a (dyn Fn(&Waiting) + Sync)>,
}

impl<'a> Pace<'a> {
    /// Waits until `deadline` at most, telling nobody.
    pub fn until(deadline: tokio::time::Instant) -> Self {
        Pace {
            deadline: Some(deadline),
            on_wait: None,
        }
    }

    /// The same, telling `on_wait` of each wait.
    pub fn telling(self, on_wait: &'a (dyn Fn(&Waiting) + Sync)) -> Self {
        Pace {
            on_wait: Some(on_wait),
            ..self
        }
    }
}

/// One wait for the rate limit, as shown to people:
/// "waiting 12 s for the search rate limit (10 a minute)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Waiting {
    /// How long.
    pub wait: Duration,
    /// Searches a window allows.
    pub limit: u32,
    /// The window.
    pub window: Duration,
}

impl std::fmt::Display for Waiting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "waiting {} s for the search rate limit ({})",
            self.wait.as_millis().div_ceil(1000).max(1),
            describe_rate(self.limit, self.window)
        )
    }
}

/// Waits for a slot of the rate limit and takes it (see the module doc). `Ok(None)`:
/// taken, or no limit applies. `Ok(Some(problem))`: the state could not be used, so
/// the search goes on without the limit (the caller warns). `Err`: the next slot is
/// past `pace`'s deadline; nothing is to be sent.
pub async fn pace(
    settings: &SearchSettings,
    pace: &Pace<'_>,
) -> Result<Option<StateFileError>, Error> {
    let limit = settings.rate_limit();
    if limit == 0 {
        return Ok(None);
    }
    let shared = crate::state::redis(settings.shared.as_ref());
    let window = settings.rate_window;
    loop {
        // The deployment's one window in Redis when one is named and answers; else
        // this user's state file.
        let slot = match shared_slot(shared.as_deref(), limit, window).await {
            Some(slot) => Ok(slot),
            None => {
                let Some(dir) = settings.state_dir.clone() else {
                    return Ok(None);
                };
                off_runtime(move || acquire_at(&dir, limit, window, now_ms)).await
            }
        };
        let wait = match slot {
            Err(problem) => return Ok(Some(problem)),
            Ok(Slot::Taken) => return Ok(None),
            Ok(Slot::Wait(wait)) => wait,
        };
        if let Some(deadline) = pace.deadline {
            let now = tokio::time::Instant::now();
            if now + wait > deadline {
                return Err(Error::SearchRateLimitedLocally {
                    limit,
                    window_ms: window.as_millis() as u64,
                    retry_after_secs: wait.as_millis().div_ceil(1000).max(1) as u64,
                    left_secs: deadline.saturating_duration_since(now).as_secs(),
                });
            }
        }
        if let Some(on_wait) = pace.on_wait {
            on_wait(&Waiting {
                wait,
                limit,
                window,
            });
        }
        // Another process may take the slot meanwhile: then the next turn waits again.
        tokio::time::sleep(wait).await;
    }
}

/// A slot of the deployment's one window in Redis (see [`crate::state::window`]), or
/// `None` when no Redis is named or it does not answer (the local limiter decides).
async fn shared_slot(
    shared: Option<&crate::state::Redis>,
    limit: u32,
    window: Duration,
) -> Option<Slot> {
    match shared?.take_slot(limit, window).await? {
        None => Some(Slot::Taken),
        Some(wait) => Some(Slot::Wait(wait)),
    }
}

/// Takes one slot for a search about to be sent, or says how long until one frees
/// up. `now` (Unix milliseconds) is read once the lock is held: a time taken before
/// waiting for the lock would be older than what the process that held it just
/// wrote. Blocks for up to [`super::state::LOCK_WAIT`]: call it off the async
/// runtime. `Err`: the state cannot be used (the search goes on without it).
pub fn acquire_at(
    dir: &Path,
    limit: u32,
    window: Duration,
    now: impl FnOnce() -> u64,
) -> Result<Slot, StateFileError> {
    let path = dir.join(FILE);
    let window_ms = window.as_millis() as u64;
    locked(dir, || {
        let now = now();
        let mut recent: Recent = match read_small(&path, MAX_FILE_BYTES) {
            // Not a state file: left alone, and the search goes on without it.
            Err(problem) => return Err(problem),
            Ok(bytes) => bytes
                .and_then(|bytes| serde_json::from_slice(&bytes).ok())
                .unwrap_or_default(),
        };
        // Times over a window in the future (a clock set back) are dropped like old
        // ones; one less far ahead counts as sent now, and is written back so, so no
        // search waits longer than a window in all (read as written, a stamp 59 s
        // ahead pushed the next slot 119 s away).
        recent
            .sent_ms
            .retain(|&t| now.saturating_sub(t) < window_ms && t < now + window_ms);
        let ahead = recent.sent_ms.iter().any(|&t| t > now);
        for t in &mut recent.sent_ms {
            *t = (*t).min(now);
        }
        recent.sent_ms.sort_unstable();
        let slot = if recent.sent_ms.len() >= limit as usize {
            let oldest = recent.sent_ms[recent.sent_ms.len() - limit as usize];
            let wait_ms = (oldest + window_ms).saturating_sub(now).max(1);
            Slot::Wait(Duration::from_millis(wait_ms))
        } else {
            recent.sent_ms.push(now);
            Slot::Taken
        };
        if (slot == Slot::Taken || ahead)
            && let Ok(bytes) = serde_json::to_vec(&recent)
        {
            // A failed write never holds a search up (the state is a best effort).
            let _ = write_atomically(&path, &bytes);
        }
        Ok(slot)
    })
    // No lock (an unwritable state dir, a lock held elsewhere) never holds one up.
    .and_then(|slot| slot)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn wait_ms(slot: Result<Slot, StateFileError>) -> Option<u64> {
        match slot.unwrap() {
            Slot::Taken => None,
            Slot::Wait(wait) => Some(wait.as_millis() as u64),
        }
    }

    #[test]
    fn the_eleventh_search_in_a_minute_waits_for_the_first_to_age_out() {
        let dir = tempfile::tempdir().unwrap();
        let t0 = 1_000_000;
        for i in 0..10 {
            assert_eq!(
                wait_ms(acquire_at(dir.path(), 10, MINUTE, || t0 + i * 1000)),
                None
            );
        }
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || t0 + 10_000)),
            Some(50_000)
        );
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || t0 + 59_999)),
            Some(1)
        );
        // A minute after the first, its slot is free again; the second's is not.
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || t0 + 60_000)),
            None
        );
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || t0 + 60_500)),
            Some(500)
        );
    }

    #[test]
    fn a_shorter_window_frees_slots_sooner() {
        let dir = tempfile::tempdir().unwrap();
        let window = Duration::from_millis(2000);
        for t in [0, 100, 200] {
            assert_eq!(wait_ms(acquire_at(dir.path(), 3, window, || t)), None);
        }
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 3, window, || 300)),
            Some(1700)
        );
        assert_eq!(wait_ms(acquire_at(dir.path(), 3, window, || 2000)), None);
    }

    #[test]
    fn a_corrupt_or_unwritable_state_file_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), b"{not json").unwrap();
        assert_eq!(wait_ms(acquire_at(dir.path(), 1, MINUTE, || 5_000)), None);
        // The corrupt file was replaced by a good one, which now counts.
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 1, MINUTE, || 6_000)),
            Some(59_000)
        );

        let file = dir.path().join("plain-file");
        std::fs::write(&file, b"x").unwrap();
        for t in 0..5 {
            assert!(acquire_at(&file, 1, MINUTE, || t).is_err());
        }
    }

    #[test]
    fn a_state_file_that_is_no_file_is_reported_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(FILE)).unwrap();
        let taken = acquire_at(dir.path(), 1, MINUTE, || 5_000);
        assert!(
            matches!(taken, Err(StateFileError::NotAFile { .. })),
            "{taken:?}"
        );
        assert!(dir.path().join(FILE).is_dir());
    }

    #[test]
    fn a_stamp_in_the_future_counts_as_now_never_longer_than_a_window() {
        let dir = tempfile::tempdir().unwrap();
        let now = 10_000_000;
        // A clock set back by 59 s: the file's stamps lie ahead of this run's now.
        let ahead = Recent {
            sent_ms: vec![now + 59_000; 10],
        };
        std::fs::write(dir.path().join(FILE), serde_json::to_vec(&ahead).unwrap()).unwrap();
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || now)),
            Some(60_000),
            "the wait is a window at most"
        );
        // A minute later every slot is free again.
        assert_eq!(
            wait_ms(acquire_at(dir.path(), 10, MINUTE, || now + 60_000)),
            None
        );
    }

    #[test]
    fn waits_read_as_people_say_them() {
        let waiting = Waiting {
            wait: Duration::from_millis(11_200),
            limit: 10,
            window: MINUTE,
        };
        assert_eq!(
            waiting.to_string(),
            "waiting 12 s for the search rate limit (10 a minute)"
        );
        assert_eq!(
            crate::settings::describe_rate(10, Duration::from_millis(2000)),
            "10 per 2000 ms"
        );
    }
}
