//! `ground search`: the search stage alone, for people and scripts, through the
//! service's search ([`Service::search_here`], MCP's `web_search` too).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use ground::error::Error;
use ground::render::results;
use ground::service::{Searched, Service};

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
    let mut overrides = cli::overrides(&args.config, Some(&args.search), None, None, None);
    overrides.timeout_secs = args.timeout;
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    let limit = usize::from(args.limit);
    // Over the rate limit the search waits for a free slot, within --timeout (said
    // on a terminal only).
    let log_wait = |waiting: &str| {
        if std::io::stderr().is_terminal() {
            eprintln!("ground: {waiting}");
        }
    };
    let service = Service::unbounded(settings);
    if args.images {
        return images(&service, &query, limit, args.json, &log_wait);
    }
    let note = |why: &str| eprintln!("{}", ground::error::warning(why));
    let searched = match block_on(service.search_here(&query, limit, &log_wait, &note)) {
        Ok(searched) => searched,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    for warning in &searched.outcome.warnings {
        eprintln!("{}", ground::error::warning(warning));
    }
    if let Some(warning) = ground::search::usage::warning(&searched.settings) {
        eprintln!("{}", ground::error::warning(&warning));
    }
    if let Some(error) = searched.nothing_found() {
        let code = fail(args.json, "query", &query, &error);
        // A search that found nothing may still have been corrected: what to try next.
        let plain = ground::render::Style::Text { colour: false };
        if let Some(line) =
            ground::render::person::did_you_mean(&searched.outcome.corrections, plain)
        {
            eprint!("{line}");
        }
        return code;
    }
    let Searched {
        mut outcome,
        settings,
        note,
    } = searched;
    // Told on stderr already; `--json` carries it too.
    outcome.warnings.splice(0..0, note);
    let _ = if args.json {
        print_json(&results::json(&outcome, &query, &settings, limit))
    } else {
        write!(
            std::io::stdout().lock(),
            "{}",
            results::person(&outcome, limit)
        )
    };
    ExitCode::SUCCESS
}

/// `ground search --images`: the images search, printed as a numbered list or as
/// one JSON object. No image found is "no results" (exit 4), like the web search.
fn images(
    service: &Service,
    query: &str,
    limit: usize,
    json: bool,
    log_wait: &(dyn Fn(&str) + Send + Sync),
) -> ExitCode {
    let found = match block_on(service.images_here(query, limit, log_wait)) {
        Ok(found) => found,
        Err(e) => return fail(json, "query", query, &e),
    };
    for warning in &found.warnings {
        eprintln!("{}", ground::error::warning(warning));
    }
    if found.images.is_empty() {
        let error = Error::NoResults {
            query: query.to_string(),
        };
        return fail(json, "query", query, &error);
    }
    let settings = &service.settings().search;
    let _ = if json {
        print_json(&ground::render::images::json(
            &found, query, settings, limit,
        ))
    } else {
        let plain = ground::render::Style::Text { colour: false };
        write!(
            std::io::stdout().lock(),
            "{}",
            ground::render::images::person(&found.images, limit, plain)
        )
    };
    ExitCode::SUCCESS
}
