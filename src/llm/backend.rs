//! The model the settings name, as one [`Backend`] value that dispatches to its wire
//! API or to the embedded engine.

use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

use super::client::{ChatBackend, ModelReply, ModelRequest, Prefill};
use super::server::{ChatServer, Wire};

/// The configured backend, chosen at run time.
pub enum Backend {
    /// A model server: Ollama's `/api/chat` or `/v1/chat/completions` (boxed like
    /// the engine: a client and its settings are large beside a box).
    Server(Box<ChatServer>),
    /// llama.cpp in this process (boxed: its settings are large beside a client).
    #[cfg(feature = "embedded")]
    Embedded(Box<super::embedded::Embedded>),
}

impl Backend {
    /// Builds the backend the settings name. `--llm auto` must have been resolved by
    /// [`super::choose()`] before: it needs a look at the network.
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        Ok(match settings.backend {
            LlmBackend::Ollama => {
                Backend::Server(Box::new(ChatServer::new(settings, Wire::Ollama)?))
            }
            LlmBackend::OpenAi => {
                Backend::Server(Box::new(ChatServer::new(settings, Wire::OpenAi)?))
            }
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
            Backend::Server(b) => b.chat(request).await,
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
            Backend::Server(b) => b.chat_stream(request, on_text).await,
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
            Backend::Server(b) => b.chat_stream_reading(request, on_text, on_prefill).await,
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.chat_stream_reading(request, on_text, on_prefill).await,
        }
    }
    fn model(&self) -> &str {
        match self {
            Backend::Server(b) => b.model(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.model(),
        }
    }
    fn backend(&self) -> LlmBackend {
        match self {
            Backend::Server(b) => b.backend(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.backend(),
        }
    }
    fn model_file(&self) -> Option<&std::path::Path> {
        match self {
            Backend::Server(b) => b.model_file(),
            #[cfg(feature = "embedded")]
            Backend::Embedded(b) => b.model_file(),
        }
    }
}
