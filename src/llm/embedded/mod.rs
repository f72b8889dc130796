//! The embedded model: llama.cpp inside `ground`, so an answer needs no model server.
//!
//! - [`models`]: the catalogue built into the binary (`qwen3-1.7b`, ...), where model
//!   files are kept and the download manager that fetches one once;
//! - [`gguf`]: the bounded check of a GGUF file's header before llama.cpp sees it;
//! - [`engine`] (cargo feature `embedded`): loading a model once per process and
//!   writing replies with it under the answer's JSON grammar, its context kept between
//!   replies so a prompt's shared front is never read twice;
//! - [`Embedded`] (same feature): the [`ChatBackend`](super::ChatBackend) over the
//!   engine, so the pipeline streams its statements exactly as from Ollama.
//!
//! The engine blocks (it is CPU work for seconds to minutes), so [`Embedded`] runs it
//! on a thread of its own and passes the prefill's progress and the text pieces back
//! through a channel; when the
//! caller stops waiting (Ctrl-C, `--timeout`, an MCP call cancelled) the future is
//! dropped, which raises the engine's cancel flag, and the thread stops within a
//! second.

pub mod gguf;
pub mod models;

#[cfg(feature = "embedded")]
pub mod engine;

#[cfg(feature = "embedded")]
pub use backend::Embedded;

use std::path::PathBuf;

use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings};

/// The model file `settings` name, present or not: the `--model-file`, else the
/// catalogue model's file in the models folder; `None` when the name is not in the
/// catalogue or there is no models folder.
pub fn model_path(settings: &LlmSettings) -> Option<PathBuf> {
    match &settings.embedded.model_file {
        Some(file) => Some(file.clone()),
        None => {
            let model = models::find(&settings.model)?;
            Some(settings.embedded.models_dir.as_ref()?.join(model.file))
        }
    }
}

/// Makes sure the embedded model's file is on disk before a run, downloading a
/// missing catalogue model (when downloads are allowed) with `progress` told how it
/// goes; the file's path, or `None` when `settings` is not the embedded backend.
pub async fn prepare(
    settings: &LlmSettings,
    progress: &mut (dyn FnMut(models::Progress) + Send),
) -> Result<Option<PathBuf>, Error> {
    if settings.backend != LlmBackend::Embedded {
        return Ok(None);
    }
    #[cfg(feature = "embedded")]
    {
        Embedded::new(settings)?
            .ensure_file_with(progress)
            .await
            .map(Some)
    }
    #[cfg(not(feature = "embedded"))]
    {
        let _ = progress;
        Err(Error::EmbeddedNotBuilt)
    }
}

#[cfg(feature = "embedded")]
mod backend {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::engine::{self, GenerateRequest, Generated, LoadOptions, Model, Step};
    use super::models::{self, CatalogueModel};
    use crate::error::Error;
    use crate::llm::client::{ChatBackend, ModelReply, ModelRequest, Prefill};
    use crate::settings::{EmbeddedSettings, LlmBackend, LlmSettings};

    /// Which model file the embedded backend runs.
    #[derive(Debug, Clone)]
    enum Source {
        /// A catalogue model, downloaded on first use.
        Catalogue(&'static CatalogueModel),
        /// A local GGUF file (`--model-file`), never downloaded.
        File(PathBuf),
    }

    /// The embedded llama.cpp engine as a [`ChatBackend`].
    #[derive(Debug, Clone)]
    pub struct Embedded {
        settings: LlmSettings,
        embedded: EmbeddedSettings,
        source: Source,
        /// The name reports show: the catalogue name, or the file's name.
        name: String,
        /// Where the model file is (or will be, once downloaded).
        path: Option<PathBuf>,
    }

