//! What makes a source sentence *contradict* a statement rather than merely differ
//! from it: the comparisons the cross-check (`cross.rs`, through the matcher's
//! [`super::matches::Shown::conflicts`]) makes of one statement and one sentence that
//! already share the statement's subject and most of its words.
//!
//! Precision comes first: a false conflict tells a reader that a right answer is
//! disputed, which is worse than a conflict missed. So a sentence contradicts a
//! statement only in the statement's own *slot*, and only with one clear difference:
//! - **number** or **date**: exactly one number or date of the statement is missing
//!   from the sentence, and the sentence holds exactly one value of the same kind (a
//!   date, or a number with the same unit) that the statement lacks, after the same
//!   content word ("first *lit* on 14 October 1911" against "first *lit* on 9 June
//!   1936"; "*relit* in 1936" is another slot, no conflict). Dates are compared by
//!   value, however written ("3 May 1934", "May 3, 1934", "3.5.1934", "1934-05-03" are
//!   one date), and a date that gives fewer parts ("May 1934") agrees with one giving
//!   more. A year written alone ("in 1934") is a date of that year.
//! - **name**: exactly one name of the statement is missing and the sentence has
//!   exactly one name the statement lacks, sharing no word with it, after the same two
//!   words ("designed *by the* engineer ..." is not enough: the two words before the
//!   names must be the same).
//! - **negation**: every anchor agrees, the negation disagrees (the matcher's
//!   [`super::anchors::negation_conflict`]), and a cue of one side negates what the
//!   other says plainly: its head word and at least half of what it negates
//!   ([`crossing_negation`]; "did not play each other during the regular season" does
//!   not deny "played in the tournament").
//!
//! Days of the week are no names here (two live pages "from Tuesday" and "from
//! Wednesday" are two days' news), and words such as "since" or "until" are no slot
//! ("served since 2005" and "led since 2007" are two slots).
//!
//! How many of the statement's words the sentence must hold is the matcher's business
//! (`matches.rs`); here only anchors and names are compared.

use serde::Serialize;

use super::anchors::{Features, fold};
use super::numbers::{
    Date, Kind, Quantity, describe_date, describe_quantity, number_word, read_numbers_and_dates,
    same_quantity, tokens,
};
use crate::context::is_stop_word;

/// What a contradicting sentence says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConflictKind {
    /// Another number in the same slot.
    Number,
    /// Another date in the same slot.
    Date,
    /// The same claim, negated (or the statement's negation, affirmed).
    Negation,
    /// Another name in the same slot.
    Name,
}

impl ConflictKind {
    /// The name used in `--json`: number, date, negation or name.
    pub fn name(self) -> &'static str {
        match self {
            ConflictKind::Number => "number",
            ConflictKind::Date => "date",
            ConflictKind::Negation => "negation",
            ConflictKind::Name => "name",
        }
    }
}

/// A number or a date.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Quantity(Quantity),
    Date(Date),
}

/// One number or date of a text with the content word before it in its clause: its
/// slot.
#[derive(Debug, Clone, PartialEq)]
pub struct Slotted {
    value: Value,
    before: Option<String>,
}

/// A year written alone is read as a date of that year here, so "in 1934" meets "on 3
/// May 1934" by value and conflicts with "in 1936" as a date.
fn as_value(q: Quantity) -> Value {
    let year = q.unit.is_none() && q.value.fract() == 0.0 && (1000.0..=2100.0).contains(&q.value);
    if year {
        Value::Date(Date {
            year: Some(q.value as i32),
            month: None,
            day: None,
        })
    } else {
        Value::Quantity(q)
    }
}

