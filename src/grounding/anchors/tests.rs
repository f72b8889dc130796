//! Tests of [`super`]: kept apart so the module reads as its one concern.
use super::*;

#[test]
fn numbers_are_compared_by_value_and_unit() {
    let has = |statement: &str, source: &str| {
        let s = Features::of_statement(statement);
        missing_anchor(&s, &[&Features::of_source(source)], true).is_none()
    };
    assert!(has("It took 10 days.", "It took ten days."));
    assert!(has("It has 5000 species.", "It has 5,000 species."));
    assert!(has("A 5 km walk.", "A walk of 5 kilometres."));
    assert!(!has("A 5 km walk.", "A walk of 5 miles."));
    assert!(
        has("A 5 km walk.", "A walk of 5 in all."),
        "no unit there: same value"
    );
    assert!(!has("It took 11 days.", "It took ten days."));
    assert!(has("It was lit in 1911.", "It was lit on 14 October 1911."));
    assert!(has(
        "It was lit on 14 October 1911.",
        "It was lit on 1911-10-14."
    ));
    assert!(!has(
        "It was lit on 15 October 1911.",
        "It was lit on 14 October 1911."
    ));
    assert!(!has(
        "It was lit in 1912.",
        "It was lit on 14 October 1911."
    ));
    assert!(has("Lit in October 1911.", "Lit on October 14, 1911."));
}

#[test]
fn names_are_capitalised_words_inside_a_sentence() {
    let f = Features::of_statement(
        "In 1822 the French physicist Augustin Fresnel presented a lens. The beam was narrow.",
    );
    assert_eq!(f.names, [vec!["french"], vec!["augustin", "fresnel"]]);
    let f = Features::of_statement("He called them “little water bears”. Dr. Smith agreed.");
    assert_eq!(f.quoted, ["little water bears"]);
    assert_eq!(f.names, [vec!["smith"]]);
    let source = Features::of_source("Augustin Fresnel's lens of 1822, made by the French.");
    let s = Features::of_statement("In 1822 the French physicist Augustin Fresnel made it.");
    assert_eq!(missing_anchor(&s, &[&source], true), None);
    let s = Features::of_statement("In 1822 the French physicist Augustin Arago made it.");
    assert_eq!(
        missing_anchor(&s, &[&source], true).as_deref(),
        Some("the name \"augustin arago\"")
    );
    assert_eq!(missing_anchor(&s, &[&source], false), None, "numbers only");
    // A name is a run of words, found as that run, unstemmed.
    let source = Features::of_source(
        "He threatened a United States official, the Attorney's Office for the Western District of New York said.",
    );
    let s = Features::of_statement("It was the Office for the United District of New York.");
    assert_eq!(
        missing_anchor(&s, &[&source], true).as_deref(),
        Some("the name \"united district\"")
    );
    let s =
        Features::of_statement("He threatened a United States official, New York's attorney said.");
    assert_eq!(missing_anchor(&s, &[&source], true), None);
    let news = Features::of_source("News Nation found the mall in the Saket area.");
    let s = Features::of_statement("The mall is in the New area.");
    assert!(missing_anchor(&s, &[&news], true).is_some());
    let source = Features::of_source("It led to a ban for Pittsburgh center Maurkice Pouncey.");
    let s = Features::of_statement("It led to a ban for Pittsburgh Maurkice Pouncey.");
    assert_eq!(missing_anchor(&s, &[&source], true), None);
}

#[test]
fn negation_must_agree_within_its_scope() {
    let conflict = |statement: &str, source: &str| {
        negation_conflict(
            &Features::of_statement(statement),
            &[&Features::of_source(source)],
        )
    };
    let source = "Early lighthouses burned wood or coal in open fires, which were not bright.";
    assert!(!conflict(
        "Early lighthouses burned wood in open fires.",
        source
    ));
    assert!(conflict(
        "Early lighthouses never burned wood in open fires.",
        source
    ));
    assert!(conflict("Early lighthouses didn't burn wood.", source));
    assert!(conflict("The open fires were bright.", source));
    assert!(!conflict("The open fires were not bright.", source));
    assert!(conflict(
        "Tardigrades cannot survive in space.",
        "Tardigrades survive in space."
    ));
    assert!(conflict(
        "They do not survive without water.",
        "They survive for years."
    ));
    assert!(!conflict(
        "It is not only small but light.",
        "It is small and light."
    ));
    assert!(Features::of_statement("It isn't here.").negated);
    // The source negates a word the statement says plainly, though the same word
    // is also plain elsewhere in the source.
    assert!(conflict(
        "VW says the car is a preview, but it did say when the wagon goes on sale.",
        "VW says the car is a preview, but it didn't say when the wagon goes on sale."
    ));
    // A cue with nothing after it negates what came before it.
    assert!(conflict(
        "He went ahead despite advice from several aides to do so.",
        "He went ahead despite advice from several aides not to do so."
    ));
    assert!(conflict(
        "Staying on the Moon and reaching Mars, however, have.",
        "Staying on the Moon and reaching Mars, however, haven't."
    ));
    // A statement restating the source without one of its negations, whose head
    // word it changed.
    assert!(conflict(
        "He may not have been flagged a lot, so the stat sheet will reveal it.",
        "He may not have been flagged a lot, so the stat sheet won't show it."
    ));
    // A negation about something the statement does not say is no conflict.
    assert!(!conflict(
        "The tower was automated in 1920.",
        "The keepers did not live in the tower until 1920, when it was automated."
    ));
    assert!(!conflict(
        "This is not the first WeWork has been scrutinized by the NYAG.",
        "This is not the first time WeWork has been scrutinized by the NYAG."
    ));
}

#[test]
fn a_sentence_refers_back_before_naming_anything_else() {
    let subject: HashSet<String> = ["quillfeather", "lighthouse"].map(fold).into();
    for text in [
        "It was designed by the engineer Ottilie Brannock.",
        "Its lens came from Paris.",
        "The lighthouse was first lit on 14 October 1911.",
        "On 14 October 1911 it was first lit.",
        "Since then, the company has grown.",
    ] {
        assert!(refers_back(text, &subject), "{text}");
    }
    for text in [
        "Lindqvist said it was lit in 1911.",
        "The Varnholm Lighthouse was first lit in 1911.",
        "The keepers did not live in the tower.",
        "Ottilie Brannock designed it.",
        "Five years after the harbour wall and the two piers were finished, it was lit.",
    ] {
        assert!(!refers_back(text, &subject), "{text}");
    }
}

#[test]
fn terms_fold_plurals_and_verb_endings() {
    let f = Features::of_statement("Dried tardigrades survived; the tardigrade survives.");
    assert_eq!(f.terms, ["dri", "tardigrad", "surviv"]);
    assert_eq!(fold("fresnel's"), "fresnel");
    assert_eq!(fold("surviving"), "surviv");
}