    impl Embedded {
        /// The backend for `settings.embedded.model_file`, else `settings.model` (a
        /// catalogue name; when no model was named, the catalogue's default).
        pub fn new(settings: &LlmSettings) -> Result<Self, Error> {
            let embedded = &settings.embedded;
            let (source, name, path) = match &embedded.model_file {
                Some(file) => {
                    let name = file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| file.display().to_string());
                    (Source::File(file.clone()), name, Some(file.clone()))
                }
                None => {
                    let model = match models::find(&settings.model) {
                        Some(m) => m,
                        None if !settings.model_explicit => {
                            models::find(models::DEFAULT_EMBEDDED_MODEL).ok_or_else(|| {
                                Error::Internal {
                                    message: "the default embedded model is not in the catalogue"
                                        .into(),
                                }
                            })?
                        }
                        None => {
                            return Err(Error::Config {
                                message: format!(
                                    "{:?} is not a model of the embedded catalogue ({})",
                                    settings.model,
                                    models::names()
                                ),
                                hint: "choose one of them with --model (`ground model list`), or run any local GGUF file with --model-file PATH.gguf".into(),
                            });
                        }
                    };
                    let path = embedded.models_dir.as_ref().map(|d| d.join(model.file));
                    (Source::Catalogue(model), model.name.to_string(), path)
                }
            };
            Ok(Self {
                settings: settings.clone(),
                embedded: embedded.clone(),
                source,
                name,
                path,
            })
        }

        /// The model file, present or not.
        pub fn path(&self) -> Option<&Path> {
            self.path.as_deref()
        }

        /// The model file, downloading a missing catalogue model first when downloads
        /// are allowed (without progress: the binary fetches with its bar beforehand).
        pub async fn ensure_file(&self) -> Result<PathBuf, Error> {
            self.ensure_file_with(&mut |_| {}).await
        }

        /// [`Self::ensure_file`], telling `progress` how a download goes.
        pub async fn ensure_file_with(
            &self,
            progress: &mut (dyn FnMut(models::Progress) + Send),
        ) -> Result<PathBuf, Error> {
            let model = match &self.source {
                Source::File(path) => {
                    if !path.is_file() {
                        return Err(Error::ModelFileInvalid {
                            path: path.clone(),
                            reason: "there is no such file".into(),
                        });
                    }
                    return Ok(path.clone());
                }
                Source::Catalogue(model) => *model,
            };
            let Some(dir) = self.embedded.models_dir.clone() else {
                return Err(Error::Config {
                    message: "there is no folder for the embedded model: neither XDG_DATA_HOME nor HOME is set".into(),
                    hint: "set HOME (or XDG_DATA_HOME), or run a local file with --model-file PATH.gguf".into(),
                });
            };
            let path = dir.join(model.file);
            if path.is_file() {
                return Ok(path);
            }
            if !self.embedded.download {
                return Err(Error::ModelNotDownloaded {
                    name: model.name.into(),
                    path,
                });
            }
            let mut download = models::Download {
                hub: self.embedded.hub_url.clone(),
                dir,
                stall: self.embedded.stall,
                free_space: None,
                progress,
                name: model.name.into(),
            };
            models::fetch(&model.model_file(), &mut download).await
        }

        fn load_options(&self) -> LoadOptions {
            LoadOptions {
                label: self.name.clone(),
                smaller: match &self.source {
                    Source::Catalogue(m) => m.smaller.map(str::to_string),
                    Source::File(_) => Some("qwen3-0.6b".into()),
                },
                context_tokens: self.settings.context_tokens,
                verbose: self.embedded.verbose,
                memory_available: self.embedded.memory_available,
                gpu_layers: self.embedded.gpu_layers,
            }
        }

        /// The model, loaded (once per process) on a thread of its own.
        pub async fn load(&self) -> Result<Arc<Model>, Error> {
            let path = self.ensure_file().await?;
            let options = self.load_options();
            let cancel = Arc::new(AtomicBool::new(false));
            let stop = StopOnDrop(cancel.clone());
            let result =
                tokio::task::spawn_blocking(move || engine::load(&path, &options, &cancel))
                    .await
                    .map_err(|e| Error::Internal {
                        message: format!("the model loader stopped: {e}"),
                    })?;
            drop(stop);
            result
        }

        /// The prompt's exact token count for this model (loading it if needed).
        pub async fn count_tokens(&self, system: &str, user: &str) -> Result<u32, Error> {
            let model = self.load().await?;
            let (system, user) = (system.to_string(), user.to_string());
            tokio::task::spawn_blocking(move || model.count_prompt_tokens(&system, &user))
                .await
                .map_err(|e| Error::Internal {
                    message: format!("the tokenizer stopped: {e}"),
                })?
        }

