//! The OpenAI-compatible backend (`--llm openai`: llama.cpp's llama-server, vLLM,
//! LM Studio, hosted services) against a wiremock server with replies shaped like
//! llama-server's.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path};
use wiremock::{Mock, ResponseTemplate};

const KEY: &str = "sk-test-FAKE-KEY-0123456789";

fn completion(content: &str, finish_reason: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-Xq3pGQ",
        "object": "chat.completion",
        "created": 1763768412,
        "model": "smollm2",
        "system_fingerprint": "b6915-7d1c8c3a",
        "choices": [{"index": 0, "finish_reason": finish_reason,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"completion_tokens": 88, "prompt_tokens": 734, "total_tokens": 822},
        "timings": {"prompt_n": 734, "prompt_ms": 812.4, "predicted_n": 88, "predicted_ms": 1204.9}
    })
}

async fn openai_world() -> World {
    let world = World::new().await;
    world.search_and_pages().await;
    world
}

fn ground_openai(world: &World) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM", "openai")
        .env("GROUND_LLM_URL", format!("{}/v1", world.ollama.uri()))
        .env("GROUND_MODEL", "smollm2");
    cmd
}

#[tokio::test]
async fn answers_through_chat_completions_with_a_json_schema() {
    let world = openai_world().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", format!("Bearer {KEY}").as_str()))
        .and(body_partial_json(json!({
            "model": "smollm2",
            "stream": true,
            "stream_options": {"include_usage": true},
            "temperature": 0,
            "max_tokens": 1024,
            "response_format": {"type": "json_schema", "json_schema": {"name": "grounded_answer", "schema": {"type": "object"}}}
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(&good_answer(), "stop")))
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = ground_openai(&world);
    cmd.env("GROUND_LLM_API_KEY", KEY).args([
        "answer",
        "--json",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["grounded"], true);
    assert_eq!(v["model"]["backend"], "openai");
    assert_eq!(v["model"]["prompt_tokens"], 734);
    assert_eq!(v["model"]["completion_tokens"], 88);
    assert!(
        !stdout(&out).contains(KEY) && !stderr(&out).contains(KEY),
        "the key must never be printed"
    );
}

#[tokio::test]
async fn base_url_without_v1_gets_it_appended() {
    let world = openai_world().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(&good_answer(), "stop")))
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = ground_openai(&world);
    cmd.env("GROUND_LLM_URL", world.ollama.uri()).args([
        "answer",
        "-q",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
}

async fn failing_with(status: u16, body: serde_json::Value) -> std::process::Output {
    let world = openai_world().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(status).set_body_json(body))
        .mount(&world.ollama)
        .await;
    let mut cmd = ground_openai(&world);
    cmd.env("GROUND_LLM_API_KEY", KEY)
        .args(["answer", "do tardigrades survive in space"]);
    run(cmd).await
}

#[tokio::test]
async fn llama_cpp_context_overflow_names_the_servers_window() {
    let out = failing_with(
        400,
        json!({"error": {"code": 400, "message": "request (4476 tokens) exceeds the available context size (2048 tokens)", "type": "exceed_context_size_error", "n_prompt_tokens": 4476, "n_ctx": 2048}}),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        stderr(&out),
        "error: the prompt does not fit the model server's context window: request (4476 tokens) exceeds the available context size (2048 tokens)\n\
         hint: the server's window is 2048 tokens: run ground with --context-tokens 2048 (or lower), or start the server with a larger context (llama-server -c)\n"
    );
}

#[tokio::test]
async fn a_refused_key_says_where_to_set_it_without_printing_it() {
    let out = failing_with(401, json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}})).await;
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    assert!(
        err.contains("HTTP 401") && err.contains("hint: set the API key with GROUND_LLM_API_KEY"),
        "{err}"
    );
    assert!(!err.contains(KEY) && !stdout(&out).contains(KEY));
}

#[tokio::test]
async fn unknown_model_and_rate_limit() {
    let out = failing_with(404, json!({"error": {"message": "The model `smollm2` does not exist", "type": "invalid_request_error", "code": "model_not_found"}})).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("model \"smollm2\" is not available on the OpenAI-compatible server"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("/v1/models"), "{}", stderr(&out));

    let out = failing_with(
        429,
        json!({"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}),
    )
    .await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("HTTP 429: Rate limit reached"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("hint: the model server is rate-limiting"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn an_unreachable_server_names_the_openai_fix() {
    let world = openai_world().await;
    let mut cmd = ground_openai(&world);
    cmd.env("GROUND_LLM_URL", closed_port_url())
        .args(["answer", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).starts_with(
            "error: cannot reach the OpenAI-compatible model server at http://127.0.0.1:"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out)
            .contains("hint: start the OpenAI-compatible server (llama-server, vLLM, LM Studio)"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_reply_cut_at_max_tokens_is_retried_then_fails() {
    let world = openai_world().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion("{\"answerable\": true, \"statements\": [{\"text\": \"Tardigrades tardigrades tardigrades", "length")))
        .expect(2)
        .mount(&world.ollama)
        .await;
    let mut cmd = ground_openai(&world);
    cmd.args(["answer", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("cut off at the 1024-token output cap"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out)
            .contains("hint: the reply hit the output-token cap: raise --max-answer-tokens"),
        "{}",
        stderr(&out)
    );
}
