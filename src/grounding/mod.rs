//! The grounding stage: check every citation the model made against the text that was
//! actually fetched, and describe the result in Gemini's `groundingMetadata` shape.
//!
//! A citation counts only if it names a source we gave the model and its quote occurs
//! in that source's extracted text, allowing nothing but normalisation (case,
//! whitespace, quote and dash styles, invisible characters) and `...` between
//! fragments. The answer text is assembled here from the statements, so segment
//! offsets are exact UTF-8 byte offsets by construction.

use serde::Serialize;
use serde_json::{Value, json};

use crate::answer::{ModelAnswer, SourceRef};
use crate::context::SourceText;
use crate::text::normalise;

/// Confidence of a quote found exactly as written.
pub const CONFIDENCE_EXACT: f64 = 1.0;
/// Confidence of a quote found after normalisation.
pub const CONFIDENCE_NORMALISED: f64 = 0.9;
/// Confidence of a quote whose `...`-separated fragments were found in order.
pub const CONFIDENCE_FRAGMENTS: f64 = 0.75;
/// Quotes shorter than this (in characters, after normalisation) prove nothing.
pub const MIN_QUOTE_CHARS: usize = 12;
/// Fewest words in each fragment of a quote with `...` elisions.
pub const MIN_FRAGMENT_WORDS: usize = 3;
/// Most text (bytes of normalised page text) an elision may stand for between two
/// fragments: a few sentences, not the distance between unrelated paragraphs.
pub const MAX_FRAGMENT_GAP_BYTES: usize = 300;

/// How a quote matched its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// Found as written.
    Exact,
    /// Found after normalising case, whitespace, quotes and dashes.
    Normalised,
    /// Its fragments (split at an ellipsis) were found in order.
    Fragments,
    /// Not found, or too short to prove anything.
    None,
}

/// A citation that names a real source, with the verdict on its quote.
#[derive(Debug, Clone, Serialize)]
pub struct CheckedCitation {
    /// The source's number (1-based).
    pub source: usize,
    /// The quote as the model gave it.
    pub quote: String,
    /// Whether the quote is in the source.
    pub verified: bool,
    /// 1.0 exact, 0.9 normalised, 0.75 fragments, 0 not found.
    pub confidence: f64,
    /// How it matched.
    pub matched: MatchKind,
}

/// A citation naming a source we never gave the model.
#[derive(Debug, Clone, Serialize)]
pub struct RejectedCitation {
    /// Index of the statement (0-based).
    pub statement: usize,
    /// The source as the model named it.
    pub source: String,
    /// The quote as given.
    pub quote: String,
    /// Why it was rejected.
    pub reason: String,
}

/// One sentence of the answer, located in it, with its checked citations.
#[derive(Debug, Clone, Serialize)]
pub struct Statement {
    /// The sentence.
    pub text: String,
    /// UTF-8 byte offset in the answer where it starts (inclusive).
    pub start: usize,
    /// UTF-8 byte offset where it ends (exclusive).
    pub end: usize,
    /// Citations naming real sources, in the model's order.
    pub citations: Vec<CheckedCitation>,
}

impl Statement {
    /// Whether at least one citation is verified.
    pub fn supported(&self) -> bool {
        self.citations.iter().any(|c| c.verified)
    }

    /// The sources with a verified quote, each once, with its best confidence, in
    /// the order first cited.
    pub fn verified_sources(&self) -> Vec<(usize, f64)> {
        let mut out: Vec<(usize, f64)> = Vec::new();
        for c in self.citations.iter().filter(|c| c.verified) {
            match out.iter_mut().find(|(n, _)| *n == c.source) {
                Some((_, best)) => *best = best.max(c.confidence),
                None => out.push((c.source, c.confidence)),
            }
        }
        out
    }
}

/// The checked answer.
#[derive(Debug, Clone, Serialize)]
pub struct GroundedAnswer {
    /// The statements joined by single spaces.
    pub answer: String,
    /// False when the model said the sources do not answer.
    pub answerable: bool,
    /// The statements.
    pub statements: Vec<Statement>,
    /// What the sources leave open.
    pub unknowns: Vec<String>,
    /// Citations of sources that do not exist.
    pub rejected: Vec<RejectedCitation>,
}

impl GroundedAnswer {
    /// An answer the model gave without sources: one statement, no citations, so
    /// it is never shown as grounded.
    pub fn ungrounded(text: String) -> Self {
        let text = text.trim().to_string();
        GroundedAnswer {
            statements: vec![Statement {
                text: text.clone(),
                start: 0,
                end: text.len(),
                citations: Vec::new(),
            }],
            answer: text,
            answerable: true,
            unknowns: Vec::new(),
            rejected: Vec::new(),
        }
    }

    /// True when the sources answered and every statement has a verified citation.
    pub fn grounded(&self) -> bool {
        self.answerable
            && !self.statements.is_empty()
            && self.statements.iter().all(Statement::supported)
    }

