//! The render stage: the report for a person (text or Markdown) or as one JSON object
//! for scripts.
//!
//! Everything that came from a web page or a model passes through [`sanitize_text`]
//! before it reaches a terminal, so no page can send escape sequences (colour, cursor
//! moves, hyperlinks, title changes) or bidirectional overrides. `--json` output is
//! exact JSON (serde escapes control characters itself).

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::error::Error;
use crate::grounding::{self, Statement};
use crate::pipeline::{AnswerMode, Report};

/// Version of the `--json` shape; bumped on any incompatible change.
pub const JSON_VERSION: u32 = 1;

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

/// Removes control characters (keeping newline and tab) and bidirectional-override
/// characters from untrusted text.
pub fn sanitize_text(text: &str) -> String {
    text.chars()
        .filter(|&c| {
            (c == '\n' || c == '\t' || !c.is_control())
                && !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
        })
        .collect()
}

/// Like [`sanitize_text`], and also folds all whitespace to single spaces: for text
/// that must stay on one line (titles, URLs, error messages).
pub fn sanitize_line(text: &str) -> String {
    sanitize_text(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
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

fn markers(statement: &Statement) -> Vec<usize> {
    statement
        .verified_sources()
        .into_iter()
        .map(|(n, _)| n)
        .collect()
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
        let mut line = String::new();
        for statement in &answer.statements {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&sanitize_line(&statement.text));
            let cited = markers(statement);
            if cited.is_empty() {
                line.push(' ');
                line.push_str(&paint.yellow("[unsupported]"));
            } else {
                for n in cited {
                    line.push_str(&paint.cyan(&format!("[{n}]")));
                }
            }
        }
        let _ = writeln!(out, "{line}");
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
        let title = if source.title.is_empty() {
            "(untitled)".to_string()
        } else {
            sanitize_line(&source.title)
        };
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

/// "2 quotes verified", "cited, quote not found", "not cited".
fn source_mark(report: &Report, number: usize) -> String {
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
        let mut line = String::new();
        for statement in &answer.statements {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&escape_markdown(&sanitize_line(&statement.text)));
            let cited = markers(statement);
            if cited.is_empty() {
                line.push_str(" *(unsupported)*");
            }
            for n in cited {
                let _ = write!(line, "[^{n}]");
            }
        }
        let _ = writeln!(out, "{line}");
    }
    if !answer.unknowns.is_empty() {
        out.push_str("\n**Not settled by the sources:**\n\n");
        for unknown in &answer.unknowns {
            let _ = writeln!(out, "- {}", escape_markdown(&sanitize_line(unknown)));
        }
    }
    out.push('\n');
    for source in &report.sources {
        let title = if source.title.is_empty() {
            "(untitled)".to_string()
        } else {
            sanitize_line(&source.title)
        };
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

/// The `--json` object (shape documented in README, version [`JSON_VERSION`]).
pub fn json(report: &Report) -> Value {
    let answer = &report.answer;
    let source_of = |n: usize| &report.sources[n - 1];
    let citations: Vec<Value> = answer
        .statements
        .iter()
        .enumerate()
        .flat_map(|(si, s)| s.citations.iter().map(move |c| (si, c)))
        .map(|(si, c)| {
            json!({
                "statement": si,
                "source": c.source,
                "source_url": source_of(c.source).url,
                "title": source_of(c.source).title,
                "text": c.quote,
                "verified": c.verified,
                "confidence": c.confidence,
                "match": c.matched,
            })
        })
        .collect();
    let statements: Vec<Value> = answer
        .statements
        .iter()
        .map(|s| {
            json!({
                "text": s.text,
                "start_index": s.start,
                "end_index": s.end,
                "supported": s.supported(),
                "sources": markers(s),
            })
        })
        .collect();
    let sources: Vec<Value> = report
        .pages
        .iter()
        .map(|p| {
            let cut = p
                .index
                .and_then(|i| report.context.sources.iter().find(|c| c.number == i));
            json!({
                "index": p.index,
                "url": p.url,
                "final_url": p.final_url,
                "title": p.title,
                "status": p.status,
                "http_status": p.http_status,
                "content_type": p.content_type,
                "chars": p.chars,
                "chars_fetched": p.chars_fetched,
                "chars_sent": cut.map(|c| c.chars_sent).unwrap_or(0),
                "truncated": cut.is_some_and(|c| c.truncated),
                "body_truncated": p.body_truncated,
                "cached": p.cached,
                "error": p.error,
                "ms": p.ms,
            })
        })
        .collect();
    json!({
        "version": JSON_VERSION,
        "question": report.question,
        "answer": answer.answer,
        "grounded": report.mode == AnswerMode::Grounded && answer.grounded(),
        "mode": report.mode.name(),
        "offline_reason": match &report.mode {
            AnswerMode::Offline { reason } => Some(reason.as_str()),
            _ => None,
        },
        "decision": report.decision,
        "searches": report.searches,
        "answerable": answer.answerable,
        "statements": statements,
        "citations": citations,
        "rejected_citations": answer.rejected,
        "unknowns": answer.unknowns,
        "sources": sources,
        "groundingMetadata": grounding::grounding_metadata(answer, &report.sources, &report.queries),
        "model": report.model,
        "context": {
            "budget_tokens": report.context.budget_tokens,
            "estimated_tokens": report.context.estimated_tokens,
        },
        "timings_ms": report.timings,
        "warnings": report.warnings,
    })
}

/// The grounding pack (`--pack`): evidence for apps instead of prose. Every key point
/// carries verified citations (the same quote check as answers); a statement without
/// one is moved to `disputed_or_uncertain`, next to what the model itself called
/// unsettled.
pub fn pack(report: &Report) -> Value {
    let answer = &report.answer;
    let grounded_run = report.mode == AnswerMode::Grounded;
    let source_ref = |n: usize| {
        let s = &report.sources[n - 1];
        json!({"index": n, "url": s.url, "title": s.title})
    };
    let mut key_points = Vec::new();
    let mut uncertain = Vec::new();
    for statement in &answer.statements {
        let verified = statement.verified_sources();
        if grounded_run && !verified.is_empty() {
            let confidence = verified.iter().map(|(_, c)| *c).fold(0.0, f64::max);
            let quotes: Vec<Value> = statement
                .citations
                .iter()
                .filter(|c| c.verified)
                .map(|c| json!({"source": c.source, "text": c.quote, "confidence": c.confidence}))
                .collect();
            key_points.push(json!({
                "text": statement.text,
                "sources": verified.iter().map(|(n, _)| source_ref(*n)).collect::<Vec<_>>(),
                "quotes": quotes,
                "confidence": confidence,
            }));
        } else {
            let reason = if !grounded_run {
                "answered without sources".to_string()
            } else if statement.citations.is_empty() {
                "no citation".to_string()
            } else {
                let cited: Vec<String> = statement
                    .citations
                    .iter()
                    .map(|c| c.source.to_string())
                    .collect();
                format!(
                    "the quoted text was not found in source {}",
                    cited.join(", ")
                )
            };
            uncertain.push(json!({"text": statement.text, "reason": reason}));
        }
    }
    for unknown in &answer.unknowns {
        uncertain.push(json!({"text": unknown, "reason": "the sources do not settle this"}));
    }
    json!({
        "version": JSON_VERSION,
        "question": report.question,
        "mode": report.mode.name(),
        "grounded": grounded_run && answer.grounded(),
        "key_points": key_points,
        "disputed_or_uncertain": uncertain,
        "what_to_ask_user": report.ask_user,
        "sources": report.sources.iter().map(|s| json!({"index": s.number, "url": s.url, "title": s.title})).collect::<Vec<_>>(),
        "webSearchQueries": report.queries,
        "model": report.model,
        "timings_ms": report.timings,
        "warnings": report.warnings,
    })
}

/// The `--json` object for a failed run: the error and what was asked, under
/// `input_name` ("question" for answer, "query" for search, "url" for fetch).
pub fn json_error(input_name: &str, input: &str, error: &Error) -> Value {
    json!({
        "version": JSON_VERSION,
        input_name: input,
        "error": {
            "kind": error.kind(),
            "message": error.to_string(),
            "hint": error.hint(),
            "exit_code": error.exit_code(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_controls_are_removed() {
        let evil = "safe\x1b]0;pwned\x07 text\x1b[31m red\u{202E}drow\r\n next";
        let clean = sanitize_text(evil);
        assert!(!clean.contains('\x1b'));
        assert!(!clean.contains('\x07'));
        assert!(!clean.contains('\r'));
        assert!(!clean.contains('\u{202E}'));
        assert!(clean.contains('\n'));
        assert_eq!(sanitize_line("a\n\tb"), "a b");
    }
}
