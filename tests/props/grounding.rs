//! Properties of the grounding stage for arbitrary model output: whatever statements
//! (accents, CJK, emoji, odd whitespace) and citations (real and invented source
//! numbers, URLs, quotes copied from the source or made up) a model returns, the
//! `groundingMetadata` obeys Gemini's rules, so existing Gemini renderers never break:
//! segment offsets are UTF-8 byte offsets into the answer, index and score lists have
//! equal lengths, indices point at existing chunks and scores lie in [0, 1]. The
//! verifier's offsets are char boundaries for any text, quote checking takes
//! anything, and ground's own match reports windows that are exact slices of the
//! sources.

use ground::answer::{ModelAnswer, ModelCitation, ModelStatement, SourceRef};
use ground::context::SourceText;
use ground::grounding::{self, MatchKind, Support, grounding_metadata, verify};
use proptest::prelude::*;
use proptest::sample::Index;

use crate::strategies::*;

/// Text built from pieces that tend to break byte/char arithmetic.
fn tricky_text(max_pieces: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9]{1,9}",
        2 => Just(" ".to_string()),
        1 => prop::sample::select(vec![
            "é", "résumé", "naïve", "Ünïcödé", "ß", "İ", "ﬁ", "e\u{301}", // accents, ligature, combining
            "東京", "水熊虫", "日本の首都", "한국어", "Ωμέγα", "Ж",
            "🐻", "🧪🚀", "👩\u{200D}🔬", "🇸🇪",
            "\u{00A0}", "\t", "\n", "\r\n", "\u{2003}", "\u{200B}", "\u{FEFF}", "\u{00AD}", "   ",
            "\u{2019}", "\u{201C}", "\u{201D}", "…", "...", "—", "-", "\"", "'",
        ])
        .prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..max_pieces).prop_map(|v| v.concat())
}

/// How a citation names its source, before the sources are known.
#[derive(Debug, Clone)]
enum RefSpec {
    Number(i64),
    UrlOf(Index),
    OtherUrl,
    Other(String),
}

/// Where a citation's quote comes from.
#[derive(Debug, Clone)]
enum QuoteSpec {
    /// A slice of the cited (or some) source's text, cut at char boundaries.
    FromSource { source: Index, a: Index, b: Index },
    /// Anything.
    Random(String),
}

fn ref_spec() -> impl Strategy<Value = RefSpec> {
    prop_oneof![
        6 => (-2i64..8).prop_map(RefSpec::Number),
        1 => any::<i64>().prop_map(RefSpec::Number),
        1 => any::<Index>().prop_map(RefSpec::UrlOf),
        1 => Just(RefSpec::OtherUrl),
        1 => tricky_text(3).prop_map(RefSpec::Other),
    ]
}

fn quote_spec() -> impl Strategy<Value = QuoteSpec> {
    prop_oneof![
        3 => (any::<Index>(), any::<Index>(), any::<Index>())
            .prop_map(|(source, a, b)| QuoteSpec::FromSource { source, a, b }),
        1 => tricky_text(12).prop_map(QuoteSpec::Random),
    ]
}

type StatementSpec = (String, Vec<(RefSpec, QuoteSpec)>);

fn statement_specs() -> impl Strategy<Value = Vec<StatementSpec>> {
    prop::collection::vec(
        (
            tricky_text(16),
            prop::collection::vec((ref_spec(), quote_spec()), 0..4),
        ),
        0..6,
    )
}

fn make_sources(texts: Vec<String>) -> Vec<SourceText> {
    texts
        .into_iter()
        .enumerate()
        .map(|(i, text)| SourceText {
            number: i + 1,
            url: format!("https://example.org/page-{}", i + 1),
            title: format!("Page {}", i + 1),
            text,
        })
        .collect()
}

/// A slice of `text` between two chosen char boundaries.
fn slice_at(text: &str, a: Index, b: Index) -> String {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect();
    let (x, y) = (bounds[a.index(bounds.len())], bounds[b.index(bounds.len())]);
    text[x.min(y)..x.max(y)].to_string()
}

