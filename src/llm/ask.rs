//! One model call with its single retry: send the request, parse the answer, and when
//! the reply is cut off, invalid or uncited, ask once more saying what went wrong,
//! with tighter schema bounds.
//!
//! The reply is streamed: [`ask_streaming`] reports each attempt, each piece of text
//! and each statement the moment its JSON object is complete (found by
//! [`StatementStream`]), so a caller can show it before the reply ends. The whole
//! reply, parsed once it is complete, stays the source of truth.

use std::time::Duration;

use serde_json::{Value, json};

use crate::answer::stream::StatementStream;
use crate::answer::{ModelAnswer, ModelStatement, parse_answer, statement_from_value};
use crate::error::{Error, ReplyProblem};
use crate::text::normalise;
use crate::text::{sanitize_line, shorten};

use super::client::{ChatBackend, MAX_REPLY_BYTES, ModelReply, ModelRequest, Prefill};
use super::prompt::MAX_STATEMENTS;

/// One model call's outcome across retries.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The parsed answer.
    pub answer: ModelAnswer,
    /// The last reply (token counts, done reason).
    pub reply: ModelReply,
    /// Calls made (1 or 2).
    pub attempts: u32,
    /// Time spent reading the prompt, over all calls (backends that measure it).
    pub prefill: Option<Duration>,
    /// Time spent writing replies, over all calls (backends that measure it).
    pub generation: Option<Duration>,
}

/// What [`ask_streaming`] reports while the model writes.
#[derive(Debug)]
pub enum AskEvent<'a> {
    /// An attempt begins: 1, or 2 for the retry. Nothing of it has arrived yet.
    Attempt(u32),
    /// How far the model has read the prompt (backends that know: the embedded
    /// model); comes before the attempt's text.
    Prefill(Prefill),
    /// The next piece of the reply text (about one token).
    Text(&'a str),
    /// A statement of the reply is complete.
    Statement {
        /// The attempt it belongs to.
        attempt: u32,
        /// Its place in this attempt's answer (statements repeated or with empty text
        /// are skipped, as the whole-reply parse drops them).
        index: usize,
        /// The statement as the model wrote it, not yet checked.
        statement: ModelStatement,
    },
}

/// [`ask_streaming`] with nobody watching.
pub async fn ask(client: &impl ChatBackend, request: &ModelRequest) -> Result<Asked, Error> {
    ask_streaming(client, request, &mut |_| {}).await
}

