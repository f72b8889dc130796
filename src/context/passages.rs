//! Passage splitting: source text cut into passages of whole sentences, about 40
//! words each, the unit the context stage ranks and sends.
//!
//! Small passages let the budget go to the sentences that matter rather than to the
//! paragraphs around them; whole sentences keep every passage readable and every quote
//! the model copies from it checkable, so no passage starts or stops mid-sentence. A
//! short block such as a speaker label ("Trevor Hughes:") is packed with the text after
//! it instead of standing alone. Where sentences end is a heuristic of its own
//! ([`sentence_ends`]: abbreviations and names followed by a lowercase word end no
//! sentence), shared with [`cut_to_tokens`], which cuts a snippet (or any text) to a
//! budget at the same boundaries. Text without sentence punctuation is split at word
//! boundaries instead, so that no "sentence" can be unbounded.
//!
//! Each passage keeps its byte span in the text it was cut from, and
//! [`original_spans`] carries spans of the neutralised text back to the source's own,
//! so the context can say exactly which of a source's text it sent (the grounding
//! stage's matcher looks only there).

use super::tokens::{MAX_CHAR_TOKENS, estimate_tokens};

/// A passage grows by whole sentences until it holds this many estimated tokens
/// (about 40 English words).
pub(super) const PASSAGE_TARGET_TOKENS: u32 = 50;
/// A passage short of the target takes the next sentence only if it stays within
/// this; a single sentence may be longer (up to [`SENTENCE_MAX_TOKENS`]).
pub(super) const PASSAGE_MAX_TOKENS: u32 = 80;
/// A "sentence" longer than this is a run of text without sentence punctuation: it is
/// split at word boundaries into pieces of at most [`PASSAGE_MAX_TOKENS`], as it has no
/// sentences to respect. (About 240 English words, or 100 Hangul syllables: a long
/// Korean sentence stays whole.)
pub(super) const SENTENCE_MAX_TOKENS: u32 = 4 * PASSAGE_MAX_TOKENS;

/// A line this short (in estimated tokens) that ends no sentence leads into the text
/// after it, and travels with it into one passage however long that text's first
/// sentence is: a dateline ("Washington CNN —"), a byline, a speaker label ("Trevor
/// Hughes:"). Alone, such a line was a passage of its own, and as a page's first it
/// took the lead's boost (rtqa-dev: 28 % of news pages begin with one).
pub(super) const LEAD_IN_MAX_TOKENS: u32 = 10;

/// One passage of a source: whole sentences, one block per line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Passage {
    /// The text, blocks separated by line breaks.
    pub(super) text: String,
    /// Its estimated tokens.
    pub(super) tokens: u32,
    /// Where it lies in the text it was cut from: the byte range from its first
    /// sentence's start to its last sentence's end (lines between included).
    pub(super) span: std::ops::Range<usize>,
}

/// Splits extracted text (one block per line) into passages of whole sentences, in
/// reading order: sentences are packed together, across blocks, until a passage holds
/// [`PASSAGE_TARGET_TOKENS`]; it takes a sentence that would carry it past
/// [`PASSAGE_MAX_TOKENS`] only when it holds nothing yet.
pub(super) fn split_passages(text: &str) -> Vec<Passage> {
    let sentences = sentences(text);

    let mut out = Vec::new();
    let mut group: Vec<(usize, usize, usize)> = Vec::new();
    let mut group_tokens = 0u32;
    let flush = |group: &mut Vec<(usize, usize, usize)>, out: &mut Vec<Passage>| {
        if group.is_empty() {
            return;
        }
        // Sentences of one line keep the text between them; lines are joined by `\n`.
        let mut passage = String::new();
        let mut line_start = group[0].0;
        for (k, &(_, end, line)) in group.iter().enumerate() {
            let last_of_line = group.get(k + 1).is_none_or(|next| next.2 != line);
            if last_of_line {
                if !passage.is_empty() {
                    passage.push('\n');
                }
                passage.push_str(&text[line_start..end]);
                if let Some(next) = group.get(k + 1) {
                    line_start = next.0;
                }
            }
        }
        out.push(Passage {
            tokens: estimate_tokens(&passage),
            text: passage,
            span: group[0].0..group[group.len() - 1].1,
        });
        group.clear();
    };
    // Whether the group so far is only short lines that lead into what follows.
    let mut lead_in = false;
    for (k, &(start, end, line, tokens)) in sentences.iter().enumerate() {
        let overflows = group_tokens + 1 + tokens > PASSAGE_MAX_TOKENS && !lead_in;
        if !group.is_empty() && (group_tokens >= PASSAGE_TARGET_TOKENS || overflows) {
            flush(&mut group, &mut out);
            group_tokens = 0;
        }
        // The only sentence of its line: neither neighbour shares its line number.
        let line_of = |k: usize| sentences.get(k).map(|s| s.2);
        let whole_line =
            k.checked_sub(1).and_then(line_of) != Some(line) && line_of(k + 1) != Some(line);
        lead_in = (group.is_empty() || lead_in)
            && whole_line
            && group_tokens + tokens <= LEAD_IN_MAX_TOKENS
            && !text[start..end].ends_with(['.', '!', '?']);
        // A sentence joined to the one before costs a space or a line break more.
        group_tokens += tokens + u32::from(!group.is_empty());
        group.push((start, end, line));
    }
    flush(&mut group, &mut out);
    out
}

