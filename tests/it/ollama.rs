//! The model server (Ollama) as `ground answer` meets it: every way a model call fails
//! (unreachable, model not installed, a wrong path, HTTP 500, an oversized reply,
//! invalid or cut-off JSON twice, silence), each with its exit code, an `error:` line
//! naming the cause, a `hint:` line with the fix and one JSON error object; the one
//! retry of a bad reply; an answer that cites nothing; and a reply past the answer
//! schema's bounds. The OpenAI-compatible backend is in `openai`.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

const QUESTION: &str = "do tardigrades survive in space";

/// Ollama answers chat requests with `reply` (status 200), at most `times` times if
/// given, and the mock expects to be called exactly `expect` times if given.
async fn model_answers(world: &World, reply: Value, times: Option<u64>, expect: Option<u64>) {
    let mut mock = Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply));
    if let Some(n) = times {
        mock = mock.up_to_n_times(n).with_priority(1);
    }
    if let Some(n) = expect {
        mock = mock.expect(n);
    }
    mock.mount(&world.ollama).await;
}

/// A world whose search and pages work, so that a run reaches the model.
async fn world_reaching_the_model() -> World {
    let world = World::new().await;
    world.search_and_pages().await;
    world
}

/// One way a model call fails: `ground answer [configure] QUESTION`, for a person
/// and with `--json`, against an Ollama that answers every chat with `reply`, fails
/// as `expected` says ([`SERVER`] in its cause is Ollama's address). Returns
/// the JSON error object.
async fn chat_reply_fails(
    reply: ResponseTemplate,
    configure: impl Fn(&World, &mut std::process::Command),
    expected: Failure<'_>,
) -> Value {
    let world = world_reaching_the_model().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(reply)
        .mount(&world.ollama)
        .await;
    let configure = |cmd: &mut std::process::Command| configure(&world, cmd);
    fails_both_ways_at(&world, &world.ollama.uri(), configure, QUESTION, &expected).await
}

#[tokio::test]
async fn ollama_unreachable() {
    let world = world_reaching_the_model().await;
    let url = closed_port_url();
    fails_both_ways(
        &world,
        |cmd| {
            cmd.env("GROUND_LLM_URL", &url);
        },
        QUESTION,
        &Failure {
            code: 5,
            kind: "model_unreachable",
            cause: &["cannot reach the", "model server at", &url],
            hint: "ollama serve",
        },
    )
    .await;
}

#[tokio::test]
async fn model_not_installed_old_and_new_ollama_messages() {
    for body in [
        r#"{"error":"model \"nosuch\" not found, try pulling it first"}"#,
        r#"{"error":"model 'nosuch' not found"}"#,
    ] {
        chat_reply_fails(
            ResponseTemplate::new(404).set_body_raw(body, "application/json"),
            |_, cmd| {
                cmd.args(["--model", "nosuch"]);
            },
            Failure {
                code: 5,
                kind: "model_not_found",
                cause: &["\"nosuch\"", SERVER],
                hint: "ollama pull nosuch",
            },
        )
        .await;
    }
}

