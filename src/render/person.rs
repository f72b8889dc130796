//! The report for a person: plain text (coloured on a terminal) or Markdown, with
//! `[n]` markers after each statement and the numbered sources below.
//!
//! `[n]` means source n supports the statement: its verified quote, or a sentence of
//! it that ground found saying the same (the sources list counts which: "1 quote
//! verified, 1 statement matched"). `[n?]` means the statement's quote is really in
//! source n but the statement says something the quote does not (another number or
//! date, or a negation): a note under the answer says what, and it counts as
//! unsupported. `[unsupported]` means nothing supports it. A second note says what the
//! cross-check found in the other sources read: "also [2]" (they support it too),
//! "[3] says 9 June 1936" (one says otherwise).
//!
//! Everything that came from a web page or a model passes through
//! [`sanitize_text`](crate::text::sanitize_text) before it reaches a terminal, so no
//! page can send escape sequences (colour, cursor moves, hyperlinks, title changes)
//! or bidirectional overrides.

use std::fmt::Write as _;

use crate::context::SourceKind;
use crate::grounding::{ConflictKind, Statement, Support};
use crate::render::json::markers;
use crate::report::{AnswerMode, Report};
use crate::text::{sanitize_line, sanitize_text, shorten};

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

/// Colours for a person's output (also `check.rs`'s): none unless the style asks.
pub(super) struct Paint {
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
    pub(super) fn bold(&self, t: &str) -> String {
        self.wrap("1", t)
    }
    pub(super) fn dim(&self, t: &str) -> String {
        self.wrap("2", t)
    }
    pub(super) fn cyan(&self, t: &str) -> String {
        self.wrap("36", t)
    }
    pub(super) fn yellow(&self, t: &str) -> String {
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
    if !cited.is_empty() {
        for n in cited {
            part.push_str(&paint.cyan(&format!("[{n}]")));
        }
    } else if statement.support == Support::Mismatch {
        for (n, _) in statement.verified_sources() {
            part.push_str(&paint.yellow(&format!("[{n}?]")));
        }
    } else {
        part.push(' ');
        part.push_str(&paint.yellow("[unsupported]"));
    }
    part
}

fn markdown_part(statement: &Statement) -> String {
    let mut part = escape_markdown(&sanitize_line(&statement.text));
    let cited = markers(statement);
    if statement.support == Support::Mismatch {
        part.push_str(" *(quote says otherwise)*");
        for (n, _) in statement.verified_sources() {
            let _ = write!(part, "[^{n}]");
        }
    } else if cited.is_empty() {
        part.push_str(" *(unsupported)*");
    }
    for n in cited {
        let _ = write!(part, "[^{n}]");
    }
    part
}

/// The statements marked `[n?]`, each with what its quote does not say, for the
/// note under the answer.
fn mismatches(report: &Report) -> Vec<(String, String)> {
    report
        .answer
        .statements
        .iter()
        .filter(|s| s.support == Support::Mismatch)
        .map(|s| {
            let why = s.mismatch.as_deref().unwrap_or_default();
            (shorten(&sanitize_line(&s.text), 80), sanitize_line(why))
        })
        .collect()
}

/// The statements the cross-check has something to say about, each with what: "also
/// [2]" for other sources that support it, "[3] says 9 June 1936" for one that says
/// otherwise (a negation: "[3] says otherwise"), for the note under the answer.
fn cross_checked(report: &Report) -> Vec<(String, String)> {
    report
        .answer
        .statements
        .iter()
        .filter(|s| !s.corroborated_by.is_empty() || s.contradicted())
        .map(|s| {
            let mut said = Vec::new();
            if !s.corroborated_by.is_empty() {
                let also: Vec<String> =
                    s.corroborated_by.iter().map(|n| format!("[{n}]")).collect();
                said.push(format!("also {}", also.join("")));
            }
            for c in &s.contradicted_by {
                said.push(match c.kind {
                    ConflictKind::Negation => format!("[{}] says otherwise", c.source),
                    _ => format!("[{}] says {}", c.source, sanitize_line(&c.value)),
                });
            }
            (shorten(&sanitize_line(&s.text), 80), said.join("; "))
        })
        .collect()
}

/// The heading of the note on the cross-check.
const CROSS_NOTE: &str = "Checked against every source read:";

/// The heading of the note on `[n?]` statements.
const MISMATCH_NOTE: &str =
    "Marked [n?]: the quote is in source n, but the statement says something it does not:";

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
    let mismatched = mismatches(report);
    if !mismatched.is_empty() {
        let _ = writeln!(out, "\n{}", paint.yellow(MISMATCH_NOTE));
        for (statement, why) in &mismatched {
            let _ = writeln!(out, "  - \"{statement}\": {why}");
        }
    }
    let crossed = cross_checked(report);
    if !crossed.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold(CROSS_NOTE));
        for (statement, said) in &crossed {
            let _ = writeln!(out, "  - \"{statement}\": {said}");
        }
    }
    if !answer.unknowns.is_empty() {
        let _ = writeln!(out, "\n{}", paint.bold("Not settled by the sources:"));
        for unknown in &answer.unknowns {
            let _ = writeln!(out, "  - {}", sanitize_line(unknown));
        }
    }
    let _ = writeln!(out, "\n{}", paint.bold("Sources:"));
    // In a conversation the sources of every earlier turn are numbered here too: the
    // list keeps those this answer was shown or cites, and counts the rest.
    let conversation = report.followup.is_some();
    let listed = |number: usize| {
        !conversation
            || report.used(number)
            || report
                .answer
                .statements
                .iter()
                .any(|s| s.citations.iter().any(|c| c.source == number))
    };
    let earlier = report.sources.iter().filter(|s| !listed(s.number)).count();
    for source in report.sources.iter().filter(|s| listed(s.number)) {
        let mark = source_mark(report, source.number);
        let title = source_title(source);
        let _ = writeln!(
            out,
            "  {} {} {}",
            paint.cyan(&format!("[{}]", source.number)),
            title,
            paint.dim(&format!("({mark})"))
        );
        let _ = writeln!(out, "      {}", source_place(report, source));
    }
    if earlier > 0 {
        let _ = writeln!(
            out,
            "  {}",
            paint.dim(&format!(
                "(and {earlier} more source{} of this conversation, not used in this answer)",
                if earlier == 1 { "" } else { "s" }
            ))
        );
    }
    if !answer.rejected.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            paint.yellow(&format!(
                "{} citation(s) named sources that were not in the prompt and were dropped.",
                answer.rejected.len()
            ))
        );
    }
    out
}

