//! The tests of `matches.rs`, in a file of their own: with them the module passed 800 lines.

use super::*;

const PAGE: &str = "The Quillfeather Lighthouse stands on the northern cape of Varnholm.\n\
    It was designed by the engineer Mara Lindqvist. The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building.\n\
    Its lens came from Paris and weighed about 5,000 kilograms. The keepers did not live in the tower.\n\
    Lindqvist also built the harbour wall. It was finished in 1909.";

fn shown(text: &str) -> Shown {
    let all: Vec<Range<usize>> = std::iter::once(0..text.len()).collect();
    Shown::new([(text, "", &all[..])])
}

fn found(statement: &str) -> Option<String> {
    let windows = shown(PAGE).find(&Features::of_statement(statement), |i| i + 1);
    windows.first().map(|w| PAGE[w.start..w.end].to_string())
}

#[test]
fn a_true_statement_finds_its_sentence() {
    let lit = "The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building.";
    assert_eq!(
        found("The Quillfeather Lighthouse was first lit on 14 October 1911.").as_deref(),
        Some(lit)
    );
    // Dates and numbers written another way, clauses reordered, words dropped.
    assert_eq!(found("After four years of building, the Quillfeather Lighthouse was first lit on October 14, 1911.").as_deref(), Some(lit));
    assert_eq!(
        found("The Quillfeather Lighthouse was first lit on 1911-10-14.").as_deref(),
        Some(lit)
    );
    assert_eq!(
        found("Its lens weighed about 5000 kilograms and came from Paris.").as_deref(),
        Some("Its lens came from Paris and weighed about 5,000 kilograms.")
    );
}

#[test]
fn a_changed_anchor_finds_nothing() {
    assert_eq!(
        found("The Quillfeather Lighthouse was first lit on 15 October 1911."),
        None
    );
    assert_eq!(
        found("The Quillfeather Lighthouse was first lit on 14 October 1912."),
        None
    );
    assert_eq!(
        found("The Quillfeather Lighthouse was first lit in 1912."),
        None
    );
    assert_eq!(
        found("Its lens came from Paris and weighed about 6,000 kilograms."),
        None
    );
    assert_eq!(
        found("Its lens came from London and weighed about 5,000 kilograms."),
        None
    );
    assert_eq!(
        found("Its lens came from Paris and weighed about 5,000 pounds."),
        None
    );
    // Another name of the same page, one sentence away, lends nothing.
    assert_eq!(
        found("It was designed by the engineer Mara Varnholm."),
        None
    );
}

#[test]
fn a_negation_added_or_removed_finds_nothing() {
    assert_eq!(
        found("The Quillfeather Lighthouse was not first lit on 14 October 1911."),
        None
    );
    assert_eq!(found("The keepers lived in the tower."), None);
    assert_eq!(
        found("The keepers never lived in the tower.").as_deref(),
        Some("The keepers did not live in the tower.")
    );
}

#[test]
fn two_adjacent_sentences_may_support_together_but_not_across_a_gap() {
    let both = "Lindqvist also built the harbour wall. It was finished in 1909.";
    assert_eq!(
        found("Lindqvist built the harbour wall, which was finished in 1909.").as_deref(),
        Some(both)
    );
    // The same two sentences sent with a gap between them are not a window.
    let wall = PAGE.find("Lindqvist also").unwrap();
    let finished = PAGE.find("It was finished").unwrap();
    let ranges = [wall..finished - 1, finished..PAGE.len()];
    let gapped = Shown::new([(PAGE, "", &ranges[..])]);
    let statement =
        Features::of_statement("Lindqvist built the harbour wall, which was finished in 1909.");
    assert!(gapped.find(&statement, |i| i + 1).is_empty());
}

#[test]
fn only_text_that_was_shown_is_searched() {
    let first = PAGE.find('\n').unwrap();
    let ranges: Vec<Range<usize>> = std::iter::once(0..first).collect();
    let lead_only = Shown::new([(PAGE, "", &ranges[..])]);
    let statement =
        Features::of_statement("The Quillfeather Lighthouse was first lit on 14 October 1911.");
    assert!(lead_only.find(&statement, |i| i + 1).is_empty());
}

/// A page that names its subject only in its title.
const TITLED: &str = "It was designed by the engineer Ottilie Brannock and first lit on 14 October 1911.\n\
    The Varnholm Lighthouse, on the next cape, was first lit on 2 May 1913.\n\
    Brannock said it would stand for a century.";

fn found_in(pages: &[(&str, &str)], statement: &str) -> Vec<usize> {
    let all: Vec<Vec<Range<usize>>> = pages
        .iter()
        .map(|(_, t)| std::iter::once(0..t.len()).collect())
        .collect();
    let shown = Shown::new(
        pages
            .iter()
            .zip(&all)
            .map(|((title, text), r)| (*text, *title, &r[..])),
    );
    shown
        .find(&Features::of_statement(statement), |i| i + 1)
        .iter()
        .map(|w| w.source)
        .collect()
}

#[test]
fn a_page_subject_referred_to_as_it_stands_for_its_name() {
    let page = [("Quillfeather Lighthouse", TITLED)];
    assert_eq!(
        found_in(
            &page,
            "The Quillfeather Lighthouse was first lit on 14 October 1911."
        ),
        [1]
    );
    assert_eq!(
        found_in(
            &page,
            "Quillfeather Lighthouse was designed by the engineer Ottilie Brannock."
        ),
        [1]
    );
    // Everything else is still asked for: the date, the negation, the other names.
    for wrong in [
        "The Quillfeather Lighthouse was first lit on 15 October 1911.",
        "The Quillfeather Lighthouse was not first lit on 14 October 1911.",
        "The Quillfeather Lighthouse was designed by the engineer Ottilie Varnholm.",
        // Another lighthouse is named in the window; one named first is its subject.
        "The Quillfeather Lighthouse was first lit on 2 May 1913.",
        "The Quillfeather Lighthouse said it would stand for a century.",
    ] {
        assert_eq!(found_in(&page, wrong), Vec::<usize>::new(), "{wrong}");
    }
    // Another page's subject never counts: the same sentence on a page about
    // something else supports nothing about the Quillfeather Lighthouse.
    let other = [("Harbour works of Varnholm", TITLED)];
    assert_eq!(
        found_in(
            &other,
            "The Quillfeather Lighthouse was first lit on 14 October 1911."
        ),
        Vec::<usize>::new()
    );
    let both = [
        ("Harbour works of Varnholm", TITLED),
        ("Quillfeather Lighthouse", "Lamps."),
    ];
    assert_eq!(
        found_in(
            &both,
            "The Quillfeather Lighthouse was first lit on 14 October 1911."
        ),
        Vec::<usize>::new()
    );
}

#[test]
fn too_little_to_go_on_finds_nothing() {
    assert_eq!(found("It was."), None);
    assert_eq!(found("Lighthouses are tall."), None);
}