#[tokio::test]
async fn invalid_json_twice_is_a_model_failure_after_two_calls() {
    let world = world_reaching_the_model().await;
    let raw = r#"Sure! Here is the answer: {"answerable": true, "statements": [{"text": "Tardigrades survive"#;
    model_answers(&world, ollama_reply(raw, "stop"), None, Some(2)).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    let value = assert_json_failure(
        &out,
        QUESTION,
        &Failure {
            code: 5,
            kind: "model_bad_reply",
            cause: &[
                "after 2 attempts",
                "reply began: \"Sure! Here is the answer:",
            ],
            hint: "--model",
        },
    );
    assert!(
        value["error"]["message"].as_str().unwrap().contains("JSON"),
        "{value}"
    );
    assert_eq!(world.ollama.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn cut_off_reply_twice_points_at_max_answer_tokens() {
    let world = world_reaching_the_model().await;
    let cut = r#"{"answerable": true, "statements": [{"text": "Tardigrades survive in space because they"#;
    model_answers(&world, ollama_reply(cut, "length"), None, Some(2)).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--max-answer-tokens", "256", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_json_failure(
        &out,
        QUESTION,
        &Failure {
            code: 5,
            kind: "model_bad_reply",
            cause: &["cut off", "256-token"],
            hint: "--max-answer-tokens",
        },
    );
}

#[tokio::test]
async fn a_bad_first_reply_is_retried_once() {
    let world = world_reaching_the_model().await;
    // First call: cut off at the cap. Second call: a good answer.
    model_answers(
        &world,
        ollama_reply(r#"{"answerable": true, "statements": [{"te"#, "length"),
        Some(1),
        Some(1),
    )
    .await;
    model_answers(&world, ollama_reply(&good_answer(), "stop"), None, Some(1)).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--strict", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["model"]["attempts"], 2);
    assert_eq!(v["model"]["done_reason"], "stop");
    assert_eq!(v["grounded"], true);
}

#[tokio::test]
async fn an_answer_without_any_citation_is_not_grounded() {
    let world = world_reaching_the_model().await;
    let uncited = json!({"answerable": true, "statements": [
        {"text": "Tardigrades can survive in space.", "citations": []},
        {"text": "They dry out first.", "citations": []}
    ], "unknowns": []})
    .to_string();
    model_answers(&world, ollama_reply(&uncited, "stop"), None, Some(2)).await;
    let mut cmd = world.ground();
    cmd.args(["answer", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    // Three pages read and the fourth result's snippet.
    assert_error_report(&out, 6, &["without citing any of the 4 sources"], "--model");
    // The answer is still printed. Ground's own match still looks at each statement
    // (source 1 does say the first; nothing says the second), but the run is not
    // grounded: the model cited nothing.
    let printed = stdout(&out);
    assert!(
        printed.starts_with(
            "Tardigrades can survive in space.[1] They dry out first. [unsupported]\n"
        ),
        "{printed}"
    );
    assert!(printed.contains("Sources:"), "{printed}");
    assert_eq!(world.ollama.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_answer_without_any_citation_in_json() {
    let world = world_reaching_the_model().await;
    let uncited = json!({"answerable": true, "statements": [
        {"text": "Tardigrades can survive in space.", "citations": []}
    ], "unknowns": []})
    .to_string();
    model_answers(&world, ollama_reply(&uncited, "stop"), None, Some(2)).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(&out, 6, &["without citing any"], "--model");
    // The report (not an error object) is on stdout, marked as not grounded.
    let v = json_stdout(&out);
    assert_eq!(v["answer"], "Tardigrades can survive in space.");
    assert_eq!(v["grounded"], false);
    assert_eq!(v["model"]["attempts"], 2);
    // Ground's match found the statement in source 1; that does not make an answer
    // that cites nothing grounded.
    assert_eq!(v["statements"][0]["support"], "match");
    assert_eq!(
        v["groundingMetadata"]["groundingSupports"][0]["support"],
        "match"
    );
}

#[tokio::test]
async fn ollama_server_error_500_shows_its_message() {
    chat_reply_fails(
        ResponseTemplate::new(500).set_body_raw(
            r#"{"error":"llama runner process has terminated: signal: killed"}"#,
            "application/json",
        ),
        |_, _| {},
        Failure {
            code: 5,
            kind: "model_http",
            cause: &[
                "HTTP 500",
                "llama runner process has terminated: signal: killed",
            ],
            hint: "model server's logs",
        },
    )
    .await;
}

#[tokio::test]
async fn an_oversized_model_reply_is_a_model_failure() {
    let huge = "tardigrade ".repeat(500_000); // 5.5 MB of content
    chat_reply_fails(
        ResponseTemplate::new(200).set_body_json(ollama_reply(&huge, "stop")),
        |_, _| {},
        Failure {
            code: 5,
            kind: "model_bad_reply",
            cause: &["larger than 4 MiB"],
            hint: "check that --llm-url points at a model server",
        },
    )
    .await;
}

#[tokio::test]
async fn a_wrong_model_server_path_is_not_reported_as_a_missing_model() {
    // Ollama (gin) answers unknown paths with 404 "404 page not found", e.g. when
    // --llm-url carries the OpenAI-compatible `/v1` suffix: pulling the model would
    // not help, so it must not be reported as a missing model.
    let value = chat_reply_fails(
        ResponseTemplate::new(404).set_body_raw("404 page not found", "text/plain"),
        |_, _| {},
        Failure {
            code: 5,
            kind: "model_http",
            cause: &["HTTP 404", "404 page not found"],
            hint: "",
        },
    )
    .await;
    assert!(
        !value["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("ollama pull"),
        "{value}"
    );
}

#[tokio::test]
async fn a_silent_model_times_out() {
    let started = Instant::now();
    chat_reply_fails(
        ResponseTemplate::new(200)
            .set_body_json(ollama_reply(&good_answer(), "stop"))
            .set_delay(Duration::from_secs(30)),
        |world, cmd| {
            cmd.arg("--config")
                .arg(world.config_file("[llm]\ntimeout_secs = 1\n"));
        },
        Failure {
            code: 5,
            kind: "model_timeout",
            cause: &["did not answer within 1 s"],
            hint: "timeout_secs",
        },
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_reply_with_thousands_of_statements_is_cut_to_the_schema_bounds() {
    let world = World::new().await;
    let statements: Vec<serde_json::Value> = (0..8001)
        .map(|i| serde_json::json!({"text": format!("Tardigrades fact number {i} is stated here."), "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]}))
        .collect();
    let reply = serde_json::json!({"answerable": true, "statements": statements, "unknowns": []})
        .to_string();
    assert!(reply.len() > 250_000);
    world.search_and_pages().await;
    // Streamed in large pieces: this test is about the reply, not its framing.
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            ollama_stream(&reply, Some("stop"), 4096),
            "application/x-ndjson",
        ))
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--timeout",
        "5",
        "Can tardigrades survive in space?",
    ]);
    let out = run_within(cmd, std::time::Duration::from_secs(30)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = json_stdout(&out);
    assert_eq!(json["statements"].as_array().unwrap().len(), 8);
    assert!(
        stderr(&out)
            .contains("warning: the model's reply went past the answer schema's bounds: 7993"),
        "{}",
        stderr(&out)
    );
}
