//! One chat backend for a model server over HTTP: Ollama's `/api/chat` or an
//! OpenAI-compatible `/v1/chat/completions`. Both are the same exchange (a JSON POST,
//! read whole for the small planning calls and streamed for the answer, the API key
//! taken out of every error the server's text could carry); they differ only in their
//! [`Wire`]: the endpoint, the request body, the stream's framing and the whole
//! reply's shape, which each protocol keeps in its own file ([`super::ollama`],
//! [`super::openai`]).

use serde_json::Value;
use url::Url;

use super::client::{
    ChatBackend, ModelReply, ModelRequest, StreamFormat, http_client, post_json, stream_chat,
};
use super::{ollama, openai};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

/// The wire protocol a model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Ollama's native chat API, streamed as NDJSON.
    Ollama,
    /// OpenAI-compatible chat completions, streamed as Server-Sent Events.
    OpenAi,
}

/// A client for one model server and model, speaking its [`Wire`].
pub struct ChatServer {
    client: reqwest::Client,
    settings: LlmSettings,
    wire: Wire,
}

impl ChatServer {
    /// Builds a client from the resolved settings for a server speaking `wire`.
    pub fn new(settings: &LlmSettings, wire: Wire) -> Result<Self, Error> {
        Ok(Self {
            client: http_client(settings)?,
            settings: settings.clone(),
            wire,
        })
    }

    /// Where chat requests go.
    fn endpoint(&self) -> Url {
        match self.wire {
            Wire::Ollama => ollama::endpoint(&self.settings.url),
            Wire::OpenAi => openai::endpoint(&self.settings.url),
        }
    }

    /// The request body, streamed or not.
    fn body(&self, request: &ModelRequest, stream: bool) -> Value {
        match self.wire {
            Wire::Ollama => ollama::body(&self.settings.model, request, stream),
            Wire::OpenAi => openai::body(&self.settings.model, request, stream),
        }
    }

    /// A whole (non-streamed) reply or error body, errors as the server gave them.
    fn parse_whole(&self, status: u16, bytes: &[u8]) -> Result<ModelReply, Error> {
        match self.wire {
            Wire::Ollama => ollama::parse_whole(&self.settings, status, bytes),
            Wire::OpenAi => openai::parse_whole(&self.settings, status, bytes),
        }
    }
}

impl ChatBackend for ChatServer {
    fn model(&self) -> &str {
        &self.settings.model
    }

    fn backend(&self) -> LlmBackend {
        match self.wire {
            Wire::Ollama => LlmBackend::Ollama,
            Wire::OpenAi => LlmBackend::OpenAi,
        }
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
        let format = match self.wire {
            Wire::Ollama => StreamFormat::Ndjson,
            Wire::OpenAi => StreamFormat::EventStream,
        };
        stream_chat(
            &self.client,
            &self.settings,
            self.endpoint(),
            &self.body(request, true),
            format,
            on_text,
            |status, bytes| self.parse_whole(status, bytes),
        )
        .await
    }
}
