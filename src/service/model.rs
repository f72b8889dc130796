//! The model of a long-lived face, made ready on first need and shared by every
//! request of the process.
//!
//! `ground mcp` and `ground serve` must answer their protocol's handshake at once and
//! serve the requests that need no model (a search, a fetch) even when no model can
//! be had. So the choice of model (`--llm auto`: a one-second look at Ollama) and the
//! embedded model's download (1.1 GB on a first run) happen on the first request
//! that asks for an answer; concurrent first requests wait for the one preparation;
//! a preparation that fails is that request's error, and the next request tries
//! again. The command line makes its model ready here too ([`ModelSlot::ready_within`]:
//! its progress display, its line naming the model, its `--timeout`). The embedded
//! engine itself is loaded once per process by
//! [`crate::llm::embedded`] on its first generation.

use std::time::Duration;

use tokio::sync::OnceCell;

use crate::error::Error;
use crate::http::display_url;
use crate::llm::embedded::models::Progress;
use crate::settings::{DEFAULT_EMBEDDED_MODEL, LlmBackend, LlmSettings};

/// The configured model, and the same settings once chosen and on disk.
#[derive(Debug)]
pub struct ModelSlot {
    configured: LlmSettings,
    ready: OnceCell<LlmSettings>,
}

impl ModelSlot {
    /// A slot for `configured` (`--llm auto` not yet resolved, nothing downloaded).
    pub fn new(configured: LlmSettings) -> Self {
        ModelSlot {
            configured,
            ready: OnceCell::new(),
        }
    }

    /// Which model will answer, as far as it is known without asking anyone: for a
    /// start-up line.
    pub fn describe(&self) -> String {
        let s = self.ready.get().unwrap_or(&self.configured);
        let embedded = |s: &LlmSettings| match &s.embedded.model_file {
            Some(file) => format!(
                "the embedded model {}",
                crate::text::sanitize_line(&file.file_name().unwrap_or_default().to_string_lossy())
            ),
            None => format!("the embedded {}", s.model),
        };
        match s.backend {
            LlmBackend::Auto if s.embedded.model_file.is_some() => embedded(s),
            LlmBackend::Auto => format!(
                "{} at {} if Ollama has it, else the embedded {}; chosen on the first answer",
                s.model,
                display_url(&s.url),
                DEFAULT_EMBEDDED_MODEL
            ),
            LlmBackend::Embedded => embedded(s),
            _ => format!("{} at {}", s.model, display_url(&s.url)),
        }
    }

    /// Whether the model's calls wait in a queue this process keeps: the embedded
    /// engine's, which writes `parallel` replies at once and the rest in arrival order
    /// (so a run needs no place of the service's to wait for the model; see
    /// [`crate::service::admission`]). Known once the model is chosen, or before when
    /// the settings name the engine (`--llm embedded`, or `auto` with
    /// `--model-file`); a server model (Ollama, an OpenAI-compatible server) has no
    /// such queue here, and neither has `auto` before its first answer.
    pub fn queues_its_calls(&self) -> bool {
        let s = self.ready.get().unwrap_or(&self.configured);
        match s.backend {
            LlmBackend::Embedded => true,
            LlmBackend::Auto => cfg!(feature = "embedded") && s.embedded.model_file.is_some(),
            _ => false,
        }
    }

    /// The model's settings once ready: chosen (saying why through `note`) and, for
    /// the embedded model, its file on disk (a download reports to `progress`).
    /// Prepared once; a failure is returned and the next call tries again.
    pub async fn ready(
        &self,
        note: &(dyn Fn(&str) + Send + Sync),
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<LlmSettings, Error> {
        let told = |_: &LlmSettings, why: Option<&str>| {
            if let Some(why) = why {
                note(why);
            }
        };
        self.ready_within(&told, progress, None).await
    }

    /// [`ModelSlot::ready`] as the command line makes it: `chosen` is told the model
    /// chosen (with `--llm auto`'s reason when it chose) before anything is
    /// downloaded, and a download still going after `within` (the run's `--timeout`)
    /// ends as [`Error::ModelDownload`], what arrived kept for the next run.
    pub async fn ready_within(
        &self,
        chosen: &(dyn Fn(&LlmSettings, Option<&str>) + Send + Sync),
        progress: &mut (dyn FnMut(Progress) + Send),
        within: Option<Duration>,
    ) -> Result<LlmSettings, Error> {
        self.ready
            .get_or_try_init(|| async {
                let choice = crate::llm::choose(&self.configured).await;
                chosen(&choice.settings, choice.note.as_deref());
                let prepare = crate::llm::embedded::prepare(&choice.settings, progress);
                match within {
                    Some(limit) => tokio::time::timeout(limit, prepare)
                        .await
                        .unwrap_or_else(|_| Err(download_too_slow(&choice.settings, limit))),
                    None => prepare.await,
                }?;
                Ok(choice.settings)
            })
            .await
            .cloned()
    }
}

/// The failure of a model download that outlasted the run's `--timeout` of `limit`.
fn download_too_slow(llm: &LlmSettings, limit: Duration) -> Error {
    let name = llm.model.clone();
    Error::ModelDownload {
        reason: format!(
            "it did not finish within the run's --timeout of {} s (what arrived is kept; `ground model pull {name}` downloads without a time limit)",
            limit.as_secs()
        ),
        name,
    }
}
