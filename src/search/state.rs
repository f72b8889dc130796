//! The search stage's small state files in the user's state dir
//! (`$XDG_STATE_HOME/ground`): the rate limit's recent searches, the monthly usage
//! counts and the opt-in search log.
//!
//! Every `ground` process of the user shares them. A read-modify-write happens under
//! an exclusive lock on `state.lock` (std's `File::lock`), and files are written to a
//! temp file and renamed over the old one, so a reader never sees half a file. A state
//! dir that cannot be created, locked, read or written never stops a search: the
//! callers treat `None` as "no state" and go on.

use std::fs::{self, OpenOptions};
use std::path::Path;

/// Runs `f` while holding the exclusive lock of `dir`'s `state.lock`; `None` when the
/// dir or the lock cannot be had.
pub fn locked<T>(dir: &Path, f: impl FnOnce() -> T) -> Option<T> {
    fs::create_dir_all(dir).ok()?;
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("state.lock"))
        .ok()?;
    lock.lock().ok()?;
    let value = f();
    let _ = lock.unlock();
    Some(value)
}

pub use crate::files::unix_ms as now_ms;

/// The calendar month (UTC) of `unix_ms`, as `YYYY-MM`.
pub fn month_of(unix_ms: u64) -> String {
    let (year, month, _) = civil_from_days((unix_ms / 86_400_000) as i64);
    format!("{year:04}-{month:02}")
}

/// The UTC time of `unix_ms` as RFC 3339 (`2026-11-23T16:05:09Z`).
pub fn rfc3339(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

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
        assert_eq!(locked(&file.join("sub"), || 1), None);
        assert_eq!(locked(dir.path(), || 1), Some(1));
    }
}
