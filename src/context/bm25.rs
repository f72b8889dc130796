//! The scorer: how well each passage matches the question, by Okapi BM25 over the passages of
//! all sources of a run.
//!
//! BM25 needs no model and no index kept between runs: document frequencies are
//! counted over the passages at hand, so a term that is rare among them tells them
//! apart. Each passage is counted together with its page's title, as the title says
//! what the whole page is about: a page about the subject of the question ranks above
//! one that mentions a term in passing. Terms are lowercase words without stop words
//! and with a plural `s` dropped (a rough stem, enough to match "tardigrades" with
//! "tardigrade" without a language-specific stemmer); each CJK character is a term of
//! its own, as those scripts do not space words.
//!
//! Real news questions mostly share no word with the passage that answers them (the
//! answer sits deep in a long page, in the reporter's words, not the quiz's). Two weak
//! signals help there, each measured on rtqa-dev before it was kept:
//! - terms that recur in two or more search results' titles and snippets
//!   ([`recurring_terms`]) join the query at [`WEAK_WEIGHT`]: what the results agree
//!   the story is about;
//! - a question that asks for a number or date ("how many", "when") or a name ("who",
//!   "which country") raises, by [`CUE_BOOST`], the passages holding one.

use super::passages::Passage;
use super::tokens::{STOP_WORDS, is_cjk};

/// BM25 term-frequency saturation.
const BM25_K1: f64 = 1.2;
/// BM25 length normalisation.
const BM25_B: f64 = 0.75;

/// The terms BM25 counts: lowercase words without stop words, a plural `s` dropped;
/// each CJK character is a term of its own (those scripts do not space words).
pub(super) fn terms(text: &str) -> Vec<String> {
    fn finish(word: &mut String, out: &mut Vec<String>) {
        if word.is_empty() {
            return;
        }
        let w = std::mem::take(word);
        let single_letter = w.len() == 1 && w.as_bytes()[0].is_ascii_alphabetic();
        if single_letter || STOP_WORDS.binary_search(&w.as_str()).is_ok() {
            return;
        }
        out.push(stem(w));
    }
    let mut out = Vec::new();
    let mut word = String::new();
    for c in text.chars() {
        if is_cjk(c) {
            finish(&mut word, &mut out);
            out.push(c.to_string());
        } else if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        } else {
            finish(&mut word, &mut out);
        }
    }
    finish(&mut word, &mut out);
    out
}

