//! The line guard in front of `ground mcp`'s JSON-RPC: every line a client sends gets
//! an answer, and none can grow without bound.
//!
//! MCP over stdio is one JSON-RPC message per line. The protocol library answers
//! well-formed requests, but a line that is not JSON got a reply without an `id`, a
//! JSON object that is no request got none at all, and an endless line was read
//! until memory ran out: a client waiting for its reply waited forever. So stdin is
//! read here first, line by line up to [`MAX_LINE_BYTES`]:
//! - a well-formed message (an object with a `method`, or a client's response with
//!   `result`/`error`) goes on to the protocol library unchanged;
//! - a line that is not JSON is answered `-32700 Parse error` (id `null`, as
//!   JSON-RPC 2.0 says when the id cannot be read);
//! - JSON that is not a request is answered `-32600 Invalid Request` with its `id`
//!   when it has one;
//! - a line over the limit is skipped to its end and answered `-32600`, with the
//!   request's `id` when its first KiB names one at the top level (a client waits
//!   for the reply to its own id), else `null`.
//!
//! The session then goes on. Our replies and the library's share one writer task
//! that writes whole lines, so they never interleave.

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream,
};
use tokio::sync::mpsc;

/// Longest JSON-RPC line read from the client: above the largest request the tools
/// accept whole (a `grounded_answer` with a full conversation: 40 turns of 8,000
/// bytes a question and an answer, 640 KB, which JSON may spell twice as long with
/// `\u` escapes), so a conversation within the documented bounds is never refused.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

const _: () = assert!(MAX_LINE_BYTES > 3 * crate::service::conversation::max_conversation_bytes());

/// How much of an over-long line is kept to find its `id`.
const ID_SEARCH_BYTES: usize = 1024;

/// Buffer of the in-memory pipes between the guard and the protocol library.
const PIPE_BYTES: usize = 64 * 1024;

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// A JSON-RPC message: pass it on.
    Forward,
    /// Not one: answer this error reply, and pass nothing on.
    Reply(Value),
    /// An empty line: nothing to do.
    Skip,
}

/// Judges one complete line (without its newline).
pub fn judge(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Verdict::Reply(error_reply(
                Value::Null,
                -32700,
                &format!("Parse error: {e}"),
            ));
        }
    };
    let Some(object) = value.as_object() else {
        return Verdict::Reply(error_reply(
            Value::Null,
            -32600,
            "Invalid Request: a message is one JSON object",
        ));
    };
    let id = match object.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let is_request = object.get("method").is_some_and(Value::is_string);
    let is_response = object.contains_key("result") || object.contains_key("error");
    if is_request || is_response {
        Verdict::Forward
    } else {
        Verdict::Reply(error_reply(
            id,
            -32600,
            "Invalid Request: no \"method\" (requests and notifications need one)",
        ))
    }
}

/// A JSON-RPC 2.0 error reply.
fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// One line read with a bound.
enum Line {
    /// A complete line, without its newline.
    Complete(Vec<u8>),
    /// A line longer than the bound, read to its end and dropped but for its first
    /// [`ID_SEARCH_BYTES`].
    TooLong(Vec<u8>),
}

/// The top-level `id` of a JSON-RPC message from the start of its line (`None` when
/// the start names none, or it is not a string or a number).
fn id_in_head(head: &[u8]) -> Option<Value> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut string_start = 0;
    for (i, &b) in head.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => {
                    in_string = false;
                    let key = &head[string_start..i];
                    let rest = &head[i + 1..];
                    let after = rest.iter().position(|c| !c.is_ascii_whitespace())?;
                    if depth == 1 && key == b"id" && rest[after] == b':' {
                        let value = &rest[after + 1..];
                        let mut values =
                            serde_json::Deserializer::from_slice(value).into_iter::<Value>();
                        return match values.next() {
                            Some(Ok(id @ (Value::String(_) | Value::Number(_)))) => Some(id),
                            _ => None,
                        };
                    }
                }
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                string_start = i + 1;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Reads the next line of at most `max` bytes; `None` at the end of the input. A
/// longer line is consumed to its newline without being kept.
async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut head = Vec::new();
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (true, false) => None,
                (_, true) => Some(Line::TooLong(head)),
                (false, false) => Some(Line::Complete(line)),
            });
        }
        let (chunk, found) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], Some(at)),
            None => (buffer, None),
        };
        if !too_long && line.len() + chunk.len() > max {
            too_long = true;
            line.extend_from_slice(&chunk[..chunk.len().min(ID_SEARCH_BYTES)]);
            line.truncate(ID_SEARCH_BYTES);
            head = std::mem::take(&mut line);
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        let used = found.map_or(buffer.len(), |at| at + 1);
        reader.consume(used);
        if found.is_some() {
            return Ok(Some(if too_long {
                Line::TooLong(head)
            } else {
                Line::Complete(line)
            }));
        }
    }
}

