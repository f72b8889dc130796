//! `ground model`'s arguments and actions.

use clap::{Args, Subcommand};

use super::ConfigOpts;

/// `ground model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ModelAction,

    #[command(flatten)]
    pub config: ConfigOpts,
}

/// What `ground model` does.
#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download a catalogue model (resumable, checked against its SHA-256)
    /// [default: qwen3-1.7b].
    Pull {
        /// The model's name.
        name: Option<String>,
        /// No progress on stderr.
        #[arg(short, long)]
        quiet: bool,
    },
    /// The catalogue and what of it is downloaded.
    #[command(visible_alias = "ls")]
    List {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Delete a downloaded model (and any unfinished download of it).
    Rm {
        /// The model's name.
        name: String,
    },
}
