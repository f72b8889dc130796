//! How a tool call fails without ending the session: every failure (a stage's
//! [`Error`], arguments the schema let through, a panic inside a call) becomes a tool
//! result with `isError: true`, a text naming the input with the CLI's hint, and the
//! CLI's `--json` error object as structured content.
//!
//! Kept apart from the tools so that the server module reads as the three tools and
//! nothing else, and so that the one shape of a failed call is written once.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::MAX_SEARCH_RESULTS;
use crate::error::Error;
use crate::text::sanitize_line;

/// Why a call failed: a message, a hint, and the error's kind and JSON for the
/// structured content.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) kind: &'static str,
    pub(super) message: String,
    pub(super) hint: Option<String>,
}

impl Failure {
    /// Arguments that the schema allows to be wrong (empty text, a bad limit).
    pub(super) fn usage(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Failure {
            kind: "invalid_arguments",
            message: message.into(),
            hint: Some(hint.into()),
        }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        let message = match &error {
            // "invalid configuration: ..." reads wrong for a bad URL argument.
            Error::Config { message, .. } => message.clone(),
            other => other.to_string(),
        };
        Failure {
            kind: error.kind(),
            message,
            hint: error.hint(),
        }
    }
}

/// A panic inside a call, caught at its task's boundary.
fn crashed(error: tokio::task::JoinError) -> Failure {
    Failure {
        kind: "internal",
        message: format!("ground failed internally ({error})"),
        hint: Some("this is a bug in ground: please report it with the input".into()),
    }
}

/// Runs one stage call in its own task so that a panic becomes a [`Failure`]. The
/// task lives no longer than the caller's wait: when the call is dropped (its
/// deadline, the client's cancel), the task is aborted with it, which drops the
/// stage's future and so stops the embedded model's thread. (A dropped `JoinHandle`
/// alone would leave the task running.)
pub(super) async fn isolated<T: Send + 'static>(
    work: impl Future<Output = Result<T, Error>> + Send + 'static,
) -> Result<T, Failure> {
    let mut task = AbortOnDrop(tokio::spawn(work));
    match (&mut task.0).await {
        Ok(result) => result.map_err(Failure::from),
        Err(e) => Err(crashed(e)),
    }
}

/// A spawned task that is aborted when its handle is dropped.
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `limit`: absent means 10; otherwise a whole number from 1 to 10.
pub(super) fn parse_limit(limit: Option<&Value>) -> Result<usize, Failure> {
    match limit {
        None | Some(Value::Null) => Ok(MAX_SEARCH_RESULTS),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=MAX_SEARCH_RESULTS).contains(n))
            .ok_or_else(|| {
                Failure::usage(
                    format!(
                        "limit must be a whole number from 1 to {MAX_SEARCH_RESULTS}, not {}",
                        crate::text::shorten(&value.to_string(), 40)
                    ),
                    format!("leave limit out for {MAX_SEARCH_RESULTS} results"),
                )
            }),
    }
}

/// The tool error result for `problem`: a text naming the input, with the hint, and
/// the CLI's `--json` error object as structured content.
pub(super) fn failure(
    tool: &str,
    input_name: &str,
    input: &str,
    problem: Failure,
) -> CallToolResult {
    let mut text = format!(
        "error: {}\n{input_name}: {}",
        sanitize_line(&problem.message),
        sanitize_line(input)
    );
    if let Some(hint) = &problem.hint {
        text.push_str(&format!("\nhint: {hint}"));
    }
    log_failure(tool, input_name, input, &problem.message);
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({
        "version": crate::render::JSON_VERSION,
        input_name: input,
        "error": {
            "kind": problem.kind,
            "message": problem.message,
            "hint": problem.hint,
        }
    }));
    result
}

/// One line on stderr per failed call, for the client's server log.
pub(super) fn log_failure(tool: &str, input_name: &str, input: &str, message: &str) {
    eprintln!(
        "ground mcp: {tool} failed ({input_name} {:?}): {}",
        crate::text::shorten(input, 120),
        sanitize_line(message).replace('\n', " ")
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_dropped_call_stops_its_task() {
        // R4 finding 3: a deadline around the call left the task (and the model's
        // thread under it) running.
        struct Flag(std::sync::Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Flag {
            fn drop(&mut self) {
                self.0.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = Flag(dropped.clone());
        let work = async move {
            let _flag = flag;
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
            Ok::<(), Error>(())
        };
        let call = tokio::time::timeout(std::time::Duration::from_millis(50), isolated(work));
        assert!(call.await.is_err());
        for _ in 0..100 {
            if dropped.load(std::sync::atomic::Ordering::SeqCst) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the task outlived the call");
    }

    #[test]
    fn limit_defaults_to_ten_and_stays_in_range() {
        assert_eq!(parse_limit(None).unwrap(), 10);
        assert_eq!(parse_limit(Some(&Value::Null)).unwrap(), 10);
        assert_eq!(parse_limit(Some(&json!(3))).unwrap(), 3);
        for bad in [json!(0), json!(11), json!(-1), json!(2.5), json!("5")] {
            let problem = parse_limit(Some(&bad)).unwrap_err();
            assert_eq!(problem.kind, "invalid_arguments");
            assert!(problem.message.contains("1 to 10"), "{}", problem.message);
        }
    }

    #[test]
    fn errors_name_the_input_and_carry_the_hint() {
        let result = failure(
            "web_search",
            "query",
            "tardigrades",
            Error::NoResults {
                query: "tardigrades".into(),
            }
            .into(),
        );
        assert_eq!(result.is_error, Some(true));
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.starts_with("error: the search for \"tardigrades\" returned no results"));
        assert!(text.contains("\nquery: tardigrades\nhint: "), "{text}");
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["query"], "tardigrades");
        assert_eq!(structured["error"]["kind"], "no_results");
    }
}
