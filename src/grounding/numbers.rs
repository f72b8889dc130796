//! Numbers and dates as a sentence writes them, read by value: the anchors that most
//! often tell a true statement from a false one that shares all its words ("first lit
//! on 14 October 1911" against "on 15 October 1911", "5,000 kilograms" against "6,000").
//!
//! The text is cut into tokens (words, numbers, a few symbols, clause and sentence
//! breaks), which `anchors.rs` reads for words and negation too. Numbers are read in
//! digits ("5,000", "3.5", "$12.9bn", "10km", "14th") or in words ("two hundred",
//! "twenty five", "1.2 million"), with the unit after them in a canonical form ("5
//! kilometres" and "5 km" are both `km`; "0.01 percent" and "0.01%" are both `%`; a
//! currency sign before them counts). Dates are read as "14 October 1911", "October 14,
//! 1911", "the 14th of October 1911", "Oct 14 1911", "1911-10-14", "14.10.1911", "October 1911" and a
//! capitalised month alone; "may" the verb is a month only beside a number.
//!
//! All of it is one pass over the text with small fixed tables, at most [`MAX_WORDS`]
//! words.

use crate::context::is_cjk;

/// Words of a text looked at, at most: a statement or sentence longer than this is
/// judged on its beginning (statements are bounded by the answer schema anyway).
pub const MAX_WORDS: usize = 400;

/// A number as written: its value and its unit, when it has one we know.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    /// The value ("5,000" and "five thousand" are both 5000).
    pub value: f64,
    /// The canonical unit ("km", "%", "year", "usd", ...), if any.
    pub unit: Option<&'static str>,
}

/// A date, or the parts of one that were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    /// The year.
    pub year: Option<i32>,
    /// The month, 1 to 12.
    pub month: Option<u8>,
    /// The day of the month.
    pub day: Option<u8>,
}

/// Same value (to a part in a billion) and compatible units: equal, or one side has
/// none, or degrees against degrees of a named scale.
pub fn same_quantity(a: &Quantity, b: &Quantity) -> bool {
    let scale = a.value.abs().max(b.value.abs()).max(1.0);
    if (a.value - b.value).abs() > scale * 1e-9 {
        return false;
    }
    match (a.unit, b.unit) {
        (Some(x), Some(y)) => {
            x == y || (x == "deg" && y.starts_with('°')) || (y == "deg" && x.starts_with('°'))
        }
        _ => true,
    }
}

/// Every part `wanted` gives is the same in `found` (which may give more).
pub fn same_date(wanted: &Date, found: &Date) -> bool {
    let part = |w: Option<i64>, f: Option<i64>| w.is_none() || w == f;
    part(wanted.year.map(i64::from), found.year.map(i64::from))
        && part(wanted.month.map(i64::from), found.month.map(i64::from))
        && part(wanted.day.map(i64::from), found.day.map(i64::from))
}

/// A quantity as a person reads it: "12 days", "0.1 %", "5 km", "1911".
pub fn describe_quantity(q: &Quantity) -> String {
    let value = if q.value.fract() == 0.0 && q.value.abs() < 1e15 {
        format!("{}", q.value as i64)
    } else {
        format!("{}", q.value)
    };
    match q.unit {
        Some("century") if q.value != 1.0 => format!("{value} centuries"),
        Some(unit @ ("year" | "month" | "week" | "day" | "hour" | "minute" | "second"))
            if q.value != 1.0 =>
        {
            format!("{value} {unit}s")
        }
        Some("decade") => format!("the {value}s"),
        Some(unit) => format!("{value} {unit}"),
        None => value,
    }
}

