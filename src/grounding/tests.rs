//! Tests of the checker: quotes, supports, matches, rejected citations and the
//! Gemini metadata built from them.

use super::*;
use crate::answer::ModelCitation;
use serde_json::json;

fn source(number: usize, text: &str) -> SourceText {
    SourceText {
        number,
        url: format!("https://example.org/{number}"),
        title: format!("T{number}"),
        text: text.into(),
    }
}

fn statement(text: &str, cites: &[(SourceRef, &str)]) -> ModelStatement {
    ModelStatement {
        text: text.into(),
        citations: cites
            .iter()
            .map(|(s, q)| ModelCitation {
                source: s.clone(),
                quote: (*q).into(),
            })
            .collect(),
    }
}

#[test]
fn offsets_are_exact_bytes_and_bad_sources_rejected() {
    let sources = [
        source(1, "Les tardigrades résistent au vide spatial."),
        source(2, "東京は日本の首都であり、大きな都市です。"),
    ];
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![
            statement(
                "Les tardigrades résistent au vide. 🐻",
                &[(SourceRef::Number(1), "tardigrades résistent au vide")],
            ),
            statement(
                "東京は首都です。",
                &[
                    (SourceRef::Number(2), "東京は日本の首都であり、大きな都市"),
                    (SourceRef::Number(7), "x"),
                ],
            ),
        ],
        unknowns: vec![],
        over_bounds: 0,
    };
    let g = verify(&answer, &sources);
    for s in &g.statements {
        assert_eq!(&g.answer.as_bytes()[s.start..s.end], s.text.as_bytes());
    }
    assert!(g.grounded());
    assert_eq!(g.rejected.len(), 1);
    assert!(g.rejected[0].reason.contains("no source 7"));
    let meta = grounding_metadata(&g, &sources, &[], &["q".into()], &[]);
    assert_eq!(
        meta["groundingSupports"][1]["groundingChunkIndices"],
        json!([1])
    );
}

#[test]
fn invented_quote_is_unsupported() {
    let sources = [source(1, "The VACUUM command rebuilds the database file.")];
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![statement(
            "VACUUM deletes tables.",
            &[(SourceRef::Number(1), "VACUUM deletes every table")],
        )],
        unknowns: vec![],
        over_bounds: 0,
    };
    let g = verify(&answer, &sources);
    assert!(!g.grounded());
    assert!(!g.statements[0].supported());
    assert_eq!(g.statements[0].citations[0].confidence, 0.0);
    let meta = grounding_metadata(&g, &sources, &[], &[], &[]);
    assert_eq!(meta["groundingSupports"], json!([]));
}

#[test]
fn a_quote_of_the_title_is_evidence() {
    let sources = [SourceText {
        number: 1,
        url: "https://example.org/a".into(),
        title: "Lantern Tide festival moves to the third Saturday of September".into(),
        text: "The island guide lists the events of the year.".into(),
    }];
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![ModelStatement {
            text: "The festival is on the third Saturday of September.".into(),
            citations: vec![ModelCitation {
                source: SourceRef::Number(1),
                quote: "moves to the third Saturday of September".into(),
            }],
        }],
        unknowns: vec![],
        over_bounds: 0,
    };
    let checked = verify(&answer, &sources);
    assert!(checked.statements[0].citations[0].verified);
    assert_eq!(checked.statements[0].citations[0].matched, MatchKind::Exact);
}

const LIGHTHOUSE: &str = "The Quillfeather Lighthouse stands on the cape. \
    The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building. \
    Its keepers did not live in the tower.";

fn one(text: &str, quote: &str) -> Statement {
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![statement(text, &[(SourceRef::Number(1), quote)])],
        unknowns: vec![],
        over_bounds: 0,
    };
    verify(&answer, &[source(1, LIGHTHOUSE)])
        .statements
        .remove(0)
}

