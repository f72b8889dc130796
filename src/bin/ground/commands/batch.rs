//! `ground batch`: opens the questions (a file read twice, as a stream; stdin kept
//! in an unnamed temporary file when it is a pipe), resolves the settings, opens
//! `--out` (locked, resuming what is in it) and hands the rest to
//! [`ground::batch::run`]; draws the progress, prints the summary and maps it to an
//! exit code.
//!
//! Nothing it writes to stderr can end it: a closed stderr drops the line (the
//! records still go to their file), and a closed stdout ends the run quietly with
//! exit 0 ([`Tally::closed`]), as `answer` does when its reader has gone.

use std::fs::File;
use std::io::{BufReader, IsTerminal, Seek, SeekFrom, Write};
use std::process::ExitCode;
use std::sync::Arc;

use ground::batch::input::Line;
use ground::batch::out::{FileId, Lookup, Resumed, file_id};
use ground::batch::shard::Shard;
use ground::batch::{Lines, Options, Tally};
use ground::error::{Error, exit};
use ground::service::Service;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::cli::BatchArgs;
use crate::input::read_line;
use crate::output::code;
use crate::runtime::settings;

/// A line on stderr, dropped when stderr is closed (`2>&1 | head`).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Runs `ground batch`.
pub fn run(args: BatchArgs) -> ExitCode {
    match batch(args) {
        Ok(tally) if tally.closed => ExitCode::SUCCESS,
        Ok(tally) => {
            say(&tally.summary());
            if tally.interrupted {
                code(exit::INTERRUPTED)
            } else if tally.any_failed() {
                code(exit::SOME_FAILED)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            say(&e.report());
            code(e.exit_code())
        }
    }
}

/// The shard to answer: `--shard K/N` (checked by clap), or `--shard-index I
/// --shard-count N` (clap has made sure both or neither are given).
fn shard(args: &BatchArgs) -> Result<Option<Shard>, Error> {
    match (args.shard, args.shard_index, args.shard_count) {
        (Some(shard), ..) => Ok(Some(shard)),
        (None, Some(index), Some(count)) => Shard::from_index(index, count)
            .map(Some)
            .map_err(|e| Error::Usage {
                message: e.to_string(),
                hint: "give --shard-index I --shard-count N (or GROUND_SHARD_INDEX and GROUND_SHARD_COUNT) with I from 0 to N-1".into(),
            }),
        _ => Ok(None),
    }
}

/// The questions, a file that can be read again from `start`.
struct Questions {
    file: File,
    start: u64,
    /// The file's identity, refused as `--out`: `None` for a copy of a pipe.
    id: Option<FileId>,
}

/// Opens the questions: a regular file as it is (stdin too, when it is one), any
/// other input (a pipe, `<(...)`, a terminal) copied first into a temporary file
/// that has no name, so it can be read twice without being held in memory.
fn open_questions(name: &str) -> Result<Questions, Error> {
    let cannot = |e: std::io::Error| Error::Usage {
        message: format!("cannot read the questions from {name}: {e}"),
        hint: "pass a readable file of questions, or - for stdin".into(),
    };
    let mut file = if name == "-" {
        stdin_file().map_err(cannot)?
    } else {
        File::open(name).map_err(cannot)?
    };
    let metadata = file.metadata().map_err(cannot)?;
    if metadata.is_file() {
        let start = file.stream_position().map_err(cannot)?;
        return Ok(Questions {
            file,
            start,
            id: file_id(&metadata),
        });
    }
    let mut copy = unnamed_temp_file().map_err(|e| Error::Usage {
        message: format!(
            "cannot keep the questions from {name} in a temporary file in {}: {e}",
            std::env::temp_dir().display()
        ),
        hint: "set TMPDIR to a folder you can write to, or pass the questions as a file".into(),
    })?;
    std::io::copy(&mut file, &mut copy).map_err(cannot)?;
    Ok(Questions {
        file: copy,
        start: 0,
        id: None,
    })
}

/// Stdin as a file of its own (a duplicate of descriptor 0).
fn stdin_file() -> std::io::Result<File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        Ok(File::from(std::io::stdin().as_fd().try_clone_to_owned()?))
    }
    #[cfg(not(unix))]
    {
        Err(std::io::Error::other("stdin cannot be read as a file here"))
    }
}

