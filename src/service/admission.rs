//! The bound on a process's runs: `concurrency` at once and `queue` more waiting,
//! beyond that refused (`ground serve`'s 429), every place given back however its
//! request ends.
//!
//! A run holds a place among the *admitted* (running or waiting) for its whole life.
//! Whether it also holds one of the `concurrency` *running* places depends on who
//! keeps the model's own queue:
//!
//! - A server model (Ollama, an OpenAI-compatible server): the running place is the
//!   only bound on calls to it, so a run waits for one before it starts, and holds it
//!   to its end ([`Places::take`] with `whole_run`).
//! - The embedded engine: it writes `parallel` replies at once (the service sets it to
//!   the concurrency) and keeps the rest in its own queue, in arrival order. So an
//!   admitted run starts at once: its searches and page reads go ahead while earlier
//!   runs are answered, and only its model calls wait, in the engine's queue. The
//!   admitted count alone bounds it (`concurrency + queue`), as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The places of one process's runs: at most `concurrency` running, `queue` more
/// admitted and waiting.
#[derive(Debug)]
pub struct Places {
    /// Runs that may go at once (with a server model).
    running: Arc<Semaphore>,
    /// Runs admitted (running or waiting), and the most allowed.
    admitted: Arc<AtomicUsize>,
    most: usize,
}

/// A run's place: held while it runs; dropping it lets the next one in.
#[derive(Debug)]
pub struct Admission {
    /// The running place, when the run holds one for its whole life (a server model).
    _permit: Option<OwnedSemaphorePermit>,
    _counted: Counted,
}

/// One request counted among those admitted (running or waiting for a place). It is
/// a guard so that the count is given back however the request ends: when its run
/// finishes, and also when the request's future is dropped while it still waits (in
/// this queue or in the engine's: a client that leaves must not keep its place for
/// good).
#[derive(Debug)]
struct Counted {
    admitted: Arc<AtomicUsize>,
}

impl Counted {
    /// Counts one more request in, or `None` when `most` are already counted.
    fn take(admitted: &Arc<AtomicUsize>, most: usize) -> Option<Counted> {
        admitted
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |now| {
                (now < most).then_some(now + 1)
            })
            .ok()
            .map(|_| Counted {
                admitted: Arc::clone(admitted),
            })
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.admitted.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Places {
    /// Places for `concurrency` runs at once (at least one) and `queue` more waiting.
    pub fn new(concurrency: usize, queue: usize) -> Self {
        let concurrency = concurrency.clamp(1, Semaphore::MAX_PERMITS);
        Places {
            running: Arc::new(Semaphore::new(concurrency)),
            admitted: Arc::new(AtomicUsize::new(0)),
            most: concurrency.saturating_add(queue),
        }
    }

    /// A place for one run, or `None` when every place is taken (the face says
    /// "busy, retry"). With `whole_run` (a server model) the run also waits for one
    /// of the running places and holds it to its end; without (the embedded engine,
    /// whose own queue orders the model calls) it is admitted at once.
    pub async fn take(&self, whole_run: bool) -> Option<Admission> {
        // Counted before waiting, so the queue's bound holds; the guard gives the
        // place back if this future is dropped while it waits.
        let counted = Counted::take(&self.admitted, self.most)?;
        let permit = match whole_run {
            true => Some(Arc::clone(&self.running).acquire_owned().await.ok()?),
            false => None,
        };
        Some(Admission {
            _permit: permit,
            _counted: counted,
        })
    }

    /// Requests admitted now: running or waiting (for tests and logs).
    pub fn admitted(&self) -> usize {
        self.admitted.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_request_that_leaves_the_queue_gives_its_place_back() {
        let places = Places::new(1, 2);
        let running = places.take(true).await.expect("the first request runs");
        // Two requests wait in the queue, then their clients leave (the futures are
        // dropped while still waiting).
        for _ in 0..2 {
            let waited = tokio::time::timeout(Duration::from_millis(20), places.take(true)).await;
            assert!(waited.is_err(), "with one place taken, a request waits");
        }
        assert_eq!(places.admitted(), 1, "the two that left are counted out");
        // The queue has room again: a new request waits (it is not refused), and
        // runs once the running one ends.
        let next = places.take(true);
        tokio::pin!(next);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), &mut next)
                .await
                .is_err()
        );
        drop(running);
        let admitted = tokio::time::timeout(Duration::from_secs(10), next)
            .await
            .expect("admitted once the place is free");
        assert!(
            admitted.is_some(),
            "a request after two that left was refused"
        );
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_a_finished_run_counts_out() {
        let places = Places::new(1, 1);
        let running = places.take(true).await.unwrap();
        let queued = places.take(true);
        tokio::pin!(queued);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), &mut queued)
                .await
                .is_err()
        );
        assert!(
            places.take(true).await.is_none(),
            "beyond the queue: refused"
        );
        drop(running);
        let second = tokio::time::timeout(Duration::from_secs(10), queued)
            .await
            .unwrap()
            .unwrap();
        drop(second);
        assert_eq!(places.admitted(), 0);
    }

    #[tokio::test]
    async fn runs_whose_model_keeps_its_own_queue_start_at_once_within_the_bound() {
        let places = Places::new(1, 2);
        // A run of a server model holds the one running place...
        let server_run = places.take(true).await.unwrap();
        // ...and the engine's runs are still admitted at once, up to concurrency +
        // queue in all, whatever holds the running places.
        let mut engine_runs = Vec::new();
        for _ in 0..2 {
            let taken = tokio::time::timeout(Duration::from_millis(200), places.take(false))
                .await
                .expect("an engine's run waits for no running place");
            engine_runs.push(taken.expect("within the bound"));
        }
        assert!(
            places.take(false).await.is_none(),
            "beyond the bound: refused"
        );
        assert_eq!(places.admitted(), 3);
        // A place given back (a run ended, or its client left while its model call
        // waited in the engine's queue) admits the next.
        drop(engine_runs.pop());
        assert!(places.take(false).await.is_some());
        drop(server_run);
        drop(engine_runs);
        assert_eq!(places.admitted(), 0);
    }
}
