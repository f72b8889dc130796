//! The model server the settings name, as one [`Backend`] value that dispatches to
//! its wire API.

use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

use super::client::{ChatBackend, ModelReply, ModelRequest};
use super::{ollama, openai};

/// The configured backend, chosen at run time.
pub enum Backend {
    /// Ollama's `/api/chat`.
    Ollama(ollama::Ollama),
    /// `/v1/chat/completions`.
    OpenAi(openai::OpenAi),
}

impl Backend {
    /// Builds the backend the settings name.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        Ok(match settings.backend {
            LlmBackend::Ollama => Backend::Ollama(ollama::Ollama::new(settings)?),
            LlmBackend::OpenAi => Backend::OpenAi(openai::OpenAi::new(settings)?),
        })
    }
}

impl ChatBackend for Backend {
    async fn chat(&self, request: &ModelRequest) -> Result<ModelReply, Error> {
        match self {
            Backend::Ollama(b) => b.chat(request).await,
            Backend::OpenAi(b) => b.chat(request).await,
        }
    }
    async fn chat_stream(
        &self,
        request: &ModelRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
    ) -> Result<ModelReply, Error> {
        match self {
            Backend::Ollama(b) => b.chat_stream(request, on_text).await,
            Backend::OpenAi(b) => b.chat_stream(request, on_text).await,
        }
    }
    fn model(&self) -> &str {
        match self {
            Backend::Ollama(b) => b.model(),
            Backend::OpenAi(b) => b.model(),
        }
    }
    fn backend(&self) -> LlmBackend {
        match self {
            Backend::Ollama(b) => b.backend(),
            Backend::OpenAi(b) => b.backend(),
        }
    }
}