/// A date as a person reads it: "14 October 1911", "October 1911".
pub fn describe_date(d: &Date) -> String {
    let month = d
        .month
        .and_then(|m| MONTHS.iter().find(|(_, n)| *n == m))
        .map(|(name, _)| {
            let mut name = name.to_string();
            name[..1].make_ascii_uppercase();
            name
        });
    [
        d.day.map(|d| d.to_string()),
        month,
        d.year.map(|y| y.to_string()),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ")
}

// Tokens ------------------------------------------------------------------------------

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A word: letters and digits (starting with a letter), apostrophes inside.
    Word,
    /// A number written in digits, with the unit written onto it ("10km"), if any.
    Number(f64, Option<&'static str>),
    /// A number with an ordinal ending ("14th").
    Ordinal(f64),
    /// A date written in digits: YYYY-MM-DD, or D.M.YYYY.
    Iso(Date),
    /// `$ € £ % °`.
    Symbol(char),
    /// Punctuation inside a sentence that ends a clause (`, ; : ( ) — "`): it ends a
    /// negation's scope.
    Break,
    /// The end of a sentence (`. ! ?`, a line break).
    Stop,
}

/// One token of a text.
#[derive(Debug, Clone)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Lowercase text (words only).
    pub lower: String,
    /// Starts with an uppercase letter.
    pub capital: bool,
    /// Opens the text, a sentence or a line: its capital says nothing.
    pub opens: bool,
}

fn token(kind: Kind) -> Token {
    Token {
        kind,
        lower: String::new(),
        capital: false,
        opens: false,
    }
}

/// The tokens of `text`, at most [`MAX_WORDS`] words.
pub fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte = |k: usize| chars.get(k).map_or(text.len(), |&(b, _)| b);
    let mut out: Vec<Token> = Vec::new();
    let mut opens = true;
    let mut words = 0usize;
    let mut i = 0usize;
    while i < chars.len() && words < MAX_WORDS {
        let c = chars[i].1;
        if matches!(c, '\u{1b}' | '\u{9b}') {
            // A terminal escape sequence is no text: its parameters ("\x1b[2J") are
            // not numbers, nor its title ("\x1b]0;title\x07") words.
            i = past_escape(&chars, i);
        } else if c.is_ascii_digit() {
            let (kind, next) = number_at(text, &chars, i);
            match kind {
                Some(kind) => out.push(token(kind)),
                None => {
                    // Digits run into letters we do not read as a unit: a word ("3D").
                    let lower = text[byte(i)..byte(next)].to_lowercase();
                    out.push(Token {
                        kind: Kind::Word,
                        lower,
                        capital: false,
                        opens,
                    });
                }
            }
            words += 1;
            opens = false;
            i = next;
        } else if c.is_alphabetic() && is_cjk(c) {
            out.push(Token {
                kind: Kind::Word,
                lower: c.to_string(),
                capital: false,
                opens: false,
            });
            words += 1;
            opens = false;
            i += 1;
        } else if c.is_alphanumeric() {
            let mut j = i + 1;
            while j < chars.len() {
                let d = chars[j].1;
                let apostrophe = matches!(d, '\'' | '\u{2019}')
                    && chars.get(j + 1).is_some_and(|&(_, e)| e.is_alphabetic());
                if (d.is_alphanumeric() && !is_cjk(d)) || apostrophe {
                    j += 1;
                } else {
                    break;
                }
            }
            let raw = &text[byte(i)..byte(j)];
            out.push(Token {
                kind: Kind::Word,
                lower: raw.to_lowercase().replace('\u{2019}', "'"),
                capital: c.is_uppercase(),
                opens,
            });
            words += 1;
            opens = false;
            i = j;
        } else {
            match c {
                // The full stop of a month's abbreviation ("Sept. 30") ends nothing.
                '.' if out.last().is_some_and(|t| {
                    t.kind == Kind::Word && t.lower.len() <= 4 && month(&t.lower).is_some()
                }) => {}
                '.' | '!' | '?' | '\n' | '。' | '！' | '？' => {
                    out.push(token(Kind::Stop));
                    // A full stop after a single letter or a short abbreviation
                    // ("J. S. Bach", "Dr. Smith") opens nothing.
                    let abbreviation = c == '.'
                        && out.iter().rev().nth(1).is_some_and(|t| {
                            t.kind == Kind::Word && t.capital && t.lower.chars().count() <= 2
                        });
                    opens = !abbreviation;
                }
                ':' | ';' | ',' | '(' | ')' | '[' | ']' | '"' | '\u{201C}' | '\u{201D}'
                | '\u{2014}' | '\u{2013}' => out.push(token(Kind::Break)),
                '$' | '\u{20AC}' | '\u{00A3}' | '%' | '\u{00B0}' => {
                    out.push(token(Kind::Symbol(c)))
                }
                _ => {}
            }
            i += 1;
        }
    }
    out
}

