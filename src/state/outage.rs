//! When to warn about Redis and when to try it again: one warning per outage (the
//! first failed command after Redis answered), one line when it answers again, and
//! while it is down a new try at most once per [`RETRY_AFTER`], the other calls
//! going straight to local state. Pure: the time is given, so the rules are tested
//! without a clock or a server.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// While Redis is down, how long calls go to local state before one tries it again.
pub const RETRY_AFTER: Duration = Duration::from_secs(1);

/// What a caller should say after a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Nothing new (still up, or still down).
    Same,
    /// Redis stopped answering: warn once.
    Down,
    /// Redis answers again: say so.
    Up,
}

/// The outage state of one Redis, shared by every call of the process.
#[derive(Debug, Default)]
pub struct Outage {
    down: AtomicBool,
    /// While down: the time (ms, the caller's clock) before which nobody tries.
    retry_at_ms: AtomicU64,
}

impl Outage {
    /// Whether a call at `now_ms` should try Redis: always while it is up; while it is
    /// down, the first call after each [`RETRY_AFTER`] (that call takes the turn).
    pub fn should_try(&self, now_ms: u64) -> bool {
        if !self.down.load(Ordering::SeqCst) {
            return true;
        }
        let next = now_ms + RETRY_AFTER.as_millis() as u64;
        self.retry_at_ms
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |at| {
                (now_ms >= at).then_some(next)
            })
            .is_ok()
    }

    /// A command failed or timed out at `now_ms`.
    pub fn failed(&self, now_ms: u64) -> Change {
        self.retry_at_ms
            .store(now_ms + RETRY_AFTER.as_millis() as u64, Ordering::SeqCst);
        if self.down.swap(true, Ordering::SeqCst) {
            Change::Same
        } else {
            Change::Down
        }
    }

    /// A command was answered.
    pub fn answered(&self) -> Change {
        if self.down.swap(false, Ordering::SeqCst) {
            Change::Up
        } else {
            Change::Same
        }
    }

    /// Whether Redis is taken as down now.
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_warning_per_outage_and_one_line_when_it_ends() {
        let outage = Outage::default();
        assert!(outage.should_try(0));
        assert_eq!(outage.answered(), Change::Same);
        assert_eq!(outage.failed(10), Change::Down);
        // The requests during the outage say nothing more.
        assert_eq!(outage.failed(20), Change::Same);
        assert_eq!(outage.failed(5_000), Change::Same);
        assert_eq!(outage.answered(), Change::Up);
        assert_eq!(outage.answered(), Change::Same);
        // A second outage warns again.
        assert_eq!(outage.failed(9_000), Change::Down);
    }

    #[test]
    fn while_down_one_call_per_second_tries_again() {
        let outage = Outage::default();
        outage.failed(1_000);
        assert!(outage.is_down());
        assert!(!outage.should_try(1_500), "within a second of the failure");
        assert!(outage.should_try(2_000), "a second later, one call tries");
        assert!(!outage.should_try(2_001), "and the next ones do not");
        assert!(!outage.should_try(2_999));
        assert!(outage.should_try(3_000));
        outage.answered();
        assert!(outage.should_try(3_001), "up again: every call tries");
    }
}
