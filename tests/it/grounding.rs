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
            assert_matches_schema(ground::mcp::schemas::GROUNDED_ANSWER, &v);
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

/// A small model's answer: right statements, quotes garbled or invented.
fn sloppy_quotes_answer() -> String {
    json!({"answerable": true, "statements": [
        {"text": "Dried tardigrades spent ten days in open space on the FOTON-M3 mission in September 2007.",
         "citations": [{"source": 1, "quote": "tardigrades flew on FOTON-M3 for ten days"}]},
        {"text": "More than 1300 species of tardigrades are known.",
         "citations": [{"source": 3, "quote": "over 1300 known species of water bear"}]}
    ], "unknowns": []})
    .to_string()
}

#[tokio::test]
async fn grounding_e_true_statements_with_sloppy_quotes_are_matched() {
    check_verdict(Verdict {
        name: "grounding_e_sloppy_quotes_matched",
        question: QUESTION,
        reply: sloppy_quotes_answer(),
        codes: (0, 0),
        grounded: true,
        strict_cause: "",
    })
    .await;
    // The person output shows [n] for both, and says they were matched, not quoted.
    let world = World::new().await;
    world.healthy(&sloppy_quotes_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    let text = stdout(&out);
    assert!(
        text.starts_with("Dried tardigrades spent ten days in open space on the FOTON-M3 mission in September 2007.[1] More than 1300 species of tardigrades are known.[3]\n"),
        "{text}"
    );
    assert!(
        text.contains("(1 statement matched, 1 quote not found)"),
        "{text}"
    );
    // --json: each statement's support, and the matched window as a citation with its
    // offsets in the source's text.
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", QUESTION]);
    let v = json_stdout(&run_within(cmd, RUN_DEADLINE).await);
    check_gemini_rules(&v);
    assert_eq!(v["statements"][0]["support"], "match");
    assert_eq!(v["statements"][1]["sources"], json!([3]));
    let matched: Vec<&Value> = v["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["support"] == "match")
        .collect();
    assert_eq!(matched.len(), 2, "{v}");
    assert_eq!(
        matched[0]["text"],
        "In September 2007, dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission, as part of the TARDIS experiment run by the European Space Agency."
    );
    let page = v["sources"][0]["chars"].as_u64().unwrap();
    let (s, e) = (
        matched[0]["source_start_index"].as_u64().unwrap(),
        matched[0]["source_end_index"].as_u64().unwrap(),
    );
    assert!(s < e && e <= page * 4, "{s}..{e}");
    for support in v["groundingMetadata"]["groundingSupports"]
        .as_array()
        .unwrap()
    {
        assert_eq!(support["support"], "match");
    }
    // --strict-quotes asks for the model's own quotes: matches do not count.
    let mut cmd = world.ground();
    cmd.args(["answer", "--strict-quotes", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(
        &out,
        6,
        &[
            "2 of 2 statements have no verified quote",
            "only matched by ground",
        ],
        "--strict",
    );
}

#[tokio::test]
async fn grounding_f_a_wrong_number_with_a_real_quote_is_flagged() {
    let reply = json!({"answerable": true, "statements": [
        {"text": SPACE_STATEMENT, "citations": [{"source": 1, "quote": SPACE_QUOTE}]},
        {"text": "In the tun state their metabolism falls to less than 0.1 percent of its normal rate.",
         "citations": [{"source": 2, "quote": "their metabolism falls to less than 0.01 percent of its normal rate"}]}
    ], "unknowns": []});
    check_verdict(Verdict {
        name: "grounding_f_wrong_number_flagged",
        question: QUESTION,
        reply: reply.to_string(),
        codes: (0, 6),
        grounded: false,
        strict_cause: "1 say something their quoted text does not",
    })
    .await;
    let world = World::new().await;
    world.healthy(&reply.to_string()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", QUESTION]);
    let v = json_stdout(&run_within(cmd, RUN_DEADLINE).await);
    assert_eq!(v["statements"][1]["support"], "mismatch");
    assert_eq!(
        v["statements"][1]["mismatch"],
        "the number 0.1 % is not in the quoted text"
    );
    assert_eq!(v["citations"][1]["verified"], true);
    assert_eq!(v["citations"][1]["support"], "mismatch");
    assert_eq!(
        v["groundingMetadata"]["groundingSupports"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "a contradicted statement has no support"
    );
    // Markdown says it in words.
    let mut cmd = world.ground();
    cmd.args(["answer", "--format", "markdown", QUESTION]);
    let text = stdout(&run_within(cmd, RUN_DEADLINE).await);
    assert!(
        text.contains("of its normal rate. *(quote says otherwise)*[^2]"),
        "{text}"
    );
    assert!(
        text.contains("the number 0.1 % is not in the quoted text"),
        "{text}"
    );
}
