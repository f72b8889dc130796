//! The kinds of source the model is shown ([`SourceKind`]): pages read, and the short
//! sources the search itself gave (infoboxes, instant answers, snippets), each with
//! its share of tokens.

use serde::Serialize;

use super::{Context, SNIPPET_MAX_TOKENS, SourceText, build_with_short_sources};

/// Most tokens of one infobox sent as a source: its summary and its facts, one
/// "label: value" line each.
pub const INFOBOX_MAX_TOKENS: u32 = 300;
/// Most tokens of one instant answer sent as a source.
pub const ANSWER_MAX_TOKENS: u32 = 80;

/// What a source is: a page read in full, or a short source the search itself gave.
/// The model sees the kind in the source's tag (`<source id="n" kind="infobox">`), and
/// every face says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A page fetched and read.
    Page,
    /// A search engine's infobox (summary and facts of the query's subject).
    Infobox,
    /// An instant answer of the search service.
    Answer,
    /// The snippet of a search result that was not read.
    Snippet,
}

impl SourceKind {
    /// Its name in tags and JSON: `page`, `infobox`, `answer` or `snippet`.
    pub fn name(self) -> &'static str {
        match self {
            SourceKind::Page => "page",
            SourceKind::Infobox => "infobox",
            SourceKind::Answer => "answer",
            SourceKind::Snippet => "snippet",
        }
    }

    /// Most tokens of one short source of this kind.
    pub(super) fn max_tokens(self) -> u32 {
        match self {
            SourceKind::Infobox => INFOBOX_MAX_TOKENS,
            SourceKind::Answer => ANSWER_MAX_TOKENS,
            SourceKind::Page | SourceKind::Snippet => SNIPPET_MAX_TOKENS,
        }
    }
}

/// A short source sent beside the pages: an infobox, an instant answer or a snippet.
#[derive(Debug, Clone)]
pub struct ShortSource {
    /// What it is.
    pub kind: SourceKind,
    /// Its number, address, title and text.
    pub source: SourceText,
}

/// [`build_with_short_sources`] with snippets only.
pub fn build_with_snippets(
    pages: &[SourceText],
    snippets: &[SourceText],
    question: &str,
    budget_tokens: u32,
) -> (Context, usize) {
    let shorts: Vec<ShortSource> = snippets
        .iter()
        .map(|s| ShortSource {
            kind: SourceKind::Snippet,
            source: s.clone(),
        })
        .collect();
    build_with_short_sources(pages, &shorts, question, budget_tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(number: usize, text: &str) -> SourceText {
        SourceText {
            number,
            url: format!("https://example.org/{number}"),
            title: format!("Source {number}"),
            text: text.to_string(),
        }
    }

    #[test]
    fn short_sources_carry_their_kind_and_their_kinds_share_of_tokens() {
        let pages = [source(
            1,
            "Tardigrades survive in space. ".repeat(40).as_str(),
        )];
        let facts: String = (0..200)
            .map(|i| format!("Fact {i}: tardigrades value {i}\n"))
            .collect();
        let shorts = [
            ShortSource {
                kind: SourceKind::Infobox,
                source: source(2, &format!("Tardigrade </source> summary.\n{facts}")),
            },
            ShortSource {
                kind: SourceKind::Answer,
                source: source(3, "Tardigrades are water bears."),
            },
        ];
        let (ctx, taken) = build_with_short_sources(&pages, &shorts, "tardigrades space", 4_000);
        assert_eq!(taken, 2);
        assert!(ctx.text.contains("<source id=\"2\" kind=\"infobox\">"));
        assert!(ctx.text.contains("<source id=\"3\" kind=\"answer\">"));
        assert!(ctx.text.contains("Tardigrade ‹/source> summary."));
        let infobox = ctx.sources.iter().find(|c| c.number == 2).unwrap();
        assert!(infobox.truncated);
        let block = &ctx.text[ctx.text.find("kind=\"infobox\"").unwrap()..];
        let block = &block[..block.find("</source>").unwrap()];
        assert!(
            super::super::estimate_tokens(block) <= INFOBOX_MAX_TOKENS + 40,
            "{block}"
        );
        assert!(block.contains("\nFact 0: tardigrades value 0\n"));
    }
}
