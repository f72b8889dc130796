//! Supports found by ground itself: for a statement whose quote did not verify (small
//! models often write a right statement with a garbled or invented quote), the
//! sentence, or two adjacent sentences, of the text the model was shown that say the
//! same thing.
//!
//! Only what the model saw is searched: the byte ranges of each source that the
//! context stage put in the prompt ([`crate::context::SourceCut::sent`]), never the
//! rest of a page. Adjacent means adjacent in what was sent: two sentences on either
//! side of a `[…]` gap are not a window.
//!
//! Precision comes first, as a wrong `[n]` is worse than a missing one. A window
//! supports a statement only when
//! - every anchor of the statement is in it (numbers and dates by value, names,
//!   quoted strings: see `anchors.rs`),
//! - at least [`MIN_COVERAGE`] of the statement's content words are in it or in its
//!   source's title, which the model saw and which says what the page is about
//!   ([`MIN_PAIR_COVERAGE`] for two sentences; all of them for a statement of at most
//!   [`ALL_TERMS_UP_TO`]), and at least [`MIN_SHARED_TERMS`] and
//!   [`MIN_WINDOW_COVERAGE`] of them in the window itself, and
//! - negation agrees (`anchors::negation_conflict`).
//!
//! A page's *subject* (its title, its first line when that is a heading, its most
//! named name) may stand in a window as "it" or "the lighthouse" where the statement
//! names it: "The Quillfeather Lighthouse was first lit on 14 October 1911" is
//! supported by "It was first lit on 14 October 1911" on a page titled "Quillfeather
//! Lighthouse". Then the statement's other words must pass the rules above on their
//! own, the window must open by referring back before it names anything else
//! (`anchors::refers_back`), and it must not name another thing of the subject's kind
//! ("the Varnholm Lighthouse"). Only the window's own page's subject counts: another
//! page's never does.
//!
//! A window of two sentences is tried only when no single sentence passes, and each
//! of its sentences must bring a content word of the statement that the other lacks
//! and that is not a name: a neighbour that only lends a missing number or name is how
//! a wrong statement would pass ("designed by Mara Varnholm", where Varnholm is the
//! cape in the sentence before).
//!
//! The work is bounded and close to linear: sentences are indexed by content word once
//! per run ([`Shown::new`]); a statement looks up its words (at most
//! [`MAX_STATEMENT_TERMS`], each word's list read only up to [`MAX_POSTINGS`]), keeps
//! the [`MAX_CANDIDATES`] sentences sharing most words, and tries each alone and with
//! each neighbour. Nothing compares every statement with every sentence.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use super::anchors::{
    Features, fold, made_of_names, missing_anchor, negation_conflict, refers_back,
};
use super::conflicts::{self, ConflictKind, Slotted};
use crate::context::sentence_spans;

/// Share of a statement's content words a window must hold.
pub const MIN_COVERAGE: f64 = 0.6;
/// Share of a statement's content words the window itself must hold, the title's
/// help aside.
pub const MIN_WINDOW_COVERAGE: f64 = 0.5;
/// Share a window of two sentences must hold: more than one sentence, as two
/// sentences share more words with anything by chance.
pub const MIN_PAIR_COVERAGE: f64 = 0.75;
/// A statement with this many content words or fewer must find all of them: on so
/// few words a share means nothing ("she felt she had much of a choice" is not "much
/// ... is a choice").
pub const ALL_TERMS_UP_TO: usize = 3;
/// Fewest content words a statement must share with a window.
pub const MIN_SHARED_TERMS: usize = 2;
/// A statement's content words looked up, at most.
pub const MAX_STATEMENT_TERMS: usize = 48;
/// Sentences read of one word's list, at most (a word in thousands of sentences tells
/// none of them apart).
pub const MAX_POSTINGS: usize = 4096;
/// Candidate sentences tried per statement.
pub const MAX_CANDIDATES: usize = 24;
/// Sources a statement is matched in, at most (the best window of each).
pub const MAX_MATCHED_SOURCES: usize = 3;
/// Confidence of a window holding every content word of the statement; less in
/// proportion to the share it holds. Below a verbatim quote's (0.75 and up): ground's
/// reading of a paraphrase is weaker evidence than the words themselves.
pub const CONFIDENCE_MATCH: f64 = 0.7;
/// Sentences indexed per run, at most: the prompt holds far fewer.
const MAX_SENTENCES: usize = 50_000;
/// Candidate sentences tried per statement by the cross-check, which reads every
/// source whole.
pub const MAX_CROSS_CANDIDATES: usize = 64;
/// Share of a statement's content words (the subject a sentence refers back to, and
/// the name that differs, aside) a sentence must hold to contradict it: more than a
/// support asks, as a sentence sharing fewer words may be about something else.
pub const MIN_CONFLICT_COVERAGE: f64 = 0.8;
/// Fewest content words a statement must share with a sentence contradicting it.
pub const MIN_CONFLICT_SHARED: usize = 3;
/// Fewest content words of a statement a negation may contradict: on fewer ("there
/// were no lines at the library") the sentence is as likely about another place.
pub const MIN_NEGATED_TERMS: usize = 4;
/// A statement with this many content words or fewer is contradicted by a negation
/// only in a sentence holding all of them.
pub const ALL_NEGATED_TERMS_UP_TO: usize = 5;
/// Longest sentence (words) read for a contradiction.
pub const MAX_CONFLICT_WORDS: usize = 60;

