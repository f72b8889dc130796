//! `ground answer`'s live output, reconciled: which statements to print while the
//! model writes, what is still missing once the report is in, and the lines that say
//! how far the model has got or that an answer was cut off.
//!
//! Statements are printed as parts of the answer's first line (the same parts
//! [`person`](super::person()) joins), so stdout ends up as the person output of the
//! report. The report is the one source of truth: at the end the parts still missing
//! and the rest of the report are added; a statement already shown is never printed
//! again, and when a retry (or the whole-reply parse) changed what was shown, a plain
//! note says so before the corrected statements.
//!
//! All of it is text in, text out, so it can be tested without a terminal; the
//! binary's live output only draws and writes what it is given here.

use crate::grounding::Statement;
use crate::render::person::{statement_part, statement_parts};
use crate::render::{Style, person};
use crate::report::Report;
use crate::text::thousands;

/// The statements printed so far, and whether a later attempt differed from them.
#[derive(Debug, Clone, Default)]
pub struct Shown {
    /// Parts printed on stdout, in order.
    parts: Vec<String>,
    /// Whether a later attempt differed from what was shown (the final answer then
    /// works out where, see `completion`).
    diverged: bool,
}

/// A statement to print next: [`Next::text`] goes to stdout as it is, then
/// [`Shown::printed`] records it.
#[derive(Debug, Clone, PartialEq)]
pub struct Next {
    /// What to write: the statement's part, after a space unless it is the first.
    pub text: String,
    /// The part itself, as recorded once it is printed.
    part: String,
}

impl Shown {
    /// Nothing shown yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many statements were printed.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Whether no statement was printed.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// What to print for statement `index` of an attempt as `style` shows it, or
    /// `None` when nothing is printed: once the answer changed, for a statement
    /// already shown (a different one marks the answer as changed, reported at the
    /// end), or for one that does not come next.
    pub fn next(&mut self, index: usize, statement: &Statement, style: Style) -> Option<Next> {
        if self.diverged {
            return None;
        }
        let part = statement_part(statement, style);
        if let Some(shown) = self.parts.get(index) {
            // A retry's statement where one is already shown: the same is not printed
            // twice; a different one is reported at the end.
            if *shown != part {
                self.diverged = true;
            }
            return None;
        }
        if index != self.parts.len() {
            return None;
        }
        let separator = if self.parts.is_empty() { "" } else { " " };
        Some(Next {
            text: format!("{separator}{part}"),
            part,
        })
    }

    /// Records that `next` was written to stdout.
    pub fn printed(&mut self, next: Next) {
        self.parts.push(next.part);
    }

    /// What stdout still needs at the end of a run that produced `report`, after the
    /// statements shown (all of the person output when none were).
    pub fn rest(&self, report: &Report, style: Style) -> String {
        let full = person(report, style);
        completion(&self.parts, statement_parts(report, style), &full)
    }
}

/// What a stream of the answer's `content` (its first line, as [`statement_parts`]
/// joins them) still needs after the statements `shown`: the rest of the line (all
/// of it when nothing was shown), or, when the final answer differs from what was
/// shown, a note and the corrected statements. No trailing newline.
pub fn rest_of_line(shown: &Shown, report: &Report, style: Style, content: &str) -> String {
    let out = completion(
        &shown.parts,
        statement_parts(report, style),
        &format!("{content}\n"),
    );
    out.strip_suffix('\n').unwrap_or(&out).to_string()
}

/// How far the model has read the prompt, for [`progress_line`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Sources in the prompt.
    pub sources: usize,
    /// Prompt tokens in the model's context.
    pub done: u32,
    /// The prompt's tokens.
    pub total: u32,
    /// Of `done`, those held from an earlier answer (read at no cost).
    pub cached: u32,
    /// Seconds since the model started reading (its first report).
    pub seconds: f64,
}

impl Reading {
    /// Seconds left at the speed so far; `None` until there is a speed to go by.
    fn left(&self) -> Option<f64> {
        let read = self.done.saturating_sub(self.cached);
        if read == 0 || self.seconds < 0.5 {
            return None;
        }
        Some(f64::from(self.total.saturating_sub(self.done)) * self.seconds / f64::from(read))
    }
}

/// The progress line while the model works on attempt `attempt`, `elapsed` seconds
/// after it was asked: reading the prompt (with how far, when the model says:
/// `reading`), or (`writing`: seconds since its first text, and the pieces written)
/// writing, with its speed.
pub fn progress_line(
    attempt: u32,
    elapsed: f64,
    reading: Option<Reading>,
    writing: Option<(f64, u64)>,
) -> String {
    let retry = if attempt > 1 { " (retry)" } else { "" };
    match (writing, reading) {
        (None, Some(r)) => {
            let plural = if r.sources == 1 { "" } else { "s" };
            let left = match r.left() {
                Some(s) => format!(", about {} s left", s.ceil() as u64),
                None => String::new(),
            };
            format!(
                "ground: reading {} source{plural}{retry}: {}/{} tokens{left}",
                r.sources,
                thousands(u64::from(r.done)),
                thousands(u64::from(r.total)),
            )
        }
        (None, None) => format!("ground: the model is reading the prompt{retry}… {elapsed:.1} s"),
        (Some((writing, pieces)), _) => {
            let rate = if writing > 0.05 {
                format!(", {:.1} tokens/s", pieces as f64 / writing)
            } else {
                String::new()
            };
            format!("ground: the model is writing{retry}… {elapsed:.1} s, {pieces} tokens{rate}")
        }
    }
}

