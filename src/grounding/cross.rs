//! The cross-check: after verification, every statement of an answer is matched
//! against every source read (pages whole, snippets, files), not only the passages the
//! model was shown and the sources it cites. It is the same matcher applied to more
//! pairs: ground's match (`matches.rs`) and the quote check (`quotes.rs`) find the
//! other sources that say the same ([`Statement::corroborated_by`]), and the
//! matcher's conflict reading (`conflicts.rs`) finds the sentences that say otherwise
//! in the statement's own slot ([`Statement::contradicted_by`]).
//!
//! A source that supports a statement (by its citation, a match or a quote anywhere
//! in its text) never contradicts it too: a page saying both is no voice against it.
//!
//! The work is bounded like the match: the sources' sentences are indexed once per
//! answer (at most the matcher's sentence cap), and each statement tries at most
//! [`super::MAX_CROSS_CANDIDATES`] sentences for support and as many for conflict, and
//! each verified quote once per source. It is CPU work: callers on an async runtime run
//! it on the blocking pool.

use std::collections::BTreeSet;
use std::ops::Range;

use serde::Serialize;

use super::anchors::Features;
use super::conflicts::{ConflictKind, slotted};
use super::matches::Shown;
use super::{Checker, GroundedAnswer, MatchKind, Quoted, Statement, check_quote, disagreement};
use crate::text::normalise;

/// A sentence of a source read that says otherwise than a statement.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Contradiction {
    /// The source's number (1-based).
    pub source: usize,
    /// The sentence, exactly as in the source's extracted text.
    pub quote: String,
    /// What it says otherwise: another number, date or name, or the negation.
    pub kind: ConflictKind,
    /// What it says instead ("9 June 1936", "Ottilie Brannock"); for a negation,
    /// "negated" (the source denies the statement) or "affirmed" (the source affirms
    /// what the statement denies).
    pub value: String,
}

impl Checker {
    /// Fills in `corroborated_by` and `contradicted_by` of every statement of `answer`
    /// from every source's whole text (see the module's documentation).
    pub fn cross_reference(&self, answer: &mut GroundedAnswer) {
        if answer.statements.is_empty() {
            return;
        }
        let p = &*self.inner;
        // Each source's whole text as its one shown range.
        let whole: Vec<Vec<Range<usize>>> = p
            .sources
            .iter()
            .map(|s| std::iter::once(0..s.text.len()).collect())
            .collect();
        let read = Shown::new(
            p.sources
                .iter()
                .zip(&whole)
                .map(|(s, r)| (s.text.as_str(), s.title.as_str(), r.as_slice())),
        );
        for statement in &mut answer.statements {
            self.cross_check(&read, statement);
        }
    }

