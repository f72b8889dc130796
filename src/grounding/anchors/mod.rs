//! What a sentence says that a paraphrase must keep: its *anchors* (numbers with their
//! units, dates, names, quoted strings), its content words, and which of them it
//! negates. The matcher (`matches.rs`) and the check of verified quotes (`mod.rs`)
//! compare a statement with source sentences through these [`Features`].
//!
//! Why anchors: two sentences that share most of their words can still say opposite
//! things. "The lighthouse was first lit on 14 October 1911" and "... on 15 October
//! 1911" differ in one token; so do "Fresnel presented a lens" and "Fresnel never
//! presented a lens". Word overlap cannot tell them apart, anchors and negation can,
//! so a support needs every anchor of the statement, and negation that agrees.
//!
//! Numbers and dates (read in `numbers.rs`) are compared by value: "5,000" = "5000",
//! "ten" = "10", "14 October 1911" = "October 14, 1911" = "1911-10-14". A unit stays
//! with its number ("5 km" is not "5 miles"), a number without a unit matches the same
//! value with one, and a year alone matches a full date of that year. Each number of
//! the statement needs one of its own in the source: "between six and six" is not
//! "between four and six".
//!
//! Names are runs of capitalised words that do not open a sentence ("the French
//! physicist Augustin Fresnel" has two: "French" and "Augustin Fresnel"), with words
//! with digits in them ("FOTON-M3"), and quoted strings ("called them “little water
//! bears”"); a sentence's first word cannot be told from a name and is not one. A name
//! must be in the source as the same run of words, or as names of the source put
//! together ("Pittsburgh Maurkice Pouncey" from "Pittsburgh center Maurkice Pouncey"):
//! "the United District" is not in a sentence about "the United States" and "the
//! Western District".
//!
//! Negation is read per cue: not, no, never, without, none, neither, nor, cannot,
//! nobody, nothing, nowhere, and any `n't` ("not only" and "no matter" are none). A
//! cue negates the content words after it up to the end of its clause (punctuation, or
//! a word that opens a clause: but, while, although, because, when, if, and "and" or
//! "or" before a subject such as "they"); the first of them is its *head* ("did not
//! *find* the girl"). A cue with nothing after it ("advised not to do so", "...
//! haven't.") negates the words of its clause before it, or of the
//! clause before that. A statement and a source disagree ([`negation_conflict`]) when
//! - the statement negates something and the source negates nothing;
//! - the statement negates words that the source holds, but negates none of them;
//! - the source negates a word the statement says plainly (its head, or for a cue with
//!   nothing after it half of what it negates);
//! - the statement holds half the words of a negated clause of the source with no
//!   negation in their clause: a negation dropped along with its head word ("won't
//!   show it" -> "will reveal it") still changes the claim;
//! - or a word negated on both sides is negated more times on one (a negation dropped
//!   inside another's scope: "no one mentioned that it isn't X" -> "... that it is X").
//!
//! A page's *subject* may stand in a sentence as "it" or "the lighthouse" where a
//! statement names it ("The Quillfeather Lighthouse was first lit..." from "It was
//! first lit..."): [`refers_back`] reads whether a sentence opens by referring back so,
//! before naming anything else; the matcher decides what a page's subject is.
//!
//! Content words are lowercase words that are not stop words, with the context stage's
//! plural stem ([`crate::context::stem`]) and verb endings (`-ed`, `-ing`, a final
//! `-e`) folded, so "survived", "survives" and "survive" meet.
//!
//! Everything here is linear in the text; no regular expressions, no lookups beyond
//! small fixed tables.

use std::collections::HashSet;

use super::numbers::{
    Date, Kind, MONTHS, Quantity, describe_date, describe_quantity, number_word,
    read_numbers_and_dates, same_date, same_quantity, tokens,
};
use crate::context::{is_cjk, is_stop_word, stem};
use crate::text::normalise;

/// Longest quoted string (characters) taken as an anchor; longer quotes are passages,
/// not names.
const MAX_QUOTED_CHARS: usize = 80;
/// Share of a negated clause's content words a statement must hold to restate it (and
/// so to have to carry its negation).
const RESTATES: f64 = 0.5;

