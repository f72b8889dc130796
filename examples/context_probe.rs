//! Measurement helper for the context stage, driven by `scripts/measure-passages.py`
//! and `scripts/measure-tokens.py` (not part of the product).
//!
//!     context_probe extract DIR     # each DIR/*.html: one JSON line {id, title, text, estimated_tokens}
//!     context_probe select BUDGET   # stdin JSON lines {id, title, text, question}:
//!                                   # one JSON line {id, bm25, lead} each: what is sent
//!                                   # with passage selection and with the first N tokens
//!     context_probe estimate        # stdin: its estimated tokens
//!     context_probe prompt          # the model's instructions: {name, text, estimated_tokens} lines
//!     context_probe window WINDOW ANSWER_TOKENS
//!                                   # stdin JSON lines {id, question, sources: [{url, title, text}]}:
//!                                   # one JSON line {id, budget, estimated_tokens, text_tokens,
//!                                   # markers, bodies, text} each: the context `ground answer` would
//!                                   # build for a WINDOW-token model that may answer in
//!                                   # ANSWER_TOKENS, with each source's sent text in `bodies`
//!                                   # (by source number; empty for a source with no block).
//!                                   # Optional per line: `budget` (the sources' budget a
//!                                   # run reported, instead of the window's) and `shorts`
//!                                   # ([{url, title, text}]: results not read, sent as
//!                                   # snippets after the pages, as the pipeline does).
//!                                   # With `--rank` after ANSWER_TOKENS, each line also
//!                                   # has `ranking`: every page passage with its key and
//!                                   # tokens, each page's header tokens, and the budget
//!                                   # the pages had (to replay the selection with another
//!                                   # ranker, see scripts/measure-rerank.py)
//!
//! It uses only the context stage's public functions, so `scripts/measure-passages.py
//! --baseline REV` can build this same file against an older revision to compare.
use std::io::{BufRead, Write};

