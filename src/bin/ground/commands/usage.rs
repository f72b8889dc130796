//! `ground usage`: this month's Brave and Tavily counts against their quotas, the
//! search rate limit, and where the state files and the opt-in search log are.

use std::process::ExitCode;

use ground::render::usage;

use crate::cli::{self, UsageArgs};
use crate::output::{fail, print_json};
use crate::runtime::settings;

/// Runs `ground usage`.
pub fn run(args: UsageArgs) -> ExitCode {
    let overrides = cli::overrides(&args.config, Some(&args.search), None, None, None);
    match settings(&overrides) {
        Ok(s) => {
            let report = ground::search::usage::report(&s.search);
            if args.json {
                let _ = print_json(&usage::json(&s.search, &report));
            } else {
                print!("{}", usage::describe(&s.search, &report));
            }
            ExitCode::SUCCESS
        }
        Err(e) => fail(args.json, "usage", "", &e),
    }
}
