//! The tests of `numbers.rs`, in a file of their own: with them the module passed 800 lines.

use super::*;

fn read(text: &str) -> (Vec<Quantity>, Vec<Date>) {
    let tokens = tokens(text);
    let mut used = vec![false; tokens.len()];
    read_numbers_and_dates(&tokens, &mut used)
}

fn q(value: f64, unit: Option<&'static str>) -> Quantity {
    Quantity { value, unit }
}

fn date(year: Option<i32>, month: Option<u8>, day: Option<u8>) -> Date {
    Date { year, month, day }
}

#[test]
fn dates_are_read_however_written() {
    let full = date(Some(1911), Some(10), Some(14));
    for text in [
        "It was first lit on 14 October 1911.",
        "It was first lit on October 14, 1911.",
        "It was first lit on 1911-10-14.",
        "It was first lit on the 14th of October 1911.",
        "It was first lit on Oct 14 1911.",
        "It was first lit on Oct. 14, 1911.",
        "It was first lit on 14 Oct. 1911.",
        "It was first lit on 14.10.1911.",
    ] {
        assert_eq!(read(text), (vec![], vec![full]), "{text}");
    }
    assert_eq!(
        read("It opened in October 1911.").1,
        [date(Some(1911), Some(10), None)]
    );
    assert_eq!(read("It opens in October.").1, [date(None, Some(10), None)]);
    // Day first when written with dots; a decimal or a short year is no date.
    assert_eq!(
        read("It opened on 3.5.1934.").1,
        [date(Some(1934), Some(5), Some(3))]
    );
    assert_eq!(read("It grew 3.5 times.").0, [q(3.5, None)]);
    assert!(read("Version 3.5.19 is out.").1.is_empty());
    assert!(read("On 32.5.1934 nothing happened.").1.is_empty());
    // "may" the verb is no month; "may" beside a number is.
    assert!(read("Tardigrades may survive.").1.is_empty());
    assert!(read("May they survive?").1.is_empty());
    assert_eq!(
        read("It rained on 3 may 2020.").1,
        [date(Some(2020), Some(5), Some(3))]
    );
}

#[test]
fn numbers_are_read_by_value_with_their_units() {
    let f = |t: &str| read(t).0;
    assert_eq!(f("about 5,000 people"), [q(5000.0, None)]);
    assert_eq!(f("about 5000 people"), [q(5000.0, None)]);
    assert_eq!(f("ten days in orbit"), [q(10.0, Some("day"))]);
    assert_eq!(f("two hundred years"), [q(200.0, Some("year"))]);
    assert_eq!(f("twenty five kilometres"), [q(25.0, Some("km"))]);
    assert_eq!(f("a 1.2 million dollar grant"), [q(1.2e6, Some("usd"))]);
    assert_eq!(f("it cost $3.5 million"), [q(3.5e6, Some("usd"))]);
    assert_eq!(f("it raised $12.9bn"), [q(12.9e9, Some("usd"))]);
    assert_eq!(f("0.01 percent of its rate"), [q(0.01, Some("%"))]);
    assert_eq!(f("0.01% of its rate"), [q(0.01, Some("%"))]);
    assert_eq!(f("above 150 °C"), [q(150.0, Some("°c"))]);
    assert_eq!(f("a 10km walk"), [q(10.0, Some("km"))]);
    assert_eq!(f("in the 1990s"), [q(1990.0, Some("decade"))]);
    assert_eq!(
        f("five m away"),
        [q(5.0, None)],
        "one-letter units after digits only"
    );
    assert_eq!(f("FOTON-M3 and 3D printers"), []);
    assert_eq!(
        f("a \u{1b}[2Jclear \u{1b}]0;title 5\u{7}screen in \u{1b}[31m2007\u{1b}[0m"),
        [q(2007.0, None)],
        "escape sequences hold no numbers"
    );
    assert!(same_quantity(&q(5.0, Some("km")), &q(5.0, None)));
    assert!(!same_quantity(&q(5.0, Some("km")), &q(5.0, Some("mi"))));
    assert!(same_quantity(&q(150.0, Some("deg")), &q(150.0, Some("°c"))));
}