/// A sentence of a source that says otherwise than a statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The source's number.
    pub source: usize,
    /// UTF-8 byte offsets of the sentence in the source's text.
    pub start: usize,
    /// See `start`.
    pub end: usize,
    /// What it says otherwise.
    pub kind: ConflictKind,
    /// The value it gives instead ("9 June 1936", a name), or for a negation
    /// "negated" or "affirmed".
    pub value: String,
}

/// A window of shown text that supports a statement.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Window {
    /// The source's number.
    pub source: usize,
    /// UTF-8 byte offsets of the window in the source's extracted text (start
    /// inclusive, end exclusive).
    pub start: usize,
    /// See `start`.
    pub end: usize,
    /// Share of the statement's content words times [`CONFIDENCE_MATCH`].
    pub confidence: f64,
}

struct Sentence {
    /// Index of the source (0-based) in the checker's list.
    source: usize,
    /// Byte range in the source's text.
    span: Range<usize>,
    /// Sentences with the same block are contiguous in what was sent (index into
    /// `Shown::blocks`).
    block: u32,
    features: Features,
}

/// The sentences the model was shown, indexed by content word.
pub struct Shown {
    sentences: Vec<Sentence>,
    index: HashMap<String, Vec<u32>>,
    /// Each range sent, as (its start in the source's text, its text): windows of two
    /// sentences are read again as one text. Only what was shown is kept.
    blocks: Vec<(usize, String)>,
    /// Each source's title's content words: what the page is about.
    titles: Vec<HashSet<String>>,
    /// Each source's subject, as runs of lowercase words a statement's name may be
    /// part of: its title, its first line when that is a heading, its most named name.
    subjects: Vec<Vec<Vec<String>>>,
}

/// Words before a statement's opening name that leave it in the subject's place.
const DETERMINERS: [&str; 3] = ["the", "a", "an"];
/// A first line of at most this many words, without a sentence's end, is a heading.
const HEADING_MAX_WORDS: usize = 12;

/// What a page is about, as runs of words (see [`Shown::subjects`]): its title, its
/// first shown line when that reads as a heading, and the name its shown sentences
/// name most (at least twice).
fn subject_of(title: &str, first_line: Option<&str>, sentences: &[Sentence]) -> Vec<Vec<String>> {
    let mut runs = Vec::new();
    let title = Features::of_source(title).sequence;
    if !title.is_empty() {
        runs.push(title);
    }
    if let Some(line) = first_line.map(str::trim) {
        let words = line.split_whitespace().count();
        if (1..=HEADING_MAX_WORDS).contains(&words) && !line.ends_with(['.', '!', '?']) {
            runs.push(Features::of_source(line).sequence);
        }
    }
    let mut counts: Vec<(&Vec<String>, usize)> = Vec::new();
    for name in sentences.iter().flat_map(|s| &s.features.names) {
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let most = counts
        .iter()
        .filter(|(_, c)| *c >= 2)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.len().cmp(&a.0.len()).reverse()));
    if let Some((name, _)) = most {
        runs.push((*name).clone());
    }
    runs
}

