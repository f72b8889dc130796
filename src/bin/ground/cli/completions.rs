//! `ground completions`' arguments.

use clap::Args;

/// `ground completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}
