//! `ground completions SHELL`: a completion script for the shell on stdout.

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, CompletionsArgs};

/// Writes the completion script; a closed pipe is not an error.
pub fn run(args: CompletionsArgs) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "ground", &mut script);
    let _ = std::io::stdout().lock().write_all(&script);
    ExitCode::SUCCESS
}
