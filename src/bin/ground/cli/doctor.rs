//! `ground doctor`'s arguments.

use clap::Args;

use super::{ConfigOpts, ModelOpts, SearchOpts};

/// `ground doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as one JSON object.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub search: SearchOpts,
    #[command(flatten)]
    pub model: ModelOpts,
}
