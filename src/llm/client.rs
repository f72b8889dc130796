//! Talking to a model server: the [`ChatBackend`] trait each wire API implements, the
//! [`Backend`] chosen by the settings, and the request, reply and HTTP helpers they
//! share (one client builder, one bounded reply read, one error-text reader).

use serde_json::Value;

use crate::error::{Error, ReplyProblem};
use crate::settings::{LlmBackend, LlmSettings};
use crate::text::{sanitize_line, shorten};

/// Largest reply body read from a model server; a larger one is a model failure.
pub const MAX_REPLY_BYTES: usize = 4 * 1024 * 1024;

/// A model server that can answer one chat request. Implemented per wire API.
pub trait ChatBackend {
    /// Sends one request and returns the reply, mapping every server failure to an
    /// [`Error`] with a hint.
    fn chat(
        &self,
        request: &ModelRequest,
    ) -> impl Future<Output = Result<ModelReply, Error>> + Send;
    /// The model name, for reports.
    fn model(&self) -> &str;
    /// Which API this is.
    fn backend(&self) -> LlmBackend;
}

/// Builds the HTTP client every model backend uses: our User-Agent, a connect limit
/// and the whole-call limit from the settings.
pub fn http_client(settings: &LlmSettings) -> Result<reqwest::Client, Error> {
    crate::http::client_builder(std::time::Duration::from_secs(10), Some(settings.timeout))
        .build()
        .map_err(|e| Error::Internal {
            message: format!(
                "cannot build the HTTP client for the model server: {}",
                crate::http::describe_error(&e)
            ),
        })
}

/// Sends a JSON POST and reads the reply body up to [`MAX_REPLY_BYTES`], mapping
/// transport failures (refused, timed out) to model errors.
pub async fn post_json(
    client: &reqwest::Client,
    settings: &LlmSettings,
    url: url::Url,
    body: &Value,
) -> Result<(u16, Vec<u8>), Error> {
    let transport = |e: reqwest::Error| {
        if e.is_timeout() {
            Error::ModelTimeout {
                seconds: settings.timeout.as_secs(),
            }
        } else {
            Error::ModelUnreachable {
                backend: settings.backend,
                url: crate::http::display_url(&settings.url),
                reason: crate::http::describe_error(&e),
            }
        }
    };
    let mut request = client.post(url).json(body);
    if let Some(key) = &settings.api_key {
        request = request.bearer_auth(key.expose());
    }
    let response = request.send().await.map_err(transport)?;
    let status = response.status().as_u16();
    let body = crate::http::read_bounded(response, MAX_REPLY_BYTES)
        .await
        .map_err(transport)?;
    // The one redaction point for model replies, error or not (a 200 reply may quote
    // the key too), before any excerpt of it is cut.
    let secrets: Vec<&str> = settings.api_key.iter().map(|k| k.expose()).collect();
    let bytes = crate::text::redact_bytes(body.bytes, &secrets);
    if body.truncated {
        return Err(Error::ModelBadReply {
            attempts: 1,
            detail: format!(
                "the reply is larger than {} MiB",
                MAX_REPLY_BYTES / 1024 / 1024
            ),
            raw_start: sanitize_line(&shorten(
                &String::from_utf8_lossy(&bytes[..bytes.len().min(480)]),
                120,
            )),
            problem: ReplyProblem::TooLarge,
        });
    }
    Ok((status, bytes))
}

/// A server's error text, one sanitised line: `{"error": "..."}` (Ollama),
/// `{"error": {"message": "..."}}` (OpenAI-compatible), or the raw body.
pub fn error_message(bytes: &[u8]) -> String {
    let message = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| match v.get("error") {
            Some(Value::String(s)) => Some(s.clone()),
            Some(obj @ Value::Object(_)) => obj
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        })
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned());
    sanitize_line(&shorten(&message, 200))
}

/// What is sent to the model.
#[derive(Debug, Clone)]
pub struct ModelRequest {
    /// Instructions.
    pub system: String,
    /// Sources and question.
    pub user: String,
    /// The JSON Schema the reply must follow.
    pub schema: Value,
    /// Context window to use (Ollama's `num_ctx`).
    pub context_tokens: u32,
    /// Output-token cap.
    pub max_answer_tokens: u32,
}

/// The raw reply of one model call.
#[derive(Debug, Clone, Default)]
pub struct ModelReply {
    /// The message text (should be JSON).
    pub content: String,
    /// Why generation stopped ("stop", "length", ...).
    pub done_reason: Option<String>,
    /// Prompt tokens the server counted.
    pub prompt_tokens: Option<u32>,
    /// Tokens generated.
    pub completion_tokens: Option<u32>,
}
