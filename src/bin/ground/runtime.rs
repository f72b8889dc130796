//! The async runtime of one command, with Ctrl-C, the settings it runs with, and the
//! model they name made ready (`--llm auto` resolved, an embedded model downloaded).

use std::future::Future;
use std::time::Duration;

use ground::config::{self, Overrides};
use ground::error::Error;
use ground::settings::Settings;

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
fn catalogue_model_missing(llm: &ground::settings::LlmSettings) -> bool {
    llm.embedded.model_file.is_none()
        && ground::llm::embedded::model_path(llm).is_some_and(|path| !path.exists())
}

/// Resolves `--llm auto` (saying on stderr which model answers and why, unless
/// `quiet`) and, for the embedded model, makes sure its file is on disk, downloading
/// it with a progress display. Runs inside [`block_on`], so Ctrl-C leaves a
/// resumable download; a `deadline` (the run's `--timeout`) ends it the same way.
pub async fn ready_model(
    mut settings: Settings,
    quiet: bool,
    deadline: Option<Duration>,
) -> Result<Settings, Error> {
    let chosen = ground::llm::choose(&settings.llm).await;
    // How long an answer takes, with the line naming the embedded model: when auto
    // chose it, and on a first run (the catalogue model still to be downloaded).
    let time = ground::doctor::answer_time(&chosen.settings, &settings.cache).map(|t| t.describe());
    if !quiet {
        match (&chosen.note, time) {
            (Some(note), Some(time)) => eprintln!("ground: {note}; {time}"),
            (Some(note), None) => eprintln!("ground: {note}"),
            (None, Some(time)) if catalogue_model_missing(&chosen.settings) => {
                eprintln!("ground: the embedded {}: {time}", chosen.settings.model)
            }
            (None, _) => {}
        }
    }
    settings.llm = chosen.settings;
    let mut progress = DownloadProgress::new(&settings.llm.model, quiet);
    let mut on_progress = |p| progress.update(p);
    let prepare = ground::llm::embedded::prepare(&settings.llm, &mut on_progress);
    let result = match deadline {
        Some(limit) => tokio::time::timeout(limit, prepare)
            .await
            .unwrap_or_else(|_| {
                let name = settings.llm.model.clone();
                Err(Error::ModelDownload {
                    reason: format!(
                        "it did not finish within the run's --timeout of {} s (what arrived is kept; `ground model pull {name}` downloads without a time limit)",
                        limit.as_secs()
                    ),
                    name,
                })
            }),
        None => prepare.await,
    };
    progress.finish();
    result?;
    Ok(settings)
}
