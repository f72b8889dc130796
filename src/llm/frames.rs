//! Framing of streamed chat-completion HTTP bodies into model events.
//!
//! Two wire formats are supported, both fed with raw body bytes exactly as
//! they come off the connection (a chunk may end anywhere, even inside a
//! UTF-8 character or a `\r\n` pair):
//!
//! * [`OllamaFrames`]: Ollama `/api/chat` with `"stream": true` sends NDJSON,
//!   one JSON object per line. Ordinary lines carry `message.content`; the
//!   last line has `"done": true` plus `done_reason`, `prompt_eval_count` and
//!   `eval_count`. A failure during the stream is a line `{"error": "..."}`
//!   inside a 200 response.
//! * [`SseFrames`]: OpenAI-compatible `/v1/chat/completions` with
//!   `"stream": true` sends Server-Sent Events: `data: {json}` lines
//!   separated by blank lines, ending with `data: [DONE]`. Each JSON chunk
//!   carries `choices[0].delta.content`; the last content chunk has a
//!   `finish_reason`; with `stream_options: {"include_usage": true}` a later
//!   chunk with `"choices": []` carries `usage`. llama.cpp may send
//!   `data: {"error": {"message": "...", "type": "..."}}`.
//!
//! Both produce the same [`FrameEvent`]s: any number of
//! [`FrameEvent::Delta`] followed by exactly one terminal event,
//! [`FrameEvent::Done`] (carrying the finish reason and token counts,
//! whichever lines they came on) or [`FrameEvent::Error`]. Input after the
//! terminal event is ignored.
//!
//! # Design
//!
//! * A shared line splitter buffers bytes until a `\n`, strips one trailing
//!   `\r`, checks UTF-8 per complete line (so split characters are never a
//!   problem) and refuses any line longer than `max_line_bytes`, so memory
//!   stays bounded whatever the server sends. Each byte is scanned for the
//!   newline once.
//! * Each JSON line is parsed into a [`serde_json::Value`] first (so a syntax
//!   error and a wrong shape are told apart), then into a small private
//!   struct whose fields are all optional; unknown fields are ignored.
//! * A line that is not valid JSON, is not a JSON object, or is an object of
//!   the wrong shape is a [`FrameError`]. So is a body that ends before the
//!   terminal marker (a cut connection must not look like a short answer).
//! * After a `push` or `finish` returned an error, the framer is failed:
//!   every later call returns the same error. Events decoded earlier in the
//!   same call are dropped; the reply as a whole should be treated as failed.
//!
//! # Detecting a server that ignored `"stream": true`
//!
//! Such a server sends one ordinary JSON body. The primary signal is the
//! response's `Content-Type` ([`body_kind_from_content_type`]): Ollama sends
//! `application/x-ndjson` when streaming and `application/json` otherwise;
//! OpenAI-compatible servers send `text/event-stream` when streaming. Only
//! when the content type is missing or unknown should the caller fall back
//! to [`sniff_body_kind`] on the first bytes of the body.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// One event decoded from a streamed reply body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameEvent {
    /// The next piece of the assistant's reply text. Never empty.
    Delta(String),
    /// The reply ended normally. Always the last event.
    Done(DoneInfo),
    /// The server reported a failure inside the stream (with HTTP status
    /// 200). Always the last event. Holds the server's message.
    Error(String),
}

/// What the server said about the end of a reply. Every field is optional
/// because servers differ in what they send.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DoneInfo {
    /// Why generation stopped, as sent: usually `"stop"`, or `"length"` when
    /// the output token limit was hit (Ollama `done_reason`, OpenAI
    /// `finish_reason`).
    pub reason: Option<String>,
    /// Tokens in the prompt (Ollama `prompt_eval_count`, OpenAI
    /// `usage.prompt_tokens`).
    pub prompt_tokens: Option<u64>,
    /// Tokens generated (Ollama `eval_count`, OpenAI
    /// `usage.completion_tokens`).
    pub output_tokens: Option<u64>,
}

/// Why a streamed body could not be framed. Line numbers count from 1 and
/// include blank lines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A line (or, for SSE, the joined `data:` lines of one event) is longer
    /// than the configured `max_line_bytes`.
    #[error("stream line {line} is longer than {limit} bytes")]
    LineTooLong {
        /// Number of the offending line.
        line: u64,
        /// The configured limit, in bytes.
        limit: usize,
    },
    /// A line is not valid UTF-8.
    #[error("stream line {line} is not valid UTF-8")]
    InvalidUtf8 {
        /// Number of the offending line.
        line: u64,
    },
    /// A line (or SSE event data) is not valid JSON.
    #[error("stream line {line} is not valid JSON ({detail}): {start:?}")]
    InvalidJson {
        /// Number of the offending line (for SSE: the event's first `data:`
        /// line).
        line: u64,
        /// The parser's message.
        detail: String,
        /// The start of the offending text, for the error message.
        start: String,
    },
    /// A line is valid JSON but not an object of the expected shape.
    #[error("stream line {line} has an unexpected shape: {detail}")]
    UnexpectedShape {
        /// Number of the offending line (for SSE: the event's first `data:`
        /// line).
        line: u64,
        /// What is wrong.
        detail: String,
    },
    /// The body ended before the end-of-reply marker (`"done": true` for
    /// Ollama; `data: [DONE]` or a `finish_reason` for SSE) or an error.
    #[error("the stream ended before the end-of-reply marker")]
    UnexpectedEnd,
}

