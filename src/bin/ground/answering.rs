//! Answering one question and printing it: the one place `ground answer` and each turn
//! of `ground chat` go through ([`answer_and_print`]). Person output streams: each
//! statement is printed as soon as it is checked ([`Live`]); `--json` and `--pack`
//! print one object at the end. The run's event sink (progress lines, `--events`) is
//! opened here too.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use ground::error::{self, Error, exit};
use ground::events::{Events, Progress};
use ground::render::{self, Style};
use ground::report::{Failed, Partial, Report, Strictness, Verdict, verdict};
use ground::session::Session;
use ground::settings::Settings;
use ground::text::sanitize_line;

use crate::live_terminal::Live;
use crate::output::{code, fail, print_json};
use crate::runtime::block_on;

/// How one answer is printed.
pub struct Printing {
    /// `--json`: one JSON object on stdout.
    pub json: bool,
    /// `--pack`: the grounding pack on stdout.
    pub pack: bool,
    /// `-q`: no progress or warnings.
    pub quiet: bool,
    /// `--related`: the "Related searches" and "Did you mean" lines even when the
    /// output is not a terminal.
    pub related: bool,
    /// `-v`: pages and token estimates on stderr.
    pub verbose: bool,
    /// Person output's style.
    pub style: Style,
    /// What the exit code asks of the answer.
    pub strictness: Strictness,
    /// `--events FILE`.
    pub events: Option<std::path::PathBuf>,
}

/// Answers `question` (a turn of `session` when given: its evidence first, its
/// source numbers kept) and prints it as `printing` says. Returns the exit code and,
/// when the run finished, its report.
pub fn answer_and_print(
    question: &str,
    session: Option<&Session>,
    settings: &Settings,
    printing: &Printing,
) -> (ExitCode, Option<Report>) {
    let json = printing.json || printing.pack;
    let style = printing.style;
    let progress = !printing.quiet && std::io::stderr().is_terminal();
    let live = Arc::new(
        Live::start(
            progress,
            (!json).then_some(style),
            std::io::stdout().is_terminal(),
        )
        .telling_rewrites(!printing.quiet),
    );
    let events = match open_events(
        printing.events.as_deref(),
        progress.then(|| Arc::clone(&live)),
    ) {
        Ok(events) => events,
        Err(e) => return (fail(json, "question", question, &e), None),
    };

    let prior = session.map(Session::prior);
    let asked = ground::pipeline::Question {
        text: question,
        prior: prior.as_ref(),
        deadline: settings.run.timeout,
    };
    let with = ground::pipeline::RunWith {
        settings,
        events: &events,
        watch: live.as_ref(),
    };
    let outcome = block_on(async { Ok(ground::pipeline::answer(asked, &with).await) })
        .unwrap_or_else(|error| {
            Err(Box::new(Failed {
                error,
                partial: Partial::default(),
            }))
        });
    let report = match outcome {
        Ok(report) => report,
        Err(failed) => {
            live.fail(matches!(failed.error, Error::Interrupted));
            if json {
                let _ = print_json(&render::json_failed(question, &failed));
            }
            if !printing.quiet {
                for warning in &failed.partial.warnings {
                    if !live.warned(warning) {
                        eprintln!("{}", error::warning(warning));
                    }
                }
            }
            eprintln!("{}", failed.error.report());
            // What the search service suggests instead, where the error is read.
            let wanted = !printing.quiet && (printing.related || std::io::stderr().is_terminal());
            if wanted
                && let Some(line) = render::person::did_you_mean(
                    &failed.partial.extras.corrections,
                    Style::Text { colour: false },
                )
            {
                eprint!("{line}");
            }
            return (code(failed.error.exit_code()), None);
        }
    };

    // Statements already on stdout: finish the answer before any other line.
    let streamed = live.printed();
    if streamed && !live.finish(&report, style) {
        return (ExitCode::SUCCESS, Some(report)); // stdout closed
    }
    if printing.verbose {
        for page in &report.pages {
            eprintln!(
                "ground: page {} {} {}{}",
                page.index
                    .map(|i| format!("[{i}]"))
                    .unwrap_or_else(|| "[-]".into()),
                page.status.as_str(),
                sanitize_line(&page.url),
                page.error
                    .as_deref()
                    .map(|e| format!(" ({})", sanitize_line(e)))
                    .unwrap_or_default()
            );
        }
        eprintln!(
            "ground: prompt ~{} tokens (server counted {}), window {}",
            report.model.estimated_prompt_tokens,
            report
                .model
                .prompt_tokens
                .map(|t| t.to_string())
                .unwrap_or_else(|| "?".into()),
            report.model.context_window
        );
    }
    if !printing.quiet {
        // Those a terminal was shown as they came are not printed again.
        for warning in &report.warnings {
            if !live.warned(warning) {
                eprintln!("{}", error::warning(warning));
            }
        }
    }

    let judged = verdict(&report, printing.strictness);
    let printed = if printing.pack {
        live.stop();
        print_json(&render::pack(&report))
    } else if printing.json {
        live.stop();
        let mut value = render::json(&report, &judged);
        if let Some(session) = session {
            value["session"] = render::json::session_json(session, &report);
        }
        print_json(&value)
    } else if streamed || live.finish(&report, style) {
        Ok(())
    } else {
        Err(std::io::ErrorKind::BrokenPipe.into())
    };
    if printed.is_err() {
        // stdout closed (e.g. piped into `head`): nothing to report
        return (ExitCode::SUCCESS, Some(report));
    }
    // `--images`: the images after the sources (links only; none is downloaded).
    if !json && let Some(images) = &report.images {
        let listed = render::images::after_sources(images, style);
        if write!(std::io::stdout().lock(), "{listed}").is_err() {
            return (ExitCode::SUCCESS, Some(report));
        }
    }
    let wants_related =
        !printing.quiet && (printing.related || std::io::stdout().is_terminal()) && !json;
    if wants_related && let Some(lines) = render::person::related(&report, style) {
        let mut out = std::io::stdout().lock();
        if write!(out, "\n{lines}").is_err() {
            return (ExitCode::SUCCESS, Some(report));
        }
    }

    match &judged {
        Verdict::Accepted => {}
        Verdict::Offline => eprintln!(
            "{}",
            error::warning(&format!(
                "search failed; this answer is the model's alone and not grounded (exit {})",
                exit::OFFLINE
            ))
        ),
        Verdict::Rejected(e) => eprintln!("{}", e.report()),
    }
    (code(judged.exit_code()), Some(report))
}

/// The run's event sink: progress lines on stderr when it is a terminal, and JSON
/// lines to `--events FILE` (appended) or `-` (stderr).
fn open_events(path: Option<&Path>, live: Option<Arc<Live>>) -> Result<Events, Error> {
    let progress: Option<Progress> =
        live.map(|live| Box::new(move |line: &str| live.stage_line(line)) as Progress);
    let log: Option<Box<dyn Write + Send>> = match path {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stderr())),
        Some(p) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| Error::Usage {
                    message: format!("cannot open the events file {}: {e}", p.display()),
                    hint: "give --events a writable path, or - for stderr".into(),
                })?;
            Some(Box::new(file))
        }
    };
    Ok(Events::new(progress, log))
}
