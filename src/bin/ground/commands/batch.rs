//! `ground batch`: reads the questions (bounded lines), resolves the settings, opens
//! `--out` (resuming what is in it) and hands the rest to [`ground::batch::run`];
//! draws the progress, prints the summary and maps it to an exit code.

use std::io::{BufRead, BufReader, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use ground::batch::input::{self, Line};
use ground::batch::out::{Lookup, Resumed};
use ground::batch::{Options, Tally};
use ground::error::{Error, exit};
use ground::service::Service;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::BatchArgs;
use crate::input::read_line;
use crate::output::code;
use crate::runtime::settings;

/// Runs `ground batch`.
pub fn run(args: BatchArgs) -> ExitCode {
    match batch(args) {
        Ok(tally) => {
            eprintln!("{}", tally.summary());
            if tally.interrupted {
                code(exit::INTERRUPTED)
            } else if tally.any_failed() {
                code(exit::SOME_FAILED)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprintln!("{}", e.report());
            code(e.exit_code())
        }
    }
}

/// Every line of the input, each read with the bounded line reader.
fn read_lines(name: &str) -> Result<Vec<Line>, Error> {
    let cannot = |e: std::io::Error| Error::Usage {
        message: format!("cannot read the questions from {name}: {e}"),
        hint: "pass a readable file of questions, or - for stdin".into(),
    };
    let mut reader: Box<dyn BufRead> = if name == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(std::fs::File::open(name).map_err(cannot)?))
    };
    let mut lines = Vec::new();
    loop {
        let number = lines.len() + 1;
        match read_line(&mut reader) {
            Ok(Some(text)) => lines.push(Line {
                number,
                text: Ok(text),
            }),
            Ok(None) => return Ok(lines),
            Err(problem) if problem.starts_with("cannot be read") => {
                return Err(cannot(std::io::Error::other(problem)));
            }
            Err(problem) => lines.push(Line {
                number,
                text: Err(problem),
            }),
        }
    }
}

/// The batch itself: the tally at its end, or the error that kept it from running.
fn batch(args: BatchArgs) -> Result<Tally, Error> {
    let entries = input::parse(read_lines(&args.input)?);
    let settings = settings(&args.run.overrides(args.pages, args.timeout))?;
    let resumed = args
        .out
        .as_deref()
        .map(|path| Resumed::open(path, args.retry_failed))
        .transpose()?;
    if let Some(r) = resumed.as_ref().filter(|r| r.repaired > 0) {
        eprintln!(
            "ground batch: cut off a partial last line ({} bytes) left by an earlier run",
            r.repaired
        );
    }
    // Ids the output has a record for are skipped; records go to --out, else stdout.
    let earlier: Box<Lookup>;
    let mut out: Box<dyn Write + Send>;
    match resumed {
        Some(resumed) => {
            out = Box::new(resumed.file.try_clone().map_err(|e| Error::Usage {
                message: format!("cannot open the output file: {e}"),
                hint: "pass --out a file you can write to".into(),
            })?);
            earlier = Box::new(move |key| resumed.earlier(key));
        }
        None => {
            out = Box::new(std::io::stdout());
            earlier = Box::new(|_| None);
        }
    }
    let jobs = usize::from(args.jobs);
    let options = Options {
        jobs,
        shard: args.shard,
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| Error::Internal {
        message: format!("cannot start the async runtime: {e}"),
    })?;
    let service = Service::new(settings, jobs, 0);
    let mut shown = Shown::new(args.quiet);
    let tally = runtime.block_on(async {
        // The first Ctrl-C stops new questions (those under way finish and are
        // written); a second one ends at once.
        let stop = Arc::new(tokio::sync::Notify::new());
        let signal = Arc::clone(&stop);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!(
                    "ground batch: stopping: finishing the questions under way (Ctrl-C again to stop now)"
                );
                signal.notify_one();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(exit::INTERRUPTED);
                }
            }
        });
        ground::batch::run(
            &service,
            entries,
            &*earlier,
            options,
            &mut out,
            &mut |tally| shown.update(tally),
            stop.notified(),
        )
        .await
    });
    shown.finish();
    runtime.shutdown_background();
    tally
}

/// The batch's progress on stderr: a bar (done/failed/total, rate, ETA) on a terminal,
/// a line every 10 % otherwise, nothing with `-q`.
struct Shown {
    bar: Option<ProgressBar>,
    quiet: bool,
    tenth: usize,
}

impl Shown {
    fn new(quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let style =
                ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {per_sec} ETA {eta}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> ");
            bar.set_style(style);
            bar
        });
        Shown {
            bar,
            quiet,
            tenth: 0,
        }
    }

    fn update(&mut self, tally: &Tally) {
        if let Some(bar) = &self.bar {
            bar.set_length(tally.total as u64);
            bar.set_position(tally.done as u64);
            bar.set_message(format!("{} failed", tally.failures()));
        } else if !self.quiet && tally.total > 0 {
            let tenth = tally.done * 10 / tally.total;
            if tenth > self.tenth {
                self.tenth = tenth;
                eprintln!(
                    "ground batch: {}/{} done ({} %), {} failed, {:.0} s",
                    tally.done,
                    tally.total,
                    tenth * 10,
                    tally.failures(),
                    tally.elapsed.as_secs_f64()
                );
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
