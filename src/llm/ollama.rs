//! Ollama's native chat API (`POST /api/chat`), non-streaming.
//!
//! We always send `stream: false` (the server streams by default), `format` = the
//! answer's JSON Schema, `options.num_ctx` = our budgeted window (Ollama otherwise
//! truncates long prompts silently, keeping their end), `num_predict` = the output
//! cap, temperature 0, and `think: false`.

use serde::Deserialize;
use serde_json::json;
use url::Url;

use super::{ModelReply, ModelRequest};
use crate::config::LlmSettings;
use crate::error::{Error, describe_reqwest, shorten};

/// Largest reply body read from the server; a larger one is a model failure.
pub const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;

/// A client for one Ollama server and model.
pub struct Ollama {
    client: reqwest::Client,
    base: Url,
    model: String,
    timeout_secs: u64,
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

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
}

impl Ollama {
    /// Builds a client from the resolved settings.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        let client = reqwest::Client::builder()
            .user_agent(crate::search::searxng::USER_AGENT)
            .connect_timeout(std::time::Duration::from_secs(10))
            .timeout(settings.timeout)
            .build()
            .map_err(|e| Error::ModelUnreachable {
                url: settings.url.to_string(),
                reason: describe_reqwest(&e),
            })?;
        Ok(Self {
            client,
            base: settings.url.clone(),
            model: settings.model.clone(),
            timeout_secs: settings.timeout.as_secs(),
        })
    }

    /// The model name, for reports.
    pub fn model(&self) -> &str {
        &self.model
    }

    fn endpoint(&self) -> Url {
        let mut url = self.base.clone();
        let path = format!("{}/api/chat", url.path().trim_end_matches('/'));
        url.set_path(&path);
        url
    }

    fn base_display(&self) -> String {
        self.base.as_str().trim_end_matches('/').to_string()
    }

    /// Sends one chat request and returns the reply, mapping every server failure
    /// to an [`Error`] with a hint.
    pub async fn chat(&self, request: &ModelRequest) -> Result<ModelReply, Error> {
        let body = json!({
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
            "stream": false,
            "format": request.schema,
            "think": false,
            "options": {
                "num_ctx": request.context_tokens,
                "num_predict": request.max_answer_tokens,
                "temperature": 0,
                "seed": 42,
            },
        });
        let transport = |e: reqwest::Error| {
            if e.is_timeout() {
                Error::ModelTimeout {
                    seconds: self.timeout_secs,
                }
            } else {
                Error::ModelUnreachable {
                    url: self.base_display(),
                    reason: describe_reqwest(&e),
                }
            }
        };
        let mut response = self
            .client
            .post(self.endpoint())
            .json(&body)
            .send()
            .await
            .map_err(transport)?;
        let status = response.status().as_u16();
        let mut bytes: Vec<u8> = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if bytes.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(Error::ModelBadReply {
                    attempts: 1,
                    detail: format!(
                        "the reply is larger than {} MiB",
                        MAX_REPLY_BYTES / 1024 / 1024
                    ),
                    raw_start: crate::render::sanitize_line(&shorten(
                        &String::from_utf8_lossy(&bytes),
                        120,
                    )),
                    cut_off: false,
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        if status != 200 {
            let message = serde_json::from_slice::<ErrorBody>(&bytes)
                .map(|e| e.error)
                .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
            let message = crate::render::sanitize_line(&shorten(&message, 200));
            if status == 404 && message.contains("not found") {
                return Err(Error::ModelNotFound {
                    model: self.model.clone(),
                    url: self.base_display(),
                });
            }
            return Err(Error::ModelHttp { status, message });
        }
        let parsed: ChatResponse = serde_json::from_slice(&bytes).map_err(|e| Error::ModelHttp {
            status,
            message: format!(
                "the server's reply is not Ollama chat JSON ({e}); is --llm-url an Ollama server?"
            ),
        })?;
        if let Some(error) = parsed.error {
            return Err(Error::ModelHttp {
                status,
                message: crate::render::sanitize_line(&shorten(&error, 200)),
            });
        }
        Ok(ModelReply {
            content: parsed.message.map(|m| m.content).unwrap_or_default(),
            done_reason: parsed.done_reason,
            prompt_tokens: parsed.prompt_eval_count,
            completion_tokens: parsed.eval_count,
        })
    }
}
