//! The grounding stage: check every statement of the model's answer against the text
//! the model was given, and describe the result in Gemini's `groundingMetadata` shape.
//!
//! A statement is supported in one of two ways, and the output says which:
//! - **quote**: the model's own quote is in the cited source (`quotes.rs`: nothing but
//!   normalisation and `...` between fragments allowed), and the statement says
//!   nothing that the quote's sentence contradicts (see below);
//! - **match**: no quote verified, but ground found a sentence, or two adjacent
//!   sentences, of the text the model was shown that say the same thing
//!   (`matches.rs`), as Gemini's grounding service computes its supports itself
//!   rather than trusting the model. Small local models often write a right
//!   statement with a garbled quote; a reader should not distrust a right answer.
//!
//! A verified quote is not taken on trust either: when the statement carries a
//! number or date that the quote's sentence does not, or negates what it says (or
//! the other way round), the statement is a **mismatch** (a real quote cited for
//! something it does not say), which supports nothing, unless the match finds it
//! said elsewhere in what the model was shown. Negation is read in what the quote
//! covers (a "without" earlier in its sentence is the sentence's, not the quote's),
//! and a statement that is its verified quote word for word is supported by it (see
//! `disagreement`). `anchors.rs` reads numbers, dates, names, quoted strings and
//! negation for both checks.
//!
//! The answer text is assembled here from the statements, so segment offsets are
//! exact UTF-8 byte offsets by construction. The checker owns what it needs (behind
//! an `Arc`), so an async caller can build it and check whole answers off the
//! runtime; a single statement's check is bounded (see `matches.rs`) and cheap
//! enough to run as the answer streams.

mod anchors;
mod claims;
mod conflicts;
mod cross;
mod gemini;
mod matches;
mod numbers;
mod quotes;

use std::sync::Arc;

use serde::Serialize;

use crate::answer::{ModelAnswer, ModelStatement, SourceRef};
use crate::context::{SourceCut, SourceText};
use crate::text::normalise;
use anchors::{Features, missing_anchor, negation_conflict};
use matches::Shown;

pub use claims::{
    CORROBORATING_VOICES, ClaimConflict, ClaimSupport, ClaimVerdict, Findings, Judged, judged,
    verdict, voice_of, voices,
};
pub use conflicts::ConflictKind;
pub use cross::Contradiction;
pub use gemini::{grounding_metadata, search_entry_point};
pub use matches::{
    ALL_NEGATED_TERMS_UP_TO, ALL_TERMS_UP_TO, CONFIDENCE_MATCH, MAX_CANDIDATES, MAX_CONFLICT_WORDS,
    MAX_CROSS_CANDIDATES, MAX_MATCHED_SOURCES, MAX_POSTINGS, MAX_STATEMENT_TERMS,
    MIN_CONFLICT_COVERAGE, MIN_CONFLICT_SHARED, MIN_COVERAGE, MIN_NEGATED_TERMS, MIN_PAIR_COVERAGE,
    MIN_SHARED_TERMS, MIN_WINDOW_COVERAGE,
};
pub use quotes::{
    CONFIDENCE_EXACT, CONFIDENCE_FRAGMENTS, CONFIDENCE_NORMALISED, MAX_FRAGMENT_GAP_BYTES,
    MIN_FRAGMENT_WORDS, MIN_QUOTE_CHARS, check_quote,
};

/// How a quote matched its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
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

/// What supports a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Support {
    /// A verified quote of the model's that does not contradict the statement.
    Quote,
    /// Ground's own match: a window of the shown text saying the same thing.
    Match,
    /// Only verified quotes that the statement contradicts (another number or date,
    /// or a negation), and no match: not supported.
    Mismatch,
    /// Nothing.
    None,
}

impl Support {
    /// The name used in `--json`: quote, match, mismatch or none.
    pub fn name(self) -> &'static str {
        match self {
            Support::Quote => "quote",
            Support::Match => "match",
            Support::Mismatch => "mismatch",
            Support::None => "none",
        }
    }
}

/// A citation that names a real source, with the verdict on its quote.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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