/// What the checks need to know of one text (a statement, or a source sentence).
#[derive(Debug, Default, Clone)]
pub struct Features {
    /// Content words, folded, each once, in order of first appearance.
    pub terms: Vec<String>,
    /// Every word, lowercase and folded like the terms (for finding names).
    pub words: HashSet<String>,
    /// The numbers, with units.
    pub quantities: Vec<Quantity>,
    /// The dates.
    pub dates: Vec<Date>,
    /// Names, each a run of capitalised words inside a sentence or words with digits
    /// ("augustin fresnel", "foton m3"), as lowercase words.
    pub names: Vec<Vec<String>>,
    /// The words of the names, folded like terms.
    pub name_terms: HashSet<String>,
    /// Every word in order, lowercase, possessive `'s` off (for finding names).
    pub sequence: Vec<String>,
    /// Quoted strings (normalised); found in statements only.
    pub quoted: Vec<String>,
    /// The text in the normal form quotes are compared in ([`normalise`]).
    pub normalised: String,
    /// Whether the text has any negation cue.
    pub negated: bool,
    /// The content words, for lookups.
    pub term_set: HashSet<String>,
    /// The negations, in order.
    pub cues: Vec<Cue>,
}

/// One negation cue and what it negates.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Cue {
    /// The content words it negates, in order; for a cue with nothing after it, the
    /// words before it.
    pub scope: Vec<String>,
    /// Whether it had nothing after it (its scope is what came before).
    pub elliptical: bool,
    /// The content words of its clause, before and after it.
    pub clause: Vec<String>,
}

impl Cue {
    /// The word the negation turns on: the first after it; none for an elliptical cue.
    fn head(&self) -> Option<&String> {
        (!self.elliptical).then(|| self.scope.first()).flatten()
    }
}

impl Features {
    /// The features of a statement: with names and quoted strings.
    pub fn of_statement(text: &str) -> Features {
        features(text, true)
    }

    /// The features of a source sentence (no quoted strings: a statement's are looked
    /// up in its normal form).
    pub fn of_source(text: &str) -> Features {
        features(text, false)
    }
}

impl Features {
    /// The same features without the names `dropped` (a page's subject, which the
    /// window refers to rather than names): the other anchors are still asked for.
    pub fn without_names(&self, dropped: &[&Vec<String>]) -> Features {
        let mut f = self.clone();
        f.names.retain(|n| !dropped.contains(&n));
        f
    }
}

/// Pronouns that refer back to a page's subject.
const PRONOUNS: [&str; 8] = ["it", "its", "he", "she", "his", "her", "they", "their"];
/// Nouns that, after "the", refer back to a page's subject whatever its name ("the
/// company" on a page about Acme Corp).
const KIND_NOUNS: [&str; 24] = [
    "agency",
    "album",
    "band",
    "book",
    "bridge",
    "building",
    "city",
    "club",
    "company",
    "country",
    "film",
    "firm",
    "game",
    "group",
    "island",
    "museum",
    "organisation",
    "organization",
    "park",
    "party",
    "school",
    "show",
    "team",
    "town",
];
/// Common words that open a sentence before its subject, besides stop words.
const OPENERS: [&str; 14] = [
    "after",
    "before",
    "during",
    "earlier",
    "however",
    "last",
    "later",
    "meanwhile",
    "now",
    "since",
    "soon",
    "then",
    "today",
    "yesterday",
];
/// A reference back must come within this many words of the sentence's start.
pub const REFERENCE_WITHIN: usize = 8;

/// Whether the sentence `text` opens by referring back to a subject: a pronoun, or
/// "the" with a word of the subject's name (`subject`, folded) or a kind noun ("the
/// lighthouse", "the company"), within its first [`REFERENCE_WITHIN`] words and before
/// any name (in "Lindqvist said it was lit in 1911" the sentence is about Lindqvist,
/// and "it" may be anything; a sentence's first word is taken for a name unless it is
/// a stop word or a common opener such as "since"). Dates and numbers before it are no names ("On 14
/// October 1911 it was first lit").
pub fn refers_back(text: &str, subject: &HashSet<String>) -> bool {
    let tokens = tokens(text);
    let mut used = vec![false; tokens.len()];
    read_numbers_and_dates(&tokens, &mut used);
    let mut words = 0;
    let mut after_the = false;
    for (k, t) in tokens.iter().enumerate() {
        match t.kind {
            Kind::Stop => break,
            Kind::Word if !used[k] => {}
            _ => continue,
        }
        words += 1;
        if words > REFERENCE_WITHIN {
            return false;
        }
        let word = t.lower.as_str();
        if after_the && (subject.contains(&fold(word)) || KIND_NOUNS.contains(&word)) {
            return true;
        }
        if PRONOUNS.contains(&word) {
            return true;
        }
        // A capitalised word is a name, unless it opens the sentence as a common word
        // would ("The", "Since"): an opening "Lindqvist" is a name too.
        if t.capital && (!t.opens || !(is_stop_word(word) || OPENERS.contains(&word))) {
            return false;
        }
        after_the = word == "the";
    }
    false
}