/// A new temporary file for this process alone, removed from its folder at once (it
/// goes when the process ends, however it ends).
fn unnamed_temp_file() -> std::io::Result<File> {
    let dir = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = dir.join(format!(".ground-batch-{}-{nanos}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

impl Questions {
    /// The lines from the first, each read with the bounded line reader.
    fn lines(&self, name: &str) -> Result<Lines<'_>, Error> {
        let name = name.to_string();
        let cannot = move |e: String| Error::Usage {
            message: format!("cannot read the questions from {name}: {e}"),
            hint: "pass a readable file of questions, or - for stdin".into(),
        };
        let mut file = &self.file;
        file.seek(SeekFrom::Start(self.start))
            .map_err(|e| cannot(e.to_string()))?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut number = 0;
        Ok(Box::new(std::iter::from_fn(move || {
            number += 1;
            match read_line(&mut reader) {
                Ok(Some(text)) => Some(Ok(Line {
                    number,
                    text: Ok(text),
                })),
                Ok(None) => None,
                Err(problem) if problem.starts_with("cannot be read") => Some(Err(cannot(problem))),
                Err(problem) => Some(Ok(Line {
                    number,
                    text: Err(problem),
                })),
            }
        })))
    }
}

/// The batch itself: the tally at its end, or the error that kept it from running.
fn batch(args: BatchArgs) -> Result<Tally, Error> {
    let shard = shard(&args)?;
    let questions = open_questions(&args.input)?;
    let mut overrides = args.run.overrides(args.pages, args.timeout);
    overrides.images = args.images;
    overrides.redis_url = args.redis_url.clone();
    let settings = settings(&overrides)?;
    let resumed = args
        .out
        .as_deref()
        .map(|path| Resumed::open(path, args.retry_failed, questions.id))
        .transpose()?;
    if let Some(r) = &resumed {
        if let Some(why) = &r.unlocked {
            say(&ground::error::warning(&format!(
                "{why}; nothing keeps a second run off this output (two runs on it would ask every question twice)"
            )));
        }
        if r.repaired > 0 {
            say(&format!(
                "ground batch: cut off a partial last line ({} bytes) left by an earlier run",
                r.repaired
            ));
        }
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
            // The lock goes with `resumed`, at the end of this function.
            earlier = Box::new(move |key| resumed.earlier(key));
        }
        None => {
            out = Box::new(std::io::stdout());
            earlier = Box::new(|_| None);
        }
    }
    let jobs = usize::from(args.jobs);
    let options = Options { jobs, shard };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| Error::Internal {
        message: format!("cannot start the async runtime: {e}"),
    })?;
    let service = Service::new(settings, jobs, 0);
    let mut shown = Shown::new(args.quiet);
    let name = args.input.clone();
    let mut open = || questions.lines(&name);
    let tally = runtime.block_on(async {
        // The first Ctrl-C stops new questions (those under way finish and are
        // written); a second one ends at once.
        let stop = Arc::new(tokio::sync::Notify::new());
        let signal = Arc::clone(&stop);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                say(
                    "ground batch: stopping: finishing the questions under way (Ctrl-C again to stop now)",
                );
                signal.notify_one();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(exit::INTERRUPTED);
                }
            }
        });
        ground::batch::run(
            &service,
            &mut open,
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
                say(&format!(
                    "ground batch: {}/{} done ({} %), {} failed, {:.0} s",
                    tally.done,
                    tally.total,
                    tenth * 10,
                    tally.failures(),
                    tally.elapsed.as_secs_f64()
                ));
            }
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