/// Sends `request` and parses the answer, retrying once when the reply is cut off at
/// the token cap, is not valid JSON, or answers without citing anything. The retry is
/// not the same request again (at temperature 0 that gives the same reply): it says
/// what went wrong and tightens the schema's bounds. `watch` hears every
/// [`AskEvent`] as the reply streams in; the returned answer is parsed from the whole
/// reply.
pub async fn ask_streaming(
    client: &impl ChatBackend,
    request: &ModelRequest,
    watch: &mut (dyn FnMut(AskEvent<'_>) + Send),
) -> Result<Asked, Error> {
    let mut current = request.clone();
    let mut last_problem: Option<Error> = None;
    let (mut prefill, mut generation) = (None, None);
    // Text and prefill reports come through two callbacks, one at a time: both reach
    // `watch` through this lock (never contended).
    let shared = std::sync::Mutex::new(watch);
    let watch = |event: AskEvent<'_>| {
        if let Ok(mut watch) = shared.lock() {
            watch(event);
        }
    };
    for attempt in 1..=2u32 {
        watch(AskEvent::Attempt(attempt));
        let mut stream = StatementStream::new(MAX_REPLY_BYTES);
        // At most the schema's bound of statements is shown, as the whole-reply parse
        // keeps: a reply of thousands prints eight.
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut on_text = |text: &str| {
            watch(AskEvent::Text(text));
            for value in stream.feed(text) {
                if seen.len() >= crate::answer::MAX_STATEMENTS {
                    break;
                }
                let Some(statement) = statement_from_value(value) else {
                    continue;
                };
                if !seen.insert(normalise(&statement.text)) {
                    continue; // said twice: the whole-reply parse keeps the first saying too
                }
                watch(AskEvent::Statement {
                    attempt,
                    index: seen.len() - 1,
                    statement,
                });
            }
        };
        let mut on_prefill = |prefill: Prefill| watch(AskEvent::Prefill(prefill));
        let reply = client
            .chat_stream_reading(&current, &mut on_text, &mut on_prefill)
            .await?;
        let add = |sum: Option<Duration>, more: Option<Duration>| match (sum, more) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        prefill = add(prefill, reply.prefill);
        generation = add(generation, reply.generation);
        let cut_off = reply.done_reason.as_deref() == Some("length");
        // Parsing is CPU work on up to MAX_REPLY_BYTES of text: off the runtime, so
        // deadlines and Ctrl-C keep firing while it runs (it is linear, so it is short).
        let content = reply.content.clone();
        let parsed = tokio::task::spawn_blocking(move || parse_answer(&content))
            .await
            .unwrap_or_else(|_| Err("the reply could not be parsed".to_string()));
        let problem = match &parsed {
            Ok(_) if cut_off => format!(
                "the reply was cut off at the {}-token output cap",
                request.max_answer_tokens
            ),
            Ok(answer) => {
                let cites_something = answer.statements.iter().any(|s| !s.citations.is_empty());
                if answer.answerable && !cites_something && attempt == 1 {
                    current = retry_request(
                        request,
                        "cited no source: every statement needs a citation with a quote copied from that source",
                    );
                    continue;
                }
                let answer = parsed.expect("matched Ok");
                return Ok(Asked {
                    answer,
                    reply,
                    attempts: attempt,
                    prefill,
                    generation,
                });
            }
            Err(_) if cut_off => format!(
                "the reply was cut off at the {}-token output cap",
                request.max_answer_tokens
            ),
            Err(e) => e.clone(),
        };
        let note = if cut_off {
            "was cut off at the length limit"
        } else {
            "was not valid JSON"
        };
        current = retry_request(
            request,
            &format!("{note}: answer with fewer, shorter statements and quotes, in valid JSON"),
        );
        last_problem = Some(Error::ModelBadReply {
            attempts: attempt,
            detail: problem,
            raw_start: sanitize_line(&shorten(&reply.content, 120)),
            problem: if cut_off {
                ReplyProblem::CutOff
            } else {
                ReplyProblem::Invalid
            },
        });
    }
    Err(last_problem.unwrap_or(Error::ModelBadReply {
        attempts: 2,
        detail: "no usable reply".into(),
        raw_start: String::new(),
        problem: ReplyProblem::Invalid,
    }))
}

/// The second attempt: the same sources and question, a note on what was wrong with
/// the first reply, and tighter schema bounds (half the statements, one citation
/// each, shorter strings).
fn retry_request(request: &ModelRequest, problem: &str) -> ModelRequest {
    let mut retry = request.clone();
    retry.user = format!("{}\n\nYour previous reply {problem}.", request.user);
    let statements = &mut retry.schema["properties"]["statements"];
    let most = statements["maxItems"].as_u64().unwrap_or(MAX_STATEMENTS);
    statements["maxItems"] = json!((most / 2).max(1));
    let item = &mut statements["items"]["properties"];
    item["citations"]["maxItems"] = json!(1);
    let shorter = |v: &mut Value, cap: u64| {
        let now = v["maxLength"].as_u64().unwrap_or(cap);
        v["maxLength"] = json!(now.min(cap));
    };
    shorter(&mut item["text"], 200);
    shorter(&mut item["citations"]["items"]["properties"]["quote"], 160);
    retry
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::prompt::{AnswerBounds, answer_schema};

    #[test]
    fn bounds_fit_the_output_cap() {
        let small = AnswerBounds::for_tokens(512);
        assert_eq!(
            (
                small.statements,
                small.citations,
                small.statement_chars,
                small.quote_chars
            ),
            (3, 1, 200, 160)
        );
        for tokens in [64, 256, 512, 1024, 2048, 8192] {
            let b = AnswerBounds::for_tokens(tokens);
            let worst = b.statements
                * (b.statement_chars + b.citations * (b.quote_chars + 40) + 40)
                + b.unknowns * (b.unknown_chars + 10)
                + 60;
            assert!(
                worst <= u64::from(tokens) * 7 / 2 || b.statements == 1,
                "{tokens}: {b:?}"
            );
        }
        let schema = answer_schema(3, small);
        let retry = retry_request(
            &ModelRequest {
                system: String::new(),
                user: "q".into(),
                schema,
                context_tokens: 2048,
                max_answer_tokens: 512,
            },
            "was cut off",
        );
        assert_eq!(retry.schema["properties"]["statements"]["maxItems"], 1);
        assert!(retry.user.ends_with("Your previous reply was cut off."));
    }
}