/// An anchor of `statement` that none of `window` holds, described for a person
/// ("the number 2009", "the date 15 October 1911", "the name Fresnel"); `None` when
/// all are there. With `names` false only numbers and dates are checked (the check of
/// a verified quote, where the statement may name what the quote leaves implicit).
pub fn missing_anchor(statement: &Features, window: &[&Features], names: bool) -> Option<String> {
    // Each number of the statement needs one of its own in the window: "between six
    // and six" is not "between four and six". A date's year or day may stand for a
    // number without a unit.
    let mut taken: Vec<Vec<bool>> = window
        .iter()
        .map(|w| vec![false; w.quantities.len()])
        .collect();
    let mut dates_taken: Vec<Vec<bool>> =
        window.iter().map(|w| vec![false; w.dates.len()]).collect();
    for q in &statement.quantities {
        let mut found = false;
        'quantity: for (wi, w) in window.iter().enumerate() {
            for (oi, o) in w.quantities.iter().enumerate() {
                if !taken[wi][oi] && same_quantity(q, o) {
                    taken[wi][oi] = true;
                    found = true;
                    break 'quantity;
                }
            }
        }
        if !found && q.unit.is_none() {
            'date: for (wi, w) in window.iter().enumerate() {
                for (di, d) in w.dates.iter().enumerate() {
                    let year = d.year.is_some_and(|y| f64::from(y) == q.value);
                    let day = d.day.is_some_and(|day| f64::from(day) == q.value);
                    if !dates_taken[wi][di] && (year || day) {
                        dates_taken[wi][di] = true;
                        found = true;
                        break 'date;
                    }
                }
            }
        }
        if !found {
            return Some(format!("the number {}", describe_quantity(q)));
        }
    }
    for d in &statement.dates {
        // A month alone ("in October") may stand in a source in lowercase, where it
        // reads as a word rather than a date.
        let month_word = d.month.filter(|_| d.year.is_none() && d.day.is_none());
        let found = window.iter().any(|w| {
            w.dates.iter().any(|o| same_date(d, o))
                || month_word.is_some_and(|m| {
                    MONTHS
                        .iter()
                        .chain(&[("dec", 12)])
                        .any(|(name, n)| *n == m && w.words.contains(&fold(name)))
                })
                || (d.month.is_none()
                    && d.day.is_none()
                    && d.year.is_some_and(|y| {
                        w.quantities
                            .iter()
                            .any(|q| q.unit.is_none() && q.value == f64::from(y))
                    }))
        });
        if !found {
            return Some(format!("the date {}", describe_date(d)));
        }
    }
    if !names {
        return None;
    }
    for name in &statement.names {
        let whole = window.iter().any(|w| {
            w.sequence
                .windows(name.len())
                .any(|run| run == name.as_slice())
        });
        if !whole && !made_of_names(name, window) {
            return Some(format!("the name {:?}", name.join(" ")));
        }
    }
    for quoted in &statement.quoted {
        let joined = window
            .iter()
            .map(|w| w.normalised.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if !joined.contains(quoted.as_str()) {
            return Some(format!("the quoted words {quoted:?}"));
        }
    }
    None
}

/// Whether the run of words `name` is names of the window put together, each whole
/// ("Pittsburgh Maurkice Pouncey" from "Pittsburgh center Maurkice Pouncey"), which a
/// word of another name never is ("United District" from "United States" and "Western
/// District").
pub fn made_of_names(name: &[String], window: &[&Features]) -> bool {
    // can[i]: name[i..] splits into names of the window.
    let mut can = vec![false; name.len() + 1];
    can[name.len()] = true;
    for i in (0..name.len()).rev() {
        can[i] = window
            .iter()
            .flat_map(|w| &w.names)
            .any(|n| name[i..].starts_with(n) && can[i + n.len()]);
    }
    can[0]
}

