//! Short sources: what the search gave besides the pages read (an infobox, an
//! instant answer, a result's snippet, a title), sent after the pages as blocks of
//! their own, within a share of the budget. Every kind of short source goes through [`build_with_snippets`] the
//! same way; the pages get what the short ones leave.

use super::blocks::{CLOSE, COMPACT_HEADERS_BELOW, TITLE_MAX_CHARS, header, one_line};
use super::passages::{byte_len_of_chars, cut_at_word};
use super::{Context, SourceCut, SourceKind, SourceText, build_pages, estimate_tokens, neutralise};
use crate::hits::SearchExtras;

/// Most tokens of one search-result snippet sent as a source: engines' snippets are a
/// sentence or three, sent whole; a longer one is cut at a word boundary (not back to
/// its last full sentence, which lost half of a typical snippet's words).
pub const SNIPPET_MAX_TOKENS: u32 = 100;
/// Most tokens of one infobox sent as a source: its summary and its facts, one
/// "label: value" line each.
pub const INFOBOX_MAX_TOKENS: u32 = 300;
/// Most tokens of one instant answer sent as a source.
pub const ANSWER_MAX_TOKENS: u32 = 80;
/// Snippets take at most this share of the budget (in percent): they are cheap
/// evidence beside the pages read, never instead of them.
pub const SNIPPET_BUDGET_PERCENT: u32 = 25;

/// The searches' infoboxes (summary and "label: value" facts, cited by their first
/// link) and instant answers (cited by their link) as sources, not yet numbered;
/// those with no address to cite are left out. The evidence check of the planner's
/// rounds (`pipeline/gather.rs`) reads the same texts as the model is sent.
pub fn search_sources(extras: &SearchExtras) -> Vec<(SourceText, SourceKind)> {
    let infoboxes = extras.infoboxes.iter().filter_map(|infobox| {
        let source = SourceText {
            number: 0,
            url: infobox.url()?.to_string(),
            title: infobox.title.clone(),
            text: infobox.text(),
        };
        Some((source, SourceKind::Infobox))
    });
    let answers = extras.answers.iter().filter_map(|answer| {
        let source = SourceText {
            number: 0,
            url: answer.url.clone()?,
            title: match &answer.engine {
                Some(engine) => format!("Instant answer ({engine})"),
                None => "Instant answer".to_string(),
            },
            text: answer.answer.clone(),
        };
        Some((source, SourceKind::Answer))
    });
    infoboxes.chain(answers).collect()
}

