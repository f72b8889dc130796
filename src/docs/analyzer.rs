//! How titles and passages are cut into terms: Lucene's English analysis (what its
//! `EnglishAnalyzer` does), with each analyzer remembering the words it has seen.
//!
//! Words are runs of letters and digits; a word over 40 bytes is dropped; words are
//! lower-cased; Lucene's 33 English stop words ("the", "of", "and", ...) are dropped;
//! the rest go through Snowball's English stemmer.
//!
//! - **Stop words**: about a third of the words of English prose, and BM25 gives
//!   them almost no weight (they are in nearly every passage), so leaving them out
//!   makes indexing that much faster and the index smaller. A phrase still matches:
//!   the words kept keep their positions.
//! - **Remembered words**: stemming was a quarter of `ground index add`'s CPU time,
//!   and prose repeats its words (a few thousand make most of a text), so nearly
//!   every word after the first pages is one already stemmed. Each analyzer keeps a
//!   table of the words met (a stop word, a word that is its own stem, or its
//!   stem), each slot holding the word and its stem inline. A word hashes to a set
//!   of two slots, one cache line: the one used last and the one before. So a word
//!   costs one line read, with no pointer to follow and nothing allocated, and a
//!   word pushed out of its set by others is simply stemmed again when it comes back
//!   (about 8 % of the words of a 50 MB corpus of 60,000 distinct words). (A hash map of the words met,
//!   tried first, spent most of what it saved following pointers to its keys.) An
//!   analyzer is cloned per indexing thread, so nothing is shared or locked. The
//!   terms are exactly those of the same chain without the table (a test holds them
//!   equal), so queries and documents are cut alike.
//!
//! A collection written before this analyzer existed names tantivy's own `en_stem`
//! in its schema, and is read and updated with that one.

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream,
    Tokenizer,
};

/// The analyzer's name in a collection's schema.
pub(crate) const NAME: &str = "english";

/// Longest word kept, in bytes (as tantivy's `en_stem`).
const MAX_WORD_BYTES: usize = 40;

/// Sets of two slots in an analyzer's table of words met (a power of two): 65,536
/// slots of 32 bytes, 2 MiB, touched only as words fill it.
const SETS: usize = 1 << 15;

/// Longest word (and stem) a slot holds, in bytes; longer words (rare in prose) are
/// stemmed each time.
const SLOT_BYTES: usize = 15;

/// Lucene's English stop words (`EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`).
const STOP_WORDS: [&str; 33] = [
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// The analyzer every new collection's title and body use ([`NAME`]).
pub(crate) fn english() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
        .filter(LowerCaser)
        .filter(EnglishWords)
        .build()
}

/// What a slot says of its word, in [`Slot::stem_len`] beside a stem's length.
const STOP: u8 = u8::MAX;
/// The word is its own stem.
const SAME: u8 = u8::MAX - 1;

/// One word met and what becomes of it, inline.
#[derive(Clone, Copy)]
#[repr(C)]
struct Slot {
    /// The word's length; 0 for an empty slot.
    word_len: u8,
    /// [`STOP`], [`SAME`], or the stem's length.
    stem_len: u8,
    word: [u8; SLOT_BYTES],
    stem: [u8; SLOT_BYTES],
}

const EMPTY: Slot = Slot {
    word_len: 0,
    stem_len: 0,
    word: [0; SLOT_BYTES],
    stem: [0; SLOT_BYTES],
};

/// Whether `word` (lower-cased) is one of Lucene's English stop words.
fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&word)
}

/// The set of `word` in a table of [`SETS`].
fn set_of(word: &[u8]) -> usize {
    use std::hash::BuildHasher;
    let hash = rustc_hash::FxBuildHasher.hash_one(word);
    ((hash ^ (hash >> 29)) as usize) & (SETS - 1)
}

impl Slot {
    /// Whether this slot holds `word`.
    fn holds(&self, word: &[u8]) -> bool {
        usize::from(self.word_len) == word.len() && self.word[..word.len()] == *word
    }
}