/// Whether `statement` and `window` disagree on negation (see the module's
/// documentation for the four rules).
pub fn negation_conflict(statement: &Features, window: &[&Features]) -> bool {
    if statement.negated && !window.iter().any(|w| w.negated) {
        return true;
    }
    let in_window = |t: &String| window.iter().any(|w| w.term_set.contains(t));
    let negated_in_window: HashSet<&String> = window
        .iter()
        .flat_map(|w| w.cues.iter().flat_map(|c| &c.scope))
        .collect();
    let negated_in_statement: HashSet<&String> =
        statement.cues.iter().flat_map(|c| &c.scope).collect();
    // The statement negates words the window holds but never negates.
    for cue in &statement.cues {
        let held: Vec<&String> = cue.scope.iter().filter(|t| in_window(t)).collect();
        if !held.is_empty() && !held.iter().any(|t| negated_in_window.contains(t)) {
            return true;
        }
    }
    // The window negates what the statement says plainly.
    for cue in window.iter().flat_map(|w| &w.cues) {
        let restated: Vec<&String> = match cue.head() {
            Some(head) => [head]
                .into_iter()
                .filter(|t| statement.term_set.contains(*t))
                .collect(),
            None => {
                let held: Vec<&String> = cue
                    .scope
                    .iter()
                    .filter(|t| statement.term_set.contains(*t))
                    .collect();
                if held.len() * 2 >= cue.scope.len() {
                    held
                } else {
                    Vec::new()
                }
            }
        };
        if !restated.is_empty() && !restated.iter().any(|t| negated_in_statement.contains(t)) {
            return true;
        }
    }
    // A statement restating a negated clause of the window carries a negation in the
    // same clause, even with the head word changed ("won't show it" -> "will reveal
    // it").
    let in_negated_statement_clause: HashSet<&String> =
        statement.cues.iter().flat_map(|c| &c.clause).collect();
    let dropped = window.iter().flat_map(|w| &w.cues).any(|cue| {
        let held: Vec<&String> = cue
            .clause
            .iter()
            .filter(|t| statement.term_set.contains(*t))
            .collect();
        !held.is_empty()
            && held.len() as f64 >= RESTATES * cue.clause.len() as f64
            && !held.iter().any(|t| in_negated_statement_clause.contains(t))
    });
    if dropped {
        return true;
    }
    // A word negated on both sides is negated as many times on each ("no one
    // mentioned that it isn't X" is not "no one mentioned that it is X").
    let times = |f: &Features, t: &String| f.cues.iter().filter(|c| c.scope.contains(t)).count();
    negated_in_statement.iter().any(|t| {
        let in_statement = times(statement, t);
        let in_window = window.iter().map(|w| times(w, t)).max().unwrap_or(0);
        in_window > 0 && in_window != in_statement
    })
}

/// Whether a lowercase word is a negation cue (`n't` included).
fn is_negation(word: &str) -> bool {
    matches!(
        word,
        "not"
            | "no"
            | "never"
            | "without"
            | "none"
            | "neither"
            | "nor"
            | "cannot"
            | "nobody"
            | "nothing"
            | "nowhere"
    ) || word.ends_with("n't")
}

/// A word folded the way terms are compared: possessive `'s` off, plural stem, then
/// `-ing`, `-ed` and a final `-e` off (on words long enough to keep a stem).
pub fn fold(word: &str) -> String {
    let word = plain(word);
    let mut w = stem(word.to_string());
    for suffix in ["ing", "ed"] {
        if w.ends_with(suffix) && w.len() >= suffix.len() + 3 {
            w.truncate(w.len() - suffix.len());
            break;
        }
    }
    if w.ends_with('e') && w.len() >= 4 {
        w.pop();
    }
    w
}

// Features ----------------------------------------------------------------------------

