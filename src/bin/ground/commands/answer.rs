//! `ground answer`: the whole pipeline, printed for a person, as `--json`, or as a
//! grounding pack, with the exit code of the run's verdict ([`answer_and_print`]).
//! With `--continue` or `--session NAME` the question is a turn of a saved
//! conversation (see [`crate::conversation`]).

use std::process::ExitCode;

use ground::render::Style;
use ground::report::Strictness;

use crate::answering::{Printing, answer_and_print};
use crate::cli::{AnswerArgs, Format};
use crate::conversation::{open_session, save_turn};
use crate::input::read_input;
use crate::output::{colour_stdout, fail};
use crate::runtime::{block_on, ready_model, settings};

/// Runs `ground answer`.
pub fn run(args: AnswerArgs) -> ExitCode {
    let json = args.json || args.pack;
    let question = match read_input(&args.question, "question") {
        Ok(q) => q,
        Err(e) => return fail(json, "question", "", &e),
    };
    let mut overrides = args.run.overrides(args.pages, args.timeout);
    overrides.auto = args.auto;
    overrides.queries = args.queries;
    overrides.plan_mode = args.plan_mode.map(Into::into);
    overrides.region = args.region.clone();
    overrides.max_searches = args.max_searches;
    overrides.fallback = args.fallback.map(Into::into);
    overrides.pack = args.pack;
    overrides.verbose = args.verbose;
    overrides.images = args.images;
    let mut settings = match settings(&overrides).and_then(|s| {
        let limit = s.run.timeout;
        block_on(ready_model(s, args.quiet, Some(limit)))
    }) {
        Ok(s) => s,
        Err(e) => return fail(json, "question", &question, &e),
    };
    // Held until the turn is saved: a concurrent run of the session waits its turn.
    let (mut session, hold) =
        match open_session(&settings, args.session.as_deref(), args.continue_session) {
            Ok(opened) => opened.unzip(),
            Err(e) => return fail(json, "question", &question, &e),
        };
    // The wait for the session counts against the run's deadline.
    if let Some(hold) = &hold {
        settings.run.timeout = settings
            .run
            .timeout
            .saturating_sub(hold.waited)
            .max(std::time::Duration::from_millis(1));
    }
    let style = match args.format {
        Format::Text => Style::Text {
            colour: colour_stdout(),
        },
        Format::Markdown => Style::Markdown,
    };
    let printing = Printing {
        json: args.json,
        pack: args.pack,
        quiet: args.quiet,
        related: args.related,
        verbose: args.verbose,
        style,
        strictness: if args.strict_quotes {
            Strictness::Quoted
        } else if args.strict {
            Strictness::Supported
        } else {
            Strictness::Lenient
        },
        events: args.events.clone(),
    };
    let (code, report) = answer_and_print(&question, session.as_ref(), &settings, &printing);
    if let (Some(session), Some(report)) = (session.as_mut(), report) {
        save_turn(session, &report, &settings);
    }
    drop(hold);
    code
}