    fn cross_check(&self, read: &Shown, statement: &mut Statement) {
        let p = &*self.inner;
        let number = |i: usize| p.sources[i].number;
        let features = Features::of_statement(&statement.text);
        let cited: BTreeSet<usize> = statement
            .citations
            .iter()
            .map(|c| c.source)
            .chain(statement.supporting_sources().into_iter().map(|(n, _)| n))
            .collect();
        let mut corroborated: BTreeSet<usize> = read
            .find_everywhere(&features, number)
            .into_iter()
            .map(|w| w.source)
            .collect();
        // A supporting quote of the statement's, found in another source too, is that
        // source's support (unless what it quotes there says otherwise).
        if statement.quoted() {
            for citation in statement.citations.iter().filter(|c| c.verified) {
                for (i, source) in p.sources.iter().enumerate() {
                    if cited.contains(&source.number) || corroborated.contains(&source.number) {
                        continue;
                    }
                    let (matched, _) = check_quote(&citation.quote, &source.text, &p.normalised[i]);
                    if matched == MatchKind::None {
                        continue;
                    }
                    let Some(window) =
                        super::quotes::quote_window(&citation.quote, &p.normalised[i])
                    else {
                        continue;
                    };
                    let quoted = Quoted {
                        quote: normalise(&citation.quote),
                        sentences: Features::of_source(window.sentences),
                        span: Features::of_source(window.span),
                    };
                    if disagreement(&features, &[quoted]).is_none() {
                        corroborated.insert(source.number);
                    }
                }
            }
        }
        let supporters: BTreeSet<usize> = cited
            .iter()
            .copied()
            .filter(|n| statement.supporting_sources().iter().any(|(s, _)| s == n))
            .chain(corroborated.iter().copied())
            .collect();
        let slots = slotted(&statement.text);
        statement.contradicted_by = read
            .conflicts(&features, &slots, number, |n| supporters.contains(&n))
            .into_iter()
            .filter_map(|c| {
                let source = p.sources.iter().find(|s| s.number == c.source)?;
                Some(Contradiction {
                    quote: source.text.get(c.start..c.end)?.to_string(),
                    source: c.source,
                    kind: c.kind,
                    value: c.value,
                })
            })
            .collect();
        statement.corroborated_by = corroborated.difference(&cited).copied().collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{ModelAnswer, ModelCitation, ModelStatement, SourceRef};
    use crate::context::SourceText;

    fn source(number: usize, title: &str, text: &str) -> SourceText {
        SourceText {
            number,
            url: format!("https://example{number}.org/"),
            title: title.into(),
            text: text.into(),
        }
    }

    /// The statements, each citing source 1 with its own text as the quote, checked
    /// and cross-checked against `sources`.
    fn cross(statements: &[&str], sources: &[SourceText]) -> GroundedAnswer {
        let answer = ModelAnswer {
            answerable: true,
            statements: statements
                .iter()
                .map(|t| ModelStatement {
                    text: (*t).into(),
                    citations: vec![ModelCitation {
                        source: SourceRef::Number(1),
                        quote: t.trim_end_matches('.').into(),
                    }],
                })
                .collect(),
            unknowns: vec![],
            over_bounds: 0,
        };
        let checker = Checker::new(sources);
        let mut checked = checker.verify(&answer);
        checker.cross_reference(&mut checked);
        checked
    }

    const CITED: &str = "The Quillfeather Lighthouse stands on the cape of Varnholm. \
        The Quillfeather Lighthouse was first lit on 14 October 1911. \
        The keepers lived in the tower with their families. \
        The lighthouse was designed by the engineer Mara Lindqvist.";

    fn lighthouse_sources() -> Vec<SourceText> {
        vec![
            source(1, "Quillfeather Lighthouse", CITED),
            source(
                2,
                "Varnholm coast",
                "After four years of building, the Quillfeather Lighthouse was first lit on 14 October 1911.",
            ),
            source(
                3,
                "Northern lights",
                "The Quillfeather Lighthouse was first lit on 9 June 1936. The keepers did not live in the tower with their families.",
            ),
            source(
                4,
                "Quillfeather facts",
                "The Quillfeather Lighthouse was first lit on October 14, 1911. It was first lit on 1911-10-14 too, says another book.",
            ),
            source(
                5,
                "Varnholm Lighthouse",
                "The Varnholm Lighthouse was first lit on 2 May 1913. It was designed by the engineer Ottilie Brannock.",
            ),
            source(
                6,
                "Quillfeather Lighthouse history",
                "The lighthouse was designed by the engineer Ottilie Brannock, and built by the town.",
            ),
        ]
    }

    #[test]
    fn other_sources_saying_the_same_corroborate_and_another_date_contradicts() {
        let checked = cross(
            &["The Quillfeather Lighthouse was first lit on 14 October 1911."],
            &lighthouse_sources(),
        );
        let s = &checked.statements[0];
        assert_eq!(s.support, super::super::Support::Quote);
        // Another date format is the same date; the Varnholm page is about another
        // lighthouse and says nothing of this one.
        assert_eq!(s.corroborated_by, [2, 4]);
        assert_eq!(
            s.contradicted_by,
            [Contradiction {
                source: 3,
                quote: "The Quillfeather Lighthouse was first lit on 9 June 1936.".into(),
                kind: ConflictKind::Date,
                value: "9 June 1936".into(),
            }]
        );
        assert_eq!(checked.contradicted(), 1);
    }

    #[test]
    fn a_negation_and_another_name_in_the_same_slot_contradict() {
        let checked = cross(
            &[
                "The keepers lived in the tower with their families.",
                "The lighthouse was designed by the engineer Mara Lindqvist.",
            ],
            &lighthouse_sources(),
        );
        let kinds = |i: usize| -> Vec<(usize, ConflictKind, String)> {
            checked.statements[i]
                .contradicted_by
                .iter()
                .map(|c| (c.source, c.kind, c.value.clone()))
                .collect()
        };
        assert_eq!(
            kinds(0),
            [(3, ConflictKind::Negation, "negated".to_string())]
        );
        // Source 6 names another engineer; source 5's engineer built another
        // lighthouse ("It" there is the Varnholm Lighthouse), which is no conflict.
        assert_eq!(
            kinds(1),
            [(6, ConflictKind::Name, "Ottilie Brannock".to_string())]
        );
    }

    #[test]
    fn an_unrelated_page_is_neither() {
        let sources = vec![
            source(1, "Quillfeather Lighthouse", CITED),
            source(
                2,
                "Harbour works",
                "The harbour wall was finished in 1909. The new pier was first opened on 9 June 1936.",
            ),
        ];
        let checked = cross(
            &["The Quillfeather Lighthouse was first lit on 14 October 1911."],
            &sources,
        );
        let s = &checked.statements[0];
        assert!(
            s.corroborated_by.is_empty() && s.contradicted_by.is_empty(),
            "{s:?}"
        );
    }

    #[test]
    fn a_source_that_also_supports_the_statement_does_not_contradict_it() {
        let sources = vec![
            source(1, "Quillfeather Lighthouse", CITED),
            source(
                2,
                "Quillfeather Lighthouse",
                "The Quillfeather Lighthouse was first lit on 14 October 1911. \
                 Some guides say the Quillfeather Lighthouse was first lit on 9 June 1936.",
            ),
        ];
        let checked = cross(
            &["The Quillfeather Lighthouse was first lit on 14 October 1911."],
            &sources,
        );
        let s = &checked.statements[0];
        assert_eq!(s.corroborated_by, [2]);
        assert!(s.contradicted_by.is_empty(), "{s:?}");
    }
}
