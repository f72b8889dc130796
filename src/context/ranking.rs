//! The pages cut into passages and scored against the question: what the selection in
//! the parent module works from ([`Ranking`]), and the same shown passage by passage
//! for measurement ([`ranked_passages`]: a tool that replays the selection with another
//! ranker starts from it, `examples/context_probe.rs window --rank`).

use serde::Serialize;

use super::blocks::{CLOSE, header};
use super::bm25::{bm25_scores, rank_keys, terms};
use super::neutral::neutralise;
use super::passages::{Passage, split_passages};
use super::tokens::Counts;
use super::{SourceKind, SourceText};

/// The sources cut into passages and scored against the question: what the selection
/// in `build_pages` works from, and what [`ranked_passages`] shows.
pub(super) struct Ranking {
    /// Per source: its block's header.
    pub(super) headers: Vec<String>,
    /// Per source: its text with our delimiters neutralised.
    pub(super) neutralised: Vec<String>,
    /// Per source: its passages, in reading order.
    pub(super) passages: Vec<Vec<Passage>>,
    /// Per source: what its header and closing tag cost, paid with its first passage.
    pub(super) frames: Vec<Counts>,
    /// Per source, per passage: what it costs in the block.
    pub(super) costs: Vec<Vec<Counts>>,
    /// Per source, per passage: its BM25 score (`rank_keys` makes the keys).
    pub(super) scores: Vec<Vec<f64>>,
}

impl Ranking {
    pub(super) fn of(
        sources: &[SourceText],
        question: &str,
        weak: &[String],
        compact: bool,
    ) -> Ranking {
        let headers: Vec<String> = sources
            .iter()
            .map(|s| header(s, SourceKind::Page, compact))
            .collect();
        let frames = headers
            .iter()
            .map(|h| Counts::of(h).plus(&Counts::of(CLOSE), 1.0))
            .collect();
        let neutralised: Vec<String> = sources.iter().map(|s| neutralise(&s.text)).collect();
        let passages: Vec<Vec<Passage>> = neutralised.iter().map(|t| split_passages(t)).collect();
        let costs = passages
            .iter()
            .map(|ps| ps.iter().map(|p| Counts::of_line(&p.text)).collect())
            .collect();
        let titles: Vec<Vec<String>> = sources.iter().map(|s| terms(&s.title)).collect();
        let scores = bm25_scores(question, weak, &titles, &passages);
        Ranking {
            headers,
            frames,
            neutralised,
            passages,
            costs,
            scores,
        }
    }
}

/// A passage as the ranking sees it, for measurement: a tool that replays the selection
/// with another ranker (`examples/context_probe.rs window --rank`) starts from these.
#[derive(Debug, Clone, Serialize)]
pub struct RankedPassage {
    /// Index of its source among the pages given.
    pub source: usize,
    /// Its place among its source's passages.
    pub index: usize,
    /// What the selection ranks it by (BM25 with the lead and neighbour rules); zero:
    /// never sent.
    pub key: f64,
    /// What it costs in the block, in estimated tokens (its line included).
    pub tokens: u32,
    /// Its text, as sent.
    pub text: String,
}

/// Every passage of the pages `sources`, in source then reading order, with the key
/// the context stage ranks it by for `question` (with the `weak` terms, see
/// `bm25::recurring_terms`), and per source what its header and closing tag cost
/// (`compact`: the small windows' headers). Measurement only: the build itself never
/// needs the list.
pub fn ranked_passages(
    sources: &[SourceText],
    question: &str,
    weak: &[String],
    compact: bool,
) -> (Vec<RankedPassage>, Vec<u32>) {
    let ranking = Ranking::of(sources, question, weak, compact);
    let keys = rank_keys(&ranking.scores);
    let mut out = Vec::new();
    for (source, passages) in ranking.passages.iter().enumerate() {
        for (index, passage) in passages.iter().enumerate() {
            out.push(RankedPassage {
                source,
                index,
                key: keys[source][index],
                tokens: ranking.costs[source][index].tokens(),
                text: passage.text.clone(),
            });
        }
    }
    let frames = ranking.frames.iter().map(Counts::tokens).collect();
    (out, frames)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::build_for_question;
    use crate::context::tests::{page, src};

    #[test]
    fn the_ranking_shown_is_the_one_the_build_uses() {
        let sources = [
            src(
                1,
                &page(
                    12,
                    7,
                    "Tardigrades survived ten days in open space in 2007.",
                ),
            ),
            src(2, &page(8, 2, "The water bear, or tardigrade, is tiny.")),
        ];
        let question = "How long did tardigrades survive in space?";
        let (ranked, frames) = ranked_passages(&sources, question, &[], false);
        assert_eq!(frames.len(), 2);
        assert!(frames.iter().all(|&f| f > 5), "{frames:?}");
        // Every passage, in source then reading order.
        let order: Vec<(usize, usize)> = ranked.iter().map(|p| (p.source, p.index)).collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        // The best-keyed passage is the answer, and the build sends it.
        let best = ranked
            .iter()
            .max_by(|a, b| a.key.total_cmp(&b.key))
            .unwrap();
        assert!(
            best.text.contains("ten days in open space"),
            "{}",
            best.text
        );
        let ctx = build_for_question(&sources, question, 150);
        assert!(ctx.text.contains(&best.text), "{}", ctx.text);
        // A passage keyed zero is never sent: no page sends more than it has keyed.
        for cut in &ctx.sources {
            let keyed = ranked
                .iter()
                .filter(|p| p.source + 1 == cut.number && p.key > 0.0)
                .count();
            assert!(cut.passages_sent <= keyed, "{cut:?}");
        }
        assert!(ranked.iter().any(|p| p.key == 0.0));
    }
}