#[test]
fn a_true_statement_with_a_garbled_quote_is_matched() {
    let s = one(
        "The Quillfeather Lighthouse was first lit on October 14, 1911.",
        "the lighthouse was lit for the first time in 1911",
    );
    assert!(!s.citations[0].verified);
    assert_eq!(s.support, Support::Match);
    assert!(s.supported() && !s.quoted());
    assert_eq!(s.supporting_sources(), [(1, s.matches[0].confidence)]);
    let window = &s.matches[0];
    assert_eq!(&LIGHTHOUSE[window.start..window.end], window.text);
    assert!(
        window
            .text
            .starts_with("The Quillfeather Lighthouse was first lit on 14 October 1911")
    );
    assert!(window.confidence > 0.0 && window.confidence <= CONFIDENCE_MATCH);
}

#[test]
fn a_verified_quote_the_statement_contradicts_is_a_mismatch() {
    let quote = "was first lit on 14 October 1911";
    // Another year, another day, a negation: the quote is real, the statement wrong.
    for (text, why) in [
        (
            "The Quillfeather Lighthouse was first lit in 1912.",
            "the number 1912 is not in the quoted text",
        ),
        (
            "The Quillfeather Lighthouse was first lit on 15 October 1911.",
            "the date 15 October 1911 is not in the quoted text",
        ),
        (
            "The Quillfeather Lighthouse was not lit in 1911.",
            "the statement and the quoted text disagree on a negation",
        ),
    ] {
        let s = one(text, quote);
        assert!(s.citations[0].verified, "{text}");
        assert_eq!(s.support, Support::Mismatch, "{text}");
        assert_eq!(s.mismatch.as_deref(), Some(why), "{text}");
        assert!(
            !s.supported() && s.supporting_sources().is_empty(),
            "{text}"
        );
    }
    // The same quote for what it does say; a statement that also names what the
    // quote leaves implicit.
    let s = one(
        "It was first lit in 1911, after four years of building.",
        quote,
    );
    assert_eq!((s.support, s.mismatch), (Support::Quote, None));
    let s = one(
        "The Quillfeather Lighthouse was first lit in 1911.",
        "was first lit on 14 October",
    );
    assert_eq!(s.support, Support::Quote, "{:?}", s.mismatch);
}

#[test]
fn negation_outside_a_verbatim_quote_does_not_make_it_a_mismatch() {
    // The sentence negates before the quoted span ("without"); the statement is the
    // quote itself, or the quote's claim in fewer words.
    let page = "Protesters marched again on Friday. It's impossible to tell the story of \
        the uprising without acknowledging that it's a microcosm of what happened in \
        Ferguson, in Baltimore and now Minneapolis. The marches went on for weeks.";
    let quote = "acknowledging that it's a microcosm of what happened in Ferguson, in Baltimore and now Minneapolis.";
    let check = |text: &str| {
        let answer = ModelAnswer {
            answerable: true,
            statements: vec![statement(text, &[(SourceRef::Number(1), quote)])],
            unknowns: vec![],
            over_bounds: 0,
        };
        verify(&answer, &[source(1, page)]).statements.remove(0)
    };
    for text in [
        quote,
        "It's a microcosm of what happened in Ferguson, in Baltimore and now Minneapolis.",
    ] {
        let s = check(text);
        assert!(s.citations[0].verified, "{text}");
        assert_eq!(
            (s.support, s.mismatch.as_deref()),
            (Support::Quote, None),
            "{text}"
        );
    }
    // A negation the statement adds is still caught by the quote check (the match,
    // reading the sentence's own "without", may then decide), and so is a number of its
    // own.
    let s = check(
        "It's not a microcosm of what happened in Ferguson, in Baltimore and now Minneapolis.",
    );
    assert_eq!(
        s.mismatch.as_deref(),
        Some("the statement and the quoted text disagree on a negation")
    );
    let s = check("It's a microcosm of what happened in Ferguson in 2014.");
    assert_eq!(s.support, Support::Mismatch);
}

#[test]
fn a_quote_cut_from_a_negated_clause_still_disagrees() {
    // The quote leaves the "not" out; the statement restates the clause the "not"
    // negates, with a word from outside the quote: not supported.
    let s = one("Its keepers lived in the tower.", "live in the tower");
    assert!(s.citations[0].verified);
    assert_eq!(s.support, Support::Mismatch, "{:?}", s.mismatch);
}