/// Where a source is, one safe line: a local document's `path:line` (`path:12-30`
/// for the lines sent), a page's URL.
fn source_place(report: &Report, source: &crate::context::SourceText) -> String {
    match report.file_location(source.number) {
        Some(file) if file.line_start == file.line_end => {
            sanitize_line(&format!("{}:{}", file.path.display(), file.line_start))
        }
        Some(file) => sanitize_line(&format!(
            "{}:{}-{}",
            file.path.display(),
            file.line_start,
            file.line_end
        )),
        None => sanitize_line(&source.url),
    }
}

/// A source's title for the list, one safe line, or "(untitled)".
fn source_title(source: &crate::context::SourceText) -> String {
    if source.title.is_empty() {
        "(untitled)".to_string()
    } else {
        sanitize_line(&source.title)
    }
}

/// "2 quotes verified", "cited, 1 quote not found on the page", "1 quote verified, 1
/// statement matched", "not cited"; a short source says what it is first ("search
/// snippet, not cited", "infobox, 1 quote verified", "instant answer, not cited",
/// "search result title, not cited"), and so does a page read none of whose text
/// reached the prompt, as other passages matched the question better ("read, not
/// used, not cited").
fn source_mark(report: &Report, number: usize) -> String {
    let mark = citation_mark(report, number);
    match report.kind(number) {
        SourceKind::Snippet => format!("search snippet, {mark}"),
        SourceKind::Infobox => format!("infobox, {mark}"),
        SourceKind::Answer => format!("instant answer, {mark}"),
        SourceKind::Title => format!("search result title, {mark}"),
        SourceKind::Page if !report.used(number) => format!("read, not used, {mark}"),
        SourceKind::Page => mark,
    }
}

/// "Did you mean: a · b", one line, for the search service's corrections of a query
/// (sanitised; Markdown escaped in Markdown); `None` without any. A run that failed
/// for want of results shows it too.
pub fn did_you_mean(corrections: &[String], style: Style) -> Option<String> {
    (!corrections.is_empty()).then(|| {
        format!(
            "{} {}\n",
            paint_of(style).bold("Did you mean:"),
            one_line_each(corrections, style)
        )
    })
}

