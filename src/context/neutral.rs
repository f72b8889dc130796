//! Defusing our own delimiters inside untrusted text (pages, titles, earlier turns of
//! a conversation), so that no text can close the block it sits in and pose as
//! instructions or as another source.
//!
//! The prompt fences untrusted text in tags of ours, [`OUR_TAGS`]: `<source>` around
//! each page and `<history>` around a conversation's earlier turns. An attacker does
//! not have to spell a tag as we do for a model to read it as one, so the rule is
//! about what a reader would take for our tag, not about exact bytes: an opening
//! bracket, then anything a reader skips (whitespace, invisible format characters,
//! `/` or `\` in any width, an entity such as `&#47;`), then one of our tag names in
//! any case, in fullwidth or mathematical letters or the Cyrillic and Greek letters
//! that look like Latin ones, even with invisible characters or `_`/`-` inside it.
//! The bracket may be `<`, a look-alike (`＜`, `﹤`, `〈` U+2329, `〈` U+3008, `⟨`) or an entity for it
//! (`&lt;`, `&#60;`, `&#x3c;`).
//!
//! What is defused is that bracket alone: it becomes `‹` (the `&` of an entity does,
//! so `&lt;` reads `‹lt;` and decodes to nothing). One character for one, so a
//! character's position in the neutralised text is its position in the original and
//! spans map back (see `passages::original_spans`). Text that merely contains `<`
//! (`a < b`, `<b>`) is left alone: quotes of it must still verify.

/// The names of the tags the prompt fences untrusted text with.
pub const OUR_TAGS: [&str; 2] = ["source", "history"];

/// What a defused bracket becomes.
const DEFUSED: char = '‹';

/// Most characters skipped between the bracket and the name, and inside the name
/// between two of its letters: enough for any spelling a reader would still take for
/// a tag, and a bound on the work per bracket (the scan stays linear).
const MAX_SKIPPED: usize = 32;

