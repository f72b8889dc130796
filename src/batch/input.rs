//! A batch's input, line by line: JSON Lines (`{"id": ..., "question": ..., ...}`, the
//! other keys passed through to the output) or plain text (one question a line, its
//! line number the id). The format is the first non-blank line's: a `{` opens JSON
//! Lines. Every line becomes an [`Entry`]: a question to ask, or the failure that is
//! its record (not JSON, no question, an empty or over-long question, a duplicate id),
//! so one bad line never stops the batch.

use std::collections::HashSet;

use serde_json::{Map, Value};

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

/// One line's work: the question to ask, or the failure to record for it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The id as the input gave it (a JSON string or number), else the line number.
    pub id: Value,
    /// The id's string form: what resumption and shards go by ([`key_of`]).
    pub key: String,
    /// The line number, from 1.
    pub line: usize,
    /// The input's other keys, passed through to the record.
    pub extra: Map<String, Value>,
    /// The question, or why the line cannot be asked.
    pub question: Result<String, Failure>,
}

/// The string form of an id: a JSON string as is, anything else as JSON writes it
/// (`7`, `7.5`, `true`).
pub fn key_of(id: &Value) -> String {
    match id {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
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

/// Every non-blank line of `lines` as an [`Entry`], in input order.
pub fn parse(lines: Vec<Line>) -> Vec<Entry> {
    let json_lines = lines
        .iter()
        .find_map(|l| match &l.text {
            Ok(text) if text.trim().is_empty() => None,
            Ok(text) => Some(text.trim_start().starts_with('{')),
            Err(_) => None,
        })
        .unwrap_or(false);
    let mut seen = HashSet::new();
    let mut entries = Vec::new();
    for line in lines {
        if matches!(&line.text, Ok(text) if text.trim().is_empty()) {
            continue;
        }
        let mut entry = if json_lines {
            json_entry(&line)
        } else {
            text_entry(&line)
        };
        if !seen.insert(entry.key.clone()) && entry.question.is_ok() {
            entry.question = Err(bad(
                format!(
                    "line {}: the id {} is used by an earlier line",
                    entry.line, entry.id
                ),
                "give every question its own id",
            ));
        }
        entries.push(entry);
    }
    entries
}

/// A plain-text line: the question, its line number the id.
fn text_entry(line: &Line) -> Entry {
    let question = match &line.text {
        Ok(text) => checked(line.number, text.trim()),
        Err(problem) => Err(unreadable(line.number, problem)),
    };
    Entry {
        id: Value::from(line.number),
        key: line.number.to_string(),
        line: line.number,
        extra: Map::new(),
        question,
    }
}

/// A JSON Lines line: `id` (a string or number; the line number when absent),
/// `question`, and the other keys kept.
fn json_entry(line: &Line) -> Entry {
    let by_line = |question| Entry {
        id: Value::from(line.number),
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
        None | Some(Value::Null) => Value::from(line.number),
        Some(id @ (Value::String(_) | Value::Number(_))) => id,
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
        key: key_of(&id),
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
}
