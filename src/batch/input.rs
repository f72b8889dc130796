//! A batch's input, line by line: JSON Lines (`{"id": ..., "question": ..., ...}`, the
//! other keys passed through to the output) or plain text (one question a line, its
//! line number the id). The format is the first non-blank line's: a `{` opens JSON
//! Lines. Every line becomes an [`Entry`]: a question to ask, or the failure that is
//! its record (not JSON, no question, an empty or over-long question, a duplicate id),
//! so one bad line never stops the batch.
//!
//! Lines are taken one at a time ([`Parser`]), so a batch holds the questions under
//! way, not the whole file; what it keeps of every line is its id (to find a
//! duplicate). A number id is kept as the input wrote it ([`Id::Number`]): read as a
//! float, ids past 2^53 would change and ids past 2^64 collapse into one.

use std::collections::HashSet;
use std::fmt;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::Error;
use crate::service::Failure;

/// One line as the caller's bounded reader gave it: its text, or what is wrong with
/// it (over-long, not UTF-8).
#[derive(Debug, Clone)]
pub struct Line {
    /// The line's number, from 1.
    pub number: usize,
    /// The text without its end, or what made it unreadable.
    pub text: Result<String, String>,
}

/// A question's id: a JSON string, or a number kept as the JSON text the input wrote
/// (a record's id is the input's, byte for byte, however many digits it has).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Id {
    /// A string id.
    String(String),
    /// A number id (a line number too), as JSON text: `7`, `-3`, `18446744073709551616`,
    /// `7.50`.
    Number(String),
}

impl Id {
    /// A line number as an id.
    pub fn line(number: usize) -> Id {
        Id::Number(number.to_string())
    }

    /// The id in a JSON value's raw text (a string or a number; `None` otherwise).
    pub fn from_raw(raw: &RawValue) -> Option<Id> {
        let text = raw.get();
        match text.as_bytes().first()? {
            b'"' => serde_json::from_str(text).ok().map(Id::String),
            b'-' | b'0'..=b'9' => Some(Id::Number(text.to_string())),
            _ => None,
        }
    }

    /// The id's string form, what resumption and shards go by: a string as is, a
    /// number as serde_json writes it (`7`, `7.50` is `7.5`, `1e3` is `1000.0`, as
    /// every version has), except an integer past 64 bits, which a float would change:
    /// that is kept digit for digit.
    pub fn key(&self) -> String {
        match self {
            Id::String(text) => text.clone(),
            Id::Number(text) => {
                let digits = text.strip_prefix('-').unwrap_or(text);
                let integer = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
                if integer && text.parse::<i64>().is_err() && text.parse::<u64>().is_err() {
                    return text.clone();
                }
                serde_json::from_str::<Value>(text)
                    .map_or_else(|_| text.clone(), |number| number.to_string())
            }
        }
    }

    /// The id as JSON text, as the record writes it ([`crate::text::json_line`] for a
    /// string, so a string id is escaped as every `--json` string is).
    pub fn json(&self) -> String {
        match self {
            Id::String(text) => crate::text::json_line(&Value::String(text.clone())),
            Id::Number(text) => text.clone(),
        }
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json())
    }
}

/// One line's work: the question to ask, or the failure to record for it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The id as the input gave it (a JSON string or number), else the line number.
    pub id: Id,
    /// The id's string form: what resumption and shards go by ([`Id::key`]).
    pub key: String,
    /// The line number, from 1.
    pub line: usize,
    /// The input's other keys, passed through to the record.
    pub extra: Map<String, Value>,
    /// The question, or why the line cannot be asked.
    pub question: Result<String, Failure>,
}

/// A bad line's failure: kind `invalid_input`, with what to fix.
fn bad(message: String, hint: &str) -> Failure {
    Failure {
        kind: "invalid_input",
        message,
        hint: Some(hint.into()),
        exit_code: crate::error::exit::USAGE,
        deadline: false,
    }
}

/// Turns lines into entries one at a time: the format is decided by the first
/// non-blank readable line, and (unless made [`Parser::keys_only`]) each id is
/// remembered to find a later line's duplicate.
#[derive(Debug, Default)]
pub struct Parser {
    json_lines: Option<bool>,
    seen: Option<HashSet<Box<str>>>,
}

