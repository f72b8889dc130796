//! The `ground` binary: parse arguments, call the library, print, and map the outcome
//! to an exit code. All behaviour lives in the library.

use std::future::Future;
use std::io::{IsTerminal, Read, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use ground::cli::{self, AnswerArgs, Cli, Command, Format};
use ground::config::{self, Overrides, Settings};
use ground::error::{Error, exit};
use ground::events::{Events, Progress};
use ground::pipeline::AnswerMode;
use ground::render::{self, Style};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Answer(args) => run_answer(args),
        Command::Search(args) => run_search(args),
        Command::Fetch(args) => run_fetch(args),
        Command::Extract(args) => run_extract(args),
        Command::Doctor(args) => run_doctor(args),
        Command::Mcp(args) => run_mcp(args),
        Command::Cache(args) => run_cache(args),
        Command::Completions(args) => {
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "ground", &mut script);
            let _ = std::io::stdout().lock().write_all(&script); // a closed pipe is not an error
            exit::SUCCESS
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Resolves settings from flags, the real environment and the config file.
fn settings(overrides: &Overrides) -> Result<Settings, Error> {
    config::resolve(overrides, &|name| std::env::var(name).ok())
}

/// Runs `work` on a fresh runtime, ending early with [`Error::Interrupted`] on Ctrl-C
/// and never waiting for tasks still in flight afterwards.
fn block_on<T>(work: impl Future<Output = Result<T, Error>>) -> Result<T, Error> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| Error::Config {
        message: format!("cannot start the async runtime: {e}"),
        hint: "this machine is out of threads or memory; close something and retry".into(),
    })?;
    let outcome = runtime.block_on(async {
        tokio::select! {
            result = work => result,
            _ = tokio::signal::ctrl_c() => Err(Error::Interrupted),
        }
    });
    runtime.shutdown_background();
    outcome
}