    /// Whether any citation at all was given (valid or not).
    pub fn cites_anything(&self) -> bool {
        !self.rejected.is_empty() || self.statements.iter().any(|s| !s.citations.is_empty())
    }
}

/// Checks the model's answer against the sources it was given.
pub fn verify(answer: &ModelAnswer, sources: &[SourceText]) -> GroundedAnswer {
    Checker::new(sources).verify(answer)
}

/// The sources with their normal forms computed once, for checking several answers
/// (each statement as it streams in, the whole reply, the pack's buckets) without
/// normalising every page again each time.
pub struct Checker<'a> {
    sources: &'a [SourceText],
    normalised: Vec<String>,
}

impl<'a> Checker<'a> {
    /// Prepares `sources` for checking.
    pub fn new(sources: &'a [SourceText]) -> Self {
        Checker {
            sources,
            normalised: sources.iter().map(|s| normalise(&s.text)).collect(),
        }
    }

    /// Checks `answer` against the sources; see [`verify`].
    pub fn verify(&self, answer: &ModelAnswer) -> GroundedAnswer {
        let (sources, normalised) = (self.sources, &self.normalised);
        let mut text = String::new();
        let mut statements = Vec::new();
        let mut rejected = Vec::new();
        if answer.answerable {
            for (si, statement) in answer.statements.iter().enumerate() {
                if !text.is_empty() {
                    text.push(' ');
                }
                let start = text.len();
                text.push_str(&statement.text);
                let end = text.len();
                let mut citations: Vec<CheckedCitation> = Vec::new();
                for citation in &statement.citations {
                    let number = match resolve_source(&citation.source, sources) {
                        Ok(n) => n,
                        Err(reason) => {
                            rejected.push(RejectedCitation {
                                statement: si,
                                source: describe_ref(&citation.source),
                                quote: citation.quote.clone(),
                                reason,
                            });
                            continue;
                        }
                    };
                    // The model was shown each source's title too, and the answer is
                    // often there: a quote of the title is evidence like one of the text.
                    let source = &sources[number - 1];
                    let (matched, confidence) =
                        match check_quote(&citation.quote, &source.text, &normalised[number - 1]) {
                            (MatchKind::None, _) => check_quote(
                                &citation.quote,
                                &source.title,
                                &normalise(&source.title),
                            ),
                            found => found,
                        };
                    let checked = CheckedCitation {
                        source: number,
                        quote: citation.quote.clone(),
                        verified: matched != MatchKind::None,
                        confidence,
                        matched,
                    };
                    citations.push(checked);
                }
                statements.push(Statement {
                    text: statement.text.clone(),
                    start,
                    end,
                    citations,
                });
            }
        }
        GroundedAnswer {
            answer: text,
            answerable: answer.answerable,
            statements,
            unknowns: answer.unknowns.clone(),
            rejected,
        }
    }
}

fn resolve_source(source: &SourceRef, sources: &[SourceText]) -> Result<usize, String> {
    match source {
        SourceRef::Number(n) => usize::try_from(*n)
            .ok()
            .filter(|n| (1..=sources.len()).contains(n))
            .ok_or_else(|| {
                format!(
                    "there is no source {n} (sources are 1 to {})",
                    sources.len()
                )
            }),
        SourceRef::Url(url) => sources
            .iter()
            .find(|s| same_url(&s.url, url))
            .map(|s| s.number)
            .ok_or_else(|| "that URL is not one of the fetched sources".to_string()),
        SourceRef::Other(_) => Err("not a source number".to_string()),
    }
}

fn same_url(a: &str, b: &str) -> bool {
    a.trim_end_matches('/')
        .eq_ignore_ascii_case(b.trim_end_matches('/'))
}

fn describe_ref(source: &SourceRef) -> String {
    match source {
        SourceRef::Number(n) => n.to_string(),
        SourceRef::Url(u) | SourceRef::Other(u) => u.clone(),
    }
}

/// Whether one fragment of an elided quote is long enough to prove anything on its
/// own: at least [`MIN_FRAGMENT_WORDS`] words and [`MIN_QUOTE_CHARS`] letters, so
/// `t...a...r...d...i` or `of the ... and a` never verify.
fn proves_something(fragment: &str) -> bool {
    fragment.split_whitespace().count() >= MIN_FRAGMENT_WORDS
        && fragment.chars().filter(|c| !c.is_whitespace()).count() >= MIN_QUOTE_CHARS
}