/// A window of the text the model was shown that ground found saying what a
/// statement says.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct MatchedWindow {
    /// The source's number (1-based).
    pub source: usize,
    /// The window: one sentence, or two adjacent ones, exactly as in the source's
    /// extracted text.
    pub text: String,
    /// UTF-8 byte offset of the window in the source's extracted text (inclusive).
    pub start: usize,
    /// UTF-8 byte offset where it ends (exclusive).
    pub end: usize,
    /// The share of the statement's content words in it, times [`CONFIDENCE_MATCH`].
    pub confidence: f64,
}

/// A citation naming a source we never gave the model.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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

/// One sentence of the answer, located in it, with its checked citations and what
/// supports it.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Statement {
    /// The sentence.
    pub text: String,
    /// UTF-8 byte offset in the answer where it starts (inclusive).
    pub start: usize,
    /// UTF-8 byte offset where it ends (exclusive).
    pub end: usize,
    /// Citations naming real sources, in the model's order.
    pub citations: Vec<CheckedCitation>,
    /// What supports it.
    pub support: Support,
    /// Ground's own matches (support `match` only), best first.
    pub matches: Vec<MatchedWindow>,
    /// Why its verified quotes do not support it, when they do not: "the number 2009
    /// is not in the quoted text", ...
    pub mismatch: Option<String>,
    /// Other sources read (not cited, not its match) that support it too, by ground's
    /// match or by its quote: filled by [`Checker::cross_reference`].
    pub corroborated_by: Vec<usize>,
    /// Sentences of sources read that say otherwise (another number, date or name in
    /// its slot, or the negation): filled by [`Checker::cross_reference`].
    pub contradicted_by: Vec<Contradiction>,
}

impl Statement {
    /// A statement with no citations and no support.
    fn bare(text: String, start: usize, end: usize) -> Statement {
        Statement {
            text,
            start,
            end,
            citations: Vec::new(),
            support: Support::None,
            matches: Vec::new(),
            mismatch: None,
            corroborated_by: Vec::new(),
            contradicted_by: Vec::new(),
        }
    }

    /// Whether a source read says otherwise ([`Statement::contradicted_by`]): `--strict`
    /// counts such a statement as unsupported.
    pub fn contradicted(&self) -> bool {
        !self.contradicted_by.is_empty()
    }

    /// Whether something supports it: a verified quote or ground's match.
    pub fn supported(&self) -> bool {
        matches!(self.support, Support::Quote | Support::Match)
    }

    /// Whether a verified quote of the model's supports it (`--strict-quotes`).
    pub fn quoted(&self) -> bool {
        self.support == Support::Quote
    }

    /// The sources with a verified quote, each once, with its best confidence, in
    /// the order first cited (whether or not the quotes support the statement).
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

    /// The sources that support it, each once with its confidence: those of its
    /// verified quotes (support `quote`) or of ground's matches (support `match`);
    /// none otherwise. These are its `[n]` markers and its `groundingSupports`.
    pub fn supporting_sources(&self) -> Vec<(usize, f64)> {
        match self.support {
            Support::Quote => self.verified_sources(),
            Support::Match => self
                .matches
                .iter()
                .map(|m| (m.source, m.confidence))
                .collect(),
            Support::Mismatch | Support::None => Vec::new(),
        }
    }
}

/// The checked answer.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize)]
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
            statements: vec![Statement::bare(text.clone(), 0, text.len())],
            answer: text,
            answerable: true,
            unknowns: Vec::new(),
            rejected: Vec::new(),
        }
    }

    /// True when the sources answered and every statement is supported (by a quote
    /// or by ground's match). An answer whose model cited nothing at all is never
    /// grounded, whatever ground's match found: not citing is the model failing its
    /// task (see [`crate::report::verdict`]).
    pub fn grounded(&self) -> bool {
        self.answerable
            && !self.statements.is_empty()
            && self.cites_anything()
            && self.statements.iter().all(Statement::supported)
    }

    /// True when the sources answered and every statement is supported by a verified
    /// quote of the model's (`--strict-quotes`).
    pub fn grounded_by_quotes(&self) -> bool {
        self.answerable
            && !self.statements.is_empty()
            && self.statements.iter().all(Statement::quoted)
    }

    /// How many statements a source read contradicts.
    pub fn contradicted(&self) -> usize {
        self.statements.iter().filter(|s| s.contradicted()).count()
    }

    /// Whether any citation at all was given (valid or not).
    pub fn cites_anything(&self) -> bool {
        !self.rejected.is_empty() || self.statements.iter().any(|s| !s.citations.is_empty())
    }
}

