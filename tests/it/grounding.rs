//! The grounding verdicts a user sees: a correct answer, an invented quote, an invented
//! source number, and "the sources do not answer", each run four ways (person and
//! `--json`, with and without `--strict`), checking the exit code, the `grounded` flag,
//! Gemini's rules for `groundingMetadata`, and snapshots of both outputs.

use crate::common::*;
use serde_json::{Value, json};

const QUESTION: &str = "do tardigrades survive in space";

/// One grounding case: what the model says and what the user must get.
struct Verdict {
    /// Snapshot name prefix.
    name: &'static str,
    /// The question asked.
    question: &'static str,
    /// The model's JSON reply.
    reply: String,
    /// Exit code without and with `--strict`.
    codes: (i32, i32),
    /// The `grounded` flag in `--json`.
    grounded: bool,
    /// What the `error:` line says under `--strict` (when that fails).
    strict_cause: &'static str,
}

/// Runs one verdict four ways (person, person --strict, --json, --json --strict) and
/// snapshots the person output and the JSON report.
async fn check_verdict(case: Verdict) {
    let world = World::new().await;
    world.healthy(&case.reply).await;
    let mut outputs = Vec::new();
    for (json, strict) in [(false, false), (false, true), (true, false), (true, true)] {
        let mut cmd = world.ground();
        cmd.arg("answer");
        if json {
            cmd.arg("--json");
        }
        if strict {
            cmd.arg("--strict");
        }
        cmd.arg(case.question);
        let out = run_within(cmd, RUN_DEADLINE).await;
        let code = if strict { case.codes.1 } else { case.codes.0 };
        if code == 0 {
            assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
            assert_eq!(stderr(&out), "", "a successful run is silent on stderr");
        } else {
            assert_error_report(
                &out,
                code,
                &["not fully grounded", case.strict_cause],
                "--strict",
            );
        }
        if json {
            let v = json_stdout(&out);
            assert!(v.get("error").is_none(), "the report, not an error: {v}");
            assert_eq!(v["grounded"], case.grounded, "{v}");
            check_gemini_rules(&v);
        }
        outputs.push(out);
    }
    // --strict changes the exit code, never the output.
    assert_eq!(stdout(&outputs[0]), stdout(&outputs[1]));
    let person = world.scrub(&stdout(&outputs[0]));
    insta::assert_snapshot!(format!("{}_person", case.name), person);
    let value: Value = serde_json::from_str(&world.scrub(&stdout(&outputs[2]))).unwrap();
    insta::assert_snapshot!(
        format!("{}_json", case.name),
        serde_json::to_string_pretty(&stable_json(value)).unwrap()
    );
}

/// Gemini's rules for `groundingMetadata`: byte offsets into `answer`, indices that
/// point at chunks, equal-length index and score lists, scores in [0, 1].
fn check_gemini_rules(v: &Value) {
    let answer = v["answer"].as_str().unwrap();
    let meta = &v["groundingMetadata"];
    let chunks = meta["groundingChunks"].as_array().unwrap().len();
    for support in meta["groundingSupports"].as_array().unwrap() {
        let s = support["segment"]["startIndex"].as_u64().unwrap() as usize;
        let e = support["segment"]["endIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            &answer.as_bytes()[s..e],
            support["segment"]["text"].as_str().unwrap().as_bytes()
        );
        let indices = support["groundingChunkIndices"].as_array().unwrap();
        let scores = support["confidenceScores"].as_array().unwrap();
        assert_eq!(indices.len(), scores.len());
        assert!(!indices.is_empty());
        assert!(
            indices
                .iter()
                .all(|i| (i.as_u64().unwrap() as usize) < chunks)
        );
        assert!(
            scores
                .iter()
                .all(|c| (0.0..=1.0).contains(&c.as_f64().unwrap()))
        );
    }
}

const SPACE_STATEMENT: &str = "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.";
const SPACE_QUOTE: &str =
    "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission";

#[tokio::test]
async fn grounding_a_cites_correctly() {
    check_verdict(Verdict {
        name: "grounding_a_cites_correctly",
        question: QUESTION,
        reply: good_answer(),
        codes: (0, 0),
        grounded: true,
        strict_cause: "",
    })
    .await;
}

#[tokio::test]
async fn grounding_b_invented_quote() {
    let reply = json!({"answerable": true, "statements": [
        {"text": SPACE_STATEMENT, "citations": [{"source": 1, "quote": SPACE_QUOTE}]},
        {"text": "A dried tardigrade can wait two hundred years for water.",
         "citations": [{"source": 2, "quote": "a tun can wait two hundred years for water"}]}
    ], "unknowns": []});
    check_verdict(Verdict {
        name: "grounding_b_invented_quote",
        question: QUESTION,
        reply: reply.to_string(),
        codes: (0, 6),
        grounded: false,
        strict_cause: "1 of 2 statements have no verified citation",
    })
    .await;
}

#[tokio::test]
async fn grounding_c_invented_source_number() {
    let reply = json!({"answerable": true, "statements": [
        {"text": SPACE_STATEMENT, "citations": [{"source": 1, "quote": SPACE_QUOTE}]},
        {"text": "Tardigrades exposed to full ultraviolet light mostly died.",
         "citations": [{"source": 9, "quote": "Those exposed to the full ultraviolet spectrum fared much worse"}]}
    ], "unknowns": []});
    check_verdict(Verdict {
        name: "grounding_c_invented_source",
        question: QUESTION,
        reply: reply.to_string(),
        codes: (0, 6),
        grounded: false,
        strict_cause: "1 of 2 statements have no verified citation",
    })
    .await;
}

#[tokio::test]
async fn grounding_d_sources_do_not_answer() {
    let reply = json!({"answerable": false, "statements": [], "unknowns": [
        "None of the sources says how long tardigrades live on the Moon.",
        "The sources only describe ten days in low Earth orbit."
    ]});
    check_verdict(Verdict {
        name: "grounding_d_not_answerable",
        question: "how long do tardigrades live on the moon",
        reply: reply.to_string(),
        codes: (0, 6),
        grounded: false,
        strict_cause: "the sources do not answer the question",
    })
    .await;
}