impl Parser {
    /// A parser that finds duplicate ids (it keeps every id it has seen).
    pub fn new() -> Parser {
        Parser {
            json_lines: None,
            seen: Some(HashSet::new()),
        }
    }

    /// A parser for counting: each entry's id and question as [`Parser::new`] gives
    /// them, but a duplicate id is not found (nothing is kept from line to line).
    pub fn keys_only() -> Parser {
        Parser {
            json_lines: None,
            seen: None,
        }
    }

    /// The line's entry, `None` for a blank line.
    pub fn entry(&mut self, line: &Line) -> Option<Entry> {
        let json_lines = match &line.text {
            Ok(text) if text.trim().is_empty() => return None,
            Ok(text) => *self
                .json_lines
                .get_or_insert_with(|| text.trim_start().starts_with('{')),
            // An unreadable line is the same entry in either format.
            Err(_) => self.json_lines.unwrap_or(false),
        };
        let mut entry = if json_lines {
            json_entry(line)
        } else {
            text_entry(line)
        };
        if let Some(seen) = &mut self.seen
            && !seen.insert(entry.key.as_str().into())
            && entry.question.is_ok()
        {
            entry.question = Err(bad(
                format!(
                    "line {}: the id {} is used by an earlier line",
                    entry.line, entry.id
                ),
                "give every question its own id",
            ));
        }
        Some(entry)
    }
}

/// The entries of `lines`, read one at a time; a line that cannot be read ends them
/// with its error.
pub struct Entries<I> {
    lines: I,
    parser: Parser,
}

impl<I> Entries<I> {
    /// Entries of `lines` by `parser`.
    pub fn new(lines: I, parser: Parser) -> Self {
        Entries { lines, parser }
    }
}

impl<I: Iterator<Item = Result<Line, Error>>> Iterator for Entries<I> {
    type Item = Result<Entry, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.lines.next()? {
                Ok(line) => {
                    if let Some(entry) = self.parser.entry(&line) {
                        return Some(Ok(entry));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Every non-blank line of `lines` as an [`Entry`], in input order.
pub fn parse(lines: Vec<Line>) -> Vec<Entry> {
    let mut parser = Parser::new();
    lines.iter().filter_map(|l| parser.entry(l)).collect()
}

/// A plain-text line: the question, its line number the id.
fn text_entry(line: &Line) -> Entry {
    let question = match &line.text {
        Ok(text) => checked(line.number, text.trim()),
        Err(problem) => Err(unreadable(line.number, problem)),
    };
    Entry {
        id: Id::line(line.number),
        key: line.number.to_string(),
        line: line.number,
        extra: Map::new(),
        question,
    }
}

/// Only a line's `id`, as the JSON text it is written in.
#[derive(serde::Deserialize)]
struct RawId<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
}

/// A JSON Lines line: `id` (a string or number; the line number when absent),
/// `question`, and the other keys kept.
fn json_entry(line: &Line) -> Entry {
    let by_line = |question| Entry {
        id: Id::line(line.number),
        key: line.number.to_string(),
        line: line.number,
        extra: Map::new(),
        question,
    };
    let text = match &line.text {
        Ok(text) => text,
        Err(problem) => return by_line(Err(unreadable(line.number, problem))),
    };
    let mut object = match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(object)) => object,
        Ok(_) | Err(_) => {
            return by_line(Err(bad(
                format!("line {} is not a JSON object", line.number),
                "write each line as {\"id\": ..., \"question\": \"...\"}",
            )));
        }
    };
    let id = match object.remove("id") {
        None | Some(Value::Null) => Id::line(line.number),
        Some(Value::String(id)) => Id::String(id),
        // The number as written: read again for its text (a Value holds a float).
        Some(Value::Number(number)) => serde_json::from_str::<RawId>(text)
            .ok()
            .and_then(|raw| Id::from_raw(raw.id))
            .unwrap_or_else(|| Id::Number(number.to_string())),
        Some(_) => {
            return by_line(Err(bad(
                format!(
                    "line {}: the id is neither a string nor a number",
                    line.number
                ),
                "give each line an id that is a string or a number",
            )));
        }
    };
    let question = match object.remove("question") {
        Some(Value::String(question)) => checked(line.number, question.trim()),
        _ => Err(bad(
            format!("line {} has no \"question\" string", line.number),
            "write each line as {\"id\": ..., \"question\": \"...\"}",
        )),
    };
    Entry {
        key: id.key(),
        id,
        line: line.number,
        extra: object,
        question,
    }
}

/// The question, unless it is empty or longer than a question may be.
fn checked(number: usize, question: &str) -> Result<String, Failure> {
    if question.is_empty() {
        return Err(bad(
            format!("line {number}: the question is empty"),
            "write a question on the line, or remove the line",
        ));
    }
    crate::pipeline::check_question_length(question).map_err(|e| {
        let mut failure = Failure::from(e);
        failure.kind = "invalid_input";
        failure.message = format!("line {number}: {}", failure.message);
        failure
    })?;
    Ok(question.to_string())
}

/// A line the reader could not take (over-long, not UTF-8).
fn unreadable(number: usize, problem: &str) -> Failure {
    bad(
        format!("line {number} {problem}"),
        "write one question per line, as UTF-8 text, each shorter than a question's limit",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<Line> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Line {
                number: i + 1,
                text: Ok(t.to_string()),
            })
            .collect()
    }

