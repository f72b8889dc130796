//! How a request to the service fails without ending the face that serves it: every
//! failure (a stage's [`Error`], arguments the protocol let through, a spent budget,
//! a panic inside a call) becomes a [`Failure`] value that each face turns into its
//! own protocol's error (an MCP tool error, an OpenAI or Gemini error object).
//!
//! Written once here so that every face says the same words, with the CLI's hint,
//! and classifies the same failure the same way (by the error's type, through its
//! exit code, never by its text).

use serde_json::{Value, json};

use crate::error::{Error, exit};

/// Why a call failed: a message, a hint, the error's kind (as `--json` names it) and
/// its class (the exit code the CLI would end with).
#[derive(Debug, Clone)]
pub struct Failure {
    /// The error's kind, as `--json`'s `error.kind` names it (`no_results`, ...).
    pub kind: &'static str,
    /// What failed, one line.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
    /// The CLI's exit code for this failure ([`crate::error::exit`]): how a face
    /// classifies it (an HTTP status, a retry rule).
    pub exit_code: i32,
    /// The run's deadline passed (`--timeout`): a gateway time-out, not a failure
    /// of a stage.
    pub deadline: bool,
}

impl Failure {
    /// Arguments that the protocol allows to be wrong (empty text, a bad limit).
    pub fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind: "invalid_arguments",
            message: message.into(),
            hint: Some(hint.into()),
            exit_code: exit::USAGE,
            deadline: false,
        }
    }

    /// The client's search budget is spent: `left` of `total` searches remain and the
    /// call needs `needed`.
    pub fn budget_spent(left: usize, total: usize, needed: usize) -> Self {
        Failure {
            kind: "search_budget_spent",
            message: format!(
                "this session's search budget is spent: {left} of {total} searches left, {needed} needed"
            ),
            hint: Some(
                "start a new MCP session, or raise the budget with --session-searches / [run] session_searches".into(),
            ),
            exit_code: exit::RATE_LIMITED,
            deadline: false,
        }
    }

    /// The error object every face carries in its structured reply:
    /// `{kind, message, hint}`, the CLI's `--json` `error`.
    pub fn json(&self) -> Value {
        json!({
            "kind": self.kind,
            "message": self.message,
            "hint": self.hint,
        })
    }

    /// The failure for a person: `error: ...`, the input it was about, and the
    /// `hint:` line, every part sanitised.
    pub fn text(&self, input_name: &str, input: &str) -> String {
        crate::error::report_about(
            &self.message,
            Some((input_name, input)),
            self.hint.as_deref(),
        )
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let message = match &error {
            // "invalid configuration: ..." reads wrong for a bad argument.
            Error::Config { message, .. } => message.clone(),
            other => other.to_string(),
        };
        Failure {
            kind: error.kind(),
            message,
            hint: error.hint(),
            exit_code: error.exit_code(),
            deadline: matches!(error, Error::Deadline { .. }),
        }
    }
}

/// A panic inside a call, caught at its task's boundary.
fn crashed(error: tokio::task::JoinError) -> Failure {
    Failure {
        kind: "internal",
        message: format!("ground failed internally ({error})"),
        hint: Some("this is a bug in ground: please report it with the input".into()),
        exit_code: exit::INTERNAL,
        deadline: false,
    }
}

/// Aborts its task when dropped: a call whose caller stopped waiting (a client that
/// left, a deadline around the call) stops its searches, fetches and generation
/// instead of running on unseen.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs one stage call in its own task so that a panic becomes a [`Failure`]; the
/// task is aborted when the returned future is dropped.
pub async fn isolated<T: Send + 'static>(
    work: impl Future<Output = Result<T, Error>> + Send + 'static,
) -> Result<T, Failure> {
    let mut task = AbortOnDrop(tokio::spawn(work));
    match (&mut task.0).await {
        Ok(result) => result.map_err(Failure::from),
        Err(e) => Err(crashed(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn errors_carry_their_kind_class_and_hint() {
        let failure = Failure::from(Error::NoResults {
            query: "tardigrades".into(),
        });
        assert_eq!(failure.kind, "no_results");
        assert_eq!(failure.exit_code, exit::NO_SOURCES);
        assert!(!failure.deadline);
        let text = failure.text("query", "tardigrades");
        assert!(text.starts_with("error: the search for \"tardigrades\" returned no results"));
        assert!(text.contains("\nquery: tardigrades\nhint: "), "{text}");
        assert_eq!(failure.json()["kind"], "no_results");
    }

    #[tokio::test]
    async fn a_dropped_call_stops_its_task() {
        let finished = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&finished);
        let call = isolated(async move {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            flag.store(true, Ordering::SeqCst);
            Ok(())
        });
        // The caller gives up after 50 ms: the task must not run on to its end.
        let _ = tokio::time::timeout(std::time::Duration::from_millis(50), call).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert!(
            !finished.load(Ordering::SeqCst),
            "the task ran on after its caller left"
        );
    }

    #[tokio::test]
    async fn a_panic_is_a_failure_not_a_crash() {
        let failure = isolated(async { panic!("boom") as Result<(), Error> })
            .await
            .unwrap_err();
        assert_eq!(failure.kind, "internal");
    }
}
