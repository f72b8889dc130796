//! `ground doctor`: check the configured search engine and model, and say what to fix.

use std::process::ExitCode;

use crate::cli::{self, DoctorArgs};
use crate::output::{code, colour_stdout};

/// Runs every check and prints them; the exit code names the first failing area.
pub fn run(args: DoctorArgs) -> ExitCode {
    let overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        None,
        Some(&args.model),
        None,
    );
    let env = |name: &str| std::env::var(name).ok();
    code(ground::doctor::run(
        &overrides,
        &env,
        args.json,
        colour_stdout(),
    ))
}
