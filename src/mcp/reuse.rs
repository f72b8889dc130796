//! Evidence reused within one MCP session: a `grounded_answer` whose question
//! normalises to that of an earlier grounded run gets that run's report again,
//! without searching or asking the model.
//!
//! Kept apart from the server so that the two rules it holds (what counts as the same
//! question, and how long and how many runs are kept) can be read and tested alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::report::Report;

/// Most grounded runs one session keeps for reuse; the oldest goes first.
pub const MAX_REUSED_RUNS: usize = 64;

/// The key under which a question's run is reused, or `None` when the question has
/// no word or symbol to key it by (such a question is never reused).
///
/// The question is normalised ([`crate::text::normalise`]: case, quotes, dashes,
/// spaces) and cut into tokens, in order: runs of letters and digits, and every
/// symbol on its own (`#`, `+`, `°`, `%`, currency signs, ...), so "Is C# memory
/// safe?", "Is C++ memory safe?" and "Is C memory safe?" get three keys, and word order
/// counts. Punctuation that does not change a question is left out: sentence marks,
/// quotes and brackets, and a hyphen inside a word ("memory-safe" = "memory safe").
/// What does change a number is kept: a minus sign ("-40" is not "40") and a decimal
/// point or comma between digits ("1.5" is not "15").
pub fn reuse_key(question: &str) -> Option<String> {
    let text: Vec<char> = crate::text::normalise(question).chars().collect();
    let mut tokens: Vec<String> = Vec::new();
    let mut word = String::new();
    for (i, &c) in text.iter().enumerate() {
        if c.is_alphanumeric() {
            word.push(c);
            continue;
        }
        let before = i.checked_sub(1).map(|j| text[j]);
        let after = text.get(i + 1).copied();
        let digit = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit());
        let alnum = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        // Inside a number: 1.5, 5,000 (kept in the word, so "1.5" is one token).
        if matches!(c, '.' | ',') && digit(before) && digit(after) {
            word.push(c);
            continue;
        }
        if !word.is_empty() {
            tokens.push(std::mem::take(&mut word));
        }
        let minus_sign = c == '-' && !alnum(before) && digit(after);
        let ignorable = c.is_whitespace()
            || (c == '-' && !minus_sign)
            || matches!(
                c,
                '?' | '!'
                    | '.'
                    | ','
                    | ';'
                    | ':'
                    | '\''
                    | '"'
                    | '('
                    | ')'
                    | '['
                    | ']'
                    | '{'
                    | '}'
                    | '¿'
                    | '¡'
            );
        if !ignorable {
            tokens.push(c.to_string());
        }
    }
    if !word.is_empty() {
        tokens.push(word);
    }
    (!tokens.is_empty()).then(|| tokens.join(" "))
}

/// A session's grounded runs by [`reuse_key`], each with when it finished; shared by
/// every call of the session.
#[derive(Debug, Default)]
pub struct Reused {
    runs: Mutex<HashMap<String, (Instant, Arc<Report>)>>,
}

impl Reused {
    /// An earlier grounded run for `key`, with its age, while it is younger than `ttl`
    /// (older runs are dropped on the way).
    pub fn earlier(&self, key: &str, ttl: Duration) -> Option<(Duration, Arc<Report>)> {
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        runs.retain(|_, (at, _)| at.elapsed() < ttl);
        runs.get(key)
            .map(|(at, report)| (at.elapsed(), Arc::clone(report)))
    }

    /// Keeps a grounded run for reuse, dropping the oldest past [`MAX_REUSED_RUNS`];
    /// nothing is kept when `ttl` is zero (reuse is off).
    pub fn remember(&self, key: String, report: Arc<Report>, ttl: Duration) {
        if ttl.is_zero() {
            return;
        }
        let mut runs = self.runs.lock().unwrap_or_else(|e| e.into_inner());
        if runs.len() >= MAX_REUSED_RUNS
            && let Some(oldest) = runs
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(k, _)| k.clone())
        {
            runs.remove(&oldest);
        }
        runs.insert(key, (Instant::now(), report));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_that_differ_in_case_and_punctuation_share_a_key() {
        assert_eq!(
            reuse_key("Do tardigrades  survive in space?"),
            reuse_key("do tardigrades survive in space")
        );
        assert_eq!(
            reuse_key("Is C memory-safe?"),
            reuse_key("is C memory safe")
        );
        assert_ne!(
            reuse_key("tardigrades in space"),
            reuse_key("tardigrades on earth")
        );
    }

    #[test]
    fn symbols_numbers_and_word_order_make_different_questions() {
        let distinct = [
            "Is C# memory safe?",
            "Is C++ memory safe?",
            "Is C memory-safe",
            "is 40 °C colder than -40 °C?",
            "is -40 °C colder than 40 °C?",
            "is 40 C colder than 40 C?",
            "Is 1.5 bigger than 15?",
            "Is 15 bigger than 1.5?",
            "price in $",
            "price in €",
            "does the dog bite the man",
            "does the man bite the dog",
        ];
        let keys: Vec<_> = distinct.iter().map(|q| reuse_key(q)).collect();
        for (i, a) in keys.iter().enumerate() {
            assert!(a.is_some(), "{}", distinct[i]);
            for (j, b) in keys.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{:?} and {:?} share a key", distinct[i], distinct[j]);
            }
        }
    }

    #[test]
    fn a_question_with_nothing_to_key_is_never_reused() {
        assert_eq!(reuse_key("?!"), None);
        assert_eq!(reuse_key("  ... "), None);
        assert_eq!(reuse_key("#").as_deref(), Some("#"));
    }
}