/// Plural to singular, roughly: `tardigrades` -> `tardigrade`, `studies` -> `study`.
/// (The grounding stage's matcher stems with it too, so both stages agree on a word.)
pub fn stem(mut word: String) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if word.len() > 3
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        word.pop();
    }
    word
}
/// Okapi BM25 score of every passage for `question`, with `weak` terms (see
/// [`recurring_terms`]) counted at [`WEAK_WEIGHT`] and the question's answer type
/// raising the passages that hold one (see [`CUE_BOOST`]). Each passage is counted together
/// with its source's title (`titles`: the title's terms, per source): the title's terms
/// add to the passage's term frequencies and length, so a passage that repeats the
/// title's words gains little over its neighbours, and one with the question's other
/// words gains much. Document frequencies are those of the passages' own text over all
/// passages of all sources of this run, so a term that is in a title but rare in the
/// text still tells passages apart. A passage shorter than the average is normalised
/// as if of average length: a lone "It is growing." must not outrank the passages
/// around it only for being short.
pub(super) fn bm25_scores(
    question: &str,
    weak: &[String],
    titles: &[Vec<String>],
    passages: &[Vec<Passage>],
) -> Vec<Vec<f64>> {
    let mut query = terms(question);
    query.sort();
    query.dedup();
    let strong = query.len();
    let extra: Vec<String> = weak
        .iter()
        .filter(|w| !query.contains(w))
        .cloned()
        .collect();
    query.extend(extra);
    let weight = |q: usize| if q < strong { 1.0 } else { WEAK_WEIGHT };
    let cue = answer_cue(question);
    let count = |words: &[String], q: &String| words.iter().filter(|w| *w == q).count() as u32;
    // Per passage: its length in terms with its title, how often each query term occurs
    // in its text, and how often in its title.
    let mut stats: Vec<Vec<(f64, Vec<u32>)>> = Vec::with_capacity(passages.len());
    let mut title_tf: Vec<Vec<u32>> = Vec::with_capacity(passages.len());
    for (source, title) in passages.iter().zip(titles) {
        title_tf.push(query.iter().map(|q| count(title, q)).collect());
        stats.push(
            source
                .iter()
                .map(|passage| {
                    let words = terms(&passage.text);
                    let tf = query.iter().map(|q| count(&words, q)).collect();
                    ((words.len() + title.len()) as f64, tf)
                })
                .collect(),
        );
    }
    let all = || stats.iter().flatten();
    let n = all().count() as f64;
    let average = (all().map(|(len, _)| len).sum::<f64>() / n.max(1.0)).max(1.0);
    let idf: Vec<f64> = (0..query.len())
        .map(|q| {
            let df = all().filter(|(_, tf)| tf[q] > 0).count() as f64;
            weight(q) * (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    // Weak terms count only on a page that holds a word of the question somewhere (in
    // its title or any passage): they tell apart the passages of a page about the
    // question, and never bring in a page that is not.
    let about_question = |source: &Vec<(f64, Vec<u32>)>, title_tf: &Vec<u32>| {
        (0..strong).any(|q| title_tf[q] > 0 || source.iter().any(|(_, tf)| tf[q] > 0))
    };
    stats
        .iter()
        .zip(&title_tf)
        .zip(passages)
        .map(|((source, title_tf), texts)| {
            let terms_counted = if about_question(source, title_tf) {
                query.len()
            } else {
                strong
            };
            source
                .iter()
                .zip(texts)
                .map(|((len, tf), passage)| {
                    let norm = BM25_K1 * (1.0 - BM25_B + BM25_B * len.max(average) / average);
                    let score: f64 = tf[..terms_counted]
                        .iter()
                        .zip(title_tf)
                        .zip(&idf)
                        .map(|((&tf, &title), idf)| {
                            let tf = f64::from(tf + title);
                            idf * tf * (BM25_K1 + 1.0) / (tf + norm)
                        })
                        .sum();
                    match cue {
                        Some(cue) if cue.fits(&passage.text) => score * (1.0 + CUE_BOOST),
                        _ => score,
                    }
                })
                .collect()
        })
        .collect()
}

/// Weight of a term that recurs in the search results' titles and snippets (a weak
/// query term) against a term of the question's own.
pub(super) const WEAK_WEIGHT: f64 = 0.3;
/// Share by which a passage holding what the question asks for (a number, a name)
/// ranks above its BM25 score.
pub(super) const CUE_BOOST: f64 = 0.25;
/// Weak terms taken at most.
pub(super) const MAX_WEAK_TERMS: usize = 12;

/// What kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cue {
    /// A number or a date: "how many", "when", "what year".
    Number,
    /// A name: "who", "which country", "where".
    Name,
}

impl Cue {
    /// Whether `text` holds what the cue asks for.
    fn fits(self, text: &str) -> bool {
        match self {
            Cue::Number => text.chars().any(|c| c.is_ascii_digit()),
            Cue::Name => text
                .split_whitespace()
                .collect::<Vec<_>>()
                .windows(2)
                .any(|w| {
                    w[0].chars()
                        .last()
                        .is_some_and(|c| c.is_alphanumeric() || c == ',')
                        && w[1].chars().next().is_some_and(char::is_uppercase)
                }),
        }
    }
}

/// The answer type a question asks for, if it says.
fn answer_cue(question: &str) -> Option<Cue> {
    let q = question.to_lowercase();
    let words: Vec<&str> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let pair = |a: &str, b: &[&str]| words.windows(2).any(|w| w[0] == a && b.contains(&w[1]));
    if pair("how", &["many", "much", "long", "old", "far", "big"])
        || words.contains(&"when")
        || pair(
            "what",
            &["year", "date", "day", "month", "percentage", "number"],
        )
        || pair("which", &["year", "date", "day", "month"])
    {
        Some(Cue::Number)
    } else if words.contains(&"who")
        || words.contains(&"whom")
        || words.contains(&"where")
        || pair(
            "which",
            &[
                "country", "city", "state", "company", "team", "nation", "person",
            ],
        )
        || pair(
            "what",
            &["country", "city", "state", "company", "team", "nation"],
        )
    {
        Some(Cue::Name)
    } else {
        None
    }
}

/// Terms that recur in the search results (`results`: each result's title and
/// snippet), in two or more of them and not in `question`: what the results agree the
/// question is about, which its own words may not say ("the Alaska Airlines
/// incident" for a question about "a flight whose door blew off"). Most recurring
/// first, at most [`MAX_WEAK_TERMS`].
pub(super) fn recurring_terms(results: &[String], question: &str) -> Vec<String> {
    let asked = terms(question);
    let mut counts: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for result in results {
        let mut seen = terms(result);
        seen.sort();
        seen.dedup();
        for t in seen {
            *counts.entry(t).or_default() += 1;
        }
    }
    let mut recurring: Vec<(String, usize)> = counts
        .into_iter()
        .filter(|(t, n)| *n >= 2 && !asked.contains(t) && !t.chars().all(|c| c.is_ascii_digit()))
        .collect();
    recurring.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    recurring.truncate(MAX_WEAK_TERMS);
    recurring.into_iter().map(|(t, _)| t).collect()
}

/// A snippet says more than a text when at least this many of its terms are not in
/// the text (and at least a quarter of them).
const NEW_TERMS_MIN: usize = 3;

/// Whether `snippet` says something about `question` that `shown` does not: it holds
/// a term of the question, and at least [`NEW_TERMS_MIN`] of its distinct terms, and a
/// quarter of them, are missing from `shown`. Used for a result whose page was read
/// but not sent whole: its snippet is sent as well only when the passages sent of the
/// page miss what the snippet says (an engine's snippet is a summary biased to the
/// query, and may hold the answer the passages left out).
pub fn says_more(snippet: &str, shown: &str, question: &str) -> bool {
    let mut wanted = terms(snippet);
    let asked = terms(question);
    if !wanted.iter().any(|t| asked.contains(t)) {
        return false;
    }
    wanted.sort();
    wanted.dedup();
    let have: std::collections::HashSet<String> = terms(shown).into_iter().collect();
    let missing = wanted.iter().filter(|t| !have.contains(*t)).count();
    missing >= NEW_TERMS_MIN && missing * 4 >= wanted.len()
}

/// A page's lead passage ranks at this multiple of its own BM25 score: the answer
/// most often first appears at the top of a page, even where its words differ from
/// the question's. (Leads used to be sent whatever they scored, which at a small window
/// took a quarter of the budget.)
pub(super) const LEAD_BOOST: f64 = 1.5;
/// ... and at least at this share of the best score of its page: the lead of a page
/// that matches the question well says what the page is, and often holds the answer
/// in other words.
pub(super) const LEAD_PAGE_SHARE: f64 = 0.5;
/// A passage next to a hit ranks at least at this share of the hit's score: the
/// answer often sits in the sentences around the ones that share the question's words.
pub(super) const NEIGHBOUR_SHARE: f64 = 0.5;

/// What the passages are ranked by: their BM25 `scores`, a lead raised to
/// [`LEAD_BOOST`] times its own and to [`LEAD_PAGE_SHARE`] of its page's best, and a
/// passage beside a hit raised to [`NEIGHBOUR_SHARE`] of the hit's. A key of zero is
/// never sent.
pub(super) fn rank_keys(scores: &[Vec<f64>]) -> Vec<Vec<f64>> {
    scores
        .iter()
        .map(|page| {
            let mut keys = page.clone();
            for (p, &score) in page.iter().enumerate() {
                if score <= 0.0 {
                    continue;
                }
                for q in [p.wrapping_sub(1), p + 1] {
                    if let Some(key) = keys.get_mut(q) {
                        *key = key.max(NEIGHBOUR_SHARE * score);
                    }
                }
            }
            let best = page.iter().copied().fold(0.0, f64::max);
            if let Some(lead) = keys.first_mut() {
                *lead = lead.max(LEAD_BOOST * page[0]).max(LEAD_PAGE_SHARE * best);
            }
            keys
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Passage {
        fn plain(text: &str) -> Passage {
            Passage {
                text: text.to_string(),
                tokens: 0,
                span: 0..text.len(),
            }
        }
    }

    #[test]
    fn a_snippet_says_more_only_with_words_the_text_lacks() {
        let page = "Tardigrades survived ten days in open space on the FOTON-M3 mission.";
        let asked = "where have tardigrades survived?";
        assert!(!says_more(
            "Tardigrades survived ten days in space.",
            page,
            asked
        ));
        let moon = "Tardigrades also survived a 2019 crash landing on the Moon.";
        assert!(says_more(moon, page, asked));
        // Nothing of the question in it: not sent, however new.
        assert!(!says_more(moon, page, "SQLite vacuum"));
        assert!(says_more(
            "Tardigrades survived space, mission reports.",
            "",
            asked
        ));
        assert!(!says_more("", page, asked));
    }

    #[test]
    fn terms_recurring_in_results_are_weak_query_terms() {
        let results = [
            "Alaska Airlines grounds Boeing 737 Max 9 jets".to_string(),
            "FAA grounds 171 Boeing jets after Alaska Airlines blowout".to_string(),
            "Door plug blowout: what we know".to_string(),
        ];
        let weak = recurring_terms(&results, "How many jets were grounded?");
        assert_eq!(weak, ["airline", "alaska", "blowout", "boeing", "ground"]);
        // A passage with the recurring words but none of the question's now ranks.
        let passages = [vec![
            Passage::plain("The blowout on the Alaska Airlines Boeing flight."),
            Passage::plain("Weather was fine."),
        ]];
        let titles = [terms("Jets grounded")];
        let scores = bm25_scores("How many jets?", &weak, &titles, &passages);
        let without = bm25_scores("How many jets?", &[], &titles, &passages);
        assert!(scores[0][0] > scores[0][1], "{scores:?}");
        assert!(without[0][0] < without[0][1], "{without:?}");
        // A page with no word of the question gains nothing from them.
        let unrelated = bm25_scores("How many jets?", &weak, &[Vec::new()], &passages);
        assert!(unrelated[0].iter().all(|&s| s == 0.0), "{unrelated:?}");
    }

    #[test]
    fn an_answer_type_raises_passages_holding_one() {
        assert_eq!(
            answer_cue("How many jets were grounded?"),
            Some(Cue::Number)
        );
        assert_eq!(answer_cue("When did the strike end?"), Some(Cue::Number));
        assert_eq!(answer_cue("Which country won the cup?"), Some(Cue::Name));
        assert_eq!(answer_cue("Who resigned this week?"), Some(Cue::Name));
        assert_eq!(answer_cue("Why did prices rise?"), None);
        let passages = [vec![
            Passage::plain("The jets were grounded after the blowout."),
            Passage::plain("The jets, 171 of them, were grounded after the blowout."),
        ]];
        let titles = [Vec::new()];
        let count = bm25_scores("how many jets grounded", &[], &titles, &passages);
        let plain = bm25_scores("jets grounded", &[], &titles, &passages);
        assert!(count[0][1] > count[0][0], "{count:?}");
        assert!(plain[0][1] <= plain[0][0], "{plain:?}");
    }

    #[test]
    fn terms_drop_stop_words_and_plurals() {
        assert_eq!(
            terms("Do the Tardigrades survive in SPACE? Studies say: yes, 2007."),
            [
                "tardigrade",
                "survive",
                "space",
                "study",
                "say",
                "yes",
                "2007"
            ]
        );
        assert_eq!(terms("東京 tower"), ["東", "京", "tower"]);
    }
}
