//! Measurement helper for the grounding stage's match, driven by
//! `scripts/measure-match.py` (not part of the product).
//!
//!     match_probe extract DIR   # each DIR/*.html (or .html.gz): one JSON line
//!                               # {id, title, text} (ground's own extraction, as
//!                               # `ground fetch` does it)
//!     match_probe check         # stdin JSON lines {id, sources: [{title, text}],
//!                               # statements: [{key, text}]}: one JSON line per
//!                               # statement {id, key, support, source, start, end,
//!                               # window, confidence}, then {id, ms} for the page
//!
//! `check` asks exactly what `ground answer` asks of a statement whose quote did not
//! verify: each statement cites source 1 with a quote that is on no page, so only
//! ground's own match can support it. The sources count as shown whole.
use std::io::{BufRead, Write};
use std::time::Instant;

use ground::answer::{ModelAnswer, ModelCitation, ModelStatement, SourceRef};
use ground::context::SourceText;
use ground::grounding::Checker;
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
                .filter(|p| {
                    let name = p.to_string_lossy();
                    name.ends_with(".html") || name.ends_with(".html.gz")
                })
                .collect();
            files.sort();
            for file in files {
                let mut bytes = std::fs::read(&file).expect("read page");
                if file.extension().is_some_and(|x| x == "gz") {
                    let mut plain = Vec::new();
                    std::io::Read::read_to_end(
                        &mut flate2::read::GzDecoder::new(&bytes[..]),
                        &mut plain,
                    )
                    .expect("gunzip page");
                    bytes = plain;
                }
                let html = ground::extract::decode_body(&bytes, None);
                let page = ground::extract::extract_html(&html, None);
                let name = file.file_name().unwrap().to_string_lossy();
                let id = name.split('.').next().unwrap_or_default().to_string();
                let line = json!({
                    "id": id,
                    "title": page.title.unwrap_or_default(),
                    "text": page.text,
                });
                writeln!(out, "{line}").unwrap();
            }
        }
        Some("check") => {
            for line in std::io::stdin().lock().lines() {
                let v: Value = serde_json::from_str(&line.unwrap()).expect("JSON line");
                let sources: Vec<SourceText> = v["sources"]
                    .as_array()
                    .expect("sources")
                    .iter()
                    .enumerate()
                    .map(|(i, s)| SourceText {
                        number: i + 1,
                        url: format!("https://example.com/{}", i + 1),
                        title: s["title"].as_str().unwrap_or("").into(),
                        text: s["text"].as_str().unwrap_or("").into(),
                    })
                    .collect();
                let statements = v["statements"].as_array().expect("statements");
                let answer = ModelAnswer {
                    answerable: true,
                    statements: statements
                        .iter()
                        .map(|s| ModelStatement {
                            text: s["text"].as_str().unwrap_or("").into(),
                            citations: vec![ModelCitation {
                                source: SourceRef::Number(1),
                                quote: "a quote that is on no page of this benchmark".into(),
                            }],
                        })
                        .collect(),
                    unknowns: Vec::new(),
                    over_bounds: 0,
                };
                let started = Instant::now();
                let checker = Checker::new(&sources);
                let checked = checker.verify(&answer);
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                for (s, given) in checked.statements.iter().zip(statements) {
                    let best = s.matches.first();
                    let line = json!({
                        "id": v["id"],
                        "key": given["key"],
                        "support": s.support.name(),
                        "source": best.map(|m| m.source),
                        "start": best.map(|m| m.start),
                        "end": best.map(|m| m.end),
                        "window": best.map(|m| m.text.as_str()),
                        "confidence": best.map(|m| m.confidence),
                    });
                    writeln!(out, "{line}").unwrap();
                }
                writeln!(out, "{}", json!({"id": v["id"], "ms": ms})).unwrap();
            }
        }
        _ => {
            eprintln!("usage: match_probe extract DIR | match_probe check < lines");
            std::process::exit(2);
        }
    }
}
