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
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelOpts,
}
