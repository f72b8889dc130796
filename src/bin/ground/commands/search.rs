//! `ground search`: the search stage alone, for people and scripts.

use std::io::{IsTerminal, Write};
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
    let mut overrides = cli::overrides(&args.config, Some(&args.search), None, None, None);
    overrides.timeout_secs = args.timeout;
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    let limit = usize::from(args.limit);
    let mut wanted = settings.search.clone();
    wanted.max_results = wanted.max_results.max(limit);
    // Over the rate limit the search waits for a free slot, within --timeout.
    let deadline = std::time::Duration::from_secs(settings.run.timeout.as_secs());
    let tell = std::io::stderr().is_terminal();
    let searched = block_on(async {
        let deadline = tokio::time::Instant::now() + deadline;
        let chosen = ground::search::auto::choose(&wanted).await;
        if let Some(note) = &chosen.note {
            eprintln!("{}", ground::error::warning(note));
        }
        let on_wait = |waiting: &ground::search::Waiting| {
            if tell {
                eprintln!("ground: {waiting}");
            }
        };
        let pace = ground::search::Pace::until(deadline).telling(&on_wait);
        let found = ground::search::search(&chosen.settings, &query, &pace).await?;
        Ok((found, chosen.settings, chosen.note))
    });
    let (mut outcome, search_settings, note) = match searched {
        Ok(o) => o,
        Err(e) => return fail(args.json, "query", &query, &e),
    };
    for warning in &outcome.warnings {
        eprintln!("{}", ground::error::warning(warning));
    }
    if let Some(warning) = ground::search::usage::warning(&search_settings) {
        eprintln!("{}", ground::error::warning(&warning));
    }
    if outcome.hits.is_empty() {
        let error = ground::search::no_hits_error(&query, &outcome.unresponsive_engines);
        let code = fail(args.json, "query", &query, &error);
        // A search that found nothing may still have been corrected: what to try next.
        let plain = ground::render::Style::Text { colour: false };
        if let Some(line) = ground::render::person::did_you_mean(&outcome.corrections, plain) {
            eprint!("{line}");
        }
        return code;
    }
    // Told on stderr already; `--json` carries it too.
    outcome.warnings.splice(0..0, note);
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