        /// Writes a reply on a thread of its own, passing each text piece to `on_text`
        /// as it is decoded and the prefill's progress to `on_prefill`; bounded by the
        /// model timeout. Dropping the future stops the thread within a second.
        pub async fn generate(
            &self,
            request: &ModelRequest,
            on_text: &mut (dyn FnMut(&str) + Send),
            on_prefill: &mut (dyn FnMut(Prefill) + Send),
        ) -> Result<Generated, Error> {
            let seconds = self.settings.timeout.as_secs();
            match tokio::time::timeout(
                self.settings.timeout,
                self.generate_unbounded(request, on_text, on_prefill),
            )
            .await
            {
                Ok(result) => result,
                Err(_) => Err(Error::ModelTimeout { seconds }),
            }
        }

        async fn generate_unbounded(
            &self,
            request: &ModelRequest,
            on_text: &mut (dyn FnMut(&str) + Send),
            on_prefill: &mut (dyn FnMut(Prefill) + Send),
        ) -> Result<Generated, Error> {
            let path = self.ensure_file().await?;
            let options = self.load_options();
            let generate = GenerateRequest {
                system: request.system.clone(),
                user: request.user.clone(),
                schema: Some(request.schema.clone()),
                context_tokens: request.context_tokens,
                max_tokens: request.max_answer_tokens,
                threads: self.embedded.threads,
                parallel: self.embedded.parallel,
                stop_at_end_of_text: true,
                scope: self.embedded.cache_scope.clone(),
            };
            let cancel = Arc::new(AtomicBool::new(false));
            let _stop = StopOnDrop(cancel.clone());
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Message>();
            std::thread::Builder::new()
                .name("ground-model".into())
                .spawn(move || {
                    let steps = tx.clone();
                    let result = engine::load(&path, &options, &cancel).and_then(|model| {
                        engine::generate_with(&model, &generate, &cancel, &mut |step| {
                            let _ = steps.send(match step {
                                Step::Text(text) => Message::Text(text.to_string()),
                                Step::Prefill {
                                    done,
                                    total,
                                    cached,
                                } => Message::Prefill(Prefill {
                                    done,
                                    total,
                                    cached,
                                }),
                            });
                        })
                    });
                    let _ = tx.send(Message::Done(Box::new(result)));
                })
                .map_err(|e| Error::Internal {
                    message: format!("cannot start the model thread: {e}"),
                })?;
            while let Some(message) = rx.recv().await {
                match message {
                    Message::Text(text) => on_text(&text),
                    Message::Prefill(prefill) => on_prefill(prefill),
                    Message::Done(result) => return *result,
                }
            }
            Err(Error::ModelEngine {
                message: "the model thread stopped without a reply".into(),
            })
        }
    }

    /// What the model thread sends back.
    enum Message {
        Text(String),
        Prefill(Prefill),
        Done(Box<Result<Generated, Error>>),
    }

    /// Raises the cancel flag when the waiting side goes away.
    struct StopOnDrop(Arc<AtomicBool>);

    impl Drop for StopOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }

    impl ChatBackend for Embedded {
        async fn chat(&self, request: &ModelRequest) -> Result<ModelReply, Error> {
            self.chat_stream(request, &mut |_| {}).await
        }

        async fn chat_stream(
            &self,
            request: &ModelRequest,
            on_text: &mut (dyn FnMut(&str) + Send),
        ) -> Result<ModelReply, Error> {
            self.chat_stream_reading(request, on_text, &mut |_| {})
                .await
        }

        async fn chat_stream_reading(
            &self,
            request: &ModelRequest,
            on_text: &mut (dyn FnMut(&str) + Send),
            on_prefill: &mut (dyn FnMut(Prefill) + Send),
        ) -> Result<ModelReply, Error> {
            let generated = self.generate(request, on_text, on_prefill).await?;
            Ok(ModelReply {
                content: generated.text,
                done_reason: Some(generated.done_reason),
                prompt_tokens: Some(generated.prompt_tokens),
                completion_tokens: Some(generated.completion_tokens),
                cached_prompt_tokens: Some(generated.cached_prompt_tokens),
                prefill: Some(generated.prefill),
                generation: Some(generated.decode),
            })
        }

        fn model(&self) -> &str {
            &self.name
        }

        fn backend(&self) -> LlmBackend {
            LlmBackend::Embedded
        }

        fn model_file(&self) -> Option<&Path> {
            self.path.as_deref()
        }
    }
}
