//! `ground check`'s arguments.

use std::path::PathBuf;

use clap::Args;

use super::{ConfigOpts, FetchOpts, SearchOpts};

/// `ground check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The claims to check, one an argument (quote each): each is searched for, its
    /// top pages read, and judged against every page read.
    pub claims: Vec<String>,

    /// Check each sentence of this file as a claim (`-` for stdin).
    #[arg(long, value_name = "FILE", conflicts_with = "cited")]
    pub file: Option<PathBuf>,

    /// Check an answer from an AI tool (`-` for stdin): each sentence with [n] markers
    /// against the URLs it cites, from the answer's numbered list (`[1] https://...`,
    /// `1. https://...` or `[1](https://...)`).
    #[arg(long, value_name = "FILE")]
    pub cited: Option<PathBuf>,

    /// With --cited: also search each cited sentence (one search each, at most 20
    /// sentences); the pages found are read beside the answer's own, numbered after
    /// them, and can support a sentence elsewhere.
    #[arg(long, requires = "cited")]
    pub also_search: bool,

    /// Print one JSON object on stdout (errors too, as {"error", "claims"}).
    #[arg(long)]
    pub json: bool,

    /// Pages read for each claim (1-5) [default: 3].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..=5))]
    pub pages: Option<u8>,

    /// Deadline for the whole check in seconds [default: 600, [run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub search: SearchOpts,
    #[command(flatten)]
    pub fetch: FetchOpts,
}