/// The sentences of `text` (one block per line) in reading order, as byte ranges of
/// `text`, trimmed: the units passages are packed from, cut where [`split_passages`]
/// cuts. The grounding stage matches statements against these same sentences, so a
/// "sentence" means one thing from the prompt to the check.
pub fn sentence_spans(text: &str) -> Vec<std::ops::Range<usize>> {
    sentences(text)
        .into_iter()
        .map(|(s, e, _, _)| s..e)
        .collect()
}

/// Each sentence of `text` as (byte start, byte end, line number, estimated tokens).
/// A "sentence" longer than [`SENTENCE_MAX_TOKENS`] is split at word boundaries.
fn sentences(text: &str) -> Vec<(usize, usize, usize, u32)> {
    let mut sentences = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let mut last = 0usize;
        for end in sentence_ends(line) {
            let piece = line[last..end].trim();
            last = end;
            if piece.is_empty() {
                continue;
            }
            let tokens = estimate_tokens(piece);
            if tokens <= SENTENCE_MAX_TOKENS {
                let start = offset_in(text, piece);
                sentences.push((start, start + piece.len(), n, tokens));
            } else {
                let mut pieces = Vec::new();
                split_at_spaces(piece, &mut pieces);
                for (piece, tokens) in pieces {
                    let start = offset_in(text, piece);
                    sentences.push((start, start + piece.len(), n, tokens));
                }
            }
        }
    }
    sentences
}

/// Byte offset of `part`, a slice of `text`, in `text`.
fn offset_in(text: &str, part: &str) -> usize {
    part.as_ptr() as usize - text.as_ptr() as usize
}

/// Splits text with no usable sentence ends into pieces of at most
/// [`PASSAGE_MAX_TOKENS`], at whitespace (or anywhere, when there is none). Linear:
/// a piece grows by words, each estimated alone (which errs high).
fn split_at_spaces<'a>(text: &'a str, out: &mut Vec<(&'a str, u32)>) {
    let mut start = 0usize;
    let mut end = 0usize;
    let mut tokens = 0u32;
    let push = |from: usize, to: usize, out: &mut Vec<(&'a str, u32)>| {
        let piece = text[from..to].trim();
        if !piece.is_empty() {
            out.push((piece, estimate_tokens(piece)));
        }
    };
    for (i, word) in words_with_offsets(text) {
        let cost = estimate_tokens(word);
        if cost > PASSAGE_MAX_TOKENS {
            // One enormous "word": cut it by characters at the costliest rate.
            push(start, i, out);
            let per_piece = (f64::from(PASSAGE_MAX_TOKENS) / MAX_CHAR_TOKENS) as usize;
            let mut from = i;
            for (n, (at, _)) in word.char_indices().enumerate() {
                if n > 0 && n % per_piece == 0 {
                    push(from, i + at, out);
                    from = i + at;
                }
            }
            push(from, i + word.len(), out);
            start = i + word.len();
            end = start;
            tokens = 0;
            continue;
        }
        if tokens + cost > PASSAGE_MAX_TOKENS && end > start {
            push(start, end, out);
            start = i;
            tokens = 0;
        }
        tokens += cost;
        end = i + word.len();
    }
    push(start, text.len(), out);
}

