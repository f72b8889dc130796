//! The report for a person: plain text (coloured on a terminal) or Markdown, with
//! `[n]` markers after each statement and the numbered sources below.
//!
//! Everything that came from a web page or a model passes through
//! [`sanitize_text`](crate::text::sanitize_text) before it reaches a terminal, so no
//! page can send escape sequences (colour, cursor moves, hyperlinks, title changes)
//! or bidirectional overrides.

use std::fmt::Write as _;

use crate::grounding::Statement;
use crate::render::json::markers;
use crate::report::{AnswerMode, Report};
use crate::text::{sanitize_line, sanitize_text};

/// Person-output styles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Plain text, optionally coloured.
    Text {
        /// Use ANSI colours.
        colour: bool,
    },
    /// Markdown with footnote links.
    Markdown,
}

struct Paint {
    on: bool,
}

impl Paint {
    fn wrap(&self, code: &str, text: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }
    fn bold(&self, t: &str) -> String {
        self.wrap("1", t)
    }
    fn dim(&self, t: &str) -> String {
        self.wrap("2", t)
    }
    fn cyan(&self, t: &str) -> String {
        self.wrap("36", t)
    }
    fn yellow(&self, t: &str) -> String {
        self.wrap("33", t)
    }
}

/// The answer for a person.
pub fn person(report: &Report, style: Style) -> String {
    match style {
        Style::Text { colour } => text(report, &Paint { on: colour }),
        Style::Markdown => markdown(report),
    }
}

/// One statement as it appears in the answer's first line: its text and its `[n]`
/// markers (or `[unsupported]`). The line is these parts joined by single spaces, so a
/// statement can be printed the moment it is checked, before the rest of the report.
pub fn statement_part(statement: &Statement, style: Style) -> String {
    match style {
        Style::Text { colour } => text_part(statement, &Paint { on: colour }),
        Style::Markdown => markdown_part(statement),
    }
}

/// The parts ([`statement_part`]) of the report's first line, when that line is the
/// answer's statements (a grounded, answerable run); `None` otherwise. [`person`]'s
/// output starts with these parts joined by spaces and a newline.
pub fn statement_parts(report: &Report, style: Style) -> Option<Vec<String>> {
    let answerable = report.answer.answerable && ungrounded_label(report).is_none();
    answerable.then(|| {
        report
            .answer
            .statements
            .iter()
            .map(|s| statement_part(s, style))
            .collect()
    })
}

fn text_part(statement: &Statement, paint: &Paint) -> String {
    let mut part = sanitize_line(&statement.text);
    let cited = markers(statement);
    if cited.is_empty() {
        part.push(' ');
        part.push_str(&paint.yellow("[unsupported]"));
    } else {
        for n in cited {
            part.push_str(&paint.cyan(&format!("[{n}]")));
        }
    }
    part
}

fn markdown_part(statement: &Statement) -> String {
    let mut part = escape_markdown(&sanitize_line(&statement.text));
    let cited = markers(statement);
    if cited.is_empty() {
        part.push_str(" *(unsupported)*");
    }
    for n in cited {
        let _ = write!(part, "[^{n}]");
    }
    part
}

/// The label an answer without sources carries, or `None` for a grounded run.
fn ungrounded_label(report: &Report) -> Option<String> {
    match &report.mode {
        AnswerMode::Grounded => None,
        AnswerMode::NoSearchNeeded => {
            let reasons = report
                .decision
                .as_ref()
                .map(|d| d.reason_codes.join(", "))
                .unwrap_or_default();
            Some(format!(
                "Not grounded: answered from the model's own knowledge, no search needed{}.",
                if reasons.is_empty() {
                    String::new()
                } else {
                    format!(" ({reasons})")
                }
            ))
        }
        AnswerMode::Offline { reason } => Some(format!(
            "Not grounded: search unavailable ({}); answered from the model's own knowledge.",
            sanitize_line(reason)
        )),
    }
}