/// The note on stderr when a run failed (or was `interrupted`) after `shown`
/// statements were printed: the answer above is cut.
pub fn cut_note(shown: usize, interrupted: bool) -> String {
    let plural = if shown == 1 { "" } else { "s" };
    if interrupted {
        format!(
            "ground: interrupted: the answer above was cut off after {shown} statement{plural}; the rest and its sources were not printed"
        )
    } else {
        format!(
            "ground: the answer above was cut off after {shown} statement{plural}: the model's reply could not be used (see the error below)"
        )
    }
}

/// What stdout still needs after the parts `shown`, given the report's first-line
/// `parts` (`None` when that line is not statements) and its `full` person output.
fn completion(shown: &[String], parts: Option<Vec<String>>, full: &str) -> String {
    if shown.is_empty() {
        return full.to_string();
    }
    let Some(parts) = parts else {
        return format!(
            "\n(The model's final answer differs from the statements shown above; they are withdrawn. The checked answer:)\n{full}"
        );
    };
    let line = format!("{}\n", parts.join(" "));
    let rest = full.strip_prefix(&line).unwrap_or(full);
    if parts.starts_with(shown) {
        let mut out = String::new();
        for part in &parts[shown.len()..] {
            out.push(' ');
            out.push_str(part);
        }
        out.push('\n');
        out.push_str(rest);
        return out;
    }
    let first = shown
        .iter()
        .zip(&parts)
        .position(|(a, b)| a != b)
        .unwrap_or(parts.len());
    let note = if first >= parts.len() {
        format!(
            "(The model's final answer has {} statement{}: the statement{} shown above after that {} withdrawn.)",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            if shown.len() - parts.len() == 1 {
                ""
            } else {
                "s"
            },
            if shown.len() - parts.len() == 1 {
                "is"
            } else {
                "are"
            },
        )
    } else {
        format!(
            "(The model's final answer differs from what is shown above from statement {} on; the checked statements from there:)",
            first + 1
        )
    };
    let mut out = format!("\n{note}\n");
    if first < parts.len() {
        out.push_str(&parts[first..].join(" "));
        out.push('\n');
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{Reading, completion, progress_line};

    fn parts(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_reading_line_counts_tokens_and_the_time_left() {
        let mut reading = Reading {
            sources: 3,
            done: 1_200,
            total: 2_700,
            cached: 0,
            seconds: 20.0,
        };
        assert_eq!(
            progress_line(1, 21.0, Some(reading), None),
            "ground: reading 3 sources: 1,200/2,700 tokens, about 25 s left"
        );
        // What was held from an earlier answer costs nothing: the speed is the rest's.
        reading.cached = 1_000;
        reading.seconds = 2.0;
        assert_eq!(
            progress_line(2, 2.0, Some(reading), None),
            "ground: reading 3 sources (retry): 1,200/2,700 tokens, about 15 s left"
        );
        // No speed yet: no estimate.
        let start = Reading {
            sources: 1,
            done: 0,
            total: 950,
            cached: 0,
            seconds: 0.0,
        };
        assert_eq!(
            progress_line(1, 0.1, Some(start), None),
            "ground: reading 1 source: 0/950 tokens"
        );
        // Once the text comes, the writing line takes over.
        assert!(progress_line(1, 30.0, Some(reading), Some((1.0, 5))).contains("is writing"));
    }

    #[test]
    fn completion_adds_only_what_was_not_shown() {
        let full = "A[1] B[2] C[1]\n\nSources:\n";
        let out = completion(
            &parts(&["A[1]"]),
            Some(parts(&["A[1]", "B[2]", "C[1]"])),
            full,
        );
        assert_eq!(format!("A[1]{out}"), full);
        assert_eq!(completion(&[], None, full), full);
    }

    #[test]
    fn completion_says_plainly_when_the_answer_changed() {
        let full = "A[1] X[2]\n\nSources:\n";
        let out = completion(
            &parts(&["A[1]", "B[2]"]),
            Some(parts(&["A[1]", "X[2]"])),
            full,
        );
        assert_eq!(
            out,
            "\n(The model's final answer differs from what is shown above from statement 2 on; the checked statements from there:)\nX[2]\n\nSources:\n"
        );
        assert!(
            !out.contains("A[1]"),
            "a statement already shown is not printed twice"
        );
        let fewer = completion(
            &parts(&["A[1]", "B[2]"]),
            Some(parts(&["A[1]"])),
            "A[1]\n\nS\n",
        );
        assert!(fewer.contains("withdrawn"), "{fewer}");
        assert!(fewer.ends_with("\n\nS\n"), "{fewer}");
        let none = completion(&parts(&["A[1]"]), None, "No answer.\n");
        assert!(
            none.contains("withdrawn") && none.ends_with("No answer.\n"),
            "{none}"
        );
    }
}