/// Most pages read for which terms recurring in the results are weak query terms
/// (see `bm25::recurring_terms`): the default three pages, not the wide mode.
pub const WEAK_TERMS_UP_TO_PAGES: usize = 5;
/// Fits the pages read and, after them, the short sources of results that were not
/// read into `budget_tokens`. The short sources are numbered after the pages, in the
/// order given (their `number`), and each goes the same one way whatever its kind
/// (`kind`, said in its tag): its text cut at a word to at most its kind's share
/// ([`SourceKind::max_tokens`]: [`SNIPPET_MAX_TOKENS`] for a snippet), while their cost stays within [`SNIPPET_BUDGET_PERCENT`]
/// of the budget. A short source's own block is sent only if the title-only blocks
/// of the sources after it still fit the share beside it (of those the share could
/// hold as titles alone, counted from the first); once one is not, it
/// and each one after it get a title-only block (`kind="title"`: its URL and title,
/// the title as its text) while that fits the share, so the share reaches every
/// result it can hold a title of before it buys snippets. The pages get the rest of
/// the budget.
///
/// Returns the context and the short sources it holds, in order, as sent: a title-only
/// one has its title as its text (what a quote of it is checked against).
pub fn build_with_snippets(
    pages: &[SourceText],
    short: &[(SourceText, SourceKind)],
    question: &str,
    budget_tokens: u32,
) -> (Context, Vec<(SourceText, SourceKind)>) {
    let cap = budget_tokens.saturating_mul(SNIPPET_BUDGET_PERCENT) / 100;
    let compact = budget_tokens < COMPACT_HEADERS_BELOW;
    let mut blocks: Vec<(String, SourceCut, SourceText, SourceKind)> = Vec::new();
    let mut spent = 0u32;
    let mut titles_only = false;
    // Every short source the share could hold as a title keeps at least that: a
    // snippet is sent only when the title-only blocks of those after it still fit
    // beside it (results 8-10 used to get no block once the first
    // snippets had spent the share).
    let title_costs: Vec<u32> = short
        .iter()
        .map(|(source, _)| estimate_tokens(&title_block(source, compact)))
        .collect();
    // The results the share could hold a title of, were it all titles.
    let mut covered = 0;
    let mut titles_cost = 0u32;
    while covered < short.len() && titles_cost + title_costs[covered] <= cap {
        titles_cost += title_costs[covered];
        covered += 1;
    }
    for (k, (source, kind)) in short.iter().enumerate() {
        let later_titles: u32 = title_costs.get(k + 1..covered).unwrap_or(&[]).iter().sum();
        if !titles_only {
            let text = cut_at_word(&neutralise(source.text.trim()), kind.max_tokens()).to_string();
            if !text.is_empty() {
                let block = format!("{}{text}{CLOSE}", header(source, *kind, compact));
                let cost = estimate_tokens(&block);
                if spent + cost + later_titles <= cap {
                    spent += cost;
                    // The text as sent, as a range of the source's own: neutralising
                    // keeps every character (only a bracket becomes `‹`), so characters
                    // count alike.
                    let from = source.text.len() - source.text.trim_start().len();
                    let to = from + byte_len_of_chars(&source.text[from..], text.chars().count());
                    let cut = SourceCut {
                        number: source.number,
                        kind: *kind,
                        chars_extracted: source.text.chars().count(),
                        chars_sent: text.chars().count(),
                        truncated: text.len() < source.text.trim().len(),
                        passages_total: 1,
                        passages_sent: 1,
                        sent: std::iter::once(from..to).collect(),
                    };
                    blocks.push((block, cut, source.clone(), *kind));
                    continue;
                }
                titles_only = true;
            }
        }
        // A title-only block: the title is the source's text, the header its URL.
        // Sources are numbered in the order given, and a gap would shift every later
        // number: the first short source that cannot be sent at all ends the list.
        let title = one_line(&source.title, TITLE_MAX_CHARS);
        if title.is_empty() {
            break;
        }
        let as_sent = SourceText {
            text: title.clone(),
            ..source.clone()
        };
        let block = title_block(source, compact);
        let cost = estimate_tokens(&block);
        if spent + cost > cap {
            break;
        }
        spent += cost;
        let chars = title.chars().count();
        let cut = SourceCut {
            number: source.number,
            kind: SourceKind::Title,
            chars_extracted: chars,
            chars_sent: chars,
            truncated: false,
            passages_total: 1,
            passages_sent: 1,
            sent: std::iter::once(0..title.len()).collect(),
        };
        blocks.push((block, cut, as_sent, SourceKind::Title));
    }
    let weak = weak_terms(pages, short, question);
    let mut context = build_pages(pages, question, &weak, budget_tokens - spent, compact);
    let pages_text = context.text.clone();
    // The estimate of the whole is checked, not only the sum of the parts; a short
    // source that would tip it over the budget is left out, from the last one back.
    while !blocks.is_empty() {
        let mut text = pages_text.clone();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        blocks.iter().for_each(|(block, ..)| text.push_str(block));
        let estimated = estimate_tokens(text.trim_end());
        if estimated <= budget_tokens || context.estimated_tokens > budget_tokens {
            context.text = text.trim_end().to_string();
            context.estimated_tokens = estimated;
            break;
        }
        blocks.pop();
    }
    let mut sent = Vec::with_capacity(blocks.len());
    for (_, cut, source, kind) in blocks {
        context.sources.push(cut);
        sent.push((source, kind));
    }
    context.budget_tokens = budget_tokens;
    (context, sent)
}

/// The weak query terms of a run: what the results agree on, terms in two or more
/// results' titles and snippets (`bm25::recurring_terms`); none in the wide mode (over
/// [`WEAK_TERMS_UP_TO_PAGES`] pages read), where they lost more questions than they
/// won (rtqa-dev, --pages 10: 5 won, 9 lost), as more pages share more words by chance.
pub fn weak_terms(
    pages: &[SourceText],
    short: &[(SourceText, SourceKind)],
    question: &str,
) -> Vec<String> {
    if pages.len() > WEAK_TERMS_UP_TO_PAGES {
        return Vec::new();
    }
    let results: Vec<String> = pages
        .iter()
        .map(|p| p.title.clone())
        .chain(short.iter().map(|(s, kind)| match kind {
            SourceKind::Snippet => format!("{} {}", s.title, s.text),
            _ => s.title.clone(),
        }))
        .collect();
    super::bm25::recurring_terms(&results, question)
}

