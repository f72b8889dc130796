//! The `ground` binary: parse arguments, call the library, print, and map the outcome
//! to an exit code. All behaviour lives in the library.

use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use clap::Parser;
use ground::cli::{AnswerArgs, Cli, Command, Format, TimeRange};
use ground::config::{self, Overrides};
use ground::error::{Error, exit};
use ground::render::{self, Style};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Answer(args) => run_answer(args),
        Command::Extract(args) => {
            let args = ground::extract_command::ExtractArgs {
                files: args.files,
                input_dir: args.input_dir,
                output_dir: args.output_dir,
                url: args.url,
            };
            match ground::extract_command::run(&args) {
                Ok(()) => exit::SUCCESS,
                Err(e) => {
                    eprintln!("error: {e}");
                    exit::USAGE
                }
            }
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

fn run_answer(args: AnswerArgs) -> i32 {
    let question = match read_question(&args.question) {
        Ok(q) => q,
        Err(e) => return fail(&args, "", &e),
    };
    let overrides = Overrides {
        config_path: args.config.clone(),
        searxng_url: args.searxng_url.clone(),
        language: args.language.clone(),
        categories: args.categories.clone(),
        engines: args.engines.clone(),
        time_range: args.time_range.map(|t| {
            match t {
                TimeRange::Day => "day",
                TimeRange::Week => "week",
                TimeRange::Month => "month",
                TimeRange::Year => "year",
            }
            .to_string()
        }),
        safesearch: args.safesearch,
        pages: args.pages,
        allow_private_addresses: args.allow_private_addresses,
        llm_backend: args.llm.clone(),
        llm_url: args.llm_url.clone(),
        model: args.model.clone(),
        context_tokens: args.context_tokens,
        max_answer_tokens: args.max_answer_tokens,
    };
    let settings = match config::resolve(&overrides, &|name| std::env::var(name).ok()) {
        Ok(s) => s,
        Err(e) => return fail(&args, &question, &e),
    };

    let show_progress = !args.quiet && std::io::stderr().is_terminal();
    let progress = |line: &str| {
        if show_progress {
            eprintln!("ground: {line}…");
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return exit::INTERNAL;
        }
    };
    let outcome = runtime.block_on(async {
        tokio::select! {
            result = ground::pipeline::answer(&question, &settings, &progress) => result,
            _ = tokio::signal::ctrl_c() => Err(Error::Interrupted),
        }
    });
    // Do not wait for fetches still in flight after an error or Ctrl-C.
    runtime.shutdown_background();
    let report = match outcome {
        Ok(report) => report,
        Err(e) => return fail(&args, &question, &e),
    };

    if args.verbose {
        for page in &report.pages {
            let status = serde_json::to_value(page.status).unwrap_or_default();
            eprintln!(
                "ground: page {} {} {}{}",
                page.index
                    .map(|i| format!("[{i}]"))
                    .unwrap_or_else(|| "[-]".into()),
                status.as_str().unwrap_or(""),
                render::sanitize_line(&page.url),
                page.error
                    .as_deref()
                    .map(|e| format!(" ({})", render::sanitize_line(e)))
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
    if !args.quiet {
        for warning in &report.warnings {
            eprintln!("warning: {}", render::sanitize_line(warning));
        }
    }

    let mut stdout = std::io::stdout().lock();
    let printed = if args.json {
        writeln!(stdout, "{}", render::json(&report))
    } else {
        let colour = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        let style = match args.format {
            Format::Text => Style::Text { colour },
            Format::Markdown => Style::Markdown,
        };
        write!(stdout, "{}", render::person(&report, style))
    };
    if printed.is_err() {
        return exit::SUCCESS; // stdout closed (e.g. piped into `head`): nothing to report
    }

    let answer = &report.answer;
    let problem = if answer.answerable && !answer.cites_anything() {
        Some(Error::Uncited {
            sources: report.sources.len(),
        })
    } else if args.strict && !answer.grounded() {
        let reason = if !answer.answerable {
            "the model reported that the sources do not answer the question".to_string()
        } else {
            let unsupported = answer.statements.iter().filter(|s| !s.supported()).count();
            format!(
                "{unsupported} of {} statements have no verified citation",
                answer.statements.len()
            )
        };
        Some(Error::NotGrounded { reason })
    } else {
        None
    };
    match problem {
        Some(e) => {
            eprintln!("{}", e.report());
            e.exit_code()
        }
        None => exit::SUCCESS,
    }
}

/// Prints an error (and, with `--json`, the error object on stdout) and returns its code.
fn fail(args: &AnswerArgs, question: &str, error: &Error) -> i32 {
    if args.json {
        println!("{}", render::json_error(question, error));
    }
    eprintln!("{}", error.report());
    error.exit_code()
}

/// The question from the arguments, or from stdin for `-` / no argument when stdin
/// is not a terminal.
fn read_question(words: &[String]) -> Result<String, Error> {
    let from_stdin = words.is_empty() && !std::io::stdin().is_terminal() || words == ["-"];
    if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .take(64 * 1024)
            .read_to_string(&mut text)
            .map_err(|e| Error::Config {
                message: format!("cannot read the question from stdin: {e}"),
                hint: "pass the question as an argument instead".into(),
            })?;
        return Ok(text.trim().to_string());
    }
    Ok(words.join(" ").trim().to_string())
}
