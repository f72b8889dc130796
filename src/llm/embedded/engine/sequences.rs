//! The sequences one context keeps ([`super::SEQUENCES`], or more when more replies
//! are written at once), and where a reply goes among them: a pure choice ([`place`])
//! the engine applies with llama.cpp's sequence calls (cut, copy a prefix, clear),
//! kept apart so it is tested without a model. A sequence with a reply under way is
//! busy: it is never cut or given to another reply, but its prefix may be copied.

use llama_cpp_2::token::LlamaToken;

/// One sequence of a `Session`: the tokens it holds and whose they are.
#[derive(Debug, Default)]
pub(super) struct Sequence {
    /// The tokens in the cache for it, position by position (prompt, then the reply's
    /// tokens that were fed back).
    pub(super) tokens: Vec<LlamaToken>,
    /// The scope of the reply that left them ([`GenerateRequest::scope`]).
    pub(super) scope: Option<String>,
    /// The `Session::clock` of the reply that last used it (0: never).
    pub(super) used: u64,
    /// Whether a reply is being written in it.
    pub(super) busy: bool,
    /// The cells a reply under way may fill in it (its prompt and longest reply); 0
    /// when idle.
    pub(super) reserved: usize,
}

/// Where a reply goes: the sequence it is written in, and the sequence (maybe the
/// same) holding the longest prefix of its prompt, with that prefix's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Placed {
    /// The sequence the reply is read and written in.
    pub(super) target: usize,
    /// The sequence whose first `prefix` tokens are the prompt's.
    pub(super) source: usize,
    /// Tokens of the prompt found in `source` (at most the prompt's length less one:
    /// its last token is always read again, its scores start the reply).
    pub(super) prefix: usize,
}

/// Chooses where a reply to `tokens` of `scope` goes among `sequences`: the longest
/// prefix of the prompt found in a sequence of the same scope is reused. The reply
/// continues that sequence, its tail past the prefix cut, when the tail is no longer
/// than the prefix (a second question on the same sources cuts the first's question
/// and reply) and no reply is under way in it. Otherwise (an answer's sources, when
/// this is a short rewrite sharing only the instructions' opening; or a prefix another
/// reply is being written after) the reply goes to an empty or the least recently
/// used other idle sequence, the prefix copied there (a copy shares the cells, it
/// reads nothing). Continuing in place also keeps the cells in the order a cold
/// context has them, so the reply is the one a context that held nothing gives.
/// `None` when every sequence is busy. Pure: the engine applies it.
pub(super) fn place(
    sequences: &[Sequence],
    tokens: &[LlamaToken],
    scope: Option<&String>,
) -> Option<Placed> {
    let reusable = tokens.len().saturating_sub(1);
    let best = sequences
        .iter()
        .enumerate()
        .filter(|(_, s)| s.scope.as_ref() == scope)
        .map(|(i, s)| (i, shared_prefix(&s.tokens, tokens).min(reusable), s.used))
        .filter(|(_, prefix, _)| *prefix > 0)
        .max_by_key(|(_, prefix, used)| (*prefix, *used));
    let least_used_but = |keep: Option<usize>| {
        sequences
            .iter()
            .enumerate()
            .filter(|(i, s)| Some(*i) != keep && !s.busy)
            .min_by_key(|(_, s)| (!s.tokens.is_empty(), s.used))
            .map(|(i, _)| i)
    };
    match best {
        None => {
            let target = least_used_but(None)?;
            Some(Placed {
                target,
                source: target,
                prefix: 0,
            })
        }
        Some((i, prefix, _))
            if !sequences[i].busy
                && (sequences[i].tokens.len() - prefix <= prefix || sequences.len() == 1) =>
        {
            Some(Placed {
                target: i,
                source: i,
                prefix,
            })
        }
        Some((i, prefix, _)) => Some(Placed {
            target: least_used_but(Some(i))?,
            source: i,
            prefix,
        }),
    }
}

