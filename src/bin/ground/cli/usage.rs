//! `ground usage`'s arguments.

use clap::Args;

use super::{ConfigOpts, SearchOpts};

/// `ground usage`.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub search: SearchOpts,
}