fn features(text: &str, statement: bool) -> Features {
    let tokens = tokens(text);
    let mut used = vec![false; tokens.len()];
    let (quantities, dates) = read_numbers_and_dates(&tokens, &mut used);
    let mut f = Features {
        normalised: normalise(text),
        quantities,
        dates,
        ..Features::default()
    };
    let mut clause = Clause::default();
    let mut name: Vec<String> = Vec::new();
    for (k, t) in tokens.iter().enumerate() {
        let word = t.lower.as_str();
        // Names: runs of capitalised words inside a sentence (a month read as part
        // of a date is a date, not a name), and words with digits in them ("M3").
        let digits = word.chars().any(|c| c.is_ascii_digit());
        let named = t.kind == Kind::Word
            && !used[k]
            && ((t.capital && !t.opens && word.chars().count() >= 2) || digits);
        if named {
            name.push(plain(word).to_string());
        } else if !name.is_empty() {
            let done = std::mem::take(&mut name);
            if !f.names.contains(&done) {
                f.names.push(done);
            }
        }
        if t.kind == Kind::Word {
            f.sequence.push(plain(word).to_string());
        }
        let opens_clause = CLAUSE_WORDS.contains(&word)
            || (matches!(word, "and" | "or")
                && tokens
                    .get(k + 1)
                    .is_some_and(|n| SUBJECTS.contains(&n.lower.as_str())));
        match t.kind {
            Kind::Stop => {
                clause.end(&mut f.cues);
                clause.previous.clear();
                continue;
            }
            Kind::Break => {
                clause.end(&mut f.cues);
                continue;
            }
            Kind::Word if opens_clause => {
                clause.end(&mut f.cues);
                continue;
            }
            Kind::Word => {}
            _ => continue,
        }
        if is_negation(word) {
            // "Not only" and "no matter" negate nothing.
            let next = tokens
                .get(k + 1)
                .filter(|n| n.kind == Kind::Word)
                .map(|n| n.lower.as_str());
            let idiom = matches!((word, next), ("not", Some("only")) | ("no", Some("matter")));
            if !idiom {
                f.negated = true;
                clause.cue(&mut f.cues);
            }
            continue;
        }
        let folded = fold(word);
        f.words.insert(folded.clone());
        if statement && named {
            f.name_terms.insert(folded.clone());
        }
        let content = !used[k]
            && number_word(word).is_none()
            && !is_stop_word(word)
            && (word.chars().count() >= 2 || word.chars().all(is_cjk));
        if !content {
            continue;
        }
        clause.term(&folded);
        if f.term_set.insert(folded.clone()) {
            f.terms.push(folded);
        }
    }
    clause.end(&mut f.cues);
    if !name.is_empty() && !f.names.contains(&name) {
        f.names.push(name);
    }
    if statement {
        f.quoted = quoted_strings(text);
    }
    f
}

/// A lowercase word without a possessive `'s` (or a trailing `'`).
fn plain(word: &str) -> &str {
    word.strip_suffix("'s")
        .unwrap_or(word)
        .trim_end_matches('\'')
}

/// Words that, after "and" or "or", open a new clause ("... to almost nothing and they
/// can survive"): a negation before them does not reach past them.
const SUBJECTS: [&str; 9] = ["i", "you", "he", "she", "it", "we", "they", "there", "this"];

/// Words that open a new clause: a negation before them does not reach past them.
const CLAUSE_WORDS: [&str; 12] = [
    "but", "while", "whereas", "although", "though", "however", "unless", "because", "since",
    "when", "if", "whether",
];

/// The clause being read: its content words, and the negations open in it.
#[derive(Default)]
struct Clause {
    /// Its content words so far.
    terms: Vec<String>,
    /// The content words of the last clause of this sentence that had any.
    previous: Vec<String>,
    /// Indexes (in the text's cues) of the cues of this clause, each with how many of
    /// the clause's words came before it.
    open: Vec<(usize, usize)>,
}

impl Clause {
    /// A cue: it negates what follows in the clause.
    fn cue(&mut self, cues: &mut Vec<Cue>) {
        self.open.push((cues.len(), self.terms.len()));
        cues.push(Cue::default());
    }

    fn term(&mut self, term: &str) {
        self.terms.push(term.to_string());
    }

    /// Ends the clause: each cue's scope is the words after it; a cue with none has
    /// the words before it (or, with none either, the previous clause's) instead.
    fn end(&mut self, cues: &mut [Cue]) {
        for &(index, before) in &self.open {
            let cue = &mut cues[index];
            cue.clause = if self.terms.is_empty() {
                self.previous.clone()
            } else {
                self.terms.clone()
            };
            if before < self.terms.len() {
                cue.scope = self.terms[before..].to_vec();
            } else {
                cue.elliptical = true;
                cue.scope = if before > 0 {
                    self.terms[..before].to_vec()
                } else {
                    self.previous.clone()
                };
            }
        }
        self.open.clear();
        if !self.terms.is_empty() {
            self.previous = std::mem::take(&mut self.terms);
        }
    }
}

/// Strings in double quotes (straight or curly), 1 to [`MAX_QUOTED_CHARS`]
/// characters, normalised.
fn quoted_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut open: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match (c, open) {
            ('\u{201C}', _) => open = Some(i + c.len_utf8()),
            ('"', None) => open = Some(i + 1),
            ('"' | '\u{201D}', Some(from)) => {
                let inner = text[from..i].trim();
                let chars = inner.chars().count();
                if (1..=MAX_QUOTED_CHARS).contains(&chars) {
                    out.push(normalise(inner));
                }
                open = None;
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests;
