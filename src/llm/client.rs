//! Talking to a model server: the [`ChatBackend`] trait each wire API implements, the
//! [`Backend`] chosen by the settings, and the request, reply and HTTP helpers they
//! share (one client builder, one bounded reply read, one error-text reader).

use serde_json::Value;

use super::frames::{
    BodyKind, FrameError, FrameEvent, OllamaFrames, Sniffed, SseFrames,
    body_kind_from_content_type, sniff_body_kind,
};
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
    /// Sends one request asking for a streamed reply and returns the whole reply,
    /// calling `on_text` with each piece of the reply text as it arrives (in order;
    /// together they are the reply's content). A server that ignores the request to
    /// stream is fine: its whole reply is passed to `on_text` in one piece.
    fn chat_stream(
        &self,
        request: &ModelRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> impl Future<Output = Result<ModelReply, Error>> + Send;
    /// [`Self::chat_stream`], also telling `on_prefill` how far the model has read the
    /// prompt, for a backend that knows (the embedded model; a server's backend says
    /// nothing: its default is `chat_stream`). Reports come in order, before the text.
    fn chat_stream_reading(
        &self,
        request: &ModelRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
        on_prefill: &mut (dyn FnMut(Prefill) + Send),
    ) -> impl Future<Output = Result<ModelReply, Error>> + Send {
        let _ = on_prefill;
        self.chat_stream(request, on_text)
    }
    /// The model name, for reports.
    fn model(&self) -> &str;
    /// Which API this is.
    fn backend(&self) -> LlmBackend;
    /// The model file, for a model run inside this process (the embedded backend).
    fn model_file(&self) -> Option<&std::path::Path> {
        None
    }
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
    let transport = |e: reqwest::Error| transport_error(settings, e);
    let request = post_with_key(client, settings, url, body);
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
        return Err(too_large(&bytes));
    }
    Ok((status, bytes))
}

/// Most bytes of a streamed body: framing (one JSON object or SSE event per token,
/// about 100 bytes each) costs far more than the text it carries, whose own bound is
/// [`MAX_REPLY_BYTES`].
const MAX_STREAM_BYTES: usize = 4 * MAX_REPLY_BYTES;

/// Longest line of a streamed reply body (one NDJSON line or SSE event).
const MAX_STREAM_LINE_BYTES: usize = 256 * 1024;

/// The outcome of [`post_stream`].
pub enum Streamed {
    /// The server did not stream: an error status, or a 200 with one ordinary JSON
    /// body (it ignored `"stream": true`). Status and body, read whole (bounded), for
    /// the backend's non-streaming parser.
    Whole(u16, Vec<u8>),
    /// The streamed reply, complete: every piece went to `on_text` as it arrived.
    Reply(ModelReply),
}

/// How a streamed body is framed, as the backend expects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFormat {
    /// Ollama's NDJSON.
    Ndjson,
    /// OpenAI-compatible Server-Sent Events.
    EventStream,
}

enum Framer {
    Ollama(OllamaFrames),
    Sse(SseFrames),
}

impl Framer {
    fn push(&mut self, bytes: &[u8]) -> Result<Vec<FrameEvent>, FrameError> {
        match self {
            Framer::Ollama(f) => f.push(bytes),
            Framer::Sse(f) => f.push(bytes),
        }
    }
    fn finish(self) -> Result<Vec<FrameEvent>, FrameError> {
        match self {
            Framer::Ollama(f) => f.finish(),
            Framer::Sse(f) => f.finish(),
        }
    }
}

