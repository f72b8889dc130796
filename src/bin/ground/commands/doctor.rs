//! `ground doctor`: check the configured search engine and model, and say what to fix.

use std::io::Write as _;
use std::process::ExitCode;

use ground::error::exit;
use ground::{doctor, render};

use crate::cli::{self, DoctorArgs};
use crate::output::{code, colour_stdout};

/// Runs every check and prints them (text, or one JSON object with `--json`); the
/// exit code names the first failing area.
pub fn run(args: DoctorArgs) -> ExitCode {
    let overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        None,
        Some(&args.model),
        None,
    );
    let env = |name: &str| std::env::var(name).ok();
    let colour = colour_stdout();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return code(exit::INTERNAL);
        }
    };
    let checks = runtime.block_on(doctor::diagnose(&overrides, &env));
    let text = if args.json {
        format!("{}\n", render::doctor::to_json(&checks))
    } else {
        render::doctor::person(&checks, colour)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes()); // a closed pipe is fine
    code(doctor::exit_code(&checks))
}
