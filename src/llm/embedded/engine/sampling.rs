//! Choosing each token of a reply: greedy, checked against the answer's JSON grammar
//! the cheap way (the best token first, the whole vocabulary only when the grammar
//! refuses it), and the token pieces joined into whole UTF-8 characters.

use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;

use super::Model;
use super::native::take_errors;
use crate::error::Error;

/// The grammar sampler for `schema`.
pub(super) fn grammar_sampler(
    model: &Model,
    schema: &serde_json::Value,
) -> Result<LlamaSampler, Error> {
    let grammar = llama_cpp_2::json_schema_to_grammar(&schema.to_string()).map_err(|e| {
        Error::ModelEngine {
            message: format!("cannot turn the answer schema into a grammar: {e}"),
        }
    })?;
    LlamaSampler::grammar(model.llama, &grammar, "root").map_err(|e| Error::ModelEngine {
        message: format!(
            "llama.cpp refused the answer grammar: {e}{}",
            take_errors().map(|l| format!(" ({l})")).unwrap_or_default()
        ),
    })
}

/// The index of the highest score, as a token.
pub(super) fn argmax(logits: &[f32]) -> Option<LlamaToken> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &l) in logits.iter().enumerate() {
        if l.is_finite() && best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.and_then(|(i, _)| i32::try_from(i).ok())
        .map(LlamaToken::new)
}

/// The greedy token the grammar allows: the most likely one when the grammar accepts
/// it (one check), else the most likely of those the grammar leaves.
pub(super) fn pick_with_grammar(logits: &[f32], grammar: &mut LlamaSampler) -> Option<LlamaToken> {
    let best = argmax(logits)?;
    let index = usize::try_from(best.0).ok()?;
    let mut one =
        LlamaTokenDataArray::new(vec![LlamaTokenData::new(best, logits[index], 0.0)], false);
    one.apply_sampler(grammar);
    if one.data.first().is_some_and(|d| d.logit().is_finite()) {
        return Some(best);
    }
    let mut all = LlamaTokenDataArray::from_iter(
        (0i32..)
            .zip(logits)
            .map(|(i, &l)| LlamaTokenData::new(LlamaToken::new(i), l, 0.0)),
        false,
    );
    all.apply_sampler(grammar);
    all.data
        .iter()
        .filter(|d| d.logit().is_finite())
        .max_by(|a, b| a.logit().total_cmp(&b.logit()))
        .map(|d| d.id())
}

/// Token pieces to text: a character split across two tokens waits for its second
/// half; bytes that can never be UTF-8 become U+FFFD.
#[derive(Debug, Default)]
pub(super) struct Utf8Pieces {
    pending: Vec<u8>,
}

impl Utf8Pieces {
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(&String::from_utf8_lossy(&self.pending[..valid]));
                    match e.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                    }
                }
            }
        }
    }

    pub(super) fn finish(&mut self) -> String {
        let rest = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_split_characters() {
        let mut u = Utf8Pieces::default();
        let e = "é".as_bytes();
        assert_eq!(u.push(&e[..1]), "");
        assert_eq!(u.push(&e[1..]), "é");
        assert_eq!(u.push(b"a\xffb"), "a\u{fffd}b");
        assert_eq!(u.push(&"€".as_bytes()[..2]), "");
        assert_eq!(u.finish(), "\u{fffd}");
    }

    #[test]
    fn argmax_skips_what_is_not_a_score() {
        assert_eq!(
            argmax(&[0.0, f32::NAN, 3.0, f32::INFINITY, 2.0]),
            Some(LlamaToken::new(2))
        );
        assert_eq!(argmax(&[f32::NEG_INFINITY]), None);
    }
}