/// How a response body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// One JSON object per line (Ollama streaming): use [`OllamaFrames`].
    Ndjson,
    /// Server-Sent Events (OpenAI-compatible streaming): use [`SseFrames`].
    EventStream,
    /// One ordinary JSON document: the server ignored `"stream": true` (or
    /// reports an error); parse the whole body as a non-streamed reply.
    SingleJson,
}

/// Maps a `Content-Type` header value to a [`BodyKind`]; this is the
/// primary signal. Parameters (`; charset=utf-8`) and case are ignored.
/// Returns `None` for any other media type, in which case the caller may
/// fall back to [`sniff_body_kind`].
pub fn body_kind_from_content_type(content_type: &str) -> Option<BodyKind> {
    let media_type = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match media_type.as_str() {
        "application/x-ndjson" | "application/ndjson" => Some(BodyKind::Ndjson),
        "text/event-stream" => Some(BodyKind::EventStream),
        "application/json" => Some(BodyKind::SingleJson),
        _ => None,
    }
}

/// The result of [`sniff_body_kind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    /// The body's framing is recognised.
    Kind(BodyKind),
    /// Not enough bytes to decide: read more and call again with the longer
    /// prefix (or with `body_complete` set once the body has ended).
    NeedMoreBytes,
    /// Neither framing nor JSON (e.g. an HTML error page).
    Unrecognised,
}

/// Fallback guess of a body's framing from its first bytes, for when the
/// `Content-Type` is missing or unknown (see the module documentation).
///
/// `first_bytes` is the body received so far; `body_complete` says it is
/// the whole body. After an optional UTF-8 byte order mark and whitespace:
///
/// * an SSE field (`data:`, `event:`, `id:`, `retry:`) or comment (`:`)
///   means [`BodyKind::EventStream`];
/// * a `{` is judged by the first line: an object with `"done": false` is an
///   Ollama stream ([`BodyKind::Ndjson`]); any other complete object (e.g.
///   `{"message": .., "done": true}` or `{"choices": [{"message": ..}]}` or
///   `{"error": ..}`) is [`BodyKind::SingleJson`], and so is a first line
///   that is the unfinished start of a multi-line (pretty-printed) object.
///   A bare `chat.completion.chunk` object without `data:` is
///   [`Sniffed::Unrecognised`]. Until the first line is complete (a `\n`, or
///   the end of the body) the answer is [`Sniffed::NeedMoreBytes`], so a
///   non-streamed body without any newline is only recognised once
///   `body_complete` is true.
///
/// A one-line Ollama stream that is already finished (`"done": true`) is
/// reported as `SingleJson`; parsing it as a single body gives the same
/// content.
pub fn sniff_body_kind(first_bytes: &[u8], body_complete: bool) -> Sniffed {
    let bytes = first_bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(first_bytes);
    let Some(start) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
        return if body_complete {
            Sniffed::Unrecognised
        } else {
            Sniffed::NeedMoreBytes
        };
    };
    let bytes = &bytes[start..];
    if bytes[0] == b'{' {
        return sniff_json_start(bytes, body_complete);
    }
    if bytes[0] == b':' {
        return Sniffed::Kind(BodyKind::EventStream);
    }
    for field in [&b"data:"[..], b"event:", b"id:", b"retry:"] {
        if bytes.starts_with(field) {
            return Sniffed::Kind(BodyKind::EventStream);
        }
        if !body_complete && field.starts_with(bytes) {
            return Sniffed::NeedMoreBytes;
        }
    }
    Sniffed::Unrecognised
}

/// [`sniff_body_kind`] for a body starting with `{`.
fn sniff_json_start(bytes: &[u8], body_complete: bool) -> Sniffed {
    let newline = bytes.iter().position(|&b| b == b'\n');
    let first_line = match newline {
        Some(end) => &bytes[..end],
        None if body_complete => bytes,
        None => return Sniffed::NeedMoreBytes,
    };
    match serde_json::from_slice::<Value>(first_line) {
        Ok(Value::Object(object)) => {
            if object.get("done") == Some(&Value::Bool(false)) {
                Sniffed::Kind(BodyKind::Ndjson)
            } else if object.get("object").and_then(Value::as_str) == Some("chat.completion.chunk")
            {
                Sniffed::Unrecognised
            } else {
                Sniffed::Kind(BodyKind::SingleJson)
            }
        }
        Ok(_) => Sniffed::Unrecognised,
        // The object continues on the next lines: a pretty-printed document.
        Err(error) if error.is_eof() && newline.is_some() => Sniffed::Kind(BodyKind::SingleJson),
        Err(_) => Sniffed::Unrecognised,
    }
}