/// Whether the run of words `name` occurs in `run`.
fn holds_run(run: &[String], name: &[String]) -> bool {
    !name.is_empty() && run.windows(name.len()).any(|w| w == name)
}

impl Shown {
    /// Indexes `shown`: per source (0-based, as given), its text and the byte ranges of
    /// it that the model saw.
    pub fn new<'a>(
        shown: impl IntoIterator<Item = (&'a str, &'a str, &'a [Range<usize>])>,
    ) -> Shown {
        let mut sentences = Vec::new();
        let mut blocks = Vec::new();
        let mut titles = Vec::new();
        let mut subjects = Vec::new();
        for (source, (text, title, ranges)) in shown.into_iter().enumerate() {
            titles.push(Features::of_source(title).term_set);
            let first = sentences.len();
            for range in ranges {
                let Some(part) = text.get(range.clone()) else {
                    continue;
                };
                let block = blocks.len() as u32;
                blocks.push((range.start, part.to_string()));
                for span in sentence_spans(part) {
                    if sentences.len() >= MAX_SENTENCES {
                        break;
                    }
                    let span = span.start + range.start..span.end + range.start;
                    sentences.push(Sentence {
                        source,
                        features: Features::of_source(&text[span.clone()]),
                        span,
                        block,
                    });
                }
            }
            let first_line = ranges
                .first()
                .and_then(|r| text.get(r.clone()))
                .and_then(|t| t.trim_start().lines().next());
            subjects.push(subject_of(title, first_line, &sentences[first..]));
        }
        let mut index: HashMap<String, Vec<u32>> = HashMap::new();
        for (i, sentence) in sentences.iter().enumerate() {
            for term in &sentence.features.terms {
                index.entry(term.clone()).or_default().push(i as u32);
            }
        }
        Shown {
            sentences,
            index,
            blocks,
            titles,
            subjects,
        }
    }

    /// The windows that support `statement`: the best of each source, best first, at
    /// most [`MAX_MATCHED_SOURCES`]. `source_number` maps a source index to its number.
    pub fn find(
        &self,
        statement: &Features,
        source_number: impl Fn(usize) -> usize,
    ) -> Vec<Window> {
        self.find_among(
            statement,
            source_number,
            MAX_CANDIDATES,
            MAX_MATCHED_SOURCES,
        )
    }

    /// [`Shown::find`] for the cross-check: more candidates tried (the text is every
    /// source read, not the few passages of a prompt), and the best window of every
    /// source that has one.
    pub fn find_everywhere(
        &self,
        statement: &Features,
        source_number: impl Fn(usize) -> usize,
    ) -> Vec<Window> {
        self.find_among(statement, source_number, MAX_CROSS_CANDIDATES, usize::MAX)
    }

    /// The sentences sharing most of `terms`, most first, at most `limit`.
    fn candidates(&self, terms: &[String], limit: usize) -> Vec<(u32, usize)> {
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for term in terms {
            if let Some(postings) = self.index.get(term) {
                for &i in postings.iter().take(MAX_POSTINGS) {
                    *counts.entry(i).or_default() += 1;
                }
            }
        }
        let mut candidates: Vec<(u32, usize)> = counts.into_iter().collect();
        candidates.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        candidates.truncate(limit);
        candidates
    }

    fn find_among(
        &self,
        statement: &Features,
        source_number: impl Fn(usize) -> usize,
        limit: usize,
        sources: usize,
    ) -> Vec<Window> {
        let terms = &statement.terms[..statement.terms.len().min(MAX_STATEMENT_TERMS)];
        if terms.len() < MIN_SHARED_TERMS {
            return Vec::new();
        }
        let candidates = self.candidates(terms, limit);

        // Single sentences first; pairs only when no single sentence passes.
        let mut best: Vec<(usize, Window)> = Vec::new();
        for &(i, _) in &candidates {
            let i = i as usize;
            if let Some(coverage) = self.supports(statement, terms, &[i]) {
                keep(&mut best, self.window(&[i], coverage, &source_number));
            }
        }
        if best.is_empty() {
            for &(i, _) in &candidates {
                let i = i as usize;
                for pair in [[i.wrapping_sub(1), i], [i, i + 1]] {
                    if !self.adjacent(pair[0], pair[1]) {
                        continue;
                    }
                    if let Some(coverage) = self.supports(statement, terms, &pair) {
                        keep(&mut best, self.window(&pair, coverage, &source_number));
                    }
                }
            }
        }
        best.sort_by(|a, b| {
            b.1.confidence
                .total_cmp(&a.1.confidence)
                .then(a.0.cmp(&b.0))
        });
        best.truncate(sources);
        best.into_iter().map(|(_, w)| w).collect()
    }