/// Sends a JSON POST asking for a streamed reply and decodes the body as it arrives:
/// each text piece goes to `on_text`, the end marker gives the finish reason and token
/// counts. A body that is not a stream (an error status, or one JSON document from a
/// server that ignored `"stream": true`, told by its `Content-Type` or, when that is
/// missing or unknown, by its first bytes) comes back whole as [`Streamed::Whole`].
///
/// Every way a stream can end badly is an error with a hint: an error line inside a
/// 200 reply is [`Error::ModelStreamFailed`]; a body that ends (or breaks) before the
/// end marker is [`Error::ModelStreamCut`]; a line that is not the expected framing is
/// [`Error::ModelHttp`]; more than [`MAX_REPLY_BYTES`] is a too-large reply.
///
/// The one redaction point for streamed replies: whole bodies, the assembled text and
/// every error have the API key replaced before anyone reads them, and so do the pieces
/// given to `on_text` as they arrive ([`crate::text::StreamRedactor`]: a key split
/// across pieces is held back until it can be replaced), because statements are
/// printed live from them.
pub async fn post_stream(
    client: &reqwest::Client,
    settings: &LlmSettings,
    url: url::Url,
    body: &Value,
    format: StreamFormat,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<Streamed, Error> {
    let secrets: Vec<&str> = settings.api_key.iter().map(|k| k.expose()).collect();
    // The pieces are redacted too, as they arrive: statements are printed live from them.
    let mut redactor = crate::text::StreamRedactor::new(&secrets);
    let mut redacted_text = |piece: &str| {
        let safe = redactor.push(piece);
        if !safe.is_empty() {
            on_text(&safe);
        }
    };
    let read = read_stream(client, settings, url, body, format, &mut redacted_text).await;
    let rest = redactor.finish();
    if !rest.is_empty() {
        on_text(&rest);
    }
    match read {
        Ok(Streamed::Whole(status, bytes)) => Ok(Streamed::Whole(
            status,
            crate::text::redact_bytes(bytes, &secrets),
        )),
        Ok(Streamed::Reply(mut reply)) => {
            reply.content = crate::text::redact(&reply.content, &secrets);
            Ok(Streamed::Reply(reply))
        }
        Err(e) => Err(e.redact(settings.api_key.as_ref())),
    }
}

/// One streamed chat call for a backend: [`post_stream`], with a body that did not
/// stream (an error status, or a server that ignored `stream`) parsed by the backend's
/// `parse_whole` and handed to `on_text` whole, and every error redacted.
pub async fn stream_chat(
    client: &reqwest::Client,
    settings: &LlmSettings,
    url: url::Url,
    body: &Value,
    format: StreamFormat,
    on_text: &mut (dyn FnMut(&str) + Send),
    parse_whole: impl Fn(u16, &[u8]) -> Result<ModelReply, Error>,
) -> Result<ModelReply, Error> {
    let reply = match post_stream(client, settings, url, body, format, on_text).await {
        Ok(Streamed::Reply(reply)) => Ok(reply),
        Ok(Streamed::Whole(status, bytes)) => parse_whole(status, &bytes).inspect(|r| {
            if !r.content.is_empty() {
                on_text(&r.content);
            }
        }),
        Err(e) => Err(e),
    };
    reply.map_err(|e| e.redact(settings.api_key.as_ref()))
}

/// [`post_stream`] before redaction.
async fn read_stream(
    client: &reqwest::Client,
    settings: &LlmSettings,
    url: url::Url,
    body: &Value,
    format: StreamFormat,
    on_text: &mut (dyn FnMut(&str) + Send),
) -> Result<Streamed, Error> {
    let transport = |e: reqwest::Error| transport_error(settings, e);
    let request = post_with_key(client, settings, url, body);
    let mut response = request.send().await.map_err(transport)?;
    let status = response.status().as_u16();
    let declared = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(body_kind_from_content_type);
    if status != 200 || declared == Some(BodyKind::SingleJson) {
        let body = crate::http::read_bounded(response, MAX_REPLY_BYTES)
            .await
            .map_err(transport)?;
        if body.truncated {
            return Err(too_large(&body.bytes));
        }
        return Ok(Streamed::Whole(status, body.bytes));
    }
    // A break mid-body: the deadline, or the connection cut.
    let cut = |received: usize, e: reqwest::Error| {
        if e.is_timeout() {
            Error::ModelTimeout {
                seconds: settings.timeout.as_secs(),
            }
        } else {
            Error::ModelStreamCut {
                received,
                reason: crate::http::describe_error(&e),
            }
        }
    };
    let mut received: Vec<u8> = Vec::new();
    let kind = match declared {
        Some(kind) => kind,
        None => loop {
            let chunk = response.chunk().await.map_err(|e| cut(received.len(), e))?;
            let complete = chunk.is_none();
            if let Some(chunk) = chunk {
                if received.len() + chunk.len() > MAX_REPLY_BYTES {
                    return Err(too_large(&received));
                }
                received.extend_from_slice(&chunk);
            }
            match sniff_body_kind(&received, complete) {
                Sniffed::Kind(kind) => break kind,
                Sniffed::NeedMoreBytes if !complete => continue,
                // Neither framing nor JSON: the non-streaming parser explains it.
                Sniffed::NeedMoreBytes | Sniffed::Unrecognised => break BodyKind::SingleJson,
            }
        },
    };
    if kind == BodyKind::SingleJson {
        while let Some(chunk) = response.chunk().await.map_err(|e| cut(received.len(), e))? {
            if received.len() + chunk.len() > MAX_REPLY_BYTES {
                return Err(too_large(&received));
            }
            received.extend_from_slice(&chunk);
        }
        return Ok(Streamed::Whole(status, received));
    }
    let mut framer = Some(match kind {
        BodyKind::Ndjson => Framer::Ollama(OllamaFrames::new(MAX_STREAM_LINE_BYTES)),
        _ => Framer::Sse(SseFrames::new(MAX_STREAM_LINE_BYTES)),
    });
    let server = match format {
        StreamFormat::Ndjson => "an Ollama server",
        StreamFormat::EventStream => "an OpenAI-compatible server",
    };
    let mut total = received.len();
    let broken = |total: usize, e: FrameError| match e {
        FrameError::UnexpectedEnd => Error::ModelStreamCut {
            received: total,
            reason: "the connection closed before the end-of-reply marker".into(),
        },
        other => Error::ModelHttp {
            status,
            message: sanitize_line(&shorten(
                &format!("the streamed reply cannot be read ({other}); is --llm-url {server}?"),
                300,
            )),
        },
    };
    let mut reply = ModelReply::default();
    let mut pending = Some(received);
    loop {
        let events = match pending.take() {
            Some(bytes) => match framer.as_mut() {
                Some(f) => f.push(&bytes).map_err(|e| broken(total, e))?,
                None => Vec::new(),
            },
            None => match response.chunk().await.map_err(|e| cut(total, e))? {
                Some(chunk) => {
                    total += chunk.len();
                    if total > MAX_STREAM_BYTES || reply.content.len() > MAX_REPLY_BYTES {
                        return Err(too_large(reply.content.as_bytes()));
                    }
                    pending = Some(chunk.to_vec());
                    continue;
                }
                None => match framer.take() {
                    Some(f) => f.finish().map_err(|e| broken(total, e))?,
                    None => return Err(broken(total, FrameError::UnexpectedEnd)),
                },
            },
        };
        for event in events {
            match event {
                FrameEvent::Delta(text) => {
                    reply.content.push_str(&text);
                    on_text(&text);
                }
                FrameEvent::Done(info) => {
                    reply.done_reason = info.reason;
                    reply.prompt_tokens = info.prompt_tokens.map(saturate);
                    reply.completion_tokens = info.output_tokens.map(saturate);
                    return Ok(Streamed::Reply(reply));
                }
                FrameEvent::Error(message) => {
                    return Err(Error::ModelStreamFailed {
                        message: sanitize_line(&shorten(&message, 200)),
                    });
                }
            }
        }
    }
}

fn saturate(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// A JSON POST to the model server, with the API key as a bearer token when one is
/// set: the key goes to this server only.
fn post_with_key(
    client: &reqwest::Client,
    settings: &LlmSettings,
    url: url::Url,
    body: &Value,
) -> reqwest::RequestBuilder {
    let request = client.post(url).json(body);
    match &settings.api_key {
        Some(key) => request.bearer_auth(key.expose()),
        None => request,
    }
}

/// A refused or timed-out request, as a model error.
fn transport_error(settings: &LlmSettings, e: reqwest::Error) -> Error {
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
}

/// The reply is over [`MAX_REPLY_BYTES`].
fn too_large(start: &[u8]) -> Error {
    Error::ModelBadReply {
        attempts: 1,
        detail: format!(
            "the reply is larger than {} MiB",
            MAX_REPLY_BYTES / 1024 / 1024
        ),
        raw_start: sanitize_line(&shorten(
            &String::from_utf8_lossy(&start[..start.len().min(480)]),
            120,
        )),
        problem: ReplyProblem::TooLarge,
    }
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
    /// Prompt tokens the model already held from an earlier call and did not read
    /// again (the embedded model; `None` where the server does not say).
    pub cached_prompt_tokens: Option<u32>,
    /// Time spent reading the prompt, where the backend measures it apart.
    pub prefill: Option<std::time::Duration>,
    /// Time spent writing the reply, where the backend measures it apart.
    pub generation: Option<std::time::Duration>,
}

/// How far a model has read the prompt (see [`ChatBackend::chat_stream_reading`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefill {
    /// Prompt tokens in the model's context so far.
    pub done: u32,
    /// The prompt's tokens.
    pub total: u32,
    /// Of `done`, those held from an earlier call (not read again).
    pub cached: u32,
}
