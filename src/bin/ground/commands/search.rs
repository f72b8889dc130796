//! `ground search`: the search stage alone, for people and scripts.

use std::io::Write;
use std::process::ExitCode;

use ground::error::Error;
use ground::render::results;

use crate::cli::{self, SearchArgs};
use crate::input::read_input;
use crate::output::{fail, print_json};
use crate::runtime::{block_on, settings};

/// Runs `ground search`.
pub fn run(args: SearchArgs) -> ExitCode {
    let query = match read_input(&args.query, "query") {
        Ok(q) => q,
        Err(e) => return fail(args.json, "query", "", &e),
    };
    if query.is_empty() {
        return fail(args.json, "query", &query, &Error::EmptyQuestion);
    }
    let overrides = cli::overrides(&args.config, Some(&args.search), None, None, None);
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    let limit = usize::from(args.limit);
    let mut search_settings = settings.search.clone();
    search_settings.max_results = search_settings.max_results.max(limit);
    let outcome = match block_on(ground::search::search(&search_settings, &query)) {
        Ok(o) => o,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    for warning in &outcome.warnings {
        eprintln!("warning: {}", ground::text::sanitize_line(warning));
    }
    if let Some(warning) = ground::search::usage::warning(&search_settings) {
        eprintln!("warning: {warning}");
    }
    if outcome.hits.is_empty() {
        let error = ground::search::no_hits_error(&query, &outcome.unresponsive_engines);
        return fail(args.json, "query", &query, &error);
    }
    let _ = if args.json {
        print_json(&results::json(&outcome, &query, &search_settings, limit))
    } else {
        write!(
            std::io::stdout().lock(),
            "{}",
            results::person(&outcome, limit)
        )
    };
    ExitCode::SUCCESS
}