/// Splits raw bytes into bounded, UTF-8 checked lines.
#[derive(Debug)]
struct LineSplitter {
    /// Bytes of the current, unfinished line.
    partial: Vec<u8>,
    max_line_bytes: usize,
    /// Number of lines completed so far.
    lines_done: u64,
}

impl LineSplitter {
    fn new(max_line_bytes: usize) -> Self {
        LineSplitter {
            partial: Vec::new(),
            max_line_bytes,
            lines_done: 0,
        }
    }

    /// Returns the next complete line (number and text, without its `\n` or
    /// `\r\n`) taken from `input`, advancing `input` past it. If `input` has
    /// no newline, buffers all of it and returns `None`.
    fn next_line(&mut self, input: &mut &[u8]) -> Result<Option<(u64, String)>, FrameError> {
        match input.iter().position(|&b| b == b'\n') {
            Some(end) => {
                self.append(&input[..end])?;
                *input = &input[end + 1..];
                self.complete_line().map(Some)
            }
            None => {
                self.append(input)?;
                *input = &[];
                Ok(None)
            }
        }
    }

    /// Returns the unterminated last line, if any, at the end of the body.
    fn finish(&mut self) -> Result<Option<(u64, String)>, FrameError> {
        if self.partial.is_empty() {
            Ok(None)
        } else {
            self.complete_line().map(Some)
        }
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), FrameError> {
        // One byte of slack for a `\r` that will be stripped.
        if self.partial.len() + bytes.len() > self.max_line_bytes.saturating_add(1) {
            return Err(FrameError::LineTooLong {
                line: self.lines_done + 1,
                limit: self.max_line_bytes,
            });
        }
        self.partial.extend_from_slice(bytes);
        Ok(())
    }

    fn complete_line(&mut self) -> Result<(u64, String), FrameError> {
        self.lines_done += 1;
        let line = self.lines_done;
        let mut bytes = std::mem::take(&mut self.partial);
        if bytes.last() == Some(&b'\r') {
            bytes.pop();
        }
        if bytes.len() > self.max_line_bytes {
            return Err(FrameError::LineTooLong {
                line,
                limit: self.max_line_bytes,
            });
        }
        match String::from_utf8(bytes) {
            Ok(text) => Ok((line, text)),
            Err(_) => Err(FrameError::InvalidUtf8 { line }),
        }
    }
}

/// Parses `text` as a JSON object and then as `T`.
fn parse_object<T: DeserializeOwned>(line: u64, text: &str) -> Result<T, FrameError> {
    let value: Value = serde_json::from_str(text).map_err(|error| FrameError::InvalidJson {
        line,
        detail: error.to_string(),
        start: text.chars().take(80).collect(),
    })?;
    if !value.is_object() {
        return Err(FrameError::UnexpectedShape {
            line,
            detail: "expected a JSON object".to_string(),
        });
    }
    serde_json::from_value(value).map_err(|error| FrameError::UnexpectedShape {
        line,
        detail: error.to_string(),
    })
}

/// The message of an `"error"` field: a string, or an object's `message`.
fn error_message(error: &Value) -> String {
    match error {
        Value::String(message) => message.clone(),
        Value::Object(object) => match object.get("message") {
            Some(Value::String(message)) => message.clone(),
            _ => error.to_string(),
        },
        _ => error.to_string(),
    }
}

/// Runs `step` unless the framer already failed, and records a new failure.
fn guarded<S>(
    failed: &mut Option<FrameError>,
    state: &mut S,
    step: impl FnOnce(&mut S) -> Result<Vec<FrameEvent>, FrameError>,
) -> Result<Vec<FrameEvent>, FrameError> {
    if let Some(error) = failed {
        return Err(error.clone());
    }
    let result = step(state);
    if let Err(error) = &result {
        *failed = Some(error.clone());
    }
    result
}

/// One Ollama NDJSON line.
#[derive(Debug, Deserialize)]
struct OllamaLine {
    message: Option<OllamaMessage>,
    done: Option<bool>,
    done_reason: Option<String>,
    prompt_eval_count: Option<u64>,
    eval_count: Option<u64>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct OllamaMessage {
    content: Option<String>,
}

/// Decoder for an Ollama `/api/chat` streamed (NDJSON) body. See the
/// [module documentation](self).
#[derive(Debug)]
pub struct OllamaFrames {
    state: OllamaState,
    failed: Option<FrameError>,
}

#[derive(Debug)]
struct OllamaState {
    lines: LineSplitter,
    /// A terminal event was produced.
    ended: bool,
}

impl OllamaFrames {
    /// Creates a decoder that refuses lines longer than `max_line_bytes`
    /// (excluding the line end). Each line holds one token or so, but the
    /// final line and error lines are longer; 64 KiB is ample.
    pub fn new(max_line_bytes: usize) -> Self {
        OllamaFrames {
            state: OllamaState {
                lines: LineSplitter::new(max_line_bytes),
                ended: false,
            },
            failed: None,
        }
    }

    /// Decodes the next bytes of the body and returns the events of the
    /// lines they completed. Blank lines are skipped; bytes after the
    /// terminal event are ignored.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<FrameEvent>, FrameError> {
        guarded(&mut self.failed, &mut self.state, |state| state.push(bytes))
    }