fn build_answer(
    answerable: bool,
    specs: Vec<StatementSpec>,
    sources: &[SourceText],
) -> ModelAnswer {
    let statements = specs
        .into_iter()
        .map(|(text, cites)| ModelStatement {
            text,
            citations: cites
                .into_iter()
                .map(|(r, q)| {
                    let source = match r {
                        RefSpec::Number(n) => SourceRef::Number(n),
                        RefSpec::UrlOf(i) => {
                            SourceRef::Url(sources[i.index(sources.len())].url.clone())
                        }
                        RefSpec::OtherUrl => SourceRef::Url("https://elsewhere.example/x".into()),
                        RefSpec::Other(s) => SourceRef::Other(s),
                    };
                    let quote = match q {
                        QuoteSpec::FromSource { source, a, b } => {
                            slice_at(&sources[source.index(sources.len())].text, a, b)
                        }
                        QuoteSpec::Random(s) => s,
                    };
                    ModelCitation { source, quote }
                })
                .collect(),
        })
        .collect();
    ModelAnswer {
        answerable,
        statements,
        unknowns: vec!["what is left open".into()],
        over_bounds: 0,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn grounding_metadata_follows_geminis_rules(
        texts in prop::collection::vec(tricky_text(60), 1..4),
        answerable in prop::bool::weighted(0.9),
        specs in statement_specs(),
    ) {
        let sources = make_sources(texts);
        let model = build_answer(answerable, specs, &sources);
        let grounded = verify(&model, &sources);
        let meta = grounding_metadata(&grounded, &sources, &[], &["the question".to_string()]);
        let answer = grounded.answer.as_str();

        // Statements sit at their byte offsets in the answer.
        for s in &grounded.statements {
            prop_assert_eq!(&answer.as_bytes()[s.start..s.end], s.text.as_bytes());
        }

        let chunks = meta["groundingChunks"].as_array().unwrap();
        prop_assert_eq!(chunks.len(), sources.len());
        let supports = meta["groundingSupports"].as_array().unwrap();
        prop_assert_eq!(
            supports.len(),
            grounded.statements.iter().filter(|s| s.supported()).count()
        );
        for support in supports {
            let segment = &support["segment"];
            let start = segment["startIndex"].as_u64().unwrap() as usize;
            let end = segment["endIndex"].as_u64().unwrap() as usize;
            let text = segment["text"].as_str().unwrap();
            prop_assert!(start <= end && end <= answer.len());
            prop_assert_eq!(&answer.as_bytes()[start..end], text.as_bytes());
            let indices = support["groundingChunkIndices"].as_array().unwrap();
            let scores = support["confidenceScores"].as_array().unwrap();
            prop_assert_eq!(indices.len(), scores.len());
            prop_assert!(!indices.is_empty());
            for index in indices {
                prop_assert!((index.as_u64().unwrap() as usize) < chunks.len());
            }
            for score in scores {
                let score = score.as_f64().unwrap();
                prop_assert!((0.0..=1.0).contains(&score), "score {}", score);
            }
        }

        // Every citation that survived names a real source; every other was rejected.
        let kept: usize = grounded.statements.iter().map(|s| s.citations.len()).sum();
        if answerable {
            let given: usize = model.statements.iter().map(|s| s.citations.len()).sum();
            prop_assert_eq!(kept + grounded.rejected.len(), given);
            prop_assert_eq!(grounded.statements.len(), model.statements.len());
        } else {
            prop_assert_eq!(kept + grounded.rejected.len(), 0);
        }
        for c in grounded.statements.iter().flat_map(|s| &s.citations) {
            prop_assert!((1..=sources.len()).contains(&c.source));
            prop_assert!((0.0..=1.0).contains(&c.confidence));
            prop_assert_eq!(c.verified, c.confidence > 0.0);
        }
        if !answerable {
            prop_assert!(supports.is_empty());
            prop_assert!(!grounded.grounded());
        }
    }

    /// A quote copied from the source it cites, long enough to prove something, is
    /// always verified.
    #[test]
    fn copied_quotes_are_verified(
        texts in prop::collection::vec(tricky_text(60), 1..4),
        which in any::<Index>(),
        a in any::<Index>(),
        b in any::<Index>(),
        statement in tricky_text(10),
    ) {
        let sources = make_sources(texts);
        let n = which.index(sources.len());
        let quote = slice_at(&sources[n].text, a, b);
        let long_enough = ground::text::normalise(&quote)
            .chars()
            .filter(|c| !c.is_whitespace())
            .count()
            >= grounding::MIN_QUOTE_CHARS;
        prop_assume!(long_enough);
        let model = ModelAnswer {
            answerable: true,
            statements: vec![ModelStatement {
                text: statement,
                citations: vec![ModelCitation {
                    source: SourceRef::Number(i64::try_from(n + 1).unwrap()),
                    quote: quote.clone(),
                }],
            }],
            unknowns: vec![],
            over_bounds: 0,
        };
        let grounded = verify(&model, &sources);
        prop_assert!(grounded.statements[0].citations[0].verified, "quote {:?} not found", quote);
        // Supported, unless the statement carries a number or date the quote's sentence
        // does not, or disagrees with it on negation (then a mismatch, said so).
        let statement = &grounded.statements[0];
        prop_assert!(
            grounded.grounded()
                || (statement.support == Support::Mismatch && statement.mismatch.is_some()),
            "{:?}", statement
        );
    }

    /// Ground's own match takes any text, and every window it reports is exactly the
    /// source's text between its offsets (char boundaries), with a confidence in
    /// (0, CONFIDENCE_MATCH].
    #[test]
    fn matched_windows_are_slices_of_their_sources(
        texts in prop::collection::vec(prop_oneof![tricky_text(60), nasty_text(30)], 1..4),
        picks in prop::collection::vec((any::<Index>(), any::<Index>(), any::<Index>()), 1..6),
    ) {
        let sources = make_sources(texts);
        let model = ModelAnswer {
            answerable: true,
            statements: picks
                .into_iter()
                .map(|(which, a, b)| ModelStatement {
                    // A piece of a source (so that matches happen), cited with a
                    // quote that is nowhere.
                    text: slice_at(&sources[which.index(sources.len())].text, a, b),
                    citations: vec![ModelCitation {
                        source: SourceRef::Number(1),
                        quote: "a quote that no source holds anywhere".into(),
                    }],
                })
                .collect(),
            unknowns: vec![],
            over_bounds: 0,
        };
        let grounded = verify(&model, &sources);
        for statement in &grounded.statements {
            prop_assert_eq!(statement.support == Support::Match, !statement.matches.is_empty());
            for window in &statement.matches {
                let text = &sources[window.source - 1].text;
                prop_assert!(window.start < window.end && window.end <= text.len());
                prop_assert!(text.is_char_boundary(window.start) && text.is_char_boundary(window.end));
                prop_assert_eq!(&text[window.start..window.end], window.text.as_str());
                prop_assert!(window.confidence > 0.0 && window.confidence <= grounding::CONFIDENCE_MATCH);
            }
        }
    }
}

proptest! {
    /// Single letters (or any short scraps) joined by "..." never verify, however
    /// many of them there are and whatever page they are checked against.
    #[test]
    fn scraps_joined_by_ellipses_never_verify(
        letters in proptest::collection::vec("[a-z]{1,2}", 2..40),
        page in "[a-z ]{0,400}",
    ) {
        let quote = letters.join("...");
        let text = format!("{page} tardigrades are micro-animals that survive in space");
        let (kind, confidence) = grounding::check_quote(&quote, &text, &ground::text::normalise(&text));
        prop_assert_eq!(kind, grounding::MatchKind::None);
        prop_assert_eq!(confidence, 0.0);
    }
}

// The verifier on nasty text ----------------------------------------------------------

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn verifier_offsets_are_char_boundaries(
        texts in prop::collection::vec(nasty_text(30), 0..4),
        answerable in prop::bool::weighted(0.9),
        statements in prop::collection::vec(
            (nasty_text(8), prop::collection::vec((-3i64..7, nasty_text(10), any::<Index>(), any::<Index>(), any::<bool>()), 0..4)),
            0..6,
        ),
    ) {
        let sources: Vec<SourceText> = texts
            .into_iter()
            .enumerate()
            .map(|(i, text)| SourceText {
                number: i + 1,
                url: format!("https://example.org/{}", i + 1),
                title: String::new(),
                text,
            })
            .collect();
        let model = ModelAnswer {
            answerable,
            statements: statements
                .into_iter()
                .map(|(text, cites)| ModelStatement {
                    text,
                    citations: cites
                        .into_iter()
                        .map(|(n, quote, a, b, copy)| {
                            // Half the quotes are slices of a source, cut anywhere a
                            // char starts.
                            let quote = match sources.get(a.index(sources.len().max(1))) {
                                Some(s) if copy => {
                                    let bounds: Vec<usize> = s.text.char_indices().map(|(i, _)| i).chain([s.text.len()]).collect();
                                    let (x, y) = (bounds[a.index(bounds.len())], bounds[b.index(bounds.len())]);
                                    s.text[x.min(y)..x.max(y)].to_string()
                                }
                                _ => quote,
                            };
                            ModelCitation { source: SourceRef::Number(n), quote }
                        })
                        .collect(),
                })
                .collect(),
            unknowns: vec![],
            over_bounds: 0,
        };
        let grounded = grounding::verify(&model, &sources);
        let answer = grounded.answer.as_str();
        for s in &grounded.statements {
            prop_assert!(s.start <= s.end && s.end <= answer.len());
            prop_assert!(answer.is_char_boundary(s.start) && answer.is_char_boundary(s.end));
            prop_assert_eq!(&answer[s.start..s.end], s.text.as_str());
            for c in &s.citations {
                prop_assert!((1..=sources.len()).contains(&c.source));
                prop_assert_eq!(c.verified, c.matched != MatchKind::None);
                prop_assert!((0.0..=1.0).contains(&c.confidence));
            }
        }
        let meta = grounding::grounding_metadata(&grounded, &sources, &[], &[]);
        for support in meta["groundingSupports"].as_array().unwrap() {
            let start = support["segment"]["startIndex"].as_u64().unwrap() as usize;
            let end = support["segment"]["endIndex"].as_u64().unwrap() as usize;
            prop_assert!(answer.is_char_boundary(start) && answer.is_char_boundary(end));
        }
    }

    #[test]
    fn check_quote_and_normalise_take_anything(
        quote in nasty_text(12),
        raw in nasty_text(40),
    ) {
        let normalised = ground::text::normalise(&raw);
        // normalise: no whitespace runs, no leading/trailing whitespace.
        prop_assert!(!normalised.contains("  "), "{:?}", normalised);
        prop_assert_eq!(normalised.trim(), normalised.as_str());
        let (kind, confidence) = grounding::check_quote(&quote, &raw, &normalised);
        let expected = match kind {
            MatchKind::Exact => grounding::CONFIDENCE_EXACT,
            MatchKind::Normalised => grounding::CONFIDENCE_NORMALISED,
            MatchKind::Fragments => grounding::CONFIDENCE_FRAGMENTS,
            MatchKind::None => 0.0,
        };
        prop_assert_eq!(confidence, expected);
        if kind == MatchKind::Exact {
            prop_assert!(raw.contains(quote.trim()));
        }
        // A quote that is the source itself (long enough) always matches.
        let long = ground::text::normalise(&raw).chars().filter(|c| !c.is_whitespace()).count()
            >= grounding::MIN_QUOTE_CHARS;
        if long {
            prop_assert_ne!(grounding::check_quote(&raw, &raw, &normalised).0, MatchKind::None);
        }
    }
}
