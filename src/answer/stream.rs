//! Statements found in a reply still arriving: incremental extraction of statements
//! from the model's JSON answer (used by the llm stage while it streams).
//!
//! The model answers with one JSON object of this shape (keys in any order,
//! other keys such as `"what_to_ask_user"` allowed):
//!
//! ```json
//! {"answerable": true,
//!  "statements": [{"text": "...", "citations": [{"source": 1, "quote": "..."}]}],
//!  "unknowns": ["..."]}
//! ```
//!
//! The text arrives in chunks while the model is still writing. So that each
//! statement can be shown as soon as it is complete, [`StatementStream`]
//! scans the text as it comes and returns every direct element of the
//! top-level `"statements"` array the moment its closing `}` arrives, parsed
//! on its own as a [`serde_json::Value`]. The full reply must still be parsed
//! (and validated) by the caller once it is complete: use
//! [`StatementStream::text`] for that.
//!
//! # Design
//!
//! * The whole text is kept in a buffer, but every byte is examined exactly
//!   once, when it is fed: the scanner is a small state machine (nesting
//!   depth, inside-string flag, after-backslash flag, byte offset where the
//!   current statement element started), so the state survives any chunk
//!   boundary, including one between a `\` and the character it escapes.
//!   Only the slice of one finished element is handed to `serde_json`, so the
//!   total work is linear in the length of the reply.
//! * Scanning works on bytes. Every structural character (`{ } [ ] " \ : ,`)
//!   is ASCII and UTF-8 never uses ASCII bytes inside a multi-byte
//!   character, so non-ASCII text needs no special handling.
//! * Anything before the first `{` (a sentence, a code fence) is skipped. If
//!   the object that `{` opens closes without ever having a top-level
//!   `"statements"` key (e.g. a `{like this}` in a preamble), it is treated
//!   as preamble too and the search for the answer object resumes. Once the
//!   answer object closes, later text is kept but not scanned.
//! * Only keys of the top-level object are compared with `"statements"`, and
//!   only as written: a key spelled with escapes (`"st\u0061tements"`) is not
//!   recognised. A `"statements"` key or string at any deeper level, or a
//!   string value equal to `"statements"`, is ordinary content.
//! * Only elements that are objects are returned; other elements (strings,
//!   numbers) of the array are skipped. An element whose slice is not valid
//!   JSON (e.g. a trailing comma) is skipped and counted in
//!   [`StatementStream::malformed`].
//! * The scanner does not validate the JSON. Malformed input can only make it
//!   miss statements or return fewer, never loop or panic.

use serde_json::Value;

/// Where the scanner is relative to the answer object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Skipping text before the answer object's opening `{`.
    Searching,
    /// Inside the answer object.
    Inside,
    /// The answer object has closed; later text is not scanned.
    Finished,
}

/// Incremental scanner that returns each statement of the model's JSON
/// answer as soon as it is complete. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct StatementStream {
    /// Everything fed so far (up to `max_bytes`).
    text: String,
    /// Limit on the total length of `text`, in bytes.
    max_bytes: usize,
    /// Set once a chunk would have taken `text` past `max_bytes`.
    overflowed: bool,
    phase: Phase,
    /// Number of open objects and arrays; the answer object itself is 1.
    depth: usize,
    /// Inside a JSON string.
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escaped: bool,
    /// Offset of the first byte of the top-level key being read, if any.
    key_start: Option<usize>,
    /// At depth 1: a `:` was seen and no `,` since, so the next string or
    /// container is a value, not a key.
    after_colon: bool,
    /// At depth 1: the most recent key was `"statements"`.
    key_is_statements: bool,
    /// The current object has had a top-level `"statements"` key.
    saw_statements_key: bool,
    /// Inside the top-level `"statements"` array (which is at depth 2).
    in_statements: bool,
    /// Offset of the `{` opening the statement element being read.
    element_start: Option<usize>,
    statements_seen: usize,
    malformed: usize,
    /// Bytes examined by the state machine (for the linear-time test).
    bytes_examined: usize,
    /// Bytes handed to `serde_json` (for the linear-time test).
    bytes_parsed: usize,
}

impl StatementStream {
    /// Creates a scanner that accepts at most `max_bytes` bytes of text in
    /// total. Pick a limit well above the longest reply you allow.
    pub fn new(max_bytes: usize) -> Self {
        StatementStream {
            text: String::new(),
            max_bytes,
            overflowed: false,
            phase: Phase::Searching,
            depth: 0,
            in_string: false,
            escaped: false,
            key_start: None,
            after_colon: false,
            key_is_statements: false,
            saw_statements_key: false,
            in_statements: false,
            element_start: None,
            statements_seen: 0,
            malformed: 0,
            bytes_examined: 0,
            bytes_parsed: 0,
        }
    }