use ground::context::{self, SourceText};
use serde_json::{Value, json};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.first().map(String::as_str) {
        Some("extract") => {
            let dir = args.get(1).expect("extract DIR");
            let mut files: Vec<_> = std::fs::read_dir(dir)
                .expect("read DIR")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "html"))
                .collect();
            files.sort();
            for file in files {
                let bytes = std::fs::read(&file).expect("read page");
                let html = ground::extract::decode_body(&bytes, None);
                let page = ground::extract::extract_html(&html, None);
                let id = file.file_stem().unwrap().to_string_lossy().into_owned();
                let line = json!({
                    "id": id,
                    "title": page.title.unwrap_or_default(),
                    "estimated_tokens": context::estimate_tokens(&page.text),
                    "text": page.text,
                });
                writeln!(out, "{line}").unwrap();
            }
        }
        Some("select") => {
            let budget: u32 = args
                .get(1)
                .and_then(|b| b.parse().ok())
                .expect("select BUDGET");
            for line in std::io::stdin().lock().lines() {
                let v: Value = serde_json::from_str(&line.unwrap()).expect("JSON line");
                let source = SourceText {
                    number: 1,
                    url: "https://example.com/page".into(),
                    title: v["title"].as_str().unwrap_or("").into(),
                    text: v["text"].as_str().unwrap_or("").into(),
                };
                let question = v["question"].as_str().unwrap_or("");
                let selected =
                    context::build_for_question(std::slice::from_ref(&source), question, budget);
                // The baseline: the same header, then the text's first tokens, cut at a
                // sentence end, with the same budget.
                let empty = SourceText {
                    text: String::new(),
                    ..source.clone()
                };
                let frame = context::build(&[empty], budget).estimated_tokens;
                let lead = context::cut_to_tokens(&source.text, budget.saturating_sub(frame));
                let result = json!({
                    "id": v["id"],
                    "bm25": body(&selected.text),
                    "lead": lead,
                    "bm25_tokens": selected.estimated_tokens,
                    "lead_tokens": frame + context::estimate_tokens(lead),
                });
                writeln!(out, "{result}").unwrap();
            }
        }
        Some("window") => {
            let number = |i: usize| -> u32 {
                args.get(i)
                    .and_then(|b| b.parse().ok())
                    .expect("window WINDOW ANSWER_TOKENS")
            };
            let (window, answer_tokens) = (number(1), number(2));
            for line in std::io::stdin().lock().lines() {
                let v: Value = serde_json::from_str(&line.unwrap()).expect("JSON line");
                let question = v["question"].as_str().unwrap_or("");
                let sources: Vec<SourceText> = v["sources"]
                    .as_array()
                    .expect("sources")
                    .iter()
                    .enumerate()
                    .map(|(i, s)| SourceText {
                        number: i + 1,
                        url: s["url"].as_str().unwrap_or("").into(),
                        title: s["title"].as_str().unwrap_or("").into(),
                        text: s["text"].as_str().unwrap_or("").into(),
                    })
                    .collect();
                // A budget given with the sources (as a run reported it) stands.
                let budget = v["budget"]
                    .as_u64()
                    .and_then(|b| u32::try_from(b).ok())
                    .unwrap_or_else(|| source_budget(window, answer_tokens, question));
                // Results not read, as the pipeline sends them: snippet sources after
                // the pages (`shorts`: [{url, title, text}]).
                let shorts: Vec<(SourceText, context::SourceKind)> = v["shorts"]
                    .as_array()
                    .map(|a| a.as_slice())
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                    .map(|(k, s)| {
                        let source = SourceText {
                            number: sources.len() + 1 + k,
                            url: s["url"].as_str().unwrap_or("").into(),
                            title: s["title"].as_str().unwrap_or("").into(),
                            text: s["text"].as_str().unwrap_or("").into(),
                        };
                        (source, context::SourceKind::Snippet)
                    })
                    .collect();
                let ctx = if shorts.is_empty() {
                    context::build_for_question(&sources, question, budget)
                } else {
                    context::build_with_snippets(&sources, &shorts, question, budget).0
                };
                // Each source's sent text, by its number: a source may have no block
                // at all (one that contributed nothing).
                let mut bodies = vec![String::new(); sources.len()];
                for block in ctx.text.split("<source id=\"").skip(1) {
                    let number: usize = block
                        .split('"')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                    if let Some(slot) = number.checked_sub(1).and_then(|i| bodies.get_mut(i)) {
                        *slot = body(block.trim_end().trim_end_matches("</source>"));
                    }
                }
                let mut result = json!({
                    "id": v["id"],
                    "budget": budget,
                    "estimated_tokens": ctx.estimated_tokens,
                    "text_tokens": bodies.iter().map(|b| context::estimate_tokens(b)).sum::<u32>(),
                    "markers": ctx.text.lines().filter(|l| *l == context::SKIPPED).count(),
                    "bodies": bodies,
                    "text": ctx.text,
                });
                if args.get(3).is_some_and(|a| a == "--rank") {
                    let weak = context::weak_terms(&sources, &shorts, question);
                    let compact = budget < context::COMPACT_HEADERS_BELOW;
                    let (passages, frames) =
                        context::ranked_passages(&sources, question, &weak, compact);
                    // What the pages had: the budget less the short sources' blocks.
                    let shorts_from = ctx.text.find(" kind=\"").map_or(ctx.text.len(), |k| {
                        ctx.text[..k].rfind("<source").unwrap_or(k)
                    });
                    let pages_budget =
                        budget.saturating_sub(context::estimate_tokens(&ctx.text[shorts_from..]));
                    result["ranking"] = json!({"pages_budget": pages_budget, "frames": frames, "passages": passages});
                }
                writeln!(out, "{result}").unwrap();
            }
        }
        Some("estimate") => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).expect("stdin");
            writeln!(out, "{}", context::estimate_tokens(&text)).unwrap();
        }
        Some("prompt") => {
            let text = ground::llm::SYSTEM_PROMPT;
            let line = json!({"name": "instructions", "text": text, "estimated_tokens": context::estimate_tokens(text)});
            writeln!(out, "{line}").unwrap();
        }
        _ => {
            eprintln!(
                "usage: context_probe extract DIR | select BUDGET | window WINDOW ANSWER_TOKENS [--rank] | estimate | prompt"
            );
            std::process::exit(2);
        }
    }
}

/// The sources' token budget in a `window`-token model that may answer in
/// `answer_tokens`: the rule of `pipeline::run` (src/pipeline.rs, step 4), mirrored
/// because the pipeline keeps it private.
fn source_budget(window: u32, answer_tokens: u32, question: &str) -> u32 {
    window
        .saturating_sub(answer_tokens)
        .saturating_sub(ground::llm::prompt_overhead_tokens(question))
        .saturating_mul(97)
        / 100
}

/// The passages of one source block: no header (up to the first blank line), closing
/// tag or gap markers.
fn body(text: &str) -> String {
    let after_header = text.split_once("\n\n").map_or("", |(_, b)| b);
    after_header
        .lines()
        .filter(|l| *l != context::SKIPPED && *l != "</source>")
        .collect::<Vec<_>>()
        .join("\n")
}