    /// Ends the body: decodes a last line that has no `\n`, and fails with
    /// [`FrameError::UnexpectedEnd`] if neither `"done": true` nor an error
    /// line was seen.
    pub fn finish(mut self) -> Result<Vec<FrameEvent>, FrameError> {
        guarded(&mut self.failed, &mut self.state, OllamaState::finish)
    }
}

impl OllamaState {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<FrameEvent>, FrameError> {
        let mut events = Vec::new();
        let mut rest = bytes;
        while !self.ended {
            match self.lines.next_line(&mut rest)? {
                Some((number, line)) => self.handle_line(number, &line, &mut events)?,
                None => break,
            }
        }
        Ok(events)
    }

    fn finish(&mut self) -> Result<Vec<FrameEvent>, FrameError> {
        let mut events = Vec::new();
        if !self.ended
            && let Some((number, line)) = self.lines.finish()?
        {
            self.handle_line(number, &line, &mut events)?;
        }
        if !self.ended {
            return Err(FrameError::UnexpectedEnd);
        }
        Ok(events)
    }

    fn handle_line(
        &mut self,
        number: u64,
        line: &str,
        events: &mut Vec<FrameEvent>,
    ) -> Result<(), FrameError> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let parsed: OllamaLine = parse_object(number, line)?;
        if let Some(error) = &parsed.error {
            events.push(FrameEvent::Error(error_message(error)));
            self.ended = true;
            return Ok(());
        }
        let Some(done) = parsed.done else {
            return Err(FrameError::UnexpectedShape {
                line: number,
                detail: "no \"done\" or \"error\" field".to_string(),
            });
        };
        if let Some(content) = parsed.message.and_then(|message| message.content)
            && !content.is_empty()
        {
            events.push(FrameEvent::Delta(content));
        }
        if done {
            events.push(FrameEvent::Done(DoneInfo {
                reason: parsed.done_reason,
                prompt_tokens: parsed.prompt_eval_count,
                output_tokens: parsed.eval_count,
            }));
            self.ended = true;
        }
        Ok(())
    }
}

/// One OpenAI-compatible `chat.completion.chunk`.
#[derive(Debug, Deserialize)]
struct SseChunk {
    choices: Option<Vec<SseChoice>>,
    usage: Option<SseUsage>,
    error: Option<Value>,
}

#[derive(Debug, Deserialize)]
struct SseChoice {
    index: Option<u64>,
    delta: Option<SseDelta>,
    finish_reason: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SseDelta {
    content: Option<String>,
}

#[derive(Debug, Deserialize)]
struct SseUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// Decoder for an OpenAI-compatible `/v1/chat/completions` streamed
/// (Server-Sent Events) body. See the [module documentation](self).
///
/// Follows the SSE rules: lines end with `\n` or `\r\n`; a blank line ends an
/// event; `data:` lines of one event are joined with `\n`; one space after
/// the colon is optional; comment lines (`:`) and other fields (`event:`,
/// `id:`, `retry:`) are ignored. Only choice index 0 is used;
/// `reasoning_content` and other delta fields are ignored.
#[derive(Debug)]
pub struct SseFrames {
    state: SseState,
    failed: Option<FrameError>,
}

#[derive(Debug)]
struct SseState {
    lines: LineSplitter,
    /// Joined `data:` values of the current event.
    data: String,
    /// The current event has at least one `data:` line.
    has_data: bool,
    /// Number of the current event's first `data:` line.
    data_line: u64,
    /// Finish reason and usage seen so far, reported in `Done`.
    done: DoneInfo,
    /// A terminal event was produced.
    ended: bool,
}

impl SseFrames {
    /// Creates a decoder that refuses lines, and events whose joined `data:`
    /// lines are, longer than `max_line_bytes`. Each event holds one token
    /// or so; 64 KiB is ample.
    pub fn new(max_line_bytes: usize) -> Self {
        SseFrames {
            state: SseState {
                lines: LineSplitter::new(max_line_bytes),
                data: String::new(),
                has_data: false,
                data_line: 0,
                done: DoneInfo::default(),
                ended: false,
            },
            failed: None,
        }
    }

    /// Decodes the next bytes of the body and returns the events they
    /// completed. `Done` is produced at `data: [DONE]`, with the finish
    /// reason and usage of the earlier chunks; bytes after it are ignored.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<FrameEvent>, FrameError> {
        guarded(&mut self.failed, &mut self.state, |state| state.push(bytes))
    }

    /// Ends the body: decodes a last line without `\n` and a last event
    /// without its blank line. If `[DONE]` never came but a `finish_reason`
    /// did, produces `Done` (some servers omit `[DONE]`); if neither came
    /// (nor an error), fails with [`FrameError::UnexpectedEnd`].
    pub fn finish(mut self) -> Result<Vec<FrameEvent>, FrameError> {
        guarded(&mut self.failed, &mut self.state, SseState::finish)
    }
}

impl SseState {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<FrameEvent>, FrameError> {
        let mut events = Vec::new();
        let mut rest = bytes;
        while !self.ended {
            match self.lines.next_line(&mut rest)? {
                Some((number, line)) => self.handle_line(number, &line, &mut events)?,
                None => break,
            }
        }
        Ok(events)
    }

