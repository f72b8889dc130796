//! `ground serve`: the grounded answer over HTTP (OpenAI's and Gemini's APIs).

use std::process::ExitCode;

use ground::error::exit;

use crate::cli::ServeArgs;
use crate::output::code;
use crate::runtime::settings;

/// Runs `ground serve` until SIGTERM or Ctrl-C, then lets the requests under way
/// finish for `[serve] shutdown_grace_secs` (exit 0); a second signal ends the process
/// at once with exit code 130.
pub fn run(args: ServeArgs) -> ExitCode {
    let mut overrides = args.run.overrides(args.pages, args.timeout);
    overrides.serve_listen = args.listen;
    overrides.serve_api_key = args.api_key;
    overrides.serve_queue = args.queue;
    overrides.serve_concurrency = args.concurrency;
    overrides.serve_cors = args.cors;
    overrides.serve_max_connections = args.max_connections;
    overrides.serve_header_timeout_secs = args.header_timeout;
    overrides.serve_idle_timeout_secs = args.idle_timeout;
    overrides.serve_shutdown_grace_secs = args.shutdown_grace;
    overrides.serve_isolate_clients = args.isolate_clients;
    overrides.reuse_secs = args.reuse_secs;
    overrides.redis_url = args.redis_url;
    let served = settings(&overrides).and_then(|settings| {
        let runtime = tokio::runtime::Runtime::new().map_err(|e| ground::Error::Internal {
            message: format!("cannot start the async runtime: {e}"),
        })?;
        let grace = settings.serve.shutdown_grace.as_secs();
        // Nothing about the model is looked at here: it is chosen (and the embedded
        // one downloaded) on the first request that needs an answer.
        let result = runtime.block_on(async {
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            // Registered before serving, so that no signal is lost (or takes its
            // default action) once the server listens.
            let mut signals = Signals::new();
            tokio::spawn(async move {
                signals.next().await;
                ground::error::log_line(&format!(
                    "ground serve: stopping: finishing the requests under way (at most {grace} s; Ctrl-C again to stop now)"
                ));
                let _ = stop.send(());
                signals.next().await;
                ground::error::log_line("ground serve: stopped at once (second signal)");
                std::process::exit(exit::INTERRUPTED);
            });
            let shutdown = async {
                let _ = stopped.await;
            };
            ground::serve::serve(settings, args.verbose, shutdown).await
        });
        // What is still running (a generation on a blocking thread) is not waited
        // for long: serve has already closed every connection.
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        result
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            ground::error::log_line(&e.report());
            code(e.exit_code())
        }
    }
}

/// SIGTERM and Ctrl-C (SIGINT), as one stream of stop requests.
struct Signals {
    /// SIGTERM and SIGINT on Unix (`None` if they cannot be caught: Ctrl-C only).
    #[cfg(unix)]
    unix: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl Signals {
    /// Starts catching both signals (inside the runtime): from here on neither
    /// takes its default action.
    fn new() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                unix: signal(SignalKind::terminate())
                    .and_then(|term| Ok((term, signal(SignalKind::interrupt())?)))
                    .ok(),
            }
        }
        #[cfg(not(unix))]
        Signals {}
    }

    /// The next SIGTERM or Ctrl-C.
    async fn next(&mut self) {
        #[cfg(unix)]
        if let Some((term, int)) = &mut self.unix {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}