/// Drops stop words and stems the rest, remembering what it did for each word.
#[derive(Clone, Copy)]
struct EnglishWords;

impl TokenFilter for EnglishWords {
    type Tokenizer<T: Tokenizer> = EnglishWordsFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> EnglishWordsFilter<T> {
        EnglishWordsFilter {
            inner: tokenizer,
            slots: vec![[EMPTY; 2]; SETS].into_boxed_slice(),
        }
    }
}

/// The filter as it runs: the tokenizer before it and the words met so far.
#[derive(Clone)]
struct EnglishWordsFilter<T> {
    inner: T,
    slots: Box<[[Slot; 2]]>,
}

impl<T: Tokenizer> Tokenizer for EnglishWordsFilter<T> {
    type TokenStream<'a> = EnglishWordsStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        EnglishWordsStream {
            tail: self.inner.token_stream(text),
            slots: &mut self.slots,
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        }
    }
}

/// One text's words, stop words dropped and the rest stemmed.
struct EnglishWordsStream<'a, T> {
    tail: T,
    slots: &'a mut [[Slot; 2]],
    stemmer: frostem::Stemmer,
}

impl<T: TokenStream> TokenStream for EnglishWordsStream<'_, T> {
    fn advance(&mut self) -> bool {
        while self.tail.advance() {
            let token = self.tail.token_mut();
            let word = token.text.as_bytes();
            if word.is_empty() || word.len() > SLOT_BYTES {
                if is_stop_word(&token.text) {
                    continue;
                }
                let stem = self.stemmer.stem(&token.text).into_owned();
                token.text = stem;
                return true;
            }
            // The word's set: the slot used last first; a hit on the other makes it
            // the one used last; a miss pushes the older out.
            let set = &mut self.slots[set_of(word)];
            if !set[0].holds(word) {
                if set[1].holds(word) {
                    set.swap(0, 1);
                } else {
                    match remember(&self.stemmer, &token.text) {
                        Some(fresh) => *set = [fresh, set[0]],
                        None => {
                            token.text = self.stemmer.stem(&token.text).into_owned();
                            return true;
                        }
                    }
                }
            }
            let slot = &set[0];
            match slot.stem_len {
                STOP => continue,
                SAME => return true,
                len => {
                    let stem = std::str::from_utf8(&slot.stem[..usize::from(len)]);
                    match stem {
                        Ok(stem) => {
                            token.text.clear();
                            token.text.push_str(stem);
                        }
                        // Never: a stem is cut from a str at its own length.
                        Err(_) => token.text = self.stemmer.stem(&token.text).into_owned(),
                    }
                    return true;
                }
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

/// The slot of `word` (at most [`SLOT_BYTES`]): a stop word, its own stem, or its
/// stem; `None` when its stem would not fit a slot (an English stem is never longer
/// than its word, but nothing here depends on that).
fn remember(stemmer: &frostem::Stemmer, word: &str) -> Option<Slot> {
    let mut slot = EMPTY;
    slot.word_len = word.len() as u8;
    slot.word[..word.len()].copy_from_slice(word.as_bytes());
    if is_stop_word(word) {
        slot.stem_len = STOP;
        return Some(slot);
    }
    let stem = stemmer.stem(word);
    if stem == word {
        slot.stem_len = SAME;
    } else if stem.len() <= SLOT_BYTES {
        slot.stem_len = stem.len() as u8;
        slot.stem[..stem.len()].copy_from_slice(stem.as_bytes());
    } else {
        return None;
    }
    Some(slot)
}

/// Lucene's English stop words as tantivy lists them (for the test that holds the
/// two lists equal).
#[cfg(test)]
fn tantivys_stop_words() -> tantivy::tokenizer::StopWordFilter {
    tantivy::tokenizer::StopWordFilter::new(tantivy::tokenizer::Language::English)
        .expect("English stop words")
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{Language, Stemmer};

    use super::*;

    /// Every token (text, offsets, position) of `text` under `analyzer`.
    fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize, usize, usize)> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            out.push((t.text.clone(), t.offset_from, t.offset_to, t.position));
        }
        out
    }

    /// The same chain built from tantivy's own filters, nothing remembered.
    fn tantivys_chain() -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(MAX_WORD_BYTES))
            .filter(LowerCaser)
            .filter(tantivys_stop_words())
            .filter(Stemmer::new(Language::English))
            .build()
    }

    #[test]
    fn the_terms_are_those_of_tantivys_own_filters_however_often_a_word_comes() {
        let mut ours = english();
        let mut theirs = tantivys_chain();
        let texts = [
            "The lighthouse was first lit in 1871; its lamps burned whale oil.",
            "Running runners ran RUNNING, generously and generalization's connections",
            "Ünïcödé wörds, CamelCase, snake_case and a-very-long-token-that-goes-on-and-on-and-on-for-ever",
            "",
            "relational conditional rational valency hopefulness",
            "THE The the tHe: of OF; and AND, this This is IS it",
            // 39, 40 and 41 bytes: only the first is kept.
            "abcdefghijklmnopqrstuvwxyzabcdefghijklm abcdefghijklmnopqrstuvwxyzabcdefghijklmn abcdefghijklmnopqrstuvwxyzabcdefghijklmno",
            "ÀÉÎÕÜ äöüß straße STRASSE İstanbul ΣΟΦΊΑ σοφία 東京タワー 2026年 e\u{301}te café café",
            "  ,,; trailing.  ",
            "sixteen-letters: abcdefghijklmnop ABCDEFGHIJKLMNOPQ généralisations",
            "The lighthouse was first lit in 1871; its lamps burned whale oil.",
            "Running runners ran RUNNING, generously and generalization's connections",
        ];
        // Twice over: the second pass reads every word from the table.
        for _ in 0..2 {
            for text in texts {
                assert_eq!(
                    tokens(&mut ours, text),
                    tokens(&mut theirs, text),
                    "{text:?}"
                );
            }
        }
        let words = tokens(&mut ours, "the runners of the lighthouse");
        assert_eq!(
            words,
            vec![("runner".into(), 4, 11, 1), ("lighthous".into(), 19, 29, 4)],
            "stop words gone, positions kept"
        );
    }

    #[test]
    fn the_stop_words_are_lucenes_as_tantivy_lists_them() {
        let mut ours = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(EnglishWords)
            .build();
        let mut theirs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(tantivys_stop_words())
            .build();
        let all = STOP_WORDS.join(" ") + " them those what lighthouse";
        assert_eq!(tokens(&mut ours, &all).len(), 4);
        assert_eq!(
            tokens(&mut ours, &all).len(),
            tokens(&mut theirs, &all).len()
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 128,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// Words of every kind (ASCII, accented, upper-case letters whose lower case
        /// is longer, Greek sigmas, CJK, combining marks), with punctuation between.
        #[test]
        fn any_text_gets_the_terms_of_tantivys_chain(
            text in "([a-zA-Z0-9]{1,12}|[ ,.;:'()\\-]|[àéÎÕÜßİΣσς東京\u{301}]{1,3}|[A-Z]{1,20}){0,40}"
        ) {
            let mut ours = english();
            let mut theirs = tantivys_chain();
            // Twice: the second time from the table.
            proptest::prop_assert_eq!(tokens(&mut ours, &text), tokens(&mut theirs, &text));
            proptest::prop_assert_eq!(tokens(&mut ours, &text), tokens(&mut theirs, &text));
        }
    }

    #[test]
    fn words_that_share_a_slot_and_long_words_are_stemmed_alike() {
        let mut ours = english();
        let mut theirs = tantivys_chain();
        // Four times the slots: most slots are taken over and over.
        let many: String = (0..SETS * 8).map(|i| format!("w{i}ings the ")).collect();
        assert_eq!(tokens(&mut ours, &many), tokens(&mut theirs, &many));
        assert_eq!(tokens(&mut ours, &many), tokens(&mut theirs, &many));
        let long = "internationalisationalising internationalizations antidisestablishmentarianism";
        assert_eq!(tokens(&mut ours, long), tokens(&mut theirs, long));
    }
}