    #[test]
    fn plain_text_ids_are_line_numbers_and_blank_lines_are_skipped() {
        let entries = parse(lines(&["why is the sky blue", "", "  what is rust  "]));
        let ids: Vec<_> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(ids, ["1", "3"]);
        assert_eq!(entries[1].question.as_ref().unwrap(), "what is rust");
    }

    #[test]
    fn json_lines_keep_extra_keys_and_refuse_bad_lines() {
        let entries = parse(lines(&[
            r#"{"id": "a", "question": "q1", "topic": "x"}"#,
            "not json",
            r#"{"id": "a", "question": "q2"}"#,
            r#"{"id": 7, "question": "  "}"#,
        ]));
        assert_eq!(entries[0].extra["topic"], "x");
        assert_eq!(entries[1].key, "2");
        let kinds: Vec<_> = entries.iter().map(|e| e.question.is_ok()).collect();
        assert_eq!(kinds, [true, false, false, false]);
        let duplicate = entries[2].question.as_ref().unwrap_err();
        assert!(duplicate.message.contains("used by an earlier line"));
        assert_eq!(entries[3].key, "7");
    }

    #[test]
    fn number_ids_keep_every_digit() {
        let entries = parse(lines(&[
            r#"{"id": 18446744073709551616, "question": "q1"}"#,
            r#"{"id":18446744073709551617, "question": "q2"}"#,
            r#"{"question": "q3", "id":  -99999999999999999999999 }"#,
            r#"{"id": 7.50, "question": "q4"}"#,
            r#"{"id": 12, "question": "q5"}"#,
            r#"{"id": -0, "question": "q6"}"#,
        ]));
        let ids: Vec<String> = entries.iter().map(|e| e.id.json()).collect();
        assert_eq!(
            ids,
            [
                "18446744073709551616",
                "18446744073709551617",
                "-99999999999999999999999",
                "7.50",
                "12",
                "-0"
            ]
        );
        let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(
            keys,
            [
                "18446744073709551616",
                "18446744073709551617",
                "-99999999999999999999999",
                "7.5",
                "12",
                "-0.0"
            ]
        );
        // Two ids past 2^64 that a float would make one are not duplicates.
        assert!(entries.iter().all(|e| e.question.is_ok()));
    }

    #[test]
    fn the_format_is_the_first_readable_lines_and_counting_keeps_nothing() {
        let mut input = lines(&[
            "",
            r#"{"id": "a", "question": "q"}"#,
            r#"{"id": "a", "question": "q"}"#,
        ]);
        input.insert(
            0,
            Line {
                number: 0,
                text: Err("is longer than 8000 bytes".into()),
            },
        );
        let counted: Vec<Entry> = {
            let mut parser = Parser::keys_only();
            input.iter().filter_map(|l| parser.entry(l)).collect()
        };
        assert_eq!(counted.len(), 3);
        assert!(counted[0].question.is_err());
        assert_eq!(counted[1].key, "a");
        assert!(
            counted[2].question.is_ok(),
            "a counting parser finds no duplicate"
        );
        let asked = parse(input);
        assert!(asked[2].question.is_err(), "the duplicate is found");
    }
}
