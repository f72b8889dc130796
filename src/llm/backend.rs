//! The model the settings name, as one [`Backend`] value that dispatches to its wire
//! API or to the embedded engine.

use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

use super::client::{ChatBackend, ModelReply, ModelRequest, Prefill};
use super::{ollama, openai};

/// The configured backend, chosen at run time.
pub enum Backend {
    /// Ollama's `/api/chat`.
    Ollama(ollama::Ollama),
    /// `/v1/chat/completions`.
    OpenAi(openai::OpenAi),
    /// llama.cpp in this process (boxed: its settings are large beside a client).
    #[cfg(feature = "embedded")]
    Embedded(Box<super::embedded::Embedded>),
}

impl Backend {
    /// Builds the backend the settings name. `--llm auto` must have been resolved by
    /// [`super::choose()`] before: it needs a look at the network.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        Ok(match settings.backend {
            LlmBackend::Ollama => Backend::Ollama(ollama::Ollama::new(settings)?),
            LlmBackend::OpenAi => Backend::OpenAi(openai::OpenAi::new(settings)?),
            #[cfg(feature = "embedded")]
            LlmBackend::Embedded => {
                Backend::Embedded(Box::new(super::embedded::Embedded::new(settings)?))
            }
            #[cfg(not(feature = "embedded"))]
            LlmBackend::Embedded => return Err(Error::EmbeddedNotBuilt),
            LlmBackend::Auto => {
                return Err(Error::Internal {
                    message:
                        "--llm auto reached the model stage unresolved (llm::choose was not called)"
                            .into(),
                });
            }
        })
    }
}

impl ChatBackend for Backend {
    async fn chat(&self, request: &ModelRequest) -> Result<ModelReply, Error> {
        match self {
            Backend::Ollama(b) => b.chat(request).await,
            Backend::OpenAi(b) => b.chat(request).await,
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.chat(request).await,
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
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.chat_stream(request, on_text).await,
        }
    }
    async fn chat_stream_reading(
        &self,
        request: &ModelRequest,
        on_text: &mut (dyn FnMut(&str) + Send),
        on_prefill: &mut (dyn FnMut(Prefill) + Send),
    ) -> Result<ModelReply, Error> {
        match self {
            Backend::Ollama(b) => b.chat_stream_reading(request, on_text, on_prefill).await,
            Backend::OpenAi(b) => b.chat_stream_reading(request, on_text, on_prefill).await,
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.chat_stream_reading(request, on_text, on_prefill).await,
        }
    }
    fn model(&self) -> &str {
        match self {
            Backend::Ollama(b) => b.model(),
            Backend::OpenAi(b) => b.model(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.model(),
        }
    }
    fn backend(&self) -> LlmBackend {
        match self {
            Backend::Ollama(b) => b.backend(),
            Backend::OpenAi(b) => b.backend(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.backend(),
        }
    }
    fn model_file(&self) -> Option<&std::path::Path> {
        match self {
            Backend::Ollama(b) => b.model_file(),
            Backend::OpenAi(b) => b.model_file(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.model_file(),
        }
    }
}