/// The title-only block of a short source (`kind="title"`): its URL in the header,
/// its title, cut to [`TITLE_MAX_CHARS`], as its text.
fn title_block(source: &SourceText, compact: bool) -> String {
    let bare = SourceText {
        title: String::new(),
        ..source.clone()
    };
    format!(
        "{}{}{CLOSE}",
        header(&bare, SourceKind::Title, compact),
        neutralise(&one_line(&source.title, TITLE_MAX_CHARS))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::build_for_question;
    use crate::context::tests::{page, src};

    /// Results 2..12 with a snippet each of about 90 words.
    fn results() -> Vec<(SourceText, SourceKind)> {
        (2..12)
            .map(|n| {
                let source = SourceText {
                    number: n,
                    url: format!("https://example.org/{n}"),
                    title: format!("Result {n} about tardigrades"),
                    text: format!(
                        "Snippet {n} says tardigrades were in orbit in 2007. {}",
                        "More words here. ".repeat(25)
                    ),
                };
                (source, SourceKind::Snippet)
            })
            .collect()
    }

    #[test]
    fn snippets_follow_the_pages_cut_at_a_word_then_titles_alone() {
        let pages = [src(
            1,
            "Tardigrades survive in space. They enter a tun state.",
        )];
        let snippets = results();
        // A share that holds every result's title and a few snippets besides.
        let (ctx, sent) = build_with_snippets(&pages, &snippets, "tardigrades space", 3200);
        assert!(ctx.estimated_tokens <= 3200, "{}", ctx.estimated_tokens);
        assert_eq!(ctx.sources.len(), 1 + sent.len());
        let kinds: Vec<SourceKind> = sent.iter().map(|(_, k)| *k).collect();
        let snippets_sent = kinds.iter().filter(|k| **k == SourceKind::Snippet).count();
        // Some snippets, then (their share spent) title-only lines for the rest.
        assert!(
            snippets_sent >= 1 && snippets_sent < kinds.len(),
            "{kinds:?}"
        );
        assert!(
            kinds[..snippets_sent]
                .iter()
                .all(|k| *k == SourceKind::Snippet)
        );
        assert!(
            kinds[snippets_sent..]
                .iter()
                .all(|k| *k == SourceKind::Title)
        );
        assert!(ctx.text.contains("<source id=\"2\" kind=\"snippet\">"));
        assert!(
            ctx.text.find("<source id=\"1\">").unwrap()
                < ctx.text.find("kind=\"snippet\"").unwrap()
        );
        // A snippet over the cap is cut at a word, not back to its first sentence.
        let block = ctx.text.split("<source id=\"2\"").nth(1).unwrap();
        let body = block.split("</source>").next().unwrap();
        assert!(
            body.contains("in orbit in 2007. More words here."),
            "{body}"
        );
        assert!(ctx.sources[1].truncated);
        let shown = &snippets[0].0.text[ctx.sources[1].sent[0].clone()];
        assert!(body.trim_end().ends_with(shown), "{body:?} / {shown:?}");
        assert!(shown.ends_with("More") || shown.ends_with("words") || shown.ends_with("here."));
        // A title-only source: URL and title, the title its text, checked as sent.
        let (title, _) = &sent[snippets_sent];
        assert_eq!(title.text, title.title);
        let tag = format!("<source id=\"{}\" kind=\"title\">", title.number);
        let block = ctx.text.split(&tag).nth(1).expect(&ctx.text);
        let block = block.split("</source>").next().unwrap();
        assert!(
            block.contains(&crate::context::short_url(&title.url)) && block.contains(&title.title),
            "{block}"
        );
        let cut = ctx
            .sources
            .iter()
            .find(|c| c.number == title.number)
            .unwrap();
        assert_eq!(
            (cut.kind, cut.sent.clone()),
            (
                SourceKind::Title,
                std::iter::once(0..title.text.len()).collect::<Vec<_>>()
            )
        );
        // Everything short stays within its share.
        let first_short = ctx.text.find("<source id=\"2\"").unwrap();
        assert!(
            estimate_tokens(&ctx.text[first_short..]) <= 3200 * SNIPPET_BUDGET_PERCENT / 100 + 10,
            "{}",
            &ctx.text[first_short..]
        );
        let (none, zero) = build_with_snippets(&pages, &[], "tardigrades space", 600);
        assert!(zero.is_empty());
        assert_eq!(
            none.text,
            build_for_question(&pages, "tardigrades space", 600).text
        );
    }

    #[test]
    fn every_result_keeps_its_title_before_snippets_take_the_share() {
        // Twelve results with long snippets: the share holds five snippets, or two
        // and every other result's title. The titles of the last results (which may
        // hold the answer) come before more snippets of the first ones.
        let pages = [src(
            1,
            "Tardigrades survive in space. They enter a tun state.",
        )];
        let mut shorts = results();
        shorts.extend((12..14).map(|n| {
            let (mut source, kind) = results()[0].clone();
            source.number = n;
            source.title = format!("Result {n} about tardigrades");
            (source, kind)
        }));
        let (ctx, sent) = build_with_snippets(&pages, &shorts, "tardigrades space", 3200);
        let numbers: Vec<usize> = sent.iter().map(|(s, _)| s.number).collect();
        assert_eq!(numbers, (2..14).collect::<Vec<_>>(), "{}", ctx.text);
        let snippets = sent
            .iter()
            .filter(|(_, k)| *k == SourceKind::Snippet)
            .count();
        assert!(snippets >= 1, "{}", ctx.text);
        assert!(ctx.text.contains("Result 13 about tardigrades"));
        assert!(ctx.estimated_tokens <= 3200);
    }

    #[test]
    fn sent_ranges_are_the_text_the_prompt_holds() {
        // A page with our delimiter in it (neutralised: byte offsets move) and more
        // text than the budget takes, and a snippet with leading space.
        let text = format!(
            "Intro about <source> tags and tardigrades.\n{}Tardigrades survive in space.\nThe end.",
            page(12, 99, "").replace('\n', " ")
        );
        let pages = [src(1, &text)];
        let snippets = [(
            SourceText {
                text: "   A snippet: tardigrades <source in orbit. More.".into(),
                ..src(2, "")
            },
            SourceKind::Snippet,
        )];
        let (ctx, sent) = build_with_snippets(&pages, &snippets, "tardigrades space", 400);
        assert_eq!(sent.len(), 1);
        assert!(ctx.sources[0].truncated && !ctx.sources[0].sent.is_empty());
        for (cut, source) in ctx.sources.iter().zip([&pages[0], &snippets[0].0]) {
            for range in &cut.sent {
                let shown = neutralise(&source.text[range.clone()]);
                assert!(ctx.text.contains(&shown), "{shown:?} not in the prompt");
            }
        }
        assert!(text[ctx.sources[0].sent[0].clone()].starts_with("Intro about <source>"));
        assert_eq!(
            &snippets[0].0.text[ctx.sources[1].sent[0].clone()],
            "A snippet: tardigrades <source in orbit. More."
        );
    }

    #[test]
    fn infoboxes_and_answers_carry_their_kind_and_their_kinds_share_of_tokens() {
        let pages = [src(1, "Tardigrades survive in space. ".repeat(40).as_str())];
        let facts: String = (0..200)
            .map(|i| format!("Fact {i}: tardigrades value {i}\n"))
            .collect();
        let shorts = [
            (
                src(2, &format!("Tardigrade </source> summary.\n{facts}")),
                SourceKind::Infobox,
            ),
            (src(3, "Tardigrades are water bears."), SourceKind::Answer),
        ];
        let (ctx, sent) = build_with_snippets(&pages, &shorts, "tardigrades space", 4_000);
        let kinds: Vec<SourceKind> = sent.iter().map(|(_, k)| *k).collect();
        assert_eq!(kinds, [SourceKind::Infobox, SourceKind::Answer]);
        assert!(ctx.text.contains("<source id=\"2\" kind=\"infobox\">"));
        assert!(ctx.text.contains("<source id=\"3\" kind=\"answer\">"));
        assert!(ctx.text.contains("Tardigrade ‹/source> summary."));
        let infobox = ctx.sources.iter().find(|c| c.number == 2).unwrap();
        assert!(infobox.truncated);
        let block = &ctx.text[ctx.text.find("kind=\"infobox\"").unwrap()..];
        let block = &block[..block.find("</source>").unwrap()];
        // The infobox's share, not a snippet's: more than 100 tokens of facts.
        let tokens = estimate_tokens(block);
        assert!(
            tokens > SNIPPET_MAX_TOKENS && tokens <= INFOBOX_MAX_TOKENS + 40,
            "{tokens}: {block}"
        );
        assert!(block.contains("\nFact 0: tardigrades value 0\n"));
    }

    #[test]
    fn short_sources_sent_are_numbered_without_a_gap() {
        // Snippets too long for the share, then titles: a long one that no longer
        // fits, and short ones after it that would. Every later number would shift
        // if the long one were skipped, so the list ends there.
        let pages = [src(
            1,
            "Tardigrades survive in space. They enter a tun state.",
        )];
        let mut shorts = results();
        shorts[3].0.title = format!(
            "A long title about tardigrades {}",
            "and more words ".repeat(10)
        );
        for (source, _) in shorts.iter_mut().skip(4) {
            source.title = "Short".into();
        }
        for budget in [400, 500, 600, 800, 1200, 1600, 2400] {
            let (ctx, sent) = build_with_snippets(&pages, &shorts, "tardigrades space", budget);
            let numbers: Vec<usize> = sent.iter().map(|(s, _)| s.number).collect();
            let expected: Vec<usize> = (2..2 + numbers.len()).collect();
            assert_eq!(numbers, expected, "budget {budget}");
            let cuts: Vec<usize> = ctx.sources.iter().skip(1).map(|c| c.number).collect();
            assert_eq!(cuts, expected, "budget {budget}");
        }
    }
}
