//! Ollama's native chat API (`POST /api/chat`), streamed (NDJSON) for the answer and
//! whole for the small planning calls.
//!
//! We send `stream` explicitly (the server streams by default), `format` = the
//! answer's JSON Schema, `options.num_ctx` = our budgeted window (Ollama otherwise
//! truncates long prompts silently, keeping their end), `num_predict` = the output
//! cap, temperature 0, and `think: false`.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::client::{
    ChatBackend, ModelReply, ModelRequest, StreamFormat, error_message, http_client, post_json,
    stream_chat,
};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

/// A client for one Ollama server and model.
pub struct Ollama {
    client: reqwest::Client,
    settings: LlmSettings,
}

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

impl Ollama {
    /// Builds a client from the resolved settings.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        Ok(Self {
            client: http_client(settings)?,
            settings: settings.clone(),
        })
    }

    fn endpoint(&self) -> Url {
        let mut url = self.settings.url.clone();
        let path = format!("{}/api/chat", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url
    }
}

impl ChatBackend for Ollama {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn backend(&self) -> LlmBackend {
        LlmBackend::Ollama
    }

    async fn chat(&self, request: &ModelRequest) -> Result<ModelReply, Error> {
        // A hosted server may quote our key back in its error text.
        let (status, bytes) = post_json(
            &self.client,
            &self.settings,
            self.endpoint(),
            &self.body(request, false),
        )
        .await
        .map_err(|e| e.redact(self.settings.api_key.as_ref()))?;
        self.parse_whole(status, &bytes)
            .map_err(|e| e.redact(self.settings.api_key.as_ref()))
    }

    async fn chat_stream(
        &self,
        request: &ModelRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Error> {
        stream_chat(
            &self.client,
            &self.settings,
            self.endpoint(),
            &self.body(request, true),
            StreamFormat::Ndjson,
            on_text,
            |status, bytes| self.parse_whole(status, bytes),
        )
        .await
    }
}

impl Ollama {
    /// The request body, streamed or not.
    fn body(&self, request: &ModelRequest, stream: bool) -> serde_json::Value {
        json!({
            "model": self.settings.model,
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
    fn parse_whole(&self, status: u16, bytes: &[u8]) -> Result<ModelReply, Error> {
        if status != 200 {
            let message = error_message(bytes);
            // Only Ollama's "model 'NAME' not found" means a missing model; a bare
            // "404 page not found" is a wrong URL path (e.g. an OpenAI `/v1` base URL).
            if status == 404 && message.contains("model") && message.contains("not found") {
                return Err(Error::ModelNotFound {
                    backend: LlmBackend::Ollama,
                    model: self.settings.model.clone(),
                    url: crate::http::display_url(&self.settings.url),
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
