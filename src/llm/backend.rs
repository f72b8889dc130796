//! The model the settings name, as one [`Backend`] value that dispatches to its wire
//! API or to the embedded engine.

use crate::error::Error;
use crate::settings::{EmbeddedSettings, LlmBackend, LlmSettings};

use super::client::{ChatBackend, ModelReply, ModelRequest};
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
    /// Builds the backend the settings name; the embedded one with its defaults
    /// (catalogue models in `$XDG_DATA_HOME/ground/models`).
    pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
        let dir = super::embedded::models::default_dir(|name| std::env::var(name).ok());
        Self::with_embedded(settings, &EmbeddedSettings::with_models_dir(dir))
    }

    /// Builds the backend the settings name, the embedded one from `embedded`.
    pub fn with_embedded(
        settings: &LlmSettings,
        embedded: &EmbeddedSettings,
    ) -> Result<Self, Error> {
        Ok(match settings.backend {
            LlmBackend::Ollama => Backend::Ollama(ollama::Ollama::new(settings)?),
            LlmBackend::OpenAi => Backend::OpenAi(openai::OpenAi::new(settings)?),
            #[cfg(feature = "embedded")]
            LlmBackend::Embedded => Backend::Embedded(Box::new(super::embedded::Embedded::new(
                settings, embedded,
            )?)),
            #[cfg(not(feature = "embedded"))]
            LlmBackend::Embedded => {
                let _ = embedded;
                return Err(Error::EmbeddedNotBuilt);
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
