//! `ground mcp`: serve the tools to an AI agent over MCP on stdin/stdout.

use std::process::ExitCode;

use crate::cli::McpArgs;
use crate::output::code;
use crate::runtime::{block_on, settings};

/// Runs `ground mcp` until the client closes the session.
pub fn run(args: McpArgs) -> ExitCode {
    let mut overrides = args.run.overrides(None, None);
    overrides.session_searches = args.session_searches;
    overrides.max_searches = args.max_searches;
    overrides.queries = args.queries;
    overrides.plan_mode = args.plan_mode.map(Into::into);
    overrides.reuse_secs = args.reuse_secs;
    overrides.agent = true;
    if args.ignore_robots {
        overrides.robots = Some(ground::settings::RobotsPolicy::Never);
    }
    // Nothing about the model is looked at here: the server answers `initialize` at
    // once and serves web_search and web_fetch with no model at all; the model is
    // chosen (and the embedded one downloaded) on the first grounded_answer.
    match settings(&overrides).and_then(|s| block_on(ground::mcp::serve(s))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            code(e.exit_code())
        }
    }
}