/// Decides how `quote` occurs in a source (`raw` text, `normalised` by [`normalise`]).
pub fn check_quote(quote: &str, raw: &str, normalised: &str) -> (MatchKind, f64) {
    let wanted = normalise(quote);
    if wanted.chars().filter(|c| !c.is_whitespace()).count() < MIN_QUOTE_CHARS {
        return (MatchKind::None, 0.0);
    }
    if !quote.trim().is_empty() && raw.contains(quote.trim()) {
        return (MatchKind::Exact, CONFIDENCE_EXACT);
    }
    if normalised.contains(&wanted) {
        return (MatchKind::Normalised, CONFIDENCE_NORMALISED);
    }
    let fragments: Vec<&str> = wanted
        .split("...")
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .collect();
    if fragments.len() > 1 && fragments.iter().all(|f| proves_something(f)) {
        // Each fragment in order, each starting soon after the previous one ends: an
        // elision leaves out a few words, not the rest of the page.
        let mut from = 0usize;
        for (i, fragment) in fragments.iter().enumerate() {
            match normalised[from..].find(fragment) {
                Some(gap) if i == 0 || gap <= MAX_FRAGMENT_GAP_BYTES => {
                    from += gap + fragment.len();
                }
                _ => return (MatchKind::None, 0.0),
            }
        }
        return (MatchKind::Fragments, CONFIDENCE_FRAGMENTS);
    }
    (MatchKind::None, 0.0)
}

/// Words that mark a sentence as a law, regulation or official policy.
const POLICY_WORDS: [&str; 14] = [
    "law",
    "laws",
    "legal",
    "illegal",
    "legally",
    "regulation",
    "regulations",
    "statute",
    "permit",
    "licence",
    "license",
    "visa",
    "prohibited",
    "mandatory",
];

/// Whether `text` reads like a law, regulation or official policy (one of
/// [`POLICY_WORDS`] as a word): such pack items want two sources.
pub fn reads_like_policy(text: &str) -> bool {
    normalise(text)
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| POLICY_WORDS.contains(&w))
}

/// Gemini's `groundingMetadata` (REST, camelCase): one chunk per source given to the
/// model (chunk index = source number - 1), one support per statement that has
/// verified citations, listing only those.
pub fn grounding_metadata(
    answer: &GroundedAnswer,
    sources: &[SourceText],
    snippets: usize,
    queries: &[String],
) -> Value {
    let first_snippet = sources.len() - snippets.min(sources.len());
    let chunks: Vec<Value> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let web =
                json!({"uri": s.url, "title": s.title, "domain": crate::http::host_of(&s.url)});
            if i >= first_snippet {
                // Not Gemini's: a search-result snippet, not a page read in full.
                json!({"web": web, "kind": "snippet"})
            } else {
                json!({"web": web})
            }
        })
        .collect();
    let supports: Vec<Value> = answer
        .statements
        .iter()
        .filter(|s| s.supported())
        .map(|s| {
            let verified = s.verified_sources();
            json!({
                "segment": {"startIndex": s.start, "endIndex": s.end, "text": s.text},
                "groundingChunkIndices": verified.iter().map(|(n, _)| n - 1).collect::<Vec<_>>(),
                "confidenceScores": verified.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "webSearchQueries": queries,
        "groundingChunks": chunks,
        "groundingSupports": supports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answer::{ModelCitation, ModelStatement};

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
    fn quote_matching_levels() {
        let raw = "In 2007 dried tardigrades were exposed to open space \u{2014} and some \u{201C}survived\u{201D}.";
        let norm = normalise(raw);
        assert_eq!(
            check_quote("dried tardigrades were exposed", raw, &norm).0,
            MatchKind::Exact
        );
        assert_eq!(
            check_quote("DRIED   tardigrades were exposed", raw, &norm).0,
            MatchKind::Normalised
        );
        assert_eq!(
            check_quote("open space - and some \"survived\"", raw, &norm).0,
            MatchKind::Normalised
        );
        assert_eq!(
            check_quote(
                "In 2007 dried tardigrades … and some \"survived\"",
                raw,
                &norm
            )
            .0,
            MatchKind::Fragments
        );
        // Fragments too short to prove anything, out of order, or far apart.
        assert_eq!(
            check_quote("In 2007 dried … and some", raw, &norm).0,
            MatchKind::None
        );
        assert_eq!(
            check_quote("t...a...r...d...i...g...r...a...d", raw, &norm).0,
            MatchKind::None
        );
        assert_eq!(
            check_quote(
                "and some \"survived\" ... In 2007 dried tardigrades",
                raw,
                &norm
            )
            .0,
            MatchKind::None
        );
        let far = format!(
            "{raw} {} The end of the page is here.",
            "filler words ".repeat(40)
        );
        assert_eq!(
            check_quote(
                "In 2007 dried tardigrades ... The end of the page",
                &far,
                &normalise(&far)
            )
            .0,
            MatchKind::None
        );
        assert_eq!(
            check_quote("tardigrades live on the moon", raw, &norm).0,
            MatchKind::None
        );
        assert_eq!(
            check_quote("2007", raw, &norm).0,
            MatchKind::None,
            "too short to prove anything"
        );
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
        let meta = grounding_metadata(&g, &sources, 0, &["q".into()]);
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
        let meta = grounding_metadata(&g, &sources, 0, &[]);
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
}