/// The numbers and dates of `text`, each with its slot: the nearest content word
/// before it in its clause (none when a clause break or the sentence's start comes
/// first).
pub fn slotted(text: &str) -> Vec<Slotted> {
    let tokens = tokens(text);
    let mut used = vec![false; tokens.len()];
    read_numbers_and_dates(&tokens, &mut used);
    let mut out = Vec::new();
    let mut k = 0;
    while k < tokens.len() {
        if !used[k] {
            k += 1;
            continue;
        }
        let start = k;
        while k < tokens.len() && used[k] {
            k += 1;
        }
        // The run read again alone: the values it holds, in order.
        let run = &tokens[start..k];
        let mut run_used = vec![false; run.len()];
        let (quantities, dates) = read_numbers_and_dates(run, &mut run_used);
        let before = slot_word(&tokens[..start], &used[..start]);
        for value in quantities
            .into_iter()
            .map(as_value)
            .chain(dates.into_iter().map(Value::Date))
        {
            out.push(Slotted {
                value,
                before: before.clone(),
            });
        }
    }
    out
}

/// Words that say how a number or date stands to its slot rather than what the slot
/// is ("served *since* 2005", "led *since* 2007"): passed over when finding the slot.
const RELATION_WORDS: [&str; 9] = [
    "since", "until", "till", "from", "before", "after", "during", "through", "between",
];