#[test]
fn a_mismatched_quote_is_rescued_by_a_match_elsewhere() {
    // The quote is real but about the cape; the statement is said in the next sentence.
    let s = one(
        "The Quillfeather Lighthouse was first lit on 14 October 1911.",
        "The Quillfeather Lighthouse stands on the cape",
    );
    assert!(s.mismatch.is_some());
    assert_eq!(s.support, Support::Match);
    assert_eq!(markers_of(&s), [1]);
}

fn markers_of(s: &Statement) -> Vec<usize> {
    s.supporting_sources().into_iter().map(|(n, _)| n).collect()
}

#[test]
fn the_match_uses_only_what_the_context_sent() {
    let sources = vec![source(1, LIGHTHOUSE)];
    let lead = LIGHTHOUSE.find(" The Quillfeather Lighthouse was").unwrap();
    let cut = SourceCut {
        number: 1,
        kind: crate::context::SourceKind::Page,
        chars_extracted: LIGHTHOUSE.chars().count(),
        chars_sent: lead,
        truncated: true,
        passages_total: 2,
        passages_sent: 1,
        sent: std::iter::once(0..lead).collect(),
    };
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![statement(
            "The Quillfeather Lighthouse was first lit on 14 October 1911.",
            &[(SourceRef::Number(1), "an invented quote about the light")],
        )],
        unknowns: vec![],
        over_bounds: 0,
    };
    let unseen = Checker::for_context(sources.clone(), std::slice::from_ref(&cut)).verify(&answer);
    assert_eq!(unseen.statements[0].support, Support::None);
    let seen = Checker::for_context(
        sources,
        &[SourceCut {
            sent: std::iter::once(0..LIGHTHOUSE.len()).collect(),
            ..cut
        }],
    )
    .verify(&answer);
    assert_eq!(seen.statements[0].support, Support::Match);
    assert!(seen.grounded() && !seen.grounded_by_quotes());
    let meta = grounding_metadata(&seen, &[source(1, LIGHTHOUSE)], &[], &[], &[]);
    assert_eq!(meta["groundingSupports"][0]["support"], "match");
    assert_eq!(
        meta["groundingSupports"][0]["groundingChunkIndices"],
        json!([0])
    );
}

#[test]
fn a_source_not_in_the_prompt_cannot_be_cited() {
    // Source 2 was read but none of its passages were sent (no cut): a quote of
    // it is true of the page, but the model was never shown the page.
    let sources = vec![source(1, LIGHTHOUSE), source(2, LIGHTHOUSE)];
    let cut = SourceCut {
        number: 1,
        kind: crate::context::SourceKind::Page,
        chars_extracted: LIGHTHOUSE.chars().count(),
        chars_sent: LIGHTHOUSE.chars().count(),
        truncated: false,
        passages_total: 2,
        passages_sent: 2,
        sent: std::iter::once(0..LIGHTHOUSE.len()).collect(),
    };
    let quote = "The Quillfeather Lighthouse was first lit on 14 October 1911";
    let answer = ModelAnswer {
        answerable: true,
        statements: vec![statement(
            "The Quillfeather Lighthouse was first lit on 14 October 1911.",
            &[(SourceRef::Number(2), quote)],
        )],
        unknowns: vec![],
        over_bounds: 0,
    };
    let checked = Checker::for_context(sources, std::slice::from_ref(&cut)).verify(&answer);
    assert!(checked.statements[0].citations.is_empty());
    assert_eq!(checked.rejected.len(), 1);
    assert!(
        checked.rejected[0]
            .reason
            .contains("source 2 was read but not in the prompt"),
        "{}",
        checked.rejected[0].reason
    );
    // Ground's own match still finds the statement in what was shown (source 1).
    assert_eq!(checked.statements[0].support, Support::Match);
    assert_eq!(markers_of(&checked.statements[0]), [1]);
}
