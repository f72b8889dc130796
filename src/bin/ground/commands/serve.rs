//! `ground serve`: the grounded answer over HTTP (OpenAI's and Gemini's APIs).

use std::process::ExitCode;

use crate::cli::ServeArgs;
use crate::output::code;
use crate::runtime::settings;

/// Runs `ground serve` until Ctrl-C, finishing the requests under way.
pub fn run(args: ServeArgs) -> ExitCode {
    let mut overrides = args.run.overrides(args.pages, args.timeout);
    overrides.serve_listen = args.listen;
    overrides.serve_api_key = args.api_key;
    overrides.serve_queue = args.queue;
    overrides.serve_concurrency = args.concurrency;
    overrides.serve_cors = args.cors;
    overrides.serve_isolate_clients = args.isolate_clients;
    overrides.reuse_secs = args.reuse_secs;
    let served = settings(&overrides).and_then(|settings| {
        let runtime = tokio::runtime::Runtime::new().map_err(|e| ground::Error::Internal {
            message: format!("cannot start the async runtime: {e}"),
        })?;
        // Nothing about the model is looked at here: it is chosen (and the embedded
        // one downloaded) on the first request that needs an answer.
        let shutdown = async {
            #[cfg(unix)]
            {
                use tokio::signal::unix::{SignalKind, signal};
                match signal(SignalKind::terminate()) {
                    Ok(mut term) => tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    },
                    Err(_) => {
                        let _ = tokio::signal::ctrl_c().await;
                    }
                }
            }
            #[cfg(not(unix))]
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("ground serve: stopping: finishing the requests under way");
        };
        let result = runtime.block_on(ground::serve::serve(settings, args.verbose, shutdown));
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        result
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            code(e.exit_code())
        }
    }
}