/// The nearest content word at the end of `tokens` within its clause, folded.
fn slot_word(tokens: &[super::numbers::Token], used: &[bool]) -> Option<String> {
    for (t, &u) in tokens.iter().zip(used).rev() {
        match t.kind {
            Kind::Stop | Kind::Break => return None,
            Kind::Word if !u => {
                let w = t.lower.as_str();
                if !is_stop_word(w)
                    && !RELATION_WORDS.contains(&w)
                    && number_word(w).is_none()
                    && w.chars().count() >= 2
                {
                    return Some(fold(w));
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether two values agree: dates when every part both give is the same; numbers by
/// value and unit; a number without a unit and a date when it is the date's day.
fn agree(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Date(x), Value::Date(y)) => {
            let part = |p: Option<i64>, q: Option<i64>| p.is_none() || q.is_none() || p == q;
            part(x.year.map(i64::from), y.year.map(i64::from))
                && part(x.month.map(i64::from), y.month.map(i64::from))
                && part(x.day.map(i64::from), y.day.map(i64::from))
        }
        (Value::Quantity(x), Value::Quantity(y)) => same_quantity(x, y),
        (Value::Quantity(q), Value::Date(d)) | (Value::Date(d), Value::Quantity(q)) => {
            q.unit.is_none() && d.day.is_some_and(|day| f64::from(day) == q.value)
        }
    }
}

/// Whether every number and date of `statement` agrees with one of `window`.
pub fn all_agree(statement: &[Slotted], window: &[Slotted]) -> bool {
    statement
        .iter()
        .all(|s| window.iter().any(|w| agree(&s.value, &w.value)))
}

/// Whether `b` is a value of `a`'s kind that says otherwise: another date, or another
/// number with the same unit (or both without one).
fn rival(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Date(_), Value::Date(_)) => !agree(a, b),
        (Value::Quantity(x), Value::Quantity(y)) => x.unit == y.unit && !same_quantity(x, y),
        _ => false,
    }
}

/// The number or date the sentence `window` gives in the slot of the one number or
/// date of `statement` it lacks, described for a person ("9 June 1936", "6000 km");
/// `None` unless there is exactly one such difference (see the module's
/// documentation).
pub fn differing_value(
    statement: &[Slotted],
    window: &[Slotted],
) -> Option<(ConflictKind, String)> {
    let mut missing = statement
        .iter()
        .filter(|s| !window.iter().any(|w| agree(&s.value, &w.value)));
    let wanted = missing.next()?;
    if missing.next().is_some() {
        return None;
    }
    let slot = wanted.before.as_ref()?;
    // The window's values of the wanted kind that the statement lacks: exactly one in
    // the slot, and none whose slot is unknown (it may be the same one).
    let rivals: Vec<&Slotted> = window
        .iter()
        .filter(|w| {
            rival(&wanted.value, &w.value) && !statement.iter().any(|s| agree(&s.value, &w.value))
        })
        .collect();
    if rivals.iter().any(|w| w.before.is_none()) {
        return None;
    }
    let mut in_slot = rivals.iter().filter(|w| w.before.as_ref() == Some(slot));
    let found = in_slot.next()?;
    if in_slot.next().is_some() {
        return None;
    }
    Some(match found.value {
        Value::Date(d) => (ConflictKind::Date, describe_date(&d)),
        Value::Quantity(q) => (ConflictKind::Number, describe_quantity(&q)),
    })
}

/// Words before a name that must be the same on both sides for two names to fill one
/// slot.
const NAME_SLOT_WORDS: usize = 2;

/// The name the sentence `window` gives in the slot of the one name of `statement` it
/// lacks, as lowercase words; `None` unless there is exactly one such difference
/// (see the module's documentation). `present` tells whether a name of the statement
/// is in the window (whole, or made of its names).
pub fn differing_name(
    statement: &Features,
    window: &Features,
    present: impl Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let mut missing = statement.names.iter().filter(|n| !present(n));
    let wanted = missing.next()?;
    if missing.next().is_some() {
        return None;
    }
    let in_statement = |name: &Vec<String>| {
        statement
            .sequence
            .windows(name.len())
            .any(|run| run == name.as_slice())
    };
    let mut others = window.names.iter().filter(|n| !in_statement(n));
    let other = others.next()?;
    if others.next().is_some()
        || other.iter().any(|w| wanted.contains(w))
        || is_time_name(wanted)
        || is_time_name(other)
    {
        return None;
    }
    let before = |sequence: &[String], name: &[String]| -> Option<Vec<String>> {
        let at = sequence.windows(name.len()).position(|run| run == name)?;
        (at >= NAME_SLOT_WORDS).then(|| sequence[at - NAME_SLOT_WORDS..at].to_vec())
    };
    let slot = before(&statement.sequence, wanted)?;
    (before(&window.sequence, other)? == slot).then(|| other.clone())
}

/// Days of the week: capitalised, so read as names, but a page dated Tuesday and one
/// dated Wednesday are two days' news, not a conflict.
const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Whether a name is only days of the week or months: a time, which the date
/// comparison reads when it is one, never a name in conflict.
fn is_time_name(name: &[String]) -> bool {
    name.iter()
        .all(|w| WEEKDAYS.contains(&w.as_str()) || super::numbers::month(w).is_some())
}

/// Whether `statement` and `window` contradict each other on a negation: a cue of
/// one side whose head word the other side says plainly, with at least half of what
/// the cue negates ("did not *play* each other during the regular season" is no
/// denial of "played in the tournament", which holds none of "regular season").
pub fn crossing_negation(statement: &Features, window: &Features) -> bool {
    let crosses = |from: &Features, to: &Features| {
        let negated_in_to: std::collections::HashSet<&String> =
            to.cues.iter().flat_map(|c| &c.scope).collect();
        from.cues.iter().any(|cue| {
            let Some(head) = cue.scope.first().filter(|_| !cue.elliptical) else {
                return false;
            };
            let held = cue
                .scope
                .iter()
                .filter(|t| to.term_set.contains(*t) && !negated_in_to.contains(t))
                .count();
            to.term_set.contains(head)
                && !negated_in_to.contains(head)
                && held * 2 >= cue.scope.len()
        })
    };
    crosses(statement, window) || crosses(window, statement)
}

/// A name's words as a person reads them: each capitalised ("ottilie brannock" ->
/// "Ottilie Brannock").
pub fn describe_name(name: &[String]) -> String {
    name.iter()
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().chain(c).collect::<String>())
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(statement: &str, window: &str) -> Option<(ConflictKind, String)> {
        differing_value(&slotted(statement), &slotted(window))
    }

    #[test]
    fn another_date_in_the_same_slot_differs() {
        let s = "The Quillfeather Lighthouse was first lit on 14 October 1911.";
        assert_eq!(
            value(
                s,
                "The Quillfeather Lighthouse was first lit on 9 June 1936."
            ),
            Some((ConflictKind::Date, "9 June 1936".to_string()))
        );
        assert_eq!(
            value(s, "The Quillfeather Lighthouse was first lit in 1936."),
            Some((ConflictKind::Date, "1936".to_string()))
        );
    }

    #[test]
    fn the_same_date_written_otherwise_never_differs() {
        let s = "The tower was first lit on 3 May 1934.";
        for same in [
            "The tower was first lit on May 3, 1934.",
            "The tower was first lit on 3.5.1934.",
            "The tower was first lit on 1934-05-03.",
            "The tower was first lit in May 1934.",
            "The tower was first lit in 1934.",
        ] {
            assert_eq!(value(s, same), None, "{same}");
        }
    }

    #[test]
    fn another_slot_or_an_ambiguous_sentence_differs_in_nothing() {
        let s = "The tower was first lit in 1911.";
        // Another verb before the date: another slot.
        assert_eq!(value(s, "The tower was relit in 1936."), None);
        // Two rival values: which one is the statement's slot is not clear.
        assert_eq!(
            value(
                "Its lens weighed 5,000 kilograms.",
                "Its lens weighed 4,000 kilograms, or 6,000 kilograms with its frame."
            ),
            None
        );
        // Another unit is another measure.
        assert_eq!(
            value(
                "Its lens weighed 5,000 kilograms.",
                "Its lens weighed 6,000 pounds."
            ),
            None
        );
        assert_eq!(
            value(
                "Its lens weighed 5,000 kilograms.",
                "Its lens weighed 6,000 kilograms."
            ),
            Some((ConflictKind::Number, "6000 kg".to_string()))
        );
    }

    #[test]
    fn a_relation_word_is_no_slot() {
        // Real pages: one senator served since 2005, another led since 2007.
        assert_eq!(
            value(
                "Thune has served in the Senate since 2005.",
                "McConnell has led the Senate Republicans since 2007."
            ),
            None
        );
    }

    #[test]
    fn a_negation_crosses_only_over_what_it_negates() {
        let crossing = |s: &str, w: &str| {
            crossing_negation(&Features::of_statement(s), &Features::of_source(w))
        };
        assert!(crossing(
            "The keepers lived in the tower with their families.",
            "The keepers did not live in the tower with their families."
        ));
        // From real pages: what the cue negates is another part of the sentence.
        assert!(!crossing(
            "Tennessee and Texas A&M played in the SEC Tournament on May 23.",
            "Tennessee and Texas A&M did not play each other during the regular season, but the two squads did face off during the SEC tournament in late May."
        ));
        assert!(!crossing(
            "L Brands canceled the fashion show in 2019, and it hasn't been held since then.",
            "L Brands canceled the show in 2019, citing its decision to end the fashion show at the time."
        ));
    }

    #[test]
    fn days_of_the_week_are_no_names_in_conflict() {
        let s = Features::of_statement(
            "This page is the news on a potential government shutdown from Tuesday.",
        );
        let w = Features::of_source(
            "This page is the news on a potential government shutdown from Wednesday.",
        );
        let present = |n: &[String]| w.sequence.windows(n.len()).any(|r| r == n);
        assert_eq!(differing_name(&s, &w, present), None);
    }

    #[test]
    fn another_name_after_the_same_words_differs() {
        let s = Features::of_statement("The lighthouse was designed by Mara Lindqvist.");
        let w = Features::of_source("The lighthouse was designed by Ottilie Brannock.");
        let present = |n: &[String]| w.sequence.windows(n.len()).any(|r| r == n);
        assert_eq!(
            differing_name(&s, &w, present).map(|n| describe_name(&n)),
            Some("Ottilie Brannock".to_string())
        );
        // A shorter form of the same name is no other name.
        let w = Features::of_source("The lighthouse was designed by M. Lindqvist.");
        let present = |n: &[String]| w.sequence.windows(n.len()).any(|r| r == n);
        assert_eq!(differing_name(&s, &w, present), None);
        // Another slot: the name after other words.
        let w = Features::of_source("The lighthouse was praised by Ottilie Brannock.");
        let present = |n: &[String]| w.sequence.windows(n.len()).any(|r| r == n);
        assert_eq!(differing_name(&s, &w, present), None);
    }
}
