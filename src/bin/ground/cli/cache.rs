//! `ground cache`'s arguments and actions.

use clap::{Args, ValueEnum};

use super::ConfigOpts;

/// `ground cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: CacheAction,

    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub config: ConfigOpts,
}

/// `ground cache` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheAction {
    /// Entries, size and age of the cache, and where it is.
    Stats,
    /// Delete every cached search result and page.
    Clear,
}
