//! The async runtime of one command, with Ctrl-C, the settings it runs with, and the
//! model they name made ready (`--llm auto` resolved, an embedded model downloaded)
//! by the service's [`ModelSlot`], with a terminal's progress display.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use ground::config::{self, Overrides};
use ground::error::Error;
use ground::service::ModelSlot;
use ground::settings::{LlmSettings, Settings};

use crate::progress::DownloadProgress;

/// Resolves settings from flags, the real environment and the config file, and hands
/// their secrets to the redactor.
pub fn settings(overrides: &Overrides) -> Result<Settings, Error> {
    config::resolve(overrides, &|name| std::env::var(name).ok()).inspect(Settings::remember_secrets)
}

/// Runs `work` on a fresh runtime, ending early with [`Error::Interrupted`] on Ctrl-C
/// and never waiting for tasks still in flight afterwards.
pub fn block_on<T>(work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| Error::Internal {
        message: format!("cannot start the async runtime: {e}"),
    })?;
    let outcome = runtime.block_on(async {
        tokio::select! {
            result = work => result,
            _ = tokio::signal::ctrl_c() => Err(Error::Interrupted),
        }
    });
    runtime.shutdown_background();
    outcome
}

/// Whether `llm` names a catalogue model whose file is not downloaded yet.
fn catalogue_model_missing(llm: &LlmSettings) -> bool {
    llm.embedded.model_file.is_none()
        && ground::llm::embedded::model_path(llm).is_some_and(|path| !path.exists())
}

/// Resolves `--llm auto` (saying on stderr which model answers and why, unless
/// `quiet`) and, for the embedded model, makes sure its file is on disk, downloading
/// it with a progress display: the service's [`ModelSlot`] with the terminal's
/// callbacks. Runs inside [`block_on`], so Ctrl-C leaves a resumable download; a
/// `deadline` (the run's `--timeout`) ends it the same way.
pub async fn ready_model(
    mut settings: Settings,
    quiet: bool,
    deadline: Option<Duration>,
) -> Result<Settings, Error> {
    let slot = ModelSlot::new(settings.llm.clone());
    // The bar is made on the first progress report: a model that needs no download
    // (Ollama's, an embedded file already on disk) draws none.
    let progress: Mutex<Option<DownloadProgress>> = Mutex::new(None);
    let model = Mutex::new(String::new());
    let cache = &settings.cache;
    let chosen = |llm: &LlmSettings, note: Option<&str>| {
        // How long an answer takes, with the line naming the embedded model: when auto
        // chose it, and on a first run (the catalogue model still to be downloaded).
        let time = ground::doctor::answer_time(llm, cache).map(|t| t.describe());
        if !quiet {
            match (note, time) {
                (Some(note), Some(time)) => eprintln!("ground: {note}; {time}"),
                (Some(note), None) => eprintln!("ground: {note}"),
                (None, Some(time)) if catalogue_model_missing(llm) => {
                    eprintln!("ground: the embedded {}: {time}", llm.model)
                }
                (None, _) => {}
            }
        }
        *lock(&model) = llm.model.clone();
    };
    let mut on_progress = |p| {
        lock(&progress)
            .get_or_insert_with(|| DownloadProgress::new(&lock(&model), quiet))
            .update(p);
    };
    let ready = slot.ready_within(&chosen, &mut on_progress, deadline).await;
    if let Some(bar) = lock(&progress).as_ref() {
        bar.finish();
    }
    settings.llm = ready?;
    Ok(settings)
}

/// The progress display, even after a callback panicked while holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
