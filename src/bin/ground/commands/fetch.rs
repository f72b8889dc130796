//! `ground fetch`: one page through the fetch and extract stages, with the same
//! limits, address policy and statuses as `ground answer`.

use std::io::Write;
use std::process::ExitCode;

use ground::error::exit;
use ground::render::page;

use crate::cli::{self, FetchArgs};
use crate::output::{code, fail, print_json};
use crate::runtime::{block_on, settings};

/// Runs `ground fetch`: exit 0 with the page's text, or 4 when it cannot be used.
pub fn run(args: FetchArgs) -> ExitCode {
    let overrides = cli::overrides(&args.config, None, Some(&args.fetch), None, None);
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "url", &args.url, &e),
    };
    let attempt = match block_on(ground::page::fetch_one(&settings, &args.url)) {
        Ok(a) => a,
        Err(e) => return fail(args.json, "url", &args.url, &e),
    };
    let ok = page::succeeded(&attempt);
    let _ = if args.json {
        print_json(&page::json(&attempt))
    } else if ok {
        write!(std::io::stdout().lock(), "{}", page::person(&attempt))
    } else {
        Ok(())
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        eprintln!("{}", page::failure_report(&attempt));
        code(exit::NO_SOURCES)
    }
}
