//! The `ground` binary: parse the command line, start the runtime, run one command and
//! turn its outcome into an exit code. It is the only code that knows clap; every
//! behaviour lives in the library (`ground`), and each command is a `run(args) ->
//! ExitCode` in [`commands`].

mod answering;
mod cli;
mod commands;
mod conversation;
mod input;
mod live_terminal;
mod output;
mod progress;
mod runtime;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    // ggml answers a fatal error (an assertion, a C++ exception nobody caught) by
    // running `gdb` from PATH against this process to print a backtrace: a stranger's
    // program started by a bad model file. Its documented switch turns that off; set
    // before any thread exists, so before any ggml call.
    // SAFETY: single-threaded here: no runtime, no other thread has started.
    unsafe { std::env::set_var("GGML_NO_BACKTRACE", "1") };
    // The PDF sandbox's worker, `ground pdf-worker` (see `ground::pdf::sandbox`). It
    // is no command for people, so it is not in clap's tree, whose help and
    // completion scripts list even hidden commands; and it runs before any runtime
    // or thread exists, because it must stay single-threaded.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == ground::pdf::sandbox::WORKER_COMMAND)
    {
        return ground::pdf::worker::run();
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => match cli::docs::spaced_collection(&error, arguments()) {
            Some(name) => return docs_needs_an_equals_sign(&name),
            None => error.exit(),
        },
    };
    // llama.cpp's OpenMP threads sleep soon when they wait for each other, unless the
    // environment says otherwise: this runs the program again with the setting (see
    // the function), before any thread. Only a command that may write with a model
    // pays for the second start (whatever its backend: which one is known only once
    // the settings are read, after threads exist); `index`, `search`, `fetch` and
    // the rest start once (and so does the PDF worker above).
    #[cfg(all(feature = "embedded", target_os = "linux"))]
    if cli.command.may_run_the_model() {
        ground::llm::embedded::engine::brief_openmp_spin();
    }
    // After the run again above, so it is checked once.
    if matches!(cli.command, Command::Answer(_)) {
        let args: Vec<String> = arguments().collect();
        let home = ground::docs::IndexHome::from_env();
        let exists = |name: &str| home.as_ref().is_some_and(|h| ground::docs::exists(h, name));
        if let Some(name) = cli::docs::collection_read_as_a_word(&args, exists) {
            return docs_needs_an_equals_sign(&name);
        }
    }
    match cli.command {
        Command::Answer(args) => commands::answer::run(args),
        Command::Chat(args) => commands::chat::run(args),
        Command::Search(args) => commands::search::run(args),
        Command::Check(args) => commands::check::run(args),
        Command::Fetch(args) => commands::fetch::run(args),
        Command::Extract(args) => commands::extract::run_command(args),
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Mcp(args) => commands::mcp::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::Batch(args) => commands::batch::run(args),
        Command::Cache(args) => commands::cache::run(args),
        Command::Usage(args) => commands::usage::run(args),
        Command::Key(args) => commands::key::run(args),
        Command::Completions(args) => commands::completions::run(args),
        Command::Model(args) => commands::model::run(args),
        Command::Index(args) => commands::index::run(args),
    }
}

/// `--docs NAME` written with a space: the error, its fix, and exit 2.
fn docs_needs_an_equals_sign(name: &str) -> ExitCode {
    eprintln!(
        "{}",
        ground::error::report(
            &format!("`--docs {name}`: --docs takes its collection after an equals sign"),
            Some(&format!("write --docs={name}")),
        )
    );
    ExitCode::from(2)
}

/// The command line as text, an argument that is not UTF-8 (a path) made lossy
/// rather than a panic: read only to recognise `--docs NAME`.
fn arguments() -> impl Iterator<Item = String> {
    std::env::args_os().map(|a| a.to_string_lossy().into_owned())
}