    /// The sentences that contradict `statement` (its `slots` read by
    /// [`conflicts::slotted`]), the first of each source whose number `skip` does not
    /// refuse, in the order of the sources: a sentence about the statement's subject
    /// holding at least [`MIN_CONFLICT_COVERAGE`] of its words (at least
    /// [`MIN_CONFLICT_SHARED`]) that gives another number, date or name in the same
    /// slot, or every anchor and the opposite negation (see `conflicts.rs`). Only
    /// single sentences of at most [`MAX_CONFLICT_WORDS`] words are read: two sentences
    /// or a long run of text share words with anything.
    pub fn conflicts(
        &self,
        statement: &Features,
        slots: &[Slotted],
        source_number: impl Fn(usize) -> usize,
        skip: impl Fn(usize) -> bool,
    ) -> Vec<Conflict> {
        let terms = &statement.terms[..statement.terms.len().min(MAX_STATEMENT_TERMS)];
        if terms.len() < MIN_CONFLICT_SHARED {
            return Vec::new();
        }
        let mut found: Vec<(usize, Conflict)> = Vec::new();
        for (i, _) in self.candidates(terms, MAX_CROSS_CANDIDATES) {
            let i = i as usize;
            let sentence = &self.sentences[i];
            let number = source_number(sentence.source);
            if skip(number)
                || found.iter().any(|(_, c)| c.source == number)
                || sentence.features.sequence.len() > MAX_CONFLICT_WORDS
            {
                continue;
            }
            if let Some((kind, value)) = self.conflict(statement, terms, slots, i) {
                let conflict = Conflict {
                    source: number,
                    start: sentence.span.start,
                    end: sentence.span.end,
                    kind,
                    value,
                };
                found.push((sentence.source, conflict));
            }
        }
        found.sort_by_key(|(source, c)| (*source, c.start));
        found.into_iter().map(|(_, c)| c).collect()
    }

    /// What sentence `i` says otherwise than `statement`, if it contradicts it.
    fn conflict(
        &self,
        statement: &Features,
        terms: &[String],
        slots: &[Slotted],
        i: usize,
    ) -> Option<(ConflictKind, String)> {
        let sentence = &self.sentences[i];
        let window = &sentence.features;
        // The page's subject, referred to rather than named, as for a support.
        let referred = self.referred(statement, &[i]);
        let subject: HashSet<String> = referred
            .iter()
            .flat_map(|n| n.iter())
            .map(|w| fold(w))
            .collect();
        let stripped = statement.without_names(&referred);
        let statement = &stripped;
        let terms: Vec<&String> = terms.iter().filter(|t| !subject.contains(*t)).collect();
        let covered = |terms: &[&String], wanted: f64| {
            let shared = terms
                .iter()
                .filter(|t| window.term_set.contains(**t))
                .count();
            shared >= MIN_CONFLICT_SHARED && shared as f64 >= wanted * terms.len() as f64
        };
        let present = |name: &[String]| {
            window.sequence.windows(name.len()).any(|run| run == name)
                || made_of_names(name, &[window])
        };
        let names_present = statement.names.iter().all(|n| present(n))
            && statement
                .quoted
                .iter()
                .all(|q| window.normalised.contains(q.as_str()));
        let text = self.sentence_text(i);
        let window_slots = conflicts::slotted(text);
        let values_agree = conflicts::all_agree(slots, &window_slots);
        let negation = negation_conflict(statement, &[window]);
        match (names_present, values_agree, negation) {
            (true, false, false) => conflicts::differing_value(slots, &window_slots)
                .filter(|_| covered(&terms, MIN_CONFLICT_COVERAGE)),
            (true, true, true) => {
                if terms.len() < MIN_NEGATED_TERMS
                    || !conflicts::crossing_negation(statement, window)
                {
                    return None;
                }
                let wanted = if terms.len() <= ALL_NEGATED_TERMS_UP_TO {
                    1.0
                } else {
                    MIN_CONFLICT_COVERAGE
                };
                let value = if window.negated && !statement.negated {
                    "negated"
                } else {
                    "affirmed"
                };
                covered(&terms, wanted).then(|| (ConflictKind::Negation, value.to_string()))
            }
            (false, true, false) => {
                let other = conflicts::differing_name(statement, window, present)?;
                let missing: HashSet<String> = statement
                    .names
                    .iter()
                    .filter(|n| !present(n))
                    .flatten()
                    .map(|w| fold(w))
                    .collect();
                let rest: Vec<&String> = terms
                    .iter()
                    .copied()
                    .filter(|t| !missing.contains(*t))
                    .collect();
                covered(&rest, MIN_CONFLICT_COVERAGE)
                    .then(|| (ConflictKind::Name, conflicts::describe_name(&other)))
            }
            _ => None,
        }
    }