/// Puts the guard between `input`/`output` (stdin and stdout) and the protocol
/// library, and returns the reader and writer to give the library in their place.
/// The guard's tasks end when the input ends and the library closes its side.
pub fn guard<I, O>(input: I, output: O) -> (DuplexStream, DuplexStream)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_library, library_reads) = tokio::io::duplex(PIPE_BYTES);
    let (library_writes, from_library) = tokio::io::duplex(PIPE_BYTES);
    let (lines_out, mut lines) = mpsc::channel::<String>(64);

    // The one writer: whole lines from the library and from the guard.
    tokio::spawn(async move {
        let mut output = output;
        while let Some(line) = lines.recv().await {
            if output.write_all(line.as_bytes()).await.is_err()
                || output.write_all(b"\n").await.is_err()
                || output.flush().await.is_err()
            {
                break;
            }
        }
    });

    // The library's replies, line by line, into the writer.
    let replies = lines_out.clone();
    tokio::spawn(async move {
        let mut from_library = BufReader::new(from_library).lines();
        while let Ok(Some(line)) = from_library.next_line().await {
            if replies.send(line).await.is_err() {
                break;
            }
        }
    });

    // The client's lines: judged, then passed on or answered here.
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        while let Ok(Some(line)) = next_line(&mut input, MAX_LINE_BYTES).await {
            let verdict = match line {
                Line::Complete(bytes) => match judge(&bytes) {
                    Verdict::Forward => {
                        let sent = to_library
                            .write_all(&bytes)
                            .await
                            .and(to_library.write_all(b"\n").await);
                        if sent.is_err() {
                            break;
                        }
                        continue;
                    }
                    other => other,
                },
                Line::TooLong(head) => Verdict::Reply(error_reply(
                    id_in_head(&head).unwrap_or(Value::Null),
                    -32600,
                    &format!(
                        "Invalid Request: the line is longer than {} KiB",
                        MAX_LINE_BYTES / 1024
                    ),
                )),
            };
            if let Verdict::Reply(reply) = verdict
                && lines_out.send(reply.to_string()).await.is_err()
            {
                break;
            }
        }
        // End of input: closing our end tells the library the session is over.
        let _ = to_library.shutdown().await;
    });

    (library_reads, library_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_judged() {
        assert_eq!(judge(b"  "), Verdict::Skip);
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Forward
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Verdict::Forward
        );
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Verdict::Forward
        );
        let Verdict::Reply(parse) = judge(b"not json") else {
            panic!()
        };
        assert_eq!(parse["error"]["code"], -32700);
        assert_eq!(parse["id"], Value::Null);
        let Verdict::Reply(invalid) = judge(br#"{"jsonrpc":"2.0","id":8}"#) else {
            panic!()
        };
        assert_eq!(invalid["error"]["code"], -32600);
        assert_eq!(invalid["id"], 8);
        let Verdict::Reply(array) = judge(b"[1,2]") else {
            panic!()
        };
        assert_eq!(array["id"], Value::Null);
    }

    #[tokio::test]
    async fn long_lines_are_dropped_to_their_end_and_reading_goes_on() {
        let mut input = format!("{}\n", "x".repeat(100)).into_bytes();
        input.extend_from_slice(b"short\nlast");
        let mut reader = BufReader::with_capacity(16, &input[..]);
        assert!(matches!(
            next_line(&mut reader, 50).await.unwrap(),
            Some(Line::TooLong(_))
        ));
        assert!(
            matches!(next_line(&mut reader, 50).await.unwrap(), Some(Line::Complete(l)) if l == b"short")
        );
        assert!(
            matches!(next_line(&mut reader, 50).await.unwrap(), Some(Line::Complete(l)) if l == b"last")
        );
        assert!(next_line(&mut reader, 50).await.unwrap().is_none());
    }

    #[test]
    fn an_over_long_lines_id_is_read_from_its_start() {
        let line = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"question":"xxxx"#;
        assert_eq!(id_in_head(line), Some(json!(42)));
        let line = br#"{"jsonrpc":"2.0","method":"tools/call","id":"a-7","params":{"#;
        assert_eq!(id_in_head(line), Some(json!("a-7")));
        // An "id" inside the arguments is not the request's.
        let line = br#"{"jsonrpc":"2.0","params":{"id":5,"question":"xxxx"#;
        assert_eq!(id_in_head(line), None);
        let line = br#"{"jsonrpc":"2.0","method":"x","params":{"q":""id":9"#;
        assert_eq!(id_in_head(line), None);
    }
}
