//! A conversation as Markdown (`ground chat`'s `/save FILE`): each question as a
//! heading, its answer with the `[n]` markers as footnote references `[^n]`, and the
//! session's sources as the footnotes, numbered as in every answer.
//!
//! Everything in it came from the web or a model, so it passes the sanitiser first.

use std::fmt::Write as _;

use crate::session::Session;
use crate::text::{sanitize_line, sanitize_text};

/// The session as a Markdown document with footnotes.
pub fn markdown(session: &Session) -> String {
    let mut out = format!("# Conversation `{}`\n", session.name);
    for turn in &session.turns {
        let _ = write!(
            out,
            "\n## {}\n\n{}\n",
            sanitize_line(&turn.question),
            footnotes(&sanitize_text(&turn.answer))
        );
        if turn.standalone != turn.question {
            let _ = writeln!(out, "\n*Answered as: {}*", sanitize_line(&turn.standalone));
        }
    }
    let cited: Vec<usize> = session
        .turns
        .iter()
        .flat_map(|t| t.cited.iter().copied())
        .collect();
    let sources: Vec<_> = session
        .evidence
        .sources
        .iter()
        .filter(|s| cited.contains(&s.number))
        .collect();
    if !sources.is_empty() {
        out.push('\n');
    }
    for source in sources {
        let title = sanitize_line(&source.title);
        let url = sanitize_line(&source.url);
        let title = if title.is_empty() { url.clone() } else { title };
        let _ = writeln!(out, "[^{}]: {} <{}>", source.number, title, url);
    }
    out
}

/// `[n]` markers (digits in brackets) as footnote references `[^n]`.
fn footnotes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && after[digits..].starts_with(']') {
            let _ = write!(out, "[^{}]", &after[..digits]);
            rest = &after[digits + 1..];
        } else {
            out.push('[');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::SourceText;
    use crate::session::Turn;

    #[test]
    fn answers_get_footnotes_and_cited_sources_are_listed() {
        let mut session = Session::new("lights").unwrap();
        session.turns.push(Turn {
            question: "when was it first lit?".into(),
            standalone: "when was the Quillfeather Lighthouse first lit".into(),
            answer: "It was first lit in 1871.[1] See [note] and [2x].".into(),
            supported: None,
            cited: vec![1],
            searched: true,
        });
        session.evidence.sources = vec![
            SourceText {
                number: 1,
                url: "https://example.org/light".into(),
                title: "Quillfeather\u{1b}[31m Lighthouse".into(),
                text: String::new(),
            },
            SourceText {
                number: 2,
                url: "https://example.org/other".into(),
                title: "Other".into(),
                text: String::new(),
            },
        ];
        let md = markdown(&session);
        assert!(
            md.contains(
                "## when was it first lit?\n\nIt was first lit in 1871.[^1] See [note] and [2x].\n"
            ),
            "{md}"
        );
        assert!(md.contains("*Answered as: when was the Quillfeather Lighthouse first lit*"));
        assert!(
            md.contains("[^1]: Quillfeather[31m Lighthouse <https://example.org/light>"),
            "{md}"
        );
        assert!(!md.contains("[^2]:"), "uncited sources are left out");
        assert!(!md.contains('\u{1b}'));
    }
}
