//! `ground batch`'s arguments.

use clap::Args;

use super::RunArgs;

/// `ground batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The questions: JSON Lines ({"id": ..., "question": ..., other keys kept}) or
    /// plain text, one question a line (its line number the id); `-` for stdin.
    pub input: String,

    /// Append the records here, one JSON line per question [default: stdout]. An
    /// existing file resumes the batch: ids it has a record for are not asked again.
    /// It must be a regular file of batch records (not the questions file, a FIFO or
    /// a device); one run at a time writes it (a lock, FILE.lock, names the holder).
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,

    /// Questions answered at once (the model, cache and rate limit are shared).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,

    /// Answer only shard K of N, K from 1 to N (as split, Jest and Playwright count):
    /// the ids whose 64-bit FNV-1a hash, mod N, is K-1. N machines with K = 1..N split
    /// one file with no coordinator.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<ground::batch::shard::Shard>,

    /// The same split with a 0-based index, for runners that give one (a Kubernetes
    /// Indexed Job's JOB_COMPLETION_INDEX): I from 0 to N-1 is --shard I+1/N.
    #[arg(
        long,
        value_name = "I",
        env = "GROUND_SHARD_INDEX",
        requires = "shard_count",
        conflicts_with = "shard"
    )]
    pub shard_index: Option<u64>,

    /// How many shards --shard-index splits the input into.
    #[arg(
        long,
        value_name = "N",
        env = "GROUND_SHARD_COUNT",
        requires = "shard_index"
    )]
    pub shard_count: Option<u64>,

    /// The Redis that shards on several machines (and `ground serve` replicas) share:
    /// one search rate limit and quota count, one search and page cache
    /// [[state] redis_url, GROUND_REDIS_URL].
    #[arg(long, value_name = "URL")]
    pub redis_url: Option<String>,

    /// Ask again the ids whose record in --out is a failure (their failure records
    /// are removed first).
    #[arg(long, requires = "out")]
    pub retry_failed: bool,

    /// No progress on stderr (the summary and errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,

    /// How many pages to read per search [default: 3; env: GROUND_PAGES].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for each question in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Also search images for each question and put them in its record (`images`);
    /// the answers are unchanged and no image is downloaded [[search] images].
    #[arg(long)]
    pub images: bool,

    #[command(flatten)]
    pub run: RunArgs,
}