/// Checks the model's answer against the sources it was given, their whole texts
/// counted as shown.
pub fn verify(answer: &ModelAnswer, sources: &[SourceText]) -> GroundedAnswer {
    Checker::new(sources).verify(answer)
}

/// The sources prepared for checking several answers (each statement as it streams
/// in, the whole reply, the pack's buckets) without preparing them again each time:
/// their normal forms for the quote check, and the sentences the model was shown,
/// indexed for the match. Cheap to clone, and `Send`, so checks can run off an async
/// runtime.
#[derive(Clone)]
pub struct Checker {
    inner: Arc<Prepared>,
}

struct Prepared {
    sources: Vec<SourceText>,
    normalised: Vec<String>,
    titles: Vec<String>,
    shown: Shown,
    /// Whether each source had a block in the prompt: a page read whose passages all
    /// lost to better ones (read but unused) had none, and cannot be cited.
    in_prompt: Vec<bool>,
}

impl Checker {
    /// Prepares `sources` for checking, with their whole texts counted as shown to
    /// the model (for callers that sent them whole).
    pub fn new(sources: &[SourceText]) -> Self {
        let whole: Vec<Vec<std::ops::Range<usize>>> = sources
            .iter()
            .map(|s| std::iter::once(0..s.text.len()).collect())
            .collect();
        Self::prepare(sources.to_vec(), &whole)
    }

    /// Prepares `sources` for checking, with what the context stage sent of each
    /// (`cuts`, matched by source number) as the only text the match may use. A
    /// source with no cut counts as not shown.
    pub fn for_context(sources: Vec<SourceText>, cuts: &[SourceCut]) -> Self {
        let sent: Vec<Vec<std::ops::Range<usize>>> = sources
            .iter()
            .map(|s| {
                cuts.iter()
                    .find(|c| c.number == s.number)
                    .map(|c| c.sent.clone())
                    .unwrap_or_default()
            })
            .collect();
        Self::prepare(sources, &sent)
    }

    fn prepare(sources: Vec<SourceText>, shown: &[Vec<std::ops::Range<usize>>]) -> Self {
        let in_prompt = shown.iter().map(|ranges| !ranges.is_empty()).collect();
        let shown = Shown::new(
            sources
                .iter()
                .zip(shown)
                .map(|(s, ranges)| (s.text.as_str(), s.title.as_str(), ranges.as_slice())),
        );
        Checker {
            inner: Arc::new(Prepared {
                normalised: sources.iter().map(|s| normalise(&s.text)).collect(),
                titles: sources.iter().map(|s| normalise(&s.title)).collect(),
                sources,
                shown,
                in_prompt,
            }),
        }
    }