/// Defuses our delimiters inside untrusted text (see the module doc): every bracket
/// that opens something a reader would take for one of [`OUR_TAGS`] becomes `‹`.
pub fn neutralise(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: String = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let after = match c {
            '<' | '\u{FF1C}' | '\u{FE64}' | '\u{2329}' | '\u{3008}' | '\u{27E8}' => Some(i + 1),
            '&' => entity_len(&chars[i..])
                .filter(|&n| is_lt_entity(&chars[i..i + n]))
                .map(|n| i + n),
            _ => None,
        };
        if after.is_some_and(|at| opens_our_tag(&chars[at..])) {
            out.push(DEFUSED);
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `rest` (what follows a bracket) is, to a reader, one of our tag names:
/// skippable characters, then the name's letters with skippable characters allowed
/// between them.
fn opens_our_tag(rest: &[char]) -> bool {
    let start = skip(rest, |c| is_invisible(c) || is_slash(c), true);
    OUR_TAGS.iter().any(|name| spells(&rest[start..], name))
}

/// Whether `rest` begins with the letters of `name` (folded), skippable characters
/// allowed between them.
fn spells(rest: &[char], name: &str) -> bool {
    let mut at = 0;
    for (n, letter) in name.chars().enumerate() {
        if n > 0 {
            at += skip(
                &rest[at..],
                |c| is_invisible(c) || c == '_' || c == '-',
                false,
            );
        }
        match rest.get(at) {
            Some(&c) if fold(c) == Some(letter) => at += 1,
            _ => return false,
        }
    }
    true
}

/// How many leading characters of `rest` a reader skips: those `skippable` says, and
/// (when `entities`) entities such as `&#47;` or `&sol;`, at most [`MAX_SKIPPED`].
fn skip(rest: &[char], skippable: impl Fn(char) -> bool, entities: bool) -> usize {
    let mut at = 0;
    while at < rest.len() && at < MAX_SKIPPED {
        if skippable(rest[at]) {
            at += 1;
        } else if let Some(n) = entities.then(|| entity_len(&rest[at..])).flatten() {
            at += n;
        } else {
            break;
        }
    }
    at
}

/// The length of the entity `rest` starts with (`&` + up to 8 letters, digits or `#`
/// + `;`), if it starts with one. `&lt` without `;` counts too (browsers read it).
fn entity_len(rest: &[char]) -> Option<usize> {
    if rest.first() != Some(&'&') {
        return None;
    }
    let body = rest[1..]
        .iter()
        .take(9)
        .take_while(|c| c.is_ascii_alphanumeric() || **c == '#')
        .count();
    match rest.get(1 + body) {
        Some(';') if body > 0 => Some(body + 2),
        _ if body >= 2
            && rest[1..3]
                .iter()
                .collect::<String>()
                .eq_ignore_ascii_case("lt") =>
        {
            Some(3)
        }
        _ => None,
    }
}

/// Whether `entity` (`&...;` or `&lt`) stands for `<`: `&lt;`, `&#60;`, `&#x3c;` in
/// any case and with leading zeros.
fn is_lt_entity(entity: &[char]) -> bool {
    let body: String = entity[1..]
        .iter()
        .take_while(|c| **c != ';')
        .collect::<String>()
        .to_ascii_lowercase();
    if body == "lt" {
        return true;
    }
    let number = match body.strip_prefix("#x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => body.strip_prefix('#').and_then(|dec| dec.parse().ok()),
    };
    number == Some(0x3C)
}

/// A slash or backslash in any width.
fn is_slash(c: char) -> bool {
    matches!(
        c,
        '/' | '\\' | '\u{FF0F}' | '\u{FF3C}' | '\u{2044}' | '\u{2215}' | '\u{29F8}'
    )
}

/// Whitespace, or a character a reader does not see (format characters: zero-width
/// spaces and joiners, bidi marks, the soft hyphen, the byte order mark).
fn is_invisible(c: char) -> bool {
    c.is_whitespace()
        || matches!(c,
            '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}'
            | '\u{17B5}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
            | '\u{FFA0}' | '\u{E0000}'..='\u{E007F}')
}

/// The lowercase ASCII letter `c` reads as: itself in any case, fullwidth and
/// mathematical letters, and the Cyrillic and Greek letters that look like the
/// Latin letters of our tag names. `None` for anything else.
fn fold(c: char) -> Option<char> {
    let ascii = |c: u32| char::from_u32(c).map(|c| c.to_ascii_lowercase());
    let code = c as u32;
    match c {
        'a'..='z' | 'A'..='Z' => Some(c.to_ascii_lowercase()),
        '\u{FF21}'..='\u{FF3A}' => ascii(code - 0xFF21 + u32::from(b'a')),
        '\u{FF41}'..='\u{FF5A}' => ascii(code - 0xFF41 + u32::from(b'a')),
        // Mathematical bold, italic, script, ... letters: 52 to a style, A-Z then a-z.
        '\u{1D400}'..='\u{1D6A3}' => ascii((code - 0x1D400) % 26 + u32::from(b'a')),
        'ѕ' | 'Ѕ' => Some('s'),
        'о' | 'О' | 'ο' | 'Ο' | 'օ' => Some('o'),
        'υ' | 'ս' | 'ц' => Some('u'),
        'г' | 'ґ' => Some('r'),
        'с' | 'С' | 'ϲ' | 'Ϲ' => Some('c'),
        'е' | 'Е' | 'ε' | 'Ε' => Some('e'),
        'һ' | 'Һ' | 'Н' | 'Η' => Some('h'),
        'і' | 'І' | 'ι' | 'Ι' | 'ı' | 'ӏ' => Some('i'),
        'т' | 'Т' | 'τ' | 'Τ' => Some('t'),
        'у' | 'У' | 'γ' | 'Υ' => Some('y'),
        'ſ' => Some('s'),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_fold_to_what_they_look_like() {
        assert_eq!(fold('Ｓ'), Some('s'));
        assert_eq!(fold('𝐬'), Some('s'));
        assert_eq!(fold('𝐒'), Some('s'));
        assert_eq!(fold('ѕ'), Some('s'));
        assert_eq!(fold('1'), None);
        assert_eq!(entity_len(&"&lt;x".chars().collect::<Vec<_>>()), Some(4));
        assert_eq!(entity_len(&"&ltx".chars().collect::<Vec<_>>()), Some(3));
        assert_eq!(entity_len(&"& b".chars().collect::<Vec<_>>()), None);
        assert!(is_lt_entity(&"&#x003C;".chars().collect::<Vec<_>>()));
        assert!(is_lt_entity(&"&#060;".chars().collect::<Vec<_>>()));
        assert!(!is_lt_entity(&"&gt;".chars().collect::<Vec<_>>()));
    }

    #[test]
    fn a_flood_of_brackets_is_linear() {
        let text = "<".repeat(200_000) + &" ".repeat(200_000) + "/source>";
        let started = std::time::Instant::now();
        let out = neutralise(&text);
        assert_eq!(out.chars().count(), text.chars().count());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