    fn finish(&mut self) -> Result<Vec<FrameEvent>, FrameError> {
        let mut events = Vec::new();
        if !self.ended
            && let Some((number, line)) = self.lines.finish()?
        {
            self.handle_line(number, &line, &mut events)?;
        }
        if !self.ended {
            self.dispatch(&mut events)?;
        }
        if !self.ended {
            if self.done.reason.is_none() {
                return Err(FrameError::UnexpectedEnd);
            }
            events.push(FrameEvent::Done(self.done.clone()));
        }
        Ok(events)
    }

    fn handle_line(
        &mut self,
        number: u64,
        line: &str,
        events: &mut Vec<FrameEvent>,
    ) -> Result<(), FrameError> {
        if line.is_empty() {
            return self.dispatch(events);
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        if field != "data" {
            return Ok(());
        }
        if self.has_data {
            if self.data.len() + 1 + value.len() > self.lines.max_line_bytes {
                return Err(FrameError::LineTooLong {
                    line: number,
                    limit: self.lines.max_line_bytes,
                });
            }
            self.data.push('\n');
        } else {
            self.has_data = true;
            self.data_line = number;
        }
        self.data.push_str(value);
        Ok(())
    }

    /// Handles the data of the event that just ended, if it had any.
    fn dispatch(&mut self, events: &mut Vec<FrameEvent>) -> Result<(), FrameError> {
        if !self.has_data {
            return Ok(());
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            events.push(FrameEvent::Done(self.done.clone()));
            self.ended = true;
            return Ok(());
        }
        let chunk: SseChunk = parse_object(self.data_line, data)?;
        if let Some(error) = &chunk.error {
            events.push(FrameEvent::Error(error_message(error)));
            self.ended = true;
            return Ok(());
        }
        if chunk.choices.is_none() && chunk.usage.is_none() {
            return Err(FrameError::UnexpectedShape {
                line: self.data_line,
                detail: "no \"choices\", \"usage\" or \"error\" field".to_string(),
            });
        }
        for choice in chunk.choices.unwrap_or_default() {
            if choice.index.unwrap_or(0) != 0 {
                continue;
            }
            if let Some(content) = choice.delta.and_then(|delta| delta.content)
                && !content.is_empty()
            {
                events.push(FrameEvent::Delta(content));
            }
            if choice.finish_reason.is_some() {
                self.done.reason = choice.finish_reason;
            }
        }
        if let Some(usage) = chunk.usage {
            self.done.prompt_tokens = usage.prompt_tokens;
            self.done.output_tokens = usage.completion_tokens;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: usize = 64 * 1024;

    const OLLAMA_STREAM: &str = concat!(
        r#"{"model":"m","created_at":"2025-01-01T00:00:00Z","message":{"role":"assistant","content":"{\"state"},"done":false}"#,
        "\n",
        r#"{"model":"m","created_at":"2025-01-01T00:00:01Z","message":{"role":"assistant","content":"ments\": café 😀"},"done":false}"#,
        "\n\n",
        r#"{"model":"m","created_at":"2025-01-01T00:00:02Z","message":{"role":"assistant","content":""},"done":false}"#,
        "\r\n",
        r#"{"model":"m","created_at":"2025-01-01T00:00:03Z","message":{"role":"assistant","content":"\n}"},"done":false}"#,
        "\n",
        r#"{"model":"m","created_at":"2025-01-01T00:00:04Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","total_duration":123,"load_duration":4,"prompt_eval_count":123,"prompt_eval_duration":5,"eval_count":45,"eval_duration":6}"#,
        "\n",
    );

    fn ollama_expected() -> Vec<FrameEvent> {
        vec![
            FrameEvent::Delta("{\"state".to_string()),
            FrameEvent::Delta("ments\": café 😀".to_string()),
            FrameEvent::Delta("\n}".to_string()),
            FrameEvent::Done(DoneInfo {
                reason: Some("stop".to_string()),
                prompt_tokens: Some(123),
                output_tokens: Some(45),
            }),
        ]
    }

    const SSE_STREAM: &str = concat!(
        ": keep-alive comment\r\n\r\n",
        "event: message\r\n",
        r#"data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}"#,
        "\r\n\r\n",
        r#"data:{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"{\"a\": café 😀"},"finish_reason":null}]}"#,
        "\r\n\r\n",
        r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":1,"delta":{"content":"other choice"},"finish_reason":null}]}"#,
        "\n\n",
        "id: 7\nretry: 1000\n",
        r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" 1}"},"finish_reason":"length"}]}"#,
        "\n\n",
        r#"data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}"#,
        "\n\n",
        "data: [DONE]\n\n",
    );

    fn sse_expected() -> Vec<FrameEvent> {
        vec![
            FrameEvent::Delta("{\"a\": café 😀".to_string()),
            FrameEvent::Delta(" 1}".to_string()),
            FrameEvent::Done(DoneInfo {
                reason: Some("length".to_string()),
                prompt_tokens: Some(12),
                output_tokens: Some(34),
            }),
        ]
    }

    /// Feeds `chunks` to a fresh Ollama decoder, then finishes it.
    fn ollama(chunks: &[&[u8]], max: usize) -> Result<Vec<FrameEvent>, FrameError> {
        let mut frames = OllamaFrames::new(max);
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(frames.push(chunk)?);
        }
        events.extend(frames.finish()?);
        Ok(events)
    }

    /// Feeds `chunks` to a fresh SSE decoder, then finishes it.
    fn sse(chunks: &[&[u8]], max: usize) -> Result<Vec<FrameEvent>, FrameError> {
        let mut frames = SseFrames::new(max);
        let mut events = Vec::new();
        for chunk in chunks {
            events.extend(frames.push(chunk)?);
        }
        events.extend(frames.finish()?);
        Ok(events)
    }

    type Decode = fn(&[&[u8]], usize) -> Result<Vec<FrameEvent>, FrameError>;

    /// Checks that splitting `body` at every byte position (including inside
    /// multi-byte characters) and feeding it byte by byte give `expected`.
    fn check_every_split(decode: Decode, body: &str, expected: &[FrameEvent]) {
        let bytes = body.as_bytes();
        assert!(bytes.iter().any(|&b| b >= 0x80), "needs multi-byte text");
        assert_eq!(decode(&[bytes], MAX).unwrap(), expected);
        for at in 0..=bytes.len() {
            let events = decode(&[&bytes[..at], &bytes[at..]], MAX).unwrap();
            assert_eq!(events, expected, "split at byte {at}");
        }
        let singles: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&singles, MAX).unwrap(), expected);
    }

    #[test]
    fn ollama_every_split_position_gives_the_same_events() {
        check_every_split(ollama, OLLAMA_STREAM, &ollama_expected());
    }

    #[test]
    fn sse_every_split_position_gives_the_same_events() {
        check_every_split(sse, SSE_STREAM, &sse_expected());
    }

    #[test]
    fn ollama_events_come_as_soon_as_their_line_ends() {
        let mut frames = OllamaFrames::new(MAX);
        let line = br#"{"message":{"role":"assistant","content":"hi"},"done":false}"#;
        assert_eq!(frames.push(line).unwrap(), vec![]);
        assert_eq!(
            frames.push(b"\n").unwrap(),
            vec![FrameEvent::Delta("hi".to_string())]
        );
    }

    #[test]
    fn ollama_last_line_without_newline_and_length_reason() {
        let body = concat!(
            r#"{"message":{"content":"x"},"done":false}"#,
            "\n",
            r#"{"message":{"content":""},"done":true,"done_reason":"length","eval_count":9}"#,
        );
        let events = ollama(&[body.as_bytes()], MAX).unwrap();
        assert_eq!(
            events,
            vec![
                FrameEvent::Delta("x".to_string()),
                FrameEvent::Done(DoneInfo {
                    reason: Some("length".to_string()),
                    prompt_tokens: None,
                    output_tokens: Some(9),
                }),
            ]
        );
    }

    #[test]
    fn ollama_error_line_ends_the_stream() {
        let body = concat!(
            r#"{"message":{"content":"par"},"done":false}"#,
            "\n",
            r#"{"error":"model runner has unexpectedly stopped"}"#,
            "\n",
            "this junk after the error is ignored\n",
        );
        let events = ollama(&[body.as_bytes()], MAX).unwrap();
        assert_eq!(
            events,
            vec![
                FrameEvent::Delta("par".to_string()),
                FrameEvent::Error("model runner has unexpectedly stopped".to_string()),
            ]
        );
    }

    #[test]
    fn ollama_input_after_done_is_ignored() {
        let mut frames = OllamaFrames::new(MAX);
        let events = frames
            .push(b"{\"done\":true}\n{\"message\":{\"content\":\"late\"},\"done\":false}\n")
            .unwrap();
        assert_eq!(events, vec![FrameEvent::Done(DoneInfo::default())]);
        assert_eq!(frames.push(b"not json\n").unwrap(), vec![]);
        assert_eq!(frames.finish().unwrap(), vec![]);
    }

    #[test]
    fn ollama_invalid_json_line() {
        let body = b"{\"done\":false}\n{\"done\":fals\n";
        match ollama(&[body], MAX) {
            Err(FrameError::InvalidJson { line, start, .. }) => {
                assert_eq!(line, 2);
                assert_eq!(start, "{\"done\":fals");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn ollama_unexpected_shapes() {
        for (body, expected_line) in [
            (&b"[1,2]\n"[..], 1),
            (b"\n\"text\"\n", 2),
            (b"{\"message\":{\"content\":\"x\"}}\n", 1),
            (b"{\"done\":\"yes\"}\n", 1),
            (b"{\"done\":false,\"message\":{\"content\":5}}\n", 1),
        ] {
            match ollama(&[body], MAX) {
                Err(FrameError::UnexpectedShape { line, .. }) => assert_eq!(line, expected_line),
                other => panic!("{:?}: unexpected {other:?}", String::from_utf8_lossy(body)),
            }
        }
    }

    #[test]
    fn ollama_invalid_utf8_line() {
        let body = b"{\"done\":false}\n{\"message\":{\"content\":\"\xff\"},\"done\":false}\n";
        assert_eq!(
            ollama(&[body], MAX),
            Err(FrameError::InvalidUtf8 { line: 2 })
        );
    }

    #[test]
    fn ollama_unexpected_end() {
        assert_eq!(ollama(&[], MAX), Err(FrameError::UnexpectedEnd));
        let body = b"{\"message\":{\"content\":\"cut\"},\"done\":false}\n{\"message\":{\"con";
        let mut frames = OllamaFrames::new(MAX);
        assert_eq!(
            frames.push(body).unwrap(),
            vec![FrameEvent::Delta("cut".to_string())]
        );
        // The unfinished last line is reported as what it is: invalid JSON.
        assert!(matches!(
            frames.finish(),
            Err(FrameError::InvalidJson { line: 2, .. })
        ));
        let body = b"{\"message\":{\"content\":\"cut\"},\"done\":false}\n";
        assert_eq!(ollama(&[body], MAX), Err(FrameError::UnexpectedEnd));
    }

    #[test]
    fn line_length_limit() {
        let line = b"{\"done\":false}"; // 14 bytes
        // Exactly at the limit, with `\n` or `\r\n`, and unterminated.
        let ok = b"{\"done\":false}\n{\"done\":false}\r\n{\"done\":true}";
        assert_eq!(
            ollama(&[ok], line.len()),
            Ok(vec![FrameEvent::Done(DoneInfo::default())])
        );
        // One byte over, terminated.
        let long = b"{\"done\":false}\n{\"done\":false }\n";
        assert_eq!(
            ollama(&[long], line.len()),
            Err(FrameError::LineTooLong { line: 2, limit: 14 })
        );
        // One byte over, unterminated at the end of the body.
        assert_eq!(
            ollama(&[b"{\"done\":true  }"], line.len()),
            Err(FrameError::LineTooLong { line: 1, limit: 14 })
        );
    }

    #[test]
    fn endless_line_is_refused_without_growing() {
        let mut frames = OllamaFrames::new(100);
        assert_eq!(frames.push(&[b'x'; 60]), Ok(vec![]));
        assert_eq!(
            frames.push(&[b'x'; 60]),
            Err(FrameError::LineTooLong {
                line: 1,
                limit: 100
            })
        );
        assert!(frames.state.lines.partial.len() <= 101);
        let mut frames = SseFrames::new(100);
        assert_eq!(
            frames.push(&[b'x'; 1_000_000]),
            Err(FrameError::LineTooLong {
                line: 1,
                limit: 100
            })
        );
        assert!(frames.state.lines.partial.is_empty());
    }

    #[test]
    fn errors_are_sticky() {
        let mut frames = OllamaFrames::new(MAX);
        let error = frames.push(b"nope\n").unwrap_err();
        assert!(matches!(error, FrameError::InvalidJson { line: 1, .. }));
        assert_eq!(frames.push(b"{\"done\":true}\n"), Err(error.clone()));
        assert_eq!(frames.finish(), Err(error));

        let mut frames = SseFrames::new(MAX);
        let error = frames.push(b"data: nope\n\n").unwrap_err();
        assert_eq!(frames.push(b"data: [DONE]\n\n"), Err(error.clone()));
        assert_eq!(frames.finish(), Err(error));
    }

    #[test]
    fn sse_multi_line_data_is_joined_with_newlines() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":\n",
            "data: {\"content\":\"joined\"}}]}\n",
            "\n",
            "data: [DONE]\n",
        );
        assert_eq!(
            sse(&[body.as_bytes()], MAX),
            Ok(vec![
                FrameEvent::Delta("joined".to_string()),
                FrameEvent::Done(DoneInfo::default()),
            ])
        );
    }

    #[test]
    fn sse_event_data_limit_applies_to_joined_lines() {
        // Each line fits in 10 bytes; the joined data "12345\n12345" does not.
        let body = "data:12345\ndata:12345\n\n";
        assert_eq!(
            sse(&[body.as_bytes()], 10),
            Err(FrameError::LineTooLong { line: 2, limit: 10 })
        );
    }

    #[test]
    fn sse_llama_cpp_error() {
        let body = concat!(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n",
            "data: {\"error\":{\"code\":500,\"message\":\"context full\",\"type\":\"server_error\"}}\n\n",
        );
        assert_eq!(
            sse(&[body.as_bytes()], MAX),
            Ok(vec![
                FrameEvent::Delta("a".to_string()),
                FrameEvent::Error("context full".to_string()),
            ])
        );
        let body = "data: {\"error\":{\"code\":1}}\n\n";
        assert_eq!(
            sse(&[body.as_bytes()], MAX),
            Ok(vec![FrameEvent::Error("{\"code\":1}".to_string())])
        );
    }

    #[test]
    fn sse_end_without_done_marker() {
        // A finish_reason without [DONE] (and without a final blank line).
        let body =
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}";
        assert_eq!(
            sse(&[body.as_bytes()], MAX),
            Ok(vec![
                FrameEvent::Delta("a".to_string()),
                FrameEvent::Done(DoneInfo {
                    reason: Some("stop".to_string()),
                    ..DoneInfo::default()
                }),
            ])
        );
        // Neither: the connection was cut.
        let body =
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":null}]}\n\n";
        assert_eq!(sse(&[body.as_bytes()], MAX), Err(FrameError::UnexpectedEnd));
        assert_eq!(sse(&[], MAX), Err(FrameError::UnexpectedEnd));
        assert_eq!(
            sse(&[b": only a comment\n\n"], MAX),
            Err(FrameError::UnexpectedEnd)
        );
    }

    #[test]
    fn sse_input_after_done_is_ignored() {
        let body = b"data: [DONE]\n\ndata: not json\n\n";
        assert_eq!(
            sse(&[body], MAX),
            Ok(vec![FrameEvent::Done(DoneInfo::default())])
        );
    }

    #[test]
    fn sse_invalid_json() {
        let body = b"\ndata: {\"choices\":[}\n\n";
        match sse(&[body], MAX) {
            Err(FrameError::InvalidJson { line, start, .. }) => {
                assert_eq!(line, 2);
                assert_eq!(start, "{\"choices\":[}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn sse_unexpected_shapes() {
        for body in [
            &b"data: [1,2]\n\n"[..],
            b"data: {\"id\":\"x\"}\n\n",
            b"data: {\"choices\":{\"delta\":{}}}\n\n",
            b"data: {\"choices\":[{\"delta\":{\"content\":7}}]}\n\n",
            b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-1}}\n\n",
        ] {
            match sse(&[body], MAX) {
                Err(FrameError::UnexpectedShape { line, .. }) => assert_eq!(line, 1),
                other => panic!("{:?}: unexpected {other:?}", String::from_utf8_lossy(body)),
            }
        }
    }

    #[test]
    fn sse_invalid_utf8() {
        assert_eq!(
            sse(&[b": ok\ndata: \xc3\x28\n\n"], MAX),
            Err(FrameError::InvalidUtf8 { line: 2 })
        );
    }

    #[test]
    fn error_messages_name_the_problem() {
        let message = FrameError::InvalidJson {
            line: 3,
            detail: "expected value at line 1 column 1".to_string(),
            start: "<html>".to_string(),
        }
        .to_string();
        assert!(message.contains("line 3") && message.contains("<html>"));
        let message = FrameError::LineTooLong { line: 2, limit: 9 }.to_string();
        assert!(message.contains("line 2") && message.contains('9'));
        assert!(FrameError::UnexpectedEnd.to_string().contains("ended"));
    }

    #[test]
    fn content_type_is_the_primary_signal() {
        use BodyKind::*;
        let cases = [
            ("application/x-ndjson", Some(Ndjson)),
            ("application/ndjson", Some(Ndjson)),
            ("text/event-stream; charset=utf-8", Some(EventStream)),
            ("Text/Event-Stream", Some(EventStream)),
            ("application/json; charset=utf-8", Some(SingleJson)),
            (" application/json ", Some(SingleJson)),
            ("text/html", None),
            ("", None),
        ];
        for (content_type, expected) in cases {
            assert_eq!(
                body_kind_from_content_type(content_type),
                expected,
                "{content_type}"
            );
        }
    }

    #[test]
    fn sniffing_the_first_bytes() {
        use BodyKind::*;
        use Sniffed::*;
        let cases: [(&[u8], bool, Sniffed); 17] = [
            (b"data: {\"choices\":[]}", false, Kind(EventStream)),
            (b"\r\n: ping\n", false, Kind(EventStream)),
            (b"event: message\n", false, Kind(EventStream)),
            (b"dat", false, NeedMoreBytes),
            (b"dat", true, Unrecognised),
            (b"  \n", false, NeedMoreBytes),
            (b"", true, Unrecognised),
            (
                b"{\"model\":\"m\",\"message\":{\"content\":\"a\"},\"done\":false}\n{\"mo",
                false,
                Kind(Ndjson),
            ),
            (
                b"{\"model\":\"m\",\"message\":{\"content\":\"a\"},\"done\":false}",
                false,
                NeedMoreBytes,
            ),
            (
                b"{\"model\":\"m\",\"message\":{\"content\":\"all\"},\"done\":true}",
                true,
                Kind(SingleJson),
            ),
            (
                b"\xEF\xBB\xBF{\"choices\":[{\"message\":{\"content\":\"x\"}}]}\n",
                false,
                Kind(SingleJson),
            ),
            (b"{\n  \"choices\": [\n", false, Kind(SingleJson)),
            (b"{\"error\":\"model not found\"}", true, Kind(SingleJson)),
            (
                b"{\"object\":\"chat.completion.chunk\",\"choices\":[]}\n",
                false,
                Unrecognised,
            ),
            (b"{\"cut", true, Unrecognised),
            (b"{\"a\" 1}\n", false, Unrecognised),
            (b"<html><body>502</body></html>", false, Unrecognised),
        ];
        for (bytes, complete, expected) in cases {
            assert_eq!(
                sniff_body_kind(bytes, complete),
                expected,
                "{:?} complete={complete}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
