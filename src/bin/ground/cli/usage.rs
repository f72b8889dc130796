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
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
}