    /// Checks `answer` against the sources: every quote, then what supports each
    /// statement (see the module's documentation).
    pub fn verify(&self, answer: &ModelAnswer) -> GroundedAnswer {
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
                statements.push(self.statement(si, statement, start..end, &mut rejected));
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

    /// One statement at `at` in the answer: its quotes, then its support.
    fn statement(
        &self,
        si: usize,
        statement: &ModelStatement,
        at: std::ops::Range<usize>,
        rejected: &mut Vec<RejectedCitation>,
    ) -> Statement {
        let p = &*self.inner;
        let mut checked = Statement::bare(statement.text.clone(), at.start, at.end);
        // The windows of the verified quotes, for the comparison with the statement.
        let mut windows: Vec<Quoted> = Vec::new();
        for citation in &statement.citations {
            let resolved = resolve_source(&citation.source, &p.sources).and_then(|n| {
                if p.in_prompt.get(n - 1).copied().unwrap_or(false) {
                    Ok(n)
                } else {
                    Err(format!(
                        "source {n} was read but not in the prompt (none of its passages were sent)"
                    ))
                }
            });
            let number = match resolved {
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
            // The model was shown each source's title too, and the answer is often
            // there: a quote of the title is evidence like one of the text.
            let i = number - 1;
            let source = &p.sources[i];
            let (mut matched, mut confidence) =
                check_quote(&citation.quote, &source.text, &p.normalised[i]);
            let window = if matched != MatchKind::None {
                quotes::quote_window(&citation.quote, &p.normalised[i])
            } else {
                (matched, confidence) = check_quote(&citation.quote, &source.title, &p.titles[i]);
                (matched != MatchKind::None).then_some(quotes::QuoteWindow {
                    sentences: p.titles[i].as_str(),
                    span: p.titles[i].as_str(),
                })
            };
            windows.extend(window.map(|w| Quoted {
                quote: normalise(&citation.quote),
                sentences: Features::of_source(w.sentences),
                span: Features::of_source(w.span),
            }));
            checked.citations.push(CheckedCitation {
                source: number,
                quote: citation.quote.clone(),
                verified: matched != MatchKind::None,
                confidence,
                matched,
            });
        }
        let features = Features::of_statement(&statement.text);
        let verified = checked.citations.iter().any(|c| c.verified);
        if verified {
            checked.mismatch = disagreement(&features, &windows);
            if checked.mismatch.is_none() {
                checked.support = Support::Quote;
                return checked;
            }
        }
        checked.matches = p
            .shown
            .find(&features, |i| p.sources[i].number)
            .into_iter()
            .map(|w| MatchedWindow {
                text: p.sources[w.source - 1].text[w.start..w.end].to_string(),
                source: w.source,
                start: w.start,
                end: w.end,
                confidence: w.confidence,
            })
            .collect();
        checked.support = if !checked.matches.is_empty() {
            Support::Match
        } else if verified {
            Support::Mismatch
        } else {
            Support::None
        };
        checked
    }
}

/// A verified quote as the check of its statement reads it: the quote (normalised),
/// the sentences it lies in and the span it covers.
struct Quoted {
    quote: String,
    sentences: Features,
    span: Features,
}

/// Why the windows of a statement's verified quotes do not support it, if they do
/// not: a number or date of the statement in none of their sentences, or negation
/// that disagrees. Names are not asked for: a statement may name what its quote leaves
/// implicit ("It was first lit..." quoted for "The lighthouse was first lit...").
///
/// Negation is read in what the quote covers, not in the rest of its sentences,
/// unless the statement says more than the quote does in a clause that a cue outside
/// the quote negates: "it's impossible to tell the story without acknowledging that
/// it's a microcosm" quoted from "acknowledging" on supports the statement "it's a
/// microcosm" (the "without" is the sentence's rhetoric, not the quote's claim), while
/// "the tower" quoted from "The keepers did not live in the tower" supports no "The
/// keepers lived in the tower". A statement that is its verified quote, word for
/// word, is supported by it.
fn disagreement(statement: &Features, windows: &[Quoted]) -> Option<String> {
    if windows.is_empty() {
        return None;
    }
    let said = trim_sentence_end(&statement.normalised);
    if windows
        .iter()
        .any(|w| !said.is_empty() && trim_sentence_end(&w.quote) == said)
    {
        return None;
    }
    let sentences: Vec<&Features> = windows.iter().map(|w| &w.sentences).collect();
    if let Some(anchor) = missing_anchor(statement, &sentences, false) {
        return Some(format!("{anchor} is not in the quoted text"));
    }
    let read: Vec<&Features> = windows
        .iter()
        .map(|w| {
            if says_more_than_quote(statement, w) {
                &w.sentences
            } else {
                &w.span
            }
        })
        .collect();
    negation_conflict(statement, &read)
        .then(|| "the statement and the quoted text disagree on a negation".to_string())
}

/// Whether the statement holds a word of a negated clause of the quote's sentences
/// that the quote itself does not hold: then the negation outside the quote bears on
/// what the statement says.
fn says_more_than_quote(statement: &Features, quoted: &Quoted) -> bool {
    quoted.sentences.cues.iter().any(|cue| {
        cue.clause
            .iter()
            .chain(&cue.scope)
            .any(|t| statement.term_set.contains(t) && !quoted.span.term_set.contains(t))
    })
}

/// `text` without the sentence end and quote marks around it: a statement ends with a
/// full stop its quote usually lacks.
fn trim_sentence_end(text: &str) -> &str {
    text.trim()
        .trim_end_matches(['.', '!', '?', '"', '\'', ' '])
        .trim_start_matches(['"', '\'', ' '])
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
            .find(|s| same_url(&s.url, url) || same_url(&crate::context::short_url(&s.url), url))
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

#[cfg(test)]
mod tests;