/// The index past the terminal escape sequence starting at `i` (ESC or C1 CSI): a
/// CSI sequence ends at its final byte (`@` to `~`), an OSC one at BEL or ESC `\`,
/// any other at the character after ESC.
fn past_escape(chars: &[(usize, char)], i: usize) -> usize {
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let (csi, osc, mut k) = match (at(i), at(i + 1)) {
        (Some('\u{9b}'), _) => (true, false, i + 1),
        (_, Some('[')) => (true, false, i + 2),
        (_, Some(']')) => (false, true, i + 2),
        _ => return i + 2,
    };
    while let Some(c) = at(k) {
        k += 1;
        if (csi && ('@'..='~').contains(&c))
            || (osc && (c == '\u{7}' || (c == '\u{1b}' && at(k) == Some('\\'))))
        {
            return if c == '\u{1b}' { k + 1 } else { k };
        }
        if osc && c == '\u{1b}' {
            return k - 1;
        }
    }
    k
}

/// Reads the number starting at char `i`: digits with thousands commas ("5,000") and
/// one decimal point, an ISO date, an ordinal ending or a unit written onto it.
/// Returns the token (or `None` for digits running into other letters, a word) and
/// the index of the char after it.
fn number_at(text: &str, chars: &[(usize, char)], i: usize) -> (Option<Kind>, usize) {
    let byte = |k: usize| chars.get(k).map_or(text.len(), |&(b, _)| b);
    let digit = |k: usize| chars.get(k).is_some_and(|&(_, c)| c.is_ascii_digit());
    let mut j = i;
    while digit(j) {
        j += 1;
    }
    // YYYY-MM-DD
    if j - i == 4
        && chars.get(j).is_some_and(|&(_, c)| c == '-')
        && digit(j + 1)
        && digit(j + 2)
        && chars.get(j + 3).is_some_and(|&(_, c)| c == '-')
        && digit(j + 4)
        && digit(j + 5)
        && !digit(j + 6)
    {
        let part = |a: usize, b: usize| text[byte(a)..byte(b)].parse::<u32>().unwrap_or(0);
        let (year, month, day) = (part(i, j), part(j + 1, j + 3), part(j + 4, j + 6));
        if (1..=12).contains(&month) && (1..=31).contains(&day) {
            let date = Date {
                year: Some(year as i32),
                month: Some(month as u8),
                day: Some(day as u8),
            };
            return (Some(Kind::Iso(date)), j + 6);
        }
    }
    // D.M.YYYY ("3.5.1934"), the European way of writing a date in digits: day first.
    if let Some((date, next)) = dotted_date(text, chars, i, j) {
        return (Some(Kind::Iso(date)), next);
    }
    let mut digits: String = text[byte(i)..byte(j)].to_string();
    let mut decimal = false;
    while let Some(&(_, c)) = chars.get(j) {
        if c == ',' && digit(j + 1) && digit(j + 2) && digit(j + 3) && !digit(j + 4) && !decimal {
            digits.push_str(&text[byte(j + 1)..byte(j + 4)]);
            j += 4;
        } else if c == '.' && digit(j + 1) && !decimal {
            decimal = true;
            digits.push('.');
            j += 1;
            while digit(j) {
                digits.push(chars[j].1);
                j += 1;
            }
        } else {
            break;
        }
    }
    let value: f64 = digits.parse().unwrap_or(0.0);
    let mut k = j;
    while chars.get(k).is_some_and(|&(_, c)| c.is_alphabetic()) {
        k += 1;
    }
    if k == j {
        return (Some(Kind::Number(value, None)), j);
    }
    let suffix = text[byte(j)..byte(k)].to_lowercase();
    let kind = match suffix.as_str() {
        "st" | "nd" | "rd" | "th" => Some(Kind::Ordinal(value)),
        // "$12.9bn", "5mn"
        "bn" | "mn" | "tn" => multiplier(&suffix).map(|m| Kind::Number(value * m, None)),
        "s" if value >= 100.0 => Some(Kind::Number(value, Some("decade"))),
        other => unit_word(other).map(|u| Kind::Number(value, Some(u))),
    };
    (kind, k)
}

