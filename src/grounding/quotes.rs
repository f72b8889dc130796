//! The quote check: a citation counts only if its quote occurs in the cited source's
//! extracted text (or title), allowing nothing but normalisation (case, whitespace,
//! quote and dash styles, invisible characters) and `...` between fragments; and the
//! quote's *window*, the sentence or sentences of the source it lies in, which the
//! checker compares with the statement (a real quote can still be cited for a
//! statement that says something else).

use super::MatchKind;
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
/// How far (bytes of normalised text) a quote's window reaches before and after the
/// quote to find the ends of its sentences.
const MAX_WINDOW_REACH: usize = 600;

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

/// The quote's window in a source's `normalised` text (see [`normalise`]): from the
/// start of the sentence where the quote (or its first fragment) begins to the end of
/// the sentence where it (or its last fragment) ends, reaching at most
/// [`MAX_WINDOW_REACH`] bytes either way, with the span the quote itself covers
/// (first fragment to last). `None` when the quote is not there.
pub fn quote_window<'a>(quote: &str, normalised: &'a str) -> Option<QuoteWindow<'a>> {
    let wanted = normalise(quote);
    let (from, to) = match normalised.find(&wanted) {
        Some(at) => (at, at + wanted.len()),
        None => {
            let mut fragments = wanted.split("...").map(str::trim).filter(|f| !f.is_empty());
            let first = fragments.next()?;
            let start = normalised.find(first)?;
            let mut end = start + first.len();
            for fragment in fragments {
                end += normalised[end..].find(fragment)? + fragment.len();
            }
            (start, end)
        }
    };
    let mut start = floor_boundary(normalised, from.saturating_sub(MAX_WINDOW_REACH));
    if let Some(stop) = last_sentence_end(&normalised[start..from]) {
        start += stop;
    }
    let limit = floor_boundary(normalised, (to + MAX_WINDOW_REACH).min(normalised.len()));
    let end = if normalised[..to].ends_with(['.', '!', '?']) {
        to
    } else {
        first_sentence_end(&normalised[to..limit]).map_or(limit, |e| to + e)
    };
    Some(QuoteWindow {
        sentences: normalised[start..end].trim(),
        span: &normalised[from..to],
    })
}

/// Where a verified quote lies in its source's normal form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuoteWindow<'a> {
    /// The sentence or sentences the quote lies in.
    pub sentences: &'a str,
    /// What the quote covers: from its first fragment's start to its last's end.
    pub span: &'a str,
}

/// Byte offset just past the last sentence end (`. `, `! `, `? `) in `text`.
fn last_sentence_end(text: &str) -> Option<usize> {
    [". ", "! ", "? "]
        .iter()
        .filter_map(|end| text.rfind(end).map(|i| i + end.len()))
        .max()
}

/// Byte offset just past the first sentence end (`.`, `!`, `?` before a space or the
/// end) in `text`.
fn first_sentence_end(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find_map(|i| {
        let ends =
            matches!(bytes[i], b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(|b| *b == b' ');
        ends.then_some(i + 1)
    })
}

/// The greatest char boundary of `text` at or below `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_quote_window_is_the_sentences_it_lies_in() {
        let page = normalise(
            "Early lights burned coal. In 1822 Fresnel presented a lens made of rings. \
             It bends light into a beam! Most lights now use LEDs.",
        );
        assert_eq!(
            quote_window("Fresnel presented a lens", &page).map(|w| w.sentences),
            Some("in 1822 fresnel presented a lens made of rings.")
        );
        assert_eq!(
            quote_window("a lens made of rings. It bends light", &page).map(|w| w.sentences),
            Some("in 1822 fresnel presented a lens made of rings. it bends light into a beam!")
        );
        assert_eq!(
            quote_window("Fresnel presented ... into a beam", &page),
            Some(QuoteWindow {
                sentences: "in 1822 fresnel presented a lens made of rings. it bends light into a beam!",
                span: "fresnel presented a lens made of rings. it bends light into a beam",
            })
        );
        assert_eq!(
            quote_window("Most lights", &page).map(|w| w.span),
            Some("most lights")
        );
        assert_eq!(quote_window("candles", &page), None);
    }
}