    /// Appends the next chunk of the reply and returns the statements it
    /// completed, in order (possibly none).
    ///
    /// If the chunk would take the total past `max_bytes`, it is dropped
    /// whole, [`overflowed`](Self::overflowed) becomes true, and this and
    /// every later call return nothing and keep nothing.
    pub fn feed(&mut self, chunk: &str) -> Vec<Value> {
        let mut completed = Vec::new();
        if self.overflowed {
            return completed;
        }
        if chunk.len() > self.max_bytes - self.text.len() {
            self.overflowed = true;
            return completed;
        }
        let start = self.text.len();
        self.text.push_str(chunk);
        for offset in start..self.text.len() {
            if self.phase == Phase::Finished {
                break;
            }
            self.bytes_examined += 1;
            let byte = self.text.as_bytes()[offset];
            match self.phase {
                Phase::Searching => {
                    if byte == b'{' {
                        self.open_answer_object();
                    }
                }
                Phase::Inside => self.step(offset, byte, &mut completed),
                Phase::Finished => {}
            }
        }
        completed
    }

    /// Everything fed so far (excluding a dropped over-limit chunk), for the
    /// final parse of the whole reply.
    #[cfg(test)]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Number of statements returned by [`feed`](Self::feed) so far.
    #[cfg(test)]
    pub fn statements_seen(&self) -> usize {
        self.statements_seen
    }

    /// Number of complete statement elements that were skipped because their
    /// text was not valid JSON on its own.
    #[cfg(test)]
    pub fn malformed(&self) -> usize {
        self.malformed
    }

    /// True once a chunk was dropped because of the `max_bytes` limit.
    #[cfg(test)]
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Resets the per-object state at the `{` that opens a candidate answer
    /// object.
    fn open_answer_object(&mut self) {
        self.phase = Phase::Inside;
        self.depth = 1;
        self.in_string = false;
        self.escaped = false;
        self.key_start = None;
        self.after_colon = false;
        self.key_is_statements = false;
        self.saw_statements_key = false;
        self.in_statements = false;
        self.element_start = None;
    }

