//! `ground chat`'s arguments.

use clap::Args;

use super::{Format, RunArgs};

/// `ground chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The conversation to continue or start (letters, digits, - and _); kept under
    /// the state folder (sessions/NAME.json) [default: a new one, chat-DATE-TIME].
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,

    /// No progress or warnings on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,

    /// How many pages to read per search [default: 3; env: GROUND_PAGES].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for each answer in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Output style for people.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Also search images for the question (SearXNG's images category or Brave's
    /// image search) and list them after the sources (`--json`: `images`); the answer
    /// is unchanged, no image is downloaded, and a failed images search is a warning
    /// [[search] images].
    #[arg(long)]
    pub images: bool,

    #[command(flatten)]
    pub run: RunArgs,
}
