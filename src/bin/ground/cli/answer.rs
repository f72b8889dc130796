//! `ground answer`'s arguments.

use std::path::PathBuf;

use clap::Args;

use super::{FallbackMode, Format, PlanModeArg, RunArgs};

/// `ground answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The question. Use `-` or leave it out to read it from stdin.
    pub question: Vec<String>,

    /// Print one JSON object on stdout instead of text (shape: docs/src/json-output.md).
    #[arg(long)]
    pub json: bool,

    /// Exit with code 6 unless every statement is supported: by a verified quote, or
    /// by a sentence of the sources the model was shown that ground found saying the
    /// same (printed `[n]` alike; the sources list says which). A statement whose quote
    /// is real but says otherwise (`[n?]`) is not supported.
    #[arg(long)]
    pub strict: bool,

    /// Like --strict, but only the model's own verified quotes count: a statement
    /// supported by ground's match alone fails it.
    #[arg(long)]
    pub strict_quotes: bool,

    /// Print a grounding pack instead of prose: JSON with key_points,
    /// norms_and_expectations and constraints_and_rules (each item supported like a
    /// statement: verified quotes or ground's match), disputed_or_uncertain and
    /// what_to_ask_user.
    #[arg(long, conflicts_with = "json")]
    pub pack: bool,

    /// Output style for people.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// No progress or warnings on stderr (errors are still printed), and no "Did you
    /// mean" or "Related searches" line.
    #[arg(short, long)]
    pub quiet: bool,

    /// End the text even when stdout is no terminal with the search service's "Did
    /// you mean" and "Related searches" lines (on a terminal they are printed
    /// unless -q).
    #[arg(long, conflicts_with_all = ["json", "pack"])]
    pub related: bool,

    /// Also search images for the question (SearXNG's images category or Brave's
    /// image search) and list them after the sources (`--json`: `images`); the answer
    /// is unchanged, no image is downloaded, and a failed images search is a warning
    /// [[search] images].
    #[arg(long)]
    pub images: bool,

    /// Details on stderr: every page tried with its status, token estimates.
    #[arg(short, long)]
    pub verbose: bool,

    /// How many pages to read [default: 3; env: GROUND_PAGES].
    ///
    /// All their passages are ranked in one pool under the same token budget, so more
    /// pages do not make the prompt larger. --pages 10 is the wide mode: it costs more
    /// requests to more sites (ten pages and two spares instead of three), and about
    /// the same wall time (hedged fetching waits for the fastest pages plus a grace,
    /// never for a slow one); it buys answers that are not in the top three results
    /// (on held-out news questions the answer was in the top 3 pages for 47 % of them,
    /// in the top 10 for 69 %; a replay of the context stage reached it for 58 % with
    /// ten pages against 50 % with three).
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for the whole run in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Let the model decide first whether the question needs the web; if not, the
    /// answer is printed labelled "not grounded" with no sources.
    #[arg(long)]
    pub auto: bool,

    /// Search queries to plan from the question (1-3; 1 = the question itself).
    #[arg(long, value_name = "N")]
    pub queries: Option<usize>,

    /// How planned queries run: `rounds` (one at a time, stopping once the planner's
    /// must-have evidence is found) or `concurrent` (all at once) [default: rounds].
    #[arg(long, value_name = "MODE", value_enum)]
    pub plan_mode: Option<PlanModeArg>,

    /// Region hint for the query planner, e.g. `de` or `us`.
    #[arg(long)]
    pub region: Option<String>,

    /// Most searches this run may make [default: 3].
    #[arg(long, value_name = "N")]
    pub max_searches: Option<usize>,

    /// What to do when search fails: `fail` (default, exit 3) or `offline` (answer
    /// from the model alone, labelled not grounded, exit 7).
    #[arg(long, value_name = "MODE", value_enum)]
    pub fallback: Option<FallbackMode>,

    /// Write one JSON line per stage to FILE (`-` for stderr).
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,

    /// Continue the most recent conversation (`ground chat` or --session): the question
    /// is a follow-up, rewritten to stand alone, and the pages already read are tried
    /// before any search.
    #[arg(long = "continue", conflicts_with = "session")]
    pub continue_session: bool,

    /// Continue the conversation NAME (letters, digits, - and _), or start it; kept
    /// under the state folder (sessions/NAME.json).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,

    #[command(flatten)]
    pub run: RunArgs,
}