/// A date written D.M.YYYY or DD.MM.YYYY starting at char `i` (its first digits end
/// at `j`), with the char after it; `None` for anything else ("3.5" is a number, and
/// "3.5.19" or a day or month out of range is no date).
fn dotted_date(text: &str, chars: &[(usize, char)], i: usize, j: usize) -> Option<(Date, usize)> {
    let byte = |k: usize| chars.get(k).map_or(text.len(), |&(b, _)| b);
    let digit = |k: usize| chars.get(k).is_some_and(|&(_, c)| c.is_ascii_digit());
    let dot = |k: usize| chars.get(k).is_some_and(|&(_, c)| c == '.');
    let run = |from: usize| (from..).take_while(|&k| digit(k)).count();
    let day_len = j - i;
    if !(1..=2).contains(&day_len) || !dot(j) {
        return None;
    }
    let month_len = run(j + 1);
    let m = j + 1 + month_len;
    if !(1..=2).contains(&month_len) || !dot(m) || run(m + 1) != 4 {
        return None;
    }
    let part = |a: usize, b: usize| text[byte(a)..byte(b)].parse::<u32>().ok();
    let (day, month, year) = (part(i, j)?, part(j + 1, m)?, part(m + 1, m + 5)?);
    ((1..=31).contains(&day) && (1..=12).contains(&month)).then_some((
        Date {
            year: Some(year as i32),
            month: Some(month as u8),
            day: Some(day as u8),
        },
        m + 5,
    ))
}

// Tables ------------------------------------------------------------------------------

/// Month names and abbreviations.
pub const MONTHS: [(&str, u8); 23] = [
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("sept", 9),
    ("oct", 10),
    ("nov", 11),
];

/// The month a lowercase name or abbreviation stands for.
pub fn month(word: &str) -> Option<u8> {
    if word == "dec" {
        return Some(12);
    }
    MONTHS
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, n)| *n)
}

/// Number words and their values; `hundred` and above multiply.
pub fn number_word(word: &str) -> Option<f64> {
    const SMALL: [&str; 20] = [
        "zero",
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 8] = [
        "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];
    if let Some(n) = SMALL.iter().position(|w| *w == word) {
        return Some(n as f64);
    }
    if let Some(n) = TENS.iter().position(|w| *w == word) {
        return Some((n as f64 + 2.0) * 10.0);
    }
    multiplier(word)
}

/// What a multiplying word ("hundred", "million", "bn") multiplies by.
pub fn multiplier(word: &str) -> Option<f64> {
    match word {
        "hundred" => Some(1e2),
        "thousand" => Some(1e3),
        "million" | "mn" => Some(1e6),
        "billion" | "bn" => Some(1e9),
        "trillion" | "tn" => Some(1e12),
        _ => None,
    }
}

/// The canonical unit of a unit word or abbreviation.
fn unit_word(word: &str) -> Option<&'static str> {
    Some(match word {
        "km" | "kilometre" | "kilometres" | "kilometer" | "kilometers" => "km",
        "m" | "metre" | "metres" | "meter" | "meters" => "m",
        "cm" | "centimetre" | "centimetres" | "centimeter" | "centimeters" => "cm",
        "mm" | "millimetre" | "millimetres" | "millimeter" | "millimeters" => "mm",
        "mi" | "mile" | "miles" => "mi",
        "ft" | "foot" | "feet" => "ft",
        "inch" | "inches" => "in",
        "kg" | "kilogram" | "kilograms" | "kilo" | "kilos" => "kg",
        "g" | "gram" | "grams" => "g",
        "mg" | "milligram" | "milligrams" => "mg",
        "lb" | "lbs" | "pound" | "pounds" => "lb",
        "t" | "ton" | "tons" | "tonne" | "tonnes" => "t",
        "l" | "litre" | "litres" | "liter" | "liters" => "l",
        "ml" | "millilitre" | "millilitres" | "milliliter" | "milliliters" => "ml",
        "percent" | "pct" => "%",
        "degree" | "degrees" => "deg",
        "year" | "years" | "yr" | "yrs" => "year",
        "month" | "months" => "month",
        "week" | "weeks" => "week",
        "day" | "days" => "day",
        "hour" | "hours" | "hr" | "hrs" | "h" => "hour",
        "minute" | "minutes" | "min" | "mins" => "minute",
        "second" | "seconds" | "sec" | "secs" | "s" => "second",
        "century" | "centuries" => "century",
        "mph" => "mph",
        "kmh" | "kph" => "km/h",
        "dollar" | "dollars" | "usd" => "usd",
        "euro" | "euros" | "eur" => "eur",
        "gbp" | "sterling" => "gbp",
        "gb" | "gigabyte" | "gigabytes" => "gb",
        "mb" | "megabyte" | "megabytes" => "mb",
        "w" | "watt" | "watts" => "w",
        "kw" | "kilowatt" | "kilowatts" => "kw",
        _ => return None,
    })
}

