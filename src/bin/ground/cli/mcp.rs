//! `ground mcp`'s arguments.

use clap::Args;

use super::{PlanModeArg, RunArgs};

/// `ground mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Searches one client session may make in all (web_search counts one,
    /// grounded_answer the queries it runs) [default: 100].
    #[arg(long, value_name = "N")]
    pub session_searches: Option<usize>,

    /// Do not obey robots.txt for the pages web_fetch and grounded_answer read (by
    /// default they do, for the `ground` user agent, else `*`) [[fetch] robots = "never"].
    #[arg(long, conflicts_with = "obey_robots")]
    pub ignore_robots: bool,

    /// Most searches one grounded_answer call may make [default: 3].
    #[arg(long, value_name = "N")]
    pub max_searches: Option<usize>,

    /// Search queries grounded_answer plans from the question (1-3).
    #[arg(long, value_name = "N")]
    pub queries: Option<usize>,

    /// How grounded_answer runs planned queries: `rounds` or `concurrent`
    /// [default: rounds].
    #[arg(long, value_name = "MODE", value_enum)]
    pub plan_mode: Option<PlanModeArg>,

    /// Seconds a grounded_answer's evidence is reused for the same question later in
    /// the session, without searching (0 = never) [default: 600].
    #[arg(long, value_name = "SECS")]
    pub reuse_secs: Option<u64>,

    /// The options every run takes (config, search, fetch, model).
    #[command(flatten)]
    pub run: RunArgs,
}