fn text(report: &Report, paint: &Paint) -> String {
    let mut out = String::new();
    let answer = &report.answer;
    if let Some(label) = ungrounded_label(report) {
        let _ = writeln!(
            out,
            "{}
",
            paint.yellow(&label)
        );
        let _ = writeln!(out, "{}", sanitize_text(&answer.answer));
        return out;
    }
    if !answer.answerable {
        let _ = writeln!(
            out,
            "{}",
            paint.yellow("The sources found do not answer this question.")
        );
    } else {
        let parts: Vec<String> = answer
            .statements
            .iter()
            .map(|s| text_part(s, paint))
            .collect();
        let _ = writeln!(out, "{}", parts.join(" "));
    }
    if !answer.unknowns.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold("Not settled by the sources:"));
        for unknown in &answer.unknowns {
            let _ = writeln!(out, "  - {}", sanitize_line(unknown));
        }
    }
    let _ = writeln!(out, "\n{}", paint.bold("Sources:"));
    for source in &report.sources {
        let mark = source_mark(report, source.number);
        let title = source_title(source);
        let _ = writeln!(
            out,
            "  {} {} {}",
            paint.cyan(&format!("[{}]", source.number)),
            title,
            paint.dim(&format!("({mark})"))
        );
        let _ = writeln!(out, "      {}", sanitize_line(&source.url));
    }
    if !answer.rejected.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            paint.yellow(&format!(
                "{} citation(s) named sources that do not exist and were dropped.",
                answer.rejected.len()
            ))
        );
    }
    out
}

/// A source's title for the list, one safe line, or "(untitled)".
fn source_title(source: &crate::context::SourceText) -> String {
    if source.title.is_empty() {
        "(untitled)".to_string()
    } else {
        sanitize_line(&source.title)
    }
}

/// "2 quotes verified", "cited, quote not found", "not cited"; a search-result
/// snippet says so first ("search snippet, not cited").
fn source_mark(report: &Report, number: usize) -> String {
    let mark = citation_mark(report, number);
    if report.is_snippet(number) {
        format!("search snippet, {mark}")
    } else {
        mark
    }
}

/// How the answer cited source `number`.
fn citation_mark(report: &Report, number: usize) -> String {
    let cites = report
        .answer
        .statements
        .iter()
        .flat_map(|s| &s.citations)
        .filter(|c| c.source == number);
    let (verified, unverified) =
        cites.fold(
            (0, 0),
            |(v, u), c| if c.verified { (v + 1, u) } else { (v, u + 1) },
        );
    match (verified, unverified) {
        (0, 0) => "not cited".into(),
        (0, u) => format!(
            "cited, {u} quote{} not found on the page",
            if u == 1 { "" } else { "s" }
        ),
        (v, 0) => format!("{v} quote{} verified", if v == 1 { "" } else { "s" }),
        (v, u) => format!("{v} verified, {u} not found"),
    }
}

fn markdown(report: &Report) -> String {
    let mut out = String::new();
    let answer = &report.answer;
    if let Some(label) = ungrounded_label(report) {
        let _ = writeln!(out, "> **{}**\n", escape_markdown(&label));
        let _ = writeln!(out, "{}", escape_markdown(&sanitize_text(&answer.answer)));
        return out;
    }
    if !answer.answerable {
        out.push_str("**The sources found do not answer this question.**\n");
    } else {
        let parts: Vec<String> = answer.statements.iter().map(markdown_part).collect();
        let _ = writeln!(out, "{}", parts.join(" "));
    }
    if !answer.unknowns.is_empty() {
        out.push_str("\n**Not settled by the sources:**\n\n");
        for unknown in &answer.unknowns {
            let _ = writeln!(out, "- {}", escape_markdown(&sanitize_line(unknown)));
        }
    }
    out.push('\n');
    for source in &report.sources {
        let title = source_title(source);
        let _ = writeln!(
            out,
            "[^{}]: [{}](<{}>) ({})",
            source.number,
            escape_markdown(&title),
            sanitize_line(&source.url).replace(['<', '>'], ""),
            source_mark(report, source.number)
        );
    }
    out
}

fn escape_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '#' | '|'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