/// Numbers (digits or words, with multipliers and units) and dates, in order; marks
/// the tokens they use.
pub fn read_numbers_and_dates(tokens: &[Token], used: &mut [bool]) -> (Vec<Quantity>, Vec<Date>) {
    let (mut quantities, mut dates) = (Vec::new(), Vec::new());
    let word = |k: usize| {
        tokens
            .get(k)
            .filter(|t| t.kind == Kind::Word)
            .map(|t| t.lower.as_str())
    };
    // A month word counts as one when capitalised, or (any case) beside a number.
    let month_at = |k: usize, beside_number: bool| -> Option<u8> {
        let t = tokens.get(k)?;
        let m = month(word(k)?)?;
        let ambiguous = matches!(t.lower.as_str(), "may" | "march" | "mar" | "jan" | "sept");
        let capitalised = t.capital && !(ambiguous && t.opens);
        (capitalised || beside_number).then_some(m)
    };
    let day_value = |k: usize| -> Option<u8> {
        match tokens.get(k)?.kind {
            Kind::Number(v, None) | Kind::Ordinal(v)
                if v.fract() == 0.0 && (1.0..=31.0).contains(&v) =>
            {
                Some(v as u8)
            }
            _ => None,
        }
    };
    let year_value = |k: usize| -> Option<i32> {
        match tokens.get(k)?.kind {
            Kind::Number(v, None) if v.fract() == 0.0 && (100.0..=2999.0).contains(&v) => {
                Some(v as i32)
            }
            _ => None,
        }
    };
    let is_comma_or_of = |k: usize| {
        tokens
            .get(k)
            .is_some_and(|t| t.kind == Kind::Break || (t.kind == Kind::Word && t.lower == "of"))
    };

    let mut k = 0usize;
    while k < tokens.len() {
        if used[k] {
            k += 1;
            continue;
        }
        if let Kind::Iso(date) = tokens[k].kind {
            dates.push(date);
            used[k] = true;
            k += 1;
            continue;
        }
        // Day Month [Year] / the Day of Month [Year]
        if let Some(day) = day_value(k) {
            let m_at = if word(k + 1) == Some("of") {
                k + 2
            } else {
                k + 1
            };
            if let Some(month) = month_at(m_at, true) {
                let year = year_value(m_at + 1);
                dates.push(Date {
                    year,
                    month: Some(month),
                    day: Some(day),
                });
                let end = m_at + 1 + usize::from(year.is_some());
                used[k..end].iter_mut().for_each(|u| *u = true);
                k = end;
                continue;
            }
        }
        // Month Day[,] [Year] / Month Year / Month
        if tokens[k].kind == Kind::Word {
            let beside = day_value(k + 1).is_some() || year_value(k + 1).is_some();
            if let Some(month) = month_at(k, beside) {
                let mut end = k + 1;
                let mut date = Date {
                    year: None,
                    month: Some(month),
                    day: None,
                };
                if let Some(year) = year_value(k + 1).filter(|y| *y > 31) {
                    date.year = Some(year);
                    end = k + 2;
                } else if let Some(day) = day_value(k + 1) {
                    date.day = Some(day);
                    end = k + 2;
                    let y_at = if is_comma_or_of(end) { end + 1 } else { end };
                    if let Some(year) = year_value(y_at) {
                        date.year = Some(year);
                        end = y_at + 1;
                    }
                }
                dates.push(date);
                used[k..end].iter_mut().for_each(|u| *u = true);
                k = end;
                continue;
            }
        }
        // Quantities: [currency] number [multiplier...] [unit]
        let start = k;
        let mut value: Option<f64> = None;
        let mut unit: Option<&'static str> = None;
        let digits = matches!(tokens[k].kind, Kind::Number(..));
        match tokens[k].kind {
            Kind::Number(v, u) => {
                value = Some(v);
                unit = u;
                k += 1;
            }
            Kind::Ordinal(v) => {
                quantities.push(Quantity {
                    value: v,
                    unit: None,
                });
                used[k] = true;
                k += 1;
                continue;
            }
            Kind::Word => {
                if let Some((v, next)) = number_words(tokens, k) {
                    value = Some(v);
                    k = next;
                }
            }
            _ => {}
        }
        let Some(mut v) = value else {
            k += 1;
            continue;
        };
        // "1.2 million", "5 thousand"
        while let Some(m) = word(k).and_then(multiplier) {
            v *= m;
            k += 1;
        }
        if unit.is_none() {
            unit = unit_after(tokens, &mut k, digits);
        }
        if unit.is_none() && start > 0 {
            unit = match tokens[start - 1].kind {
                Kind::Symbol('$') => Some("usd"),
                Kind::Symbol('\u{20AC}') => Some("eur"),
                Kind::Symbol('\u{00A3}') => Some("gbp"),
                _ => None,
            };
        }
        quantities.push(Quantity { value: v, unit });
        used[start..k].iter_mut().for_each(|u| *u = true);
    }
    (quantities, dates)
}

