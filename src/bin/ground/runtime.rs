//! The async runtime of one command, with Ctrl-C, and the settings it runs with.

use std::future::Future;

use ground::config::{self, Overrides};
use ground::error::Error;
use ground::settings::Settings;

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