    /// Advances the state machine over one byte inside the answer object.
    fn step(&mut self, offset: usize, byte: u8, completed: &mut Vec<Value>) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if let Some(key_start) = self.key_start.take() {
                    let key = &self.text.as_bytes()[key_start..offset];
                    self.key_is_statements = key == b"statements";
                }
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && !self.after_colon {
                    self.key_start = Some(offset + 1);
                }
            }
            b':' if self.depth == 1 => {
                self.after_colon = true;
                if self.key_is_statements {
                    self.saw_statements_key = true;
                }
            }
            b',' if self.depth == 1 => {
                self.after_colon = false;
                self.key_is_statements = false;
            }
            b'{' | b'[' => {
                if self.depth == 1 && byte == b'[' && self.after_colon && self.key_is_statements {
                    self.in_statements = true;
                }
                if self.depth == 2 && self.in_statements && byte == b'{' {
                    self.element_start = Some(offset);
                }
                self.depth += 1;
            }
            b'}' | b']' => {
                self.depth -= 1;
                match self.depth {
                    0 => {
                        self.phase = if self.saw_statements_key {
                            Phase::Finished
                        } else {
                            Phase::Searching
                        };
                    }
                    1 => self.in_statements = false,
                    2 => {
                        if let Some(start) = self.element_start.take() {
                            self.finish_element(start, offset, completed);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// Parses the statement element `text[start..=end]` (from its `{` to its
    /// `}`) and adds it to `completed`, or counts it as malformed.
    fn finish_element(&mut self, start: usize, end: usize, completed: &mut Vec<Value>) {
        let slice = &self.text[start..=end];
        self.bytes_parsed += slice.len();
        match serde_json::from_str::<Value>(slice) {
            Ok(value) => {
                self.statements_seen += 1;
                completed.push(value);
            }
            Err(_) => self.malformed += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LIMIT: usize = 1 << 20;

    /// A realistic reply with everything the scanner must get right: a
    /// preamble and code fence, keys in an unusual order, escapes, a raw
    /// non-ASCII character, braces/brackets and the word "statements" inside
    /// strings, a nested "statements" key inside a statement, and a quote
    /// that ends with an escaped backslash.
    const REPLY: &str = concat!(
        "Here is the answer {as requested}:\n```json\n",
        r#"{"unknowns": ["why } ] \"statements\": ["], "#,
        r#""what_to_ask_user": [{"statements": [{"text": "decoy"}]}], "#,
        r#""note": "statements", "#,
        r#""statements": ["#,
        r#"{"text": "Caf\u00e9 is \"open\" — é", "citations": [{"source": 1, "quote": "a } b { \"statements\": [ ] \\"}]}, "#,
        r#"{"text": "C:\\dir\\", "statements": [{"text": "inner"}], "citations": []}, "#,
        r#"{"citations": [{"quote": "}}]]", "source": 2}], "text": "third"}"#,
        r#"], "answerable": true}"#,
        "\n```\n",
    );

    fn expected_statements() -> Vec<Value> {
        vec![
            json!({"text": "Café is \"open\" — é",
                   "citations": [{"source": 1, "quote": "a } b { \"statements\": [ ] \\"}]}),
            json!({"text": "C:\\dir\\", "statements": [{"text": "inner"}], "citations": []}),
            json!({"citations": [{"quote": "}}]]", "source": 2}], "text": "third"}),
        ]
    }

    fn feed_all(chunks: &[&str]) -> (StatementStream, Vec<Value>) {
        let mut stream = StatementStream::new(LIMIT);
        let mut out = Vec::new();
        for chunk in chunks {
            out.extend(stream.feed(chunk));
        }
        (stream, out)
    }

    #[test]
    fn whole_reply_in_one_chunk() {
        let (stream, out) = feed_all(&[REPLY]);
        assert_eq!(out, expected_statements());
        assert_eq!(stream.statements_seen(), 3);
        assert_eq!(stream.malformed(), 0);
        assert_eq!(stream.text(), REPLY);
        assert!(!stream.overflowed());
    }

    #[test]
    fn every_split_position_gives_the_same_statements() {
        let expected = expected_statements();
        let mut splits = 0;
        for at in 0..=REPLY.len() {
            if !REPLY.is_char_boundary(at) {
                continue;
            }
            let (stream, out) = feed_all(&[&REPLY[..at], &REPLY[at..]]);
            assert_eq!(out, expected, "split at byte {at}");
            assert_eq!(stream.text(), REPLY);
            splits += 1;
        }
        assert!(splits > REPLY.len() / 2);
    }

    #[test]
    fn one_character_at_a_time_gives_the_same_statements() {
        let mut stream = StatementStream::new(LIMIT);
        let mut out = Vec::new();
        let mut buf = [0u8; 4];
        for c in REPLY.chars() {
            out.extend(stream.feed(c.encode_utf8(&mut buf)));
        }
        assert_eq!(out, expected_statements());
    }

    #[test]
    fn statement_is_returned_exactly_when_its_closing_brace_arrives() {
        let mut stream = StatementStream::new(LIMIT);
        assert!(stream.feed(r#"{"statements": [{"text": "a}"#).is_empty());
        assert!(stream.feed(r#"""#).is_empty());
        assert_eq!(stream.feed("}"), vec![json!({"text": "a}"})]);
        assert_eq!(stream.statements_seen(), 1);
        assert_eq!(stream.feed(r#", {"text": "b"}"#).len(), 1);
        assert!(stream.feed("]}").is_empty());
        assert_eq!(stream.statements_seen(), 2);
    }

    #[test]
    fn escapes_split_across_chunks() {
        // Split between `\\` and the closing quote: the quote must close the string.
        let mut stream = StatementStream::new(LIMIT);
        assert!(stream.feed(r#"{"statements": [{"text": "x\\"#).is_empty());
        assert_eq!(stream.feed(r#""}]}"#), vec![json!({"text": "x\\"})]);

        // Split between `\` and the quote it escapes: the quote must not close it.
        let mut stream = StatementStream::new(LIMIT);
        assert!(stream.feed(r#"{"statements": [{"text": "a\"#).is_empty());
        assert!(stream.feed(r#""}"#).is_empty());
        assert_eq!(stream.feed(r#""}]}"#), vec![json!({"text": "a\"}"})]);

        // Split inside a \u escape.
        let mut stream = StatementStream::new(LIMIT);
        assert!(stream.feed(r#"{"statements": [{"text": "\u00"#).is_empty());
        assert_eq!(stream.feed(r#"e9"}]}"#), vec![json!({"text": "é"})]);
    }

    #[test]
    fn key_split_across_chunks_is_recognised() {
        let (_, out) = feed_all(&[r#"{"state"#, r#"ments"#, r#"": [{"text": "k"}]}"#]);
        assert_eq!(out, vec![json!({"text": "k"})]);
    }

    #[test]
    fn only_the_top_level_statements_array_counts() {
        // Nested object with a "statements" key before the real one.
        let (_, out) = feed_all(&[
            r#"{"meta": {"statements": [{"text": "no"}]}, "statements": [{"text": "yes"}]}"#,
        ]);
        assert_eq!(out, vec![json!({"text": "yes"})]);

        // A string value equal to "statements" followed by an array value.
        let (stream, out) = feed_all(&[r#"{"kind": "statements", "x": [{"a": 1}]}"#]);
        assert!(out.is_empty());
        assert_eq!(stream.statements_seen(), 0);

        // "statements" whose value is not an array, then another array.
        let (_, out) = feed_all(&[r#"{"statements": null, "other": [{"a": 1}]}"#]);
        assert!(out.is_empty());

        // Nested arrays inside a statement are not statements themselves.
        let (_, out) = feed_all(&[r#"{"statements": [{"text": "t", "x": [[{"a": 1}]]}]}"#]);
        assert_eq!(out, vec![json!({"text": "t", "x": [[{"a": 1}]]})]);
    }

    #[test]
    fn non_object_elements_are_skipped() {
        let (stream, out) = feed_all(&[r#"{"statements": ["loose", 3, {"text": "b"}, []]}"#]);
        assert_eq!(out, vec![json!({"text": "b"})]);
        assert_eq!(stream.statements_seen(), 1);
    }

    #[test]
    fn malformed_element_is_counted_and_later_ones_still_come() {
        let (stream, out) = feed_all(&[r#"{"statements": [{"text": "a",}, {"text": "b"}]}"#]);
        assert_eq!(out, vec![json!({"text": "b"})]);
        assert_eq!(stream.malformed(), 1);
        assert_eq!(stream.statements_seen(), 1);
    }

    #[test]
    fn preamble_text_is_skipped() {
        let reply = "Sure! Here it is:\n```json\n{\"statements\": [{\"text\": \"p\"}]}\n```";
        let (_, out) = feed_all(&[reply]);
        assert_eq!(out, vec![json!({"text": "p"})]);

        // A balanced {..} in the preamble is not mistaken for the answer.
        let reply = "Format {x} as asked: {\"statements\": [{\"text\": \"q\"}]}";
        let (_, out) = feed_all(&[reply]);
        assert_eq!(out, vec![json!({"text": "q"})]);
    }

    #[test]
    fn text_after_the_answer_object_is_kept_but_not_scanned() {
        let (stream, out) = feed_all(&[
            r#"{"statements": []}"#,
            r#" {"statements": [{"text": "late"}]}"#,
        ]);
        assert!(out.is_empty());
        assert!(stream.text().ends_with("late\"}]}"));
        assert_eq!(stream.bytes_examined, r#"{"statements": []}"#.len());
    }

    #[test]
    fn ten_thousand_statements_in_7_byte_chunks_take_linear_work() {
        let mut reply = String::from("```json\n{\"answerable\": true, \"statements\": [");
        for i in 0..10_000 {
            if i > 0 {
                reply.push_str(", ");
            }
            reply.push_str(&format!(
                r#"{{"text": "Statement {i} says \"}}\".", "citations": [{{"source": {}, "quote": "q\\{i}"}}]}}"#,
                i % 7 + 1
            ));
        }
        reply.push_str("], \"unknowns\": []}\n```");
        assert!(reply.is_ascii());

        let mut stream = StatementStream::new(reply.len());
        let mut count = 0;
        for chunk in reply.as_bytes().chunks(7) {
            let chunk = std::str::from_utf8(chunk).unwrap();
            for value in stream.feed(chunk) {
                assert_eq!(value["text"], format!("Statement {count} says \"}}\"."));
                count += 1;
            }
        }
        assert_eq!(count, 10_000);
        assert_eq!(stream.statements_seen(), 10_000);
        // Every byte up to the end of the object examined exactly once
        // (only the closing fence "\n```" is after the object).
        assert_eq!(stream.bytes_examined, reply.len() - "\n```".len());
        // Each statement parsed once, on its own slice.
        assert!(stream.bytes_parsed < reply.len());
        assert!(!stream.overflowed());
    }

    #[test]
    fn max_bytes_bound() {
        let first = r#"{"statements": [{"text": "a"}, "#;
        let mut stream = StatementStream::new(first.len() + 5);
        assert_eq!(stream.feed(first).len(), 1);
        assert!(!stream.overflowed());
        // Exactly reaching the limit is allowed.
        assert!(stream.feed("{\"t\":").is_empty());
        assert!(!stream.overflowed());
        // One more byte is over: the chunk is dropped and the stream stops.
        assert!(stream.feed("1}]}").is_empty());
        assert!(stream.overflowed());
        assert_eq!(stream.text().len(), first.len() + 5);
        // Even a chunk that would fit is refused after the overflow.
        assert!(stream.feed("").is_empty());
        assert!(stream.feed("}").is_empty());
        assert_eq!(stream.text().len(), first.len() + 5);
        assert_eq!(stream.statements_seen(), 1);
    }

    #[test]
    fn zero_limit_overflows_on_first_byte() {
        let mut stream = StatementStream::new(0);
        assert!(stream.feed("").is_empty());
        assert!(!stream.overflowed());
        assert!(stream.feed("{").is_empty());
        assert!(stream.overflowed());
        assert_eq!(stream.text(), "");
    }
}
