//! `ground fetch`'s arguments.

use clap::Args;

use super::{ConfigOpts, FetchOpts};

/// `ground fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The page's address (http or https).
    pub url: String,

    /// Print one JSON object on stdout: status, http_status, content_type, title, text, chars.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub fetch: FetchOpts,
}