/// "Related searches: a · b · c", one line, for the search service's suggestions
/// (sanitised; Markdown escaped in Markdown); `None` without any.
pub fn related_searches(suggestions: &[String], style: Style) -> Option<String> {
    (!suggestions.is_empty()).then(|| {
        format!(
            "{} {}\n",
            paint_of(style).dim("Related searches:"),
            one_line_each(suggestions, style)
        )
    })
}

/// The search service's texts as one line: each sanitised (Markdown escaped in
/// Markdown), joined with " · ".
fn one_line_each(texts: &[String], style: Style) -> String {
    texts
        .iter()
        .map(|text| match style {
            Style::Markdown => escape_markdown(&sanitize_line(text)),
            Style::Text { .. } => sanitize_line(text),
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The painter for `style`: colour only for a text style that asks for it.
pub(super) fn paint_of(style: Style) -> Paint {
    Paint {
        on: matches!(style, Style::Text { colour: true }),
    }
}

/// Fewer results than this is "found little": a correction of the query is then
/// worth a "Did you mean" line.
const FEW_RESULTS: usize = 3;

/// The lines that end person output on a terminal: "Did you mean: …" when the search
/// service corrected a query and the run found little (fewer than [`FEW_RESULTS`]
/// results, or no supported statement), and one "Related searches: a · b · c" line.
/// The texts came from the search service: each is one sanitised line (Markdown
/// escaped in Markdown). `None` when there is neither.
pub fn related(report: &Report, style: Style) -> Option<String> {
    let extras = &report.extras;
    let found_little =
        report.hits.len() < FEW_RESULTS || !report.answer.statements.iter().any(|s| s.supported());
    let mut out = String::new();
    if found_little {
        out.push_str(&did_you_mean(&extras.corrections, style).unwrap_or_default());
    }
    out.push_str(&related_searches(&extras.suggestions, style).unwrap_or_default());
    (!out.is_empty()).then_some(out)
}

/// How the answer cited source `number`, and how many statements ground matched in it.
fn citation_mark(report: &Report, number: usize) -> String {
    let (mut verified, mut contradicted, mut unverified, mut matched) = (0, 0, 0, 0);
    for statement in &report.answer.statements {
        for c in statement.citations.iter().filter(|c| c.source == number) {
            match (c.verified, statement.mismatch.is_some()) {
                (false, _) => unverified += 1,
                (true, false) => verified += 1,
                (true, true) => contradicted += 1,
            }
        }
        if statement.support == Support::Match {
            matched += usize::from(statement.matches.iter().any(|m| m.source == number));
        }
    }
    let s = |n: usize| if n == 1 { "" } else { "s" };
    if contradicted == 0 && matched == 0 {
        // The marks from before ground matched statements itself, unchanged.
        return match (verified, unverified) {
            (0, 0) => "not cited".into(),
            (0, u) => format!("cited, {u} quote{} not found on the page", s(u)),
            (v, 0) => format!("{v} quote{} verified", s(v)),
            (v, u) => format!("{v} verified, {u} not found"),
        };
    }
    let mut parts = Vec::new();
    if verified > 0 {
        parts.push(format!("{verified} quote{} verified", s(verified)));
    }
    if matched > 0 {
        parts.push(format!("{matched} statement{} matched", s(matched)));
    }
    if contradicted > 0 {
        parts.push(format!(
            "{contradicted} quote{} not saying what {} statement says",
            s(contradicted),
            if contradicted == 1 { "its" } else { "their" }
        ));
    }
    if unverified > 0 {
        parts.push(format!("{unverified} quote{} not found", s(unverified)));
    }
    parts.join(", ")
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
    let mismatched = mismatches(report);
    if !mismatched.is_empty() {
        let _ = writeln!(
            out,
            "\n**Marked *(quote says otherwise)*: the quote is in the source, but the statement says something it does not:**\n"
        );
        for (statement, why) in &mismatched {
            let _ = writeln!(
                out,
                "- \"{}\": {}",
                escape_markdown(statement),
                escape_markdown(why)
            );
        }
    }
    let crossed = cross_checked(report);
    if !crossed.is_empty() {
        let _ = writeln!(out, "\n**{CROSS_NOTE}**\n");
        for (statement, said) in &crossed {
            let _ = writeln!(
                out,
                "- \"{}\": {}",
                escape_markdown(statement),
                escape_markdown(said)
            );
        }
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

pub(crate) fn escape_markdown(text: &str) -> String {
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