/// Whitespace-separated words of `text` with their byte offsets.
fn words_with_offsets(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace()
        .map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// The longest prefix of `text` that ends at a sentence boundary and fits `tokens`.
/// When not even the first sentence fits, the prefix ends at a word boundary
/// instead (a page may have no sentence punctuation at all).
pub fn cut_to_tokens(text: &str, tokens: u32) -> &str {
    let mut best = 0usize;
    for end in sentence_ends(text) {
        if estimate_tokens(&text[..end]) > tokens {
            break;
        }
        best = end;
    }
    if best == 0 {
        let mut last_word = 0usize;
        for (i, c) in text.char_indices() {
            if c.is_whitespace() {
                if estimate_tokens(&text[..i]) > tokens {
                    break;
                }
                last_word = i;
            }
        }
        best = last_word;
    }
    text[..best].trim_end()
}

/// The longest prefix of `text` that fits `tokens` and ends at a word boundary (all of
/// it when it fits): a snippet is cut where its words run out of room, not back to its
/// last full sentence, which lost half of a typical snippet's words.
pub fn cut_at_word(text: &str, tokens: u32) -> &str {
    let text = text.trim_end();
    if estimate_tokens(text) <= tokens {
        return text;
    }
    // The ends of words, in order; the estimate grows with the prefix, so the last
    // end that fits is found by halving.
    let ends: Vec<usize> = words_with_offsets(text).map(|(i, w)| i + w.len()).collect();
    let fits = ends.partition_point(|&end| estimate_tokens(&text[..end]) <= tokens);
    match fits {
        0 => "",
        n => &text[..ends[n - 1]],
    }
}

/// Byte offsets just past each sentence: after `.`, `!`, `?` (and their CJK forms)
/// followed by whitespace or the end, and at every line break (blocks are lines).
/// A `.`, `!` or `?` followed on the same line by a lowercase word ends no sentence:
/// it is an abbreviation ("1 tsp. butter", "e.g. this") or a name ("Yahoo! said").
pub(super) fn sentence_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    let mut chars = text.char_indices().peekable();
    std::iter::from_fn(move || {
        while let Some((i, c)) = chars.next() {
            let end = i + c.len_utf8();
            match c {
                '\n' => return Some(i),
                '。' | '！' | '？' => return Some(end),
                '.' | '!' | '?' => match chars.peek() {
                    None => return Some(end),
                    Some((_, next)) if next.is_whitespace() => {
                        let lowercase_next = text[end..]
                            .chars()
                            .find(|c| *c != ' ' && *c != '\t')
                            .is_some_and(char::is_lowercase);
                        if !lowercase_next {
                            return Some(end);
                        }
                    }
                    _ => {}
                },
                _ => {}
            }
        }
        None
    })
    .chain(std::iter::once(text.len()))
    .filter(|&e| e > 0)
}

/// `spans` of `neutralised` (the output of `neutralise` for `original`, in order)
/// as byte ranges of `original`. Neutralising replaces characters one for one, so a
/// character's position carries over; only byte offsets move, and only when some `<`
/// was replaced, so the common case costs nothing and the other one walk.
pub(super) fn original_spans(
    original: &str,
    neutralised: &str,
    spans: Vec<std::ops::Range<usize>>,
) -> Vec<std::ops::Range<usize>> {
    if original.len() == neutralised.len() {
        return spans;
    }
    let mut wanted: Vec<usize> = spans.iter().flat_map(|s| [s.start, s.end]).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let mut map = std::collections::HashMap::with_capacity(wanted.len());
    let mut next = wanted.iter().peekable();
    let mut originals = original
        .char_indices()
        .map(|(i, _)| i)
        .chain([original.len()]);
    let positions = neutralised
        .char_indices()
        .map(|(i, _)| i)
        .chain([neutralised.len()]);
    for at in positions {
        let here = originals.next().unwrap_or(original.len());
        while next.peek().is_some_and(|&&w| w == at) {
            map.insert(at, here);
            next.next();
        }
    }
    spans
        .into_iter()
        .map(|s| {
            let at = |offset: usize| map.get(&offset).copied().unwrap_or(original.len());
            at(s.start)..at(s.end)
        })
        .collect()
}

