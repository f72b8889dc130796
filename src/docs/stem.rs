//! The index's English tokenizer, `en_stem`: tantivy's own (words split on
//! whitespace and punctuation, those over 40 bytes dropped, lower-cased, Snowball's
//! English stemmer), with each tokenizer remembering the stems it has made.
//!
//! Why: stemming was a quarter of `ground index add`'s CPU time (a profile of a
//! 50 MB corpus), and prose repeats its words (a Zipf law: a few thousand words make
//! most of a text), so nearly every word after the first pages is one already
//! stemmed. A tokenizer is cloned per indexing thread, so each clone keeps its own
//! memory and nothing is shared or locked. The tokens are exactly those of tantivy's
//! `en_stem` (a test holds them equal), so an index made by either is read by the
//! other, and queries are tokenized alike.

use std::collections::HashMap;

use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream,
    Tokenizer,
};

/// The tokenizer's name in the schema (tantivy's own name for English stemming).
pub const NAME: &str = "en_stem";

/// Longest token kept, in bytes (tantivy's `en_stem` limit).
const MAX_TOKEN_BYTES: usize = 40;

/// Most stems one tokenizer remembers; past it, it starts afresh (a bound on memory
/// for a corpus of unusual vocabulary: about 20 MiB at most).
const MAX_REMEMBERED: usize = 200_000;

/// The `en_stem` analyzer, stems remembered.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
        .filter(LowerCaser)
        .filter(RememberingStemmer)
        .build()
}

/// Snowball's English stemmer with a memory of the words it has stemmed.
#[derive(Clone, Copy)]
struct RememberingStemmer;

impl TokenFilter for RememberingStemmer {
    type Tokenizer<T: Tokenizer> = StemFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> StemFilter<T> {
        StemFilter {
            inner: tokenizer,
            stems: HashMap::new(),
        }
    }
}

/// The filter as it runs: the tokenizer before it and the stems made so far.
#[derive(Clone)]
struct StemFilter<T> {
    inner: T,
    stems: HashMap<String, String>,
}

impl<T: Tokenizer> Tokenizer for StemFilter<T> {
    type TokenStream<'a> = StemStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        if self.stems.len() > MAX_REMEMBERED {
            self.stems.clear();
        }
        StemStream {
            tail: self.inner.token_stream(text),
            stems: &mut self.stems,
            stemmer: frostem::Stemmer::new(frostem::Algorithm::English),
        }
    }
}

/// One text's tokens, each replaced by its stem.
struct StemStream<'a, T> {
    tail: T,
    stems: &'a mut HashMap<String, String>,
    stemmer: frostem::Stemmer,
}

impl<T: TokenStream> TokenStream for StemStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        let stem = match self.stems.get(&token.text) {
            Some(stem) => stem.clone(),
            None => {
                let stem = self.stemmer.stem(&token.text).into_owned();
                self.stems.insert(token.text.clone(), stem.clone());
                stem
            }
        };
        token.text.clear();
        token.text.push_str(&stem);
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::TokenizerManager;

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

    #[test]
    fn the_tokens_are_tantivys_own_en_stem_tokens() {
        let mut theirs = TokenizerManager::default()
            .get(NAME)
            .expect("tantivy's en_stem");
        let mut ours = analyzer();
        let texts = [
            "The lighthouse was first lit in 1871; its lamps burned whale oil.",
            "Running runners ran RUNNING, generously and generalization's connections",
            "Ünïcödé wörds, CamelCase, snake_case and a-very-long-token-that-goes-on-and-on-and-on-for-ever",
            "",
            "relational conditional rational valency hopefulness",
        ];
        // Twice: the second pass reads every stem from memory.
        for _ in 0..2 {
            for text in texts {
                assert_eq!(tokens(&mut ours, text), tokens(&mut theirs, text), "{text}");
            }
        }
    }
}
