//! OpenAI-compatible chat completions (`POST {base}/v1/chat/completions`), as served
//! by llama.cpp's llama-server, vLLM, LM Studio and hosted services.
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

use super::client::{
    ChatBackend, ModelReply, ModelRequest, StreamFormat, error_message, http_client, post_json,
    stream_chat,
};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

/// A client for one OpenAI-compatible server and model.
pub struct OpenAi {
    client: reqwest::Client,
    settings: LlmSettings,
}

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

impl OpenAi {
    /// Builds a client from the resolved settings.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        Ok(Self {
            client: http_client(settings)?,
            settings: settings.clone(),
        })
    }

    /// `{base}/chat/completions` when the base already ends in `/v1` (the OpenAI SDK
    /// convention), else `{base}/v1/chat/completions`.
    fn endpoint(&self) -> Url {
        let mut url = self.settings.url.clone();
        let base = url.path().trim_end_matches('/').to_string();
        let path = if base.ends_with("/v1") {
            format!("{base}/chat/completions")
        } else {
            format!("{base}/v1/chat/completions")
        };
        url.set_path(&path);
        url
    }
}

impl ChatBackend for OpenAi {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn backend(&self) -> LlmBackend {
        LlmBackend::OpenAi
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
            StreamFormat::EventStream,
            on_text,
            |status, bytes| self.parse_whole(status, bytes),
        )
        .await
    }
}

impl OpenAi {
    /// The request body, streamed or not.
    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        let mut body = json!({
            "model": self.settings.model,
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
    fn parse_whole(&self, status: u16, bytes: &[u8]) -> Result<ModelReply, Error> {
        if status != 200 {
            return Err(self.http_error(status, bytes));
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
}

impl OpenAi {
    fn http_error(&self, status: u16, bytes: &[u8]) -> Error {
        let message = error_message(bytes);
        let details: Value = serde_json::from_slice(bytes).unwrap_or(Value::Null);
        let kind = details["error"]["type"]
            .as_str()
            .or(details["error"]["code"].as_str())
            .unwrap_or("");
        if kind == "exceed_context_size_error"
            || message.contains("exceeds the available context size")
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
                model: self.settings.model.clone(),
                url: crate::http::display_url(&self.settings.url),
            },
            _ => Error::ModelHttp { status, message },
        }
    }
}