/// How many leading tokens `a` and `b` share.
pub(super) fn shared_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(tokens: &[i32], scope: Option<&str>, used: u64) -> Sequence {
        Sequence {
            tokens: tokens.iter().map(|&t| LlamaToken::new(t)).collect(),
            scope: scope.map(str::to_string),
            used,
            ..Sequence::default()
        }
    }

    fn prompt(tokens: &[i32]) -> Vec<LlamaToken> {
        tokens.iter().map(|&t| LlamaToken::new(t)).collect()
    }

    #[test]
    fn a_prompt_that_extends_a_sequence_continues_it() {
        let sequences = [held(&[1, 2, 3], None, 1), held(&[], None, 0)];
        let placed = place(&sequences, &prompt(&[1, 2, 3, 4, 5]), None).unwrap();
        assert_eq!(
            placed,
            Placed {
                target: 0,
                source: 0,
                prefix: 3
            }
        );
    }

    #[test]
    fn a_short_rewrite_leaves_the_answers_prompt_and_takes_another_sequence() {
        // Sequence 0 holds an answer's prompt (system, sources, question); the
        // follow-up's rewrite shares only the opening.
        let sequences = [
            held(&[1, 2, 10, 11, 12, 13], None, 2),
            held(&[], None, 0),
            held(&[7], None, 1),
        ];
        let placed = place(&sequences, &prompt(&[1, 2, 50, 51]), None).unwrap();
        assert_eq!(
            placed,
            Placed {
                target: 1,
                source: 0,
                prefix: 2
            },
            "an empty sequence, the opening copied"
        );
        // With no empty one, the least recently used other sequence gives way.
        let full = [
            held(&[1, 2, 10, 11, 12], None, 3),
            held(&[5], None, 1),
            held(&[6], None, 2),
        ];
        assert_eq!(place(&full, &prompt(&[1, 2, 50]), None).unwrap().target, 1);
    }

    #[test]
    fn the_longest_prefix_wins_and_nothing_shared_takes_the_least_used() {
        let sequences = [
            held(&[1, 2, 3], None, 5),
            held(&[1, 2, 3, 4, 9, 9, 9, 9, 9], None, 1),
            held(&[8, 8], None, 2),
        ];
        let placed = place(&sequences, &prompt(&[1, 2, 3, 4, 5, 6]), None).unwrap();
        assert_eq!((placed.source, placed.prefix), (1, 4));
        assert_ne!(
            placed.target, 1,
            "its tail, longer than the prefix, is kept"
        );
        // A tail no longer than the prefix (the last question and its reply) is cut.
        let short_tail = [held(&[1, 2, 3, 4, 9, 9], None, 1), held(&[], None, 0)];
        let placed = place(&short_tail, &prompt(&[1, 2, 3, 4, 5, 6]), None).unwrap();
        assert_eq!((placed.target, placed.source, placed.prefix), (0, 0, 4));
        let unrelated = place(&sequences, &prompt(&[42, 43]), None).unwrap();
        assert_eq!((unrelated.target, unrelated.prefix), (1, 0));
    }

    #[test]
    fn another_scopes_sequence_is_never_a_prefix() {
        let sequences = [held(&[1, 2, 3, 4], Some("a"), 2), held(&[], None, 0)];
        let placed = place(&sequences, &prompt(&[1, 2, 3, 4, 5]), Some(&"b".into())).unwrap();
        assert_eq!(
            placed,
            Placed {
                target: 1,
                source: 1,
                prefix: 0
            }
        );
        let own = place(&sequences, &prompt(&[1, 2, 3, 4, 5]), Some(&"a".into())).unwrap();
        assert_eq!((own.target, own.prefix), (0, 4));
    }

    #[test]
    fn the_last_prompt_token_is_always_read_again() {
        let sequences = [held(&[1, 2, 3], None, 1)];
        let placed = place(&sequences, &prompt(&[1, 2, 3]), None).unwrap();
        assert_eq!((placed.target, placed.prefix), (0, 2));
    }

    #[test]
    fn a_sequence_with_a_reply_under_way_is_copied_from_never_taken() {
        let mut writing = held(&[1, 2, 3, 4], None, 3);
        writing.busy = true;
        let sequences = [writing, held(&[9], None, 1), held(&[8], None, 2)];
        // Its prefix is copied to the least recently used idle sequence.
        let placed = place(&sequences, &prompt(&[1, 2, 3, 4, 5]), None).unwrap();
        assert_eq!(
            placed,
            Placed {
                target: 1,
                source: 0,
                prefix: 4
            }
        );
        // Nothing shared: an idle sequence, never the busy one, even if least used.
        let mut idle_first = held(&[1], None, 0);
        idle_first.busy = true;
        let others = [idle_first, held(&[7], None, 5)];
        assert_eq!(place(&others, &prompt(&[42]), None).unwrap().target, 1);
        // Every sequence busy: nowhere.
        let mut all = held(&[1], None, 0);
        all.busy = true;
        assert_eq!(place(&[all], &prompt(&[1, 2]), None), None);
    }
}
