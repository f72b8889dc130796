//! `ground search`'s arguments.

use clap::Args;

use super::{ConfigOpts, SearchOpts};

/// `ground search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query. Use `-` or leave it out to read it from stdin.
    pub query: Vec<String>,

    /// How many results to print (1-100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,

    /// Print one JSON object on stdout (errors too, as {"error", "query"}).
    #[arg(long)]
    pub json: bool,

    /// Search images instead of web pages: SearXNG's images category or Brave's image
    /// search (other services have none: exit 2). Lists each image's title, page and
    /// address; ground never downloads an image.
    #[arg(long)]
    pub images: bool,

    /// Deadline in seconds: the longest the search may wait for a free slot of the
    /// rate limit [default: 600, [run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub search: SearchOpts,
}