/// A number written in words starting at token `k` ("two hundred", "twenty five",
/// "ten"): its value and the token after it.
fn number_words(tokens: &[Token], k: usize) -> Option<(f64, usize)> {
    let mut total: f64 = 0.0;
    let mut current: f64 = 0.0;
    let mut end = k;
    while let Some(t) = tokens.get(end).filter(|t| t.kind == Kind::Word) {
        let Some(v) = number_word(&t.lower) else {
            break;
        };
        match multiplier(&t.lower) {
            // "hundred" alone is not a number; after one it multiplies.
            Some(_) if end == k => return None,
            Some(m) if m < 1e3 => current = current.max(1.0) * m,
            Some(m) => {
                total += current.max(1.0) * m;
                current = 0.0;
            }
            None => current += v,
        }
        end += 1;
    }
    (end > k).then_some((total + current, end))
}

/// The unit after a number at token `*k` (`%`, `°C`, "per cent", "degrees Celsius",
/// "km"...), moving `*k` past it. One-letter units ("m", "g", "h") count only after
/// a number written in `digits`: "five m" is no measure.
fn unit_after(tokens: &[Token], k: &mut usize, digits: bool) -> Option<&'static str> {
    let t = tokens.get(*k)?;
    let next_word = |at: usize| {
        tokens
            .get(at)
            .filter(|t| t.kind == Kind::Word)
            .map(|t| t.lower.as_str())
    };
    let scale = |at: usize| match next_word(at) {
        Some("c" | "celsius" | "centigrade") => Some("°c"),
        Some("f" | "fahrenheit") => Some("°f"),
        _ => None,
    };
    match t.kind {
        Kind::Symbol('%') => {
            *k += 1;
            Some("%")
        }
        Kind::Symbol('\u{00B0}') => {
            *k += 1;
            match scale(*k) {
                Some(u) => {
                    *k += 1;
                    Some(u)
                }
                None => Some("deg"),
            }
        }
        Kind::Word => {
            let w = t.lower.as_str();
            if w == "per" && next_word(*k + 1) == Some("cent") {
                *k += 2;
                return Some("%");
            }
            if w.len() == 1 && !digits {
                return None;
            }
            let unit = unit_word(w)?;
            *k += 1;
            if unit == "deg"
                && let Some(u) = scale(*k)
            {
                *k += 1;
                return Some(u);
            }
            Some(unit)
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "numbers_tests.rs"]
mod tests;