fn run_answer(args: AnswerArgs) -> i32 {
    let question = match read_input(&args.question, "question") {
        Ok(q) => q,
        Err(e) => return fail(args.json || args.pack, "question", "", &e),
    };
    let mut overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        Some(&args.fetch),
        Some(&args.model),
        args.pages,
    );
    overrides.timeout_secs = args.timeout;
    overrides.auto = args.auto;
    overrides.queries = args.queries;
    overrides.region = args.region.clone();
    overrides.max_searches = args.max_searches;
    overrides.fallback = args.fallback.clone();
    overrides.pack = args.pack;
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json || args.pack, "question", &question, &e),
    };
    let events = match open_events(
        args.events.as_deref(),
        !args.quiet && std::io::stderr().is_terminal(),
    ) {
        Ok(events) => events,
        Err(e) => return fail(args.json || args.pack, "question", &question, &e),
    };

    let deadline = settings.run.timeout;
    let run = async {
        match tokio::time::timeout(
            deadline,
            ground::pipeline::answer(&question, &settings, &events),
        )
        .await
        {
            Ok(result) => result,
            Err(_) => Err(Error::Deadline {
                seconds: deadline.as_secs(),
                stage: events.current(),
            }),
        }
    };
    let report = match block_on(run) {
        Ok(report) => report,
        Err(e) => return fail(args.json || args.pack, "question", &question, &e),
    };

    if args.verbose {
        for page in &report.pages {
            eprintln!(
                "ground: page {} {} {}{}",
                page.index
                    .map(|i| format!("[{i}]"))
                    .unwrap_or_else(|| "[-]".into()),
                page.status.as_str(),
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

    let printed = if args.pack {
        print_json(&render::pack(&report))
    } else if args.json {
        print_json(&render::json(&report))
    } else {
        let style = match args.format {
            Format::Text => Style::Text {
                colour: colour_stdout(),
            },
            Format::Markdown => Style::Markdown,
        };
        write!(
            std::io::stdout().lock(),
            "{}",
            render::person(&report, style)
        )
    };
    if printed.is_err() {
        return exit::SUCCESS; // stdout closed (e.g. piped into `head`): nothing to report
    }

    let answer = &report.answer;
    let grounded_run = report.mode == AnswerMode::Grounded;
    if let AnswerMode::Offline { .. } = report.mode {
        eprintln!(
            "warning: search failed; this answer is the model's alone and not grounded (exit {})",
            exit::OFFLINE
        );
        return exit::OFFLINE;
    }
    let problem = if grounded_run && answer.answerable && !answer.cites_anything() {
        Some(Error::Uncited {
            sources: report.sources.len(),
        })
    } else if args.strict && !answer.grounded() {
        let reason = if !grounded_run {
            "no search was made (--auto decided the question needs none)".to_string()
        } else if !answer.answerable {
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

fn run_search(args: cli::SearchArgs) -> i32 {
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
    if outcome.hits.is_empty() {
        let error = ground::search::no_hits_error(&query, &outcome.unresponsive_engines);
        return fail(args.json, "query", &query, &error);
    }
    let printed = if args.json {
        print_json(&ground::search_command::json(
            &outcome,
            &query,
            &search_settings,
            limit,
        ))
    } else {
        write!(
            std::io::stdout().lock(),
            "{}",
            ground::search_command::person(&outcome, limit)
        )
    };
    let _ = printed;
    exit::SUCCESS
}

fn run_fetch(args: cli::FetchArgs) -> i32 {
    let overrides = cli::overrides(&args.config, None, Some(&args.fetch), None, None);
    let settings = match settings(&overrides) {
        Ok(s) => s,
        Err(e) => return fail(args.json, "url", &args.url, &e),
    };
    let fetched = match block_on(ground::fetch_command::fetch(&settings, &args.url)) {
        Ok(f) => f,
        Err(e) => return fail(args.json, "url", &args.url, &e),
    };
    let ok = ground::fetch_command::succeeded(&fetched);
    let _ = if args.json {
        print_json(&ground::fetch_command::json(&fetched))
    } else if ok {
        write!(
            std::io::stdout().lock(),
            "{}",
            ground::fetch_command::person(&fetched)
        )
    } else {
        Ok(())
    };
    if ok {
        exit::SUCCESS
    } else {
        eprintln!("{}", ground::fetch_command::failure_report(&fetched));
        exit::NO_SOURCES
    }
}

fn run_mcp(args: cli::McpArgs) -> i32 {
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
    let outcome = settings(&overrides).and_then(|s| block_on(ground::mcp::serve(s)));
    match outcome {
        Ok(()) => exit::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            e.exit_code()
        }
    }
}

fn run_cache(args: cli::CacheArgs) -> i32 {
    let overrides = cli::overrides(&args.config, None, None, None, None);
    match settings(&overrides) {
        Ok(s) => ground::cache_command::run(&s.cache, args.action, args.json),
        Err(e) => fail(args.json, "cache", "", &e),
    }
}

fn run_doctor(args: cli::DoctorArgs) -> i32 {
    let overrides = cli::overrides(
        &args.config,
        Some(&args.search),
        None,
        Some(&args.model),
        None,
    );
    let env = |name: &str| std::env::var(name).ok();
    ground::doctor::run(&overrides, &env, args.json, colour_stdout())
}

fn run_extract(args: cli::ExtractArgs) -> i32 {
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

/// The run's event sink: progress lines on stderr when it is a terminal, and JSON
/// lines to `--events FILE` (appended) or `-` (stderr).
fn open_events(path: Option<&std::path::Path>, progress: bool) -> Result<Events, Error> {
    let progress: Option<Progress> =
        progress.then(|| Box::new(|line: &str| eprintln!("ground: {line}…")) as Progress);
    let log: Option<Box<dyn Write + Send>> = match path {
        None => None,
        Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stderr())),
        Some(p) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| Error::Config {
                    message: format!("cannot open the events file {}: {e}", p.display()),
                    hint: "give --events a writable path, or - for stderr".into(),
                })?;
            Some(Box::new(file))
        }
    };
    Ok(Events::new(progress, log))
}

fn colour_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn print_json(value: &serde_json::Value) -> std::io::Result<()> {
    writeln!(std::io::stdout().lock(), "{value}")
}

/// Prints an error (and, with `--json`, an error object naming the input on stdout)
/// and returns its exit code.
fn fail(json: bool, input_name: &str, input: &str, error: &Error) -> i32 {
    if json {
        let _ = print_json(&render::json_error(input_name, input, error));
    }
    eprintln!("{}", error.report());
    error.exit_code()
}

/// The question or query from the arguments, or from stdin for `-` / no argument
/// when stdin is not a terminal. At most 64 KiB is read.
fn read_input(words: &[String], what: &str) -> Result<String, Error> {
    let from_stdin = words.is_empty() && !std::io::stdin().is_terminal() || words == ["-"];
    if from_stdin {
        let mut text = String::new();
        std::io::stdin()
            .take(64 * 1024)
            .read_to_string(&mut text)
            .map_err(|e| Error::Config {
                message: format!("cannot read the {what} from stdin: {e}"),
                hint: format!("pass the {what} as an argument instead"),
            })?;
        return Ok(text.trim().to_string());
    }
    Ok(words.join(" ").trim().to_string())
}