    /// The text of sentence `i`.
    fn sentence_text(&self, i: usize) -> &str {
        let sentence = &self.sentences[i];
        let (offset, text) = &self.blocks[sentence.block as usize];
        &text[sentence.span.start - offset..sentence.span.end - offset]
    }

    /// Whether sentences `a` and `b` (`b` right after `a`) were sent together.
    fn adjacent(&self, a: usize, b: usize) -> bool {
        a < b
            && b == a + 1
            && b < self.sentences.len()
            && self.sentences[a].block == self.sentences[b].block
    }

    /// The names of `statement` that are the subject of the page of sentence `first`
    /// and that the window `ids` refers to without naming them (see the module's
    /// documentation); empty when there are none, or the window does not refer back.
    fn referred<'s>(&self, statement: &'s Features, ids: &[usize]) -> Vec<&'s Vec<String>> {
        let first = &self.sentences[ids[0]];
        let window: Vec<&Features> = ids.iter().map(|&i| &self.sentences[i].features).collect();
        let named_in_window =
            |name: &Vec<String>| window.iter().any(|w| holds_run(&w.sequence, name));
        let subject = &self.subjects[first.source];
        // Only the statement's first name, standing where its subject stands (its
        // first word, or its second after "the" or a first word of the same name:
        // "Kate Henshaw", whose "Kate" opens the sentence and is no name on its own),
        // is what "it" or "the company" can stand for, and as written it must be the
        // page's subject ("Kate Nollywood" is not, on a page about Nollywood).
        let Some(name) = statement.names.first() else {
            return Vec::new();
        };
        let seq = &statement.sequence;
        let as_written: Vec<String> = if seq.starts_with(name) {
            name.clone()
        } else if seq.len() > name.len() && seq[1..].starts_with(name) {
            if DETERMINERS.contains(&seq[0].as_str()) {
                name.clone()
            } else {
                std::iter::once(seq[0].clone())
                    .chain(name.iter().cloned())
                    .collect()
            }
        } else {
            return Vec::new();
        };
        let referred: Vec<&Vec<String>> = std::iter::once(name)
            .filter(|_| subject.iter().any(|run| holds_run(run, &as_written)))
            .filter(|name| !named_in_window(name))
            .collect();
        if referred.is_empty() {
            return referred;
        }
        let words: HashSet<String> = referred
            .iter()
            .flat_map(|n| n.iter())
            .map(|w| fold(w))
            .collect();
        // Another thing of the subject's kind named in the window: the last word of a
        // subject's name ("lighthouse") in another name ("Varnholm Lighthouse").
        let kinds: HashSet<&String> = referred.iter().filter_map(|n| n.last()).collect();
        let other_of_kind = window.iter().flat_map(|w| &w.names).any(|name| {
            name.iter().any(|w| kinds.contains(w)) && !referred.iter().any(|r| holds_run(r, name))
        });
        let (offset, text) = &self.blocks[first.block as usize];
        let opening = &text[first.span.start - offset..first.span.end - offset];
        if other_of_kind || !refers_back(opening, &words) {
            return Vec::new();
        }
        referred
    }

    /// The share of `terms` the sentences `ids` hold, if they support `statement`.
    fn supports(&self, statement: &Features, terms: &[String], ids: &[usize]) -> Option<f64> {
        // The page's subject, referred to rather than named: its words need not be in
        // the window, and the rest of the statement must pass on its own.
        let referred = self.referred(statement, ids);
        let stripped;
        let (statement, terms): (&Features, Vec<String>) = if referred.is_empty() {
            (statement, terms.to_vec())
        } else {
            let words: HashSet<String> = referred
                .iter()
                .flat_map(|n| n.iter())
                .map(|w| fold(w))
                .collect();
            stripped = statement.without_names(&referred);
            let rest = terms
                .iter()
                .filter(|t| !words.contains(*t))
                .cloned()
                .collect();
            (&stripped, rest)
        };
        if terms.is_empty() {
            return None;
        }
        let terms = &terms[..];
        let window: Vec<&Features> = ids.iter().map(|&i| &self.sentences[i].features).collect();
        let holds = |f: &Features, t: &String| f.term_set.contains(t);
        // The page's title counts towards the words (the model saw it, and "1,300
        // species are known" on a page titled "Tardigrades" is about tardigrades), but
        // MIN_SHARED_TERMS and MIN_WINDOW_COVERAGE must be in the window itself, and so
        // must every anchor.
        let title = &self.titles[self.sentences[ids[0]].source];
        let in_window = |t: &&String| window.iter().any(|f| holds(f, t));
        let shared = terms.iter().filter(in_window).count();
        let with_title = terms
            .iter()
            .filter(|t| in_window(t) || title.contains(*t))
            .count();
        let coverage = with_title as f64 / terms.len() as f64;
        let wanted = if terms.len() <= ALL_TERMS_UP_TO {
            1.0
        } else if window.len() > 1 {
            MIN_PAIR_COVERAGE
        } else {
            MIN_COVERAGE
        };
        let own = shared as f64 / terms.len() as f64;
        if shared < MIN_SHARED_TERMS || own < MIN_WINDOW_COVERAGE || coverage < wanted {
            return None;
        }
        if window.len() > 1 {
            // Each sentence brings a word of the statement, not a name, that the
            // other lacks.
            for (k, f) in window.iter().enumerate() {
                let other = window[1 - k];
                let brings = terms
                    .iter()
                    .any(|t| holds(f, t) && !holds(other, t) && !statement.name_terms.contains(t));
                if !brings {
                    return None;
                }
            }
        }
        // Two sentences are read again as one text: an anchor may straddle the line
        // between them ("announced on Sept. 30" is cut after "Sept.").
        let joined;
        let window = if window.len() > 1 {
            let first = &self.sentences[ids[0]];
            let last = &self.sentences[ids[ids.len() - 1]];
            let (offset, text) = &self.blocks[first.block as usize];
            joined = Features::of_source(&text[first.span.start - offset..last.span.end - offset]);
            vec![&joined]
        } else {
            window
        };
        if missing_anchor(statement, &window, true).is_some()
            || negation_conflict(statement, &window)
        {
            return None;
        }
        Some(coverage)
    }

    fn window(
        &self,
        ids: &[usize],
        coverage: f64,
        number: &impl Fn(usize) -> usize,
    ) -> (usize, Window) {
        let first = &self.sentences[ids[0]];
        let last = &self.sentences[ids[ids.len() - 1]];
        (
            ids[0],
            Window {
                source: number(first.source),
                start: first.span.start,
                end: last.span.end,
                confidence: (coverage * CONFIDENCE_MATCH * 100.0).round() / 100.0,
            },
        )
    }
}

/// Keeps `found` if it is the best window of its source so far (ties: the earlier).
fn keep(best: &mut Vec<(usize, Window)>, found: (usize, Window)) {
    match best.iter_mut().find(|(_, w)| w.source == found.1.source) {
        Some(existing) => {
            let better = found.1.confidence > existing.1.confidence
                || (found.1.confidence == existing.1.confidence && found.0 < existing.0);
            if better {
                *existing = found;
            }
        }
        None => best.push(found),
    }
}

#[cfg(test)]
#[path = "matches_tests.rs"]
mod tests;