/// Bytes of the first `chars` characters of `text` (all of it when shorter).
pub(super) fn byte_len_of_chars(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tests::page;

    #[test]
    fn cuts_only_at_sentence_ends() {
        let text = "First sentence here. Second sentence is longer than the first. Third.";
        let cut = cut_to_tokens(text, 12);
        assert_eq!(cut, "First sentence here.");
        assert_eq!(cut_to_tokens(text, 1000), text);
        let abbreviated = "Mix 1 tsp. butter with 8 oz. water. Serve it warm!";
        assert_eq!(sentence_ends(abbreviated).next(), Some(35));
        assert_eq!(
            cut_to_tokens("no punctuation at all in this long line", 4),
            "no punctuation at"
        );
    }

    #[test]
    fn cut_at_word_keeps_every_word_that_fits() {
        let text = "First sentence here. Second sentence is longer than the first. Third.";
        assert_eq!(cut_at_word(text, 1000), text);
        let cut = cut_at_word(text, 12);
        assert!(cut.starts_with("First sentence here. Second"), "{cut:?}");
        assert!(text.starts_with(cut) && estimate_tokens(cut) <= 12);
        let next = &text[cut.len()..];
        assert!(next.starts_with(' '), "cut mid-word: {cut:?}");
        assert!(estimate_tokens(&text[..cut.len() + next[1..].find(' ').unwrap() + 1]) > 12);
        assert_eq!(cut_at_word("Supercalifragilistic", 1), "");
        assert_eq!(cut_at_word("", 5), "");
    }

    #[test]
    fn a_label_travels_with_what_follows() {
        let text = "Trevor Hughes:\nWe saw the fire from the ridge. It was moving fast.\n\
                    Anna Lee:\nThe road was closed by noon.";
        let passages = split_passages(text);
        assert_eq!(passages.len(), 1, "{passages:?}");
        assert_eq!(passages[0].text, text);
    }

    #[test]
    fn a_dateline_leads_into_a_long_first_sentence() {
        // The first sentence alone fills a passage: the dateline still goes with it,
        // not into a passage of its own (which took the page lead's boost).
        let first = format!(
            "Kevin McCarthy on Tuesday demanded the resignation of the secretary and warned of {} as he scrambles for votes.",
            "impeachment proceedings and more words ".repeat(7)
        );
        assert!(estimate_tokens(&first) + 4 > PASSAGE_MAX_TOKENS);
        let text = format!("Washington CNN —\n{first}\nA second paragraph follows here.");
        let passages = split_passages(&text);
        assert_eq!(passages[0].text, format!("Washington CNN —\n{first}"));
        assert_eq!(passages[0].span, 0..passages[0].text.len());
        // A short line that ends a sentence says something itself: the rules as ever.
        let text = format!("It rained.\n{first}");
        assert_eq!(split_passages(&text)[0].text, "It rained.");
        // Short lines lead in only up to a few words, so a list of them is no lead-in.
        let menu = format!("Home\nNews\nSport\nWeather\nTravel\nCulture\n{first}");
        let passages = split_passages(&menu);
        assert!(!passages[0].text.contains("McCarthy"), "{passages:?}");
    }

    #[test]
    fn passages_are_about_forty_words_of_whole_sentences() {
        let text = page(1, 99, "")
            .repeat(20)
            .replace("happened that day.", "happened that day. ")
            .replace('\n', " ");
        let passages = split_passages(&text);
        assert!(passages.len() > 10, "{}", passages.len());
        for p in &passages {
            let words = p.text.split_whitespace().count();
            assert!((25..=60).contains(&words), "{words}: {}", p.text);
            assert!(p.tokens <= PASSAGE_MAX_TOKENS, "{}", p.tokens);
            assert!(
                p.text.ends_with('.') && text.contains(&p.text),
                "{}",
                p.text
            );
        }
    }

    #[test]
    fn passages_merge_short_blocks_and_split_long_ones() {
        let items = (0..12)
            .map(|i| format!("Item {i} of the list."))
            .collect::<Vec<_>>()
            .join("\n");
        let merged = split_passages(&items);
        assert!(merged.len() < 12 && merged.len() > 1, "{merged:?}");
        assert_eq!(
            merged
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            items
        );
        let long = "A sentence of some eight words, more or less. ".repeat(100);
        let split = split_passages(&long);
        assert!(split.len() > 3, "{}", split.len());
        for p in &split {
            assert!(p.tokens <= PASSAGE_MAX_TOKENS, "{}", p.tokens);
            assert!(p.text.ends_with("less."), "{:?}", p.text);
        }
        // No sentence punctuation at all: split at spaces, still bounded.
        let run_on = "word ".repeat(3000);
        let pieces = split_passages(&run_on);
        assert!(
            pieces
                .iter()
                .all(|p| p.tokens <= PASSAGE_MAX_TOKENS && p.text.ends_with("word"))
        );
        assert_eq!(
            pieces.iter().map(|p| p.text.len() + 1).sum::<usize>(),
            run_on.len()
        );
    }
}
