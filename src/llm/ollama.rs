//! Ollama's native chat API (`POST /api/chat`): its endpoint, request body and whole
//! reply, for the one model-server backend ([`super::server`]), which streams it as
//! NDJSON for the answer and reads it whole for the small planning calls; and the
//! look at the models a server has.
//!
//! We send `stream` explicitly (the server streams by default), `format` = the
//! answer's JSON Schema, `options.num_ctx` = our budgeted window (Ollama otherwise
//! truncates long prompts silently, keeping their end), `num_predict` = the output
//! cap, temperature 0, and `think: false`.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::client::{ModelReply, ModelRequest, error_message};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    message: Option<ChatMessage>,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u32>,
    #[serde(default)]
    eval_count: Option<u32>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct ChatMessage {
    #[serde(default)]
    content: String,
}

/// `{base}/api/chat`.
pub(super) fn endpoint(base: &Url) -> Url {
    let mut url = base.clone();
    let path = format!("{}/api/chat", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// The request body for `model`, streamed or not.
pub(super) fn body(model: &str, request: &ModelRequest, stream: bool) -> serde_json::Value {
    json!({
        "model": model,
        "messages": [
            {"role": "system", "content": request.system},
            {"role": "user", "content": request.user},
        ],
        "stream": stream,
        "format": request.schema,
        "think": false,
        "options": {
            "num_ctx": request.context_tokens,
            "num_predict": request.max_answer_tokens,
            "temperature": 0,
            "seed": 42,
        },
    })
}

/// A whole (non-streamed) reply or error body, errors as the server gave them.
pub(super) fn parse_whole(
    settings: &LlmSettings,
    status: u16,
    bytes: &[u8],
) -> Result<ModelReply, Error> {
    if status != 200 {
        let message = error_message(bytes);
        // Only Ollama's "model 'NAME' not found" means a missing model; a bare
        // "404 page not found" is a wrong URL path (e.g. an OpenAI `/v1` base URL).
        if status == 404 && message.contains("model") && message.contains("not found") {
            return Err(Error::ModelNotFound {
                backend: LlmBackend::Ollama,
                model: settings.model.clone(),
                url: crate::http::display_url(&settings.url),
            });
        }
        return Err(Error::ModelHttp { status, message });
    }
    let parsed: ChatResponse = serde_json::from_slice(bytes).map_err(|e| Error::ModelHttp {
        status,
        message: format!(
            "the server's reply is not Ollama chat JSON ({e}); is --llm-url an Ollama server?"
        ),
    })?;
    if let Some(error) = parsed.error {
        return Err(Error::ModelHttp {
            status,
            message: error_message(
                &serde_json::to_vec(&json!({"error": error})).unwrap_or_default(),
            ),
        });
    }
    Ok(ModelReply {
        content: parsed.message.map(|m| m.content).unwrap_or_default(),
        done_reason: parsed.done_reason,
        prompt_tokens: parsed.prompt_eval_count,
        completion_tokens: parsed.eval_count,
        ..ModelReply::default()
    })
}

/// The models an Ollama server has (`GET /api/tags`), asked within `limit`; an error
/// when nothing that looks like Ollama answers in time.
pub(crate) async fn installed_models(
    settings: &LlmSettings,
    limit: std::time::Duration,
) -> Result<Vec<String>, Error> {
    let unreachable = |reason: String| Error::ModelUnreachable {
        backend: LlmBackend::Ollama,
        url: crate::http::display_url(&settings.url),
        reason,
    };
    let client = crate::http::client_builder(limit, Some(limit))
        .build()
        .map_err(|e| unreachable(crate::http::describe_error(&e)))?;
    let mut url = settings.url.clone();
    let path = format!("{}/api/tags", url.path().trim_end_matches('/'));
    url.set_path(&path);
    let response = client
        .get(url)
        .send()
        .await
        .map_err(|e| unreachable(crate::http::describe_error(&e)))?;
    if !response.status().is_success() {
        return Err(unreachable(format!("HTTP {}", response.status().as_u16())));
    }
    let body = crate::http::read_bounded(response, 1024 * 1024)
        .await
        .map_err(|e| unreachable(crate::http::describe_error(&e)))?;
    let tags: serde_json::Value = serde_json::from_slice(&body.bytes)
        .map_err(|_| unreachable("not Ollama's model list".into()))?;
    let models = tags
        .get("models")
        .and_then(serde_json::Value::as_array)
        .ok_or_else(|| unreachable("not Ollama's model list".into()))?;
    Ok(models
        .iter()
        .filter_map(|m| m.get("name").or_else(|| m.get("model")))
        .filter_map(serde_json::Value::as_str)
        .map(str::to_string)
        .collect())
}
