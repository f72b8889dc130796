//! Measurement helper for the cross-check (`ground::grounding::Checker::cross_reference`),
//! driven by `scripts/measure-false-conflicts.py` (not part of the product).
//!
//!     cross_probe < lines   # stdin JSON lines {id, sources: [{title, text}],
//!                           # statements: [{key, source, text}]}: one JSON line per
//!                           # statement {id, key, support, corroborated_by,
//!                           # contradicted_by}, then {id, ms} for the question
//!
//! Each statement cites its own page (`source`, 1-based) with its own text as the
//! quote, as a model that quoted its page word for word would: so it is supported by
//! that page, and the cross-check reads it against every other page of the question,
//! exactly as `ground answer` does after verification. The sources count as read whole.
use std::io::{BufRead, Write};
use std::time::Instant;

use ground::answer::{ModelAnswer, ModelCitation, ModelStatement, SourceRef};
use ground::context::SourceText;
use ground::grounding::Checker;
use serde_json::{Value, json};

fn main() {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for line in std::io::stdin().lock().lines() {
        let v: Value = serde_json::from_str(&line.expect("read stdin")).expect("JSON line");
        let sources: Vec<SourceText> = v["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .enumerate()
            .map(|(i, s)| SourceText {
                number: i + 1,
                url: format!("https://example{}.com/", i + 1),
                title: s["title"].as_str().unwrap_or("").into(),
                text: s["text"].as_str().unwrap_or("").into(),
            })
            .collect();
        let statements = v["statements"].as_array().expect("statements");
        let answer = ModelAnswer {
            answerable: true,
            statements: statements
                .iter()
                .map(|s| {
                    let text = s["text"].as_str().unwrap_or("");
                    ModelStatement {
                        text: text.into(),
                        citations: vec![ModelCitation {
                            source: SourceRef::Number(s["source"].as_i64().unwrap_or(1)),
                            quote: text.trim_end_matches(['.', '!', '?']).into(),
                        }],
                    }
                })
                .collect(),
            unknowns: Vec::new(),
            over_bounds: 0,
        };
        let started = Instant::now();
        let checker = Checker::new(&sources);
        let mut checked = checker.verify(&answer);
        checker.cross_reference(&mut checked);
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        for (s, given) in checked.statements.iter().zip(statements) {
            let line = json!({
                "id": v["id"],
                "key": given["key"],
                "support": s.support.name(),
                "corroborated_by": s.corroborated_by,
                "contradicted_by": s.contradicted_by,
            });
            writeln!(out, "{line}").expect("write stdout");
        }
        writeln!(out, "{}", json!({"id": v["id"], "ms": ms})).expect("write stdout");
    }
}
