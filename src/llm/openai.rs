//! OpenAI-compatible chat completions (`POST {base}/v1/chat/completions`), as served
//! by llama.cpp's llama-server, vLLM, LM Studio and hosted services: the endpoint,
//! request body, whole reply and errors for the one model-server backend
//! ([`super::server`]).
//!
//! The answer is streamed (`stream: true` with `stream_options.include_usage`, so the
//! last event carries the token counts); the small planning calls are not. The reply
//! is constrained with `response_format: {type: "json_schema"}` and capped
//! with `max_tokens`. Unlike Ollama, the context window cannot be set per request:
//! `--context-tokens` must match the server's, and llama.cpp answers an over-long
//! prompt with 400 `exceed_context_size_error` instead of truncating it.

use serde::Deserialize;
use serde_json::{Value, json};
use url::Url;

use super::client::{ModelReply, ModelRequest, error_message};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

#[derive(Deserialize)]
struct Completion {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<Usage>,
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    message: Option<Message>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<u32>,
    #[serde(default)]
    completion_tokens: Option<u32>,
}

/// `{base}/chat/completions` when the base already ends in `/v1` (the OpenAI SDK
/// convention), else `{base}/v1/chat/completions`.
pub(super) fn endpoint(base: &Url) -> Url {
    let mut url = base.clone();
    let base = url.path().trim_end_matches('/').to_string();
    let path = if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    url.set_path(&path);
    url
}

/// The request body for `model`, streamed or not.
pub(super) fn body(model: &str, request: &ModelRequest, stream: bool) -> Value {
    let mut body = json!({
        "model": model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "stream": stream,
        "temperature": 0,
        "seed": 42,
        "max_tokens": request.max_answer_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "grounded_answer", "schema": request.schema},
        },
    });
    if stream {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// A whole (non-streamed) reply or error body, errors as the server gave them.
pub(super) fn parse_whole(
    settings: &LlmSettings,
    status: u16,
    bytes: &[u8],
) -> Result<ModelReply, Error> {
    if status != 200 {
        return Err(http_error(settings, status, bytes));
    }
    let parsed: Completion = serde_json::from_slice(bytes).map_err(|e| Error::ModelHttp {
        status,
        message: format!(
            "the server's reply is not chat-completions JSON ({e}); is --llm-url an OpenAI-compatible server?"
        ),
    })?;
    let choice = parsed.choices.into_iter().next();
    let usage = parsed.usage;
    Ok(ModelReply {
        content: choice
            .as_ref()
            .and_then(|c| c.message.as_ref())
            .and_then(|m| m.content.clone())
            .unwrap_or_default(),
        done_reason: choice.and_then(|c| c.finish_reason),
        prompt_tokens: usage.as_ref().and_then(|u| u.prompt_tokens),
        completion_tokens: usage.and_then(|u| u.completion_tokens),
        ..ModelReply::default()
    })
}

/// The error of a reply that is not 200: the context exceeded, the key refused, the
/// model missing, or the server's own words.
fn http_error(settings: &LlmSettings, status: u16, bytes: &[u8]) -> Error {
    let message = error_message(bytes);
    let details: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
    let kind = details["error"]["type"]
        .as_str()
        .or(details["error"]["code"].as_str())
        .unwrap_or("");
    if kind == "exceed_context_size_error" || message.contains("exceeds the available context size")
    {
        return Error::ModelContextExceeded {
            message,
            server_window: details["error"]["n_ctx"].as_u64(),
        };
    }
    match status {
        401 | 403 => Error::ModelAuth { status, message },
        404 if message.contains("model") => Error::ModelNotFound {
            backend: LlmBackend::OpenAi,
            model: settings.model.clone(),
            url: crate::http::display_url(&settings.url),
        },
        _ => Error::ModelHttp { status, message },
    }
}
