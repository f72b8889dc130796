//! The search stage's small state files in the user's state dir
//! (`$XDG_STATE_HOME/ground`): the rate limit's recent searches, the monthly usage
//! counts and the opt-in search log.
//!
//! Every `ground` process of the user shares them. A read-modify-write happens under
//! an exclusive lock on `state.lock` (std's `File::try_lock`), and files are written
//! to a temp file and renamed over the old one, so a reader never sees half a file.
//!
//! None of this may hold a run up. The lock is waited for at most [`LOCK_WAIT`]
//! (tried again every [`LOCK_RETRY`]), on a blocking thread ([`off_runtime`]), never on
//! the async runtime, whose timers (the run's deadline, Ctrl-C) and other requests (a
//! `ground mcp` server's) must keep running meanwhile. A state file that is not a
//! small regular file (a FIFO, a device, a huge file) is not read (see
//! [`crate::files::read_small`]). A state dir that cannot be created, locked, read or
//! written never stops a search: the callers go on without the state and say so in a
//! warning ([`StateFileError`]).

use std::fs::{self, OpenOptions};
use std::path::Path;
use std::time::{Duration, Instant};

pub use crate::files::StateFileError;

/// The longest a search waits for another process's lock on the state: then it goes
/// on without the state (well inside any run's deadline).
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How often the lock is tried again while another process holds it.
pub const LOCK_RETRY: Duration = Duration::from_millis(20);

/// Runs `f` while holding the exclusive lock of `dir`'s `state.lock`, waiting for it
/// at most [`LOCK_WAIT`]. Blocks the calling thread: call it through [`off_runtime`]
/// from async code.
pub fn locked<T>(dir: &Path, f: impl FnOnce() -> T) -> Result<T, StateFileError> {
    locked_within(dir, LOCK_WAIT, f)
}

/// [`locked`] with the longest wait `wait`.
pub fn locked_within<T>(
    dir: &Path,
    wait: Duration,
    f: impl FnOnce() -> T,
) -> Result<T, StateFileError> {
    crate::files::create_private_dir(dir).map_err(|source| StateFileError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let path = dir.join("state.lock");
    let lock = crate::files::open_regular(
        &path,
        crate::files::private(OpenOptions::new().create(true).truncate(false).write(true)),
        crate::files::Links::Follow,
    )?;
    let started = Instant::now();
    loop {
        match lock.try_lock() {
            Ok(()) => break,
            Err(fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                std::thread::sleep(LOCK_RETRY.min(wait.saturating_sub(started.elapsed())));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(StateFileError::Busy {
                    path,
                    waited: started.elapsed(),
                });
            }
            Err(fs::TryLockError::Error(source)) => {
                return Err(StateFileError::Io { path, source });
            }
        }
    }
    let value = f();
    let _ = lock.unlock();
    Ok(value)
}

/// Runs the blocking state work `f` on a blocking thread, so the async runtime keeps
/// serving timers, Ctrl-C and other requests while it waits for the lock. A run that
/// ends meanwhile (its deadline, Ctrl-C) leaves the thread to finish within
/// [`LOCK_WAIT`] on its own.
pub async fn off_runtime<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(f).await {
        Ok(value) => value,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// The warning shown when a state file could not be used for `what` ("the search
/// rate limit was not applied").
pub fn warning(what: &str, problem: &StateFileError) -> String {
    format!("{what}: {problem}")
}

pub use crate::files::unix_ms as now_ms;

pub use crate::files::{month_of, rfc3339};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_and_times_are_utc_calendar_ones() {
        assert_eq!(month_of(0), "1970-01");
        // 2026-11-23T16:05:09Z
        assert_eq!(rfc3339(1_795_449_909_000), "2026-11-23T16:05:09Z");
        assert_eq!(month_of(1_795_449_909_000), "2026-11");
        // 2024-02-29T23:59:59Z, then the first second of March.
        assert_eq!(month_of(1_709_251_199_000), "2024-02");
        assert_eq!(month_of(1_709_251_200_000), "2024-03");
    }

    #[test]
    fn an_unusable_dir_gives_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        fs::write(&file, "x").unwrap();
        assert!(matches!(
            locked(&file.join("sub"), || 1),
            Err(StateFileError::Io { .. })
        ));
        assert_eq!(locked(dir.path(), || 1).unwrap(), 1);
    }

    #[test]
    fn a_lock_held_elsewhere_is_waited_for_a_bounded_time() {
        let dir = tempfile::tempdir().unwrap();
        // Another open file description of the lock (as another process has).
        let other = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.path().join("state.lock"))
            .unwrap();
        other.lock().unwrap();
        let started = Instant::now();
        let held = locked_within(dir.path(), Duration::from_millis(200), || 1);
        let waited = started.elapsed();
        assert!(matches!(held, Err(StateFileError::Busy { .. })), "{held:?}");
        assert!(waited >= Duration::from_millis(200), "{waited:?}");
        assert!(waited < Duration::from_secs(2), "{waited:?}");
        // Released meanwhile: taken.
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            other.unlock().unwrap();
        });
        assert_eq!(
            locked_within(dir.path(), Duration::from_secs(5), || 2).unwrap(),
            2
        );
        releaser.join().unwrap();
    }
}
