//! `ground mcp`: serve the tools to an AI agent over MCP on stdin/stdout.

use std::process::ExitCode;

use crate::cli::{self, McpArgs};
use crate::output::code;
use crate::runtime::{block_on, ready_model, settings};

/// Runs `ground mcp` until the client closes the session.
pub fn run(args: McpArgs) -> ExitCode {
    let mut overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        Some(&args.fetch),
        Some(&args.model),
        None,
    );
    overrides.session_searches = args.session_searches;
    overrides.max_searches = args.max_searches;
    overrides.queries = args.queries;
    overrides.plan_mode = args.plan_mode.map(Into::into);
    overrides.reuse_secs = args.reuse_secs;
    overrides.agent = true;
    if args.ignore_robots {
        overrides.robots = Some(ground::settings::RobotsPolicy::Never);
    }
    // The model is made ready before the session starts: `--llm auto` says on stderr
    // which model answers, and a missing embedded model is downloaded now, not in
    // the middle of an agent's first call.
    match settings(&overrides).and_then(|s| {
        block_on(async { ground::mcp::serve(ready_model(s, false, None).await?).await })
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            code(e.exit_code())
        }
    }
}
