//! `ground doctor`: check the configured search engine and model, and say what to fix.

use std::io::Write as _;
use std::process::ExitCode;

use ground::{doctor, render};

use crate::cli::{self, DoctorArgs};
use crate::output::{code, colour_stdout};
use crate::runtime::block_on;

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
    // The one runtime helper: Ctrl-C ends the checks with exit 130, as elsewhere.
    let checks = match block_on(async { Ok(doctor::diagnose(&overrides, &env).await) }) {
        Ok(checks) => checks,
        Err(e) => {
            eprintln!("{}", e.report());
            return code(e.exit_code());
        }
    };
    let text = if args.json {
        format!("{}\n", render::doctor::to_json(&checks))
    } else {
        render::doctor::person(&checks, colour)
    };
    let _ = std::io::stdout().lock().write_all(text.as_bytes()); // a closed pipe is fine
    code(doctor::exit_code(&checks))
}
