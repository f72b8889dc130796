//! Redaction of what is printed live: a model that echoes the API key inside a
//! streamed statement never puts the key on stdout, neither as it streams nor after.

mod common;

use common::*;
use serde_json::json;
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, ResponseTemplate};

const LLM_KEY: &str = "sk-live-streamed-key-0123456789";

/// An answer whose first statement repeats the key.
fn answer_echoing_the_key() -> String {
    json!({
        "answerable": true,
        "statements": [
            {"text": format!("The server was called with the key {LLM_KEY} in 2007."),
             "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]}
        ],
        "unknowns": []
    })
    .to_string()
}

#[tokio::test]
async fn a_key_echoed_in_a_streamed_statement_is_never_printed() {
    for (backend, route, body, content_type) in [
        (
            "ollama",
            "/api/chat",
            ollama_stream(&answer_echoing_the_key(), Some("stop"), 3),
            "application/x-ndjson",
        ),
        (
            "openai",
            "/v1/chat/completions",
            sse_stream(&answer_echoing_the_key(), "stop", 3),
            "text/event-stream",
        ),
    ] {
        let world = World::new().await;
        world
            .search_replies_with_capture("searxng/normal.body.json")
            .await;
        world.serve_fixture_pages().await;
        Mock::given(method("POST"))
            .and(path(route))
            .and(body_partial_json(json!({"stream": true})))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, content_type))
            .mount(&world.ollama)
            .await;
        let mut cmd = world.ground();
        cmd.env("GROUND_LLM", backend)
            .env("GROUND_LLM_API_KEY", LLM_KEY)
            .args(["answer", "do tardigrades survive in space"]);
        let out = run(cmd).await;
        let (stdout, stderr) = (stdout(&out), stderr(&out));
        assert!(
            !stdout.contains("sk-live"),
            "{backend}: key on stdout:\n{stdout}"
        );
        assert!(
            !stderr.contains("sk-live"),
            "{backend}: key on stderr:\n{stderr}"
        );
        assert!(
            stdout.contains("the key <redacted> in 2007"),
            "{backend}: the statement is printed, redacted:\n{stdout}"
        );
        assert!(
            !stdout.contains("differs"),
            "{backend}: the live statement is the final one:\n{stdout}"
        );
    }
}
