//! Secrets that servers or the configuration hand back are never shown: an API key
//! quoted in a 200 reply's text or echoed inside a streamed statement (neither as it
//! streams nor after), a key straddling the cut of an error excerpt (no prefix
//! leaks), and a password in a configured SearXNG or model URL. The keys on every
//! command's success and failure paths are in `secrets`.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{body_partial_json, method, path};
use wiremock::{Mock, ResponseTemplate};

const LLM_KEY: &str = "sk-proj-FAKEKEY-0123456789abcdefXYZ";
const BRAVE_KEY: &str = "BSA-brave-FAKEKEY-99887766554433";

#[tokio::test]
async fn a_key_quoted_in_a_200_reply_is_never_shown() {
    let world = World::new().await;
    world.search_and_pages().await;
    let content = format!("Error: the API key {LLM_KEY} is not valid for this model.");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1763768412, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"completion_tokens": 20, "prompt_tokens": 700, "total_tokens": 720}
        })))
        .mount(&world.ollama)
        .await;
    for json in [false, true] {
        let mut cmd = world.ground();
        cmd.env("GROUND_LLM", "openai")
            .env("GROUND_LLM_URL", format!("{}/v1", world.ollama.uri()))
            .env("GROUND_LLM_API_KEY", LLM_KEY)
            .args(["answer", "Can tardigrades survive in space?"]);
        if json {
            cmd.arg("--json");
        }
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(all.contains("reply began"), "{all}");
        assert!(!all.contains("FAKEKEY"), "{all}");
        assert!(all.contains("<redacted>"), "{all}");
    }
}

#[tokio::test]
async fn a_key_straddling_the_cut_of_an_error_message_leaks_no_prefix() {
    let world = World::new().await;
    // Brave's message puts the key right where the 200-character excerpt ends.
    let message = format!(
        "{} {BRAVE_KEY} is not a valid subscription token",
        "x".repeat(190)
    );
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401).set_body_json(serde_json::json!({
            "type": "ErrorResponse",
            "error": {"id": "1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": message, "meta": {}}
        })))
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_SEARCH") // the config file names the service
        .env("GROUND_CONFIG", &config)
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("BSA-brave"), "{all}");
    assert!(!all.contains("BSA-b"), "{all}");
}

#[tokio::test]
async fn credentials_in_configured_urls_are_never_printed() {
    let world = World::new().await;
    let closed = closed_port_url().replace("http://", "http://me:s3cretpw@");
    // Search down: the error (stderr and --json) names the server without the password.
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", &closed)
        .args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("s3cretpw"), "{all}");
    assert!(all.contains("me:redacted@"), "{all}");
    // Model down: the same.
    world.search_and_pages().await;
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM_URL", &closed).args([
        "answer",
        "--json",
        "Can tardigrades survive in space?",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("s3cretpw"), "{all}");
}

// Statements printed as the reply streams ------------------------------------------

const STREAMED_KEY: &str = "sk-live-streamed-key-0123456789";

/// An answer whose first statement repeats the key.
fn answer_echoing_the_key() -> String {
    json!({
        "answerable": true,
        "statements": [
            {"text": format!("The server was called with the key {STREAMED_KEY} in 2007."),
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
            .env("GROUND_LLM_API_KEY", STREAMED_KEY)
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
