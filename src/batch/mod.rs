//! `ground batch`: many questions from one file, answered concurrently through one
//! [`Service`] (one cache, one rate limit, one model made ready once), each ending as
//! one JSON record appended to the output.
//!
//! Design decisions a reader would otherwise have to reconstruct:
//!
//! - **A thin face over [`crate::service`].** A question is a `Service::answer` call,
//!   its record `answer --json`'s object ([`crate::render::json`]) plus `id`, `line`
//!   and the input's other keys; a failure is `{id, line, error {kind, message,
//!   hint}}` ([`Failure::json`]). No failure stops the batch.
//! - **`jobs` questions at once**, a visible bound: at most that many `answer` calls
//!   are in the [`FuturesUnordered`] below, and the service's own bound is the same.
//!   With the embedded engine, up to `jobs` replies are written together in one
//!   batch per step (continuous batching), while the other questions search and fetch.
//! - **Records are written by this one loop**, in the order questions end, each
//!   flushed before the next is started ([`out`]), so a killed run loses only the
//!   questions in flight and resumes from its own output.
//! - **Stopping** (`stop` resolves: Ctrl-C) starts no new question and writes the
//!   records of the ones under way as they end.
//! - What to ask is decided line by line, the same way twice: the shard ([`shard`]),
//!   then the ids the output has a record for ([`out::Resumed`]).
//! - **The input is read twice, as a stream**: once to count what this run will ask
//!   (the progress's total), once to ask it, a line taken as a place frees up. So a
//!   batch holds the questions under way and the ids it has seen, never the whole
//!   file: a million lines (116 MiB) took 1,076 MB read whole, 113 MB streamed
//!   (`scripts/measure-batch-memory.sh`).
//! - **A closed stdout ends the run quietly** (`ground batch ... | head -1`):
//!   [`Tally::closed`], no error and no summary, as `answer` does; the questions
//!   under way are dropped (no reader is left for their records). Lines for stderr
//!   (notes, the summary) are dropped when stderr is closed.

pub mod input;
pub mod out;
pub mod shard;

use std::collections::BTreeMap;
use std::future::Future;
use std::io::Write;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde_json::{Map, Value};

use self::input::{Entries, Entry, Line, Parser};
use self::shard::Shard;
use crate::error::Error;
use crate::service::{AnswerRequest, Answered, Client, Failure, Service};

/// How a batch runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Questions at once (at least 1).
    pub jobs: usize,
    /// Only this shard's questions, when set.
    pub shard: Option<Shard>,
}

/// What a batch has done so far: its progress, and at the end its summary.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    /// Questions to ask in this run (after the shard and the earlier records).
    pub total: usize,
    /// Questions with a record written in this run.
    pub done: usize,
    /// Questions answered.
    pub answered: usize,
    /// Answers the verdict finds grounded (they cite their sources).
    pub grounded: usize,
    /// Failed questions, by error kind.
    pub failed: BTreeMap<String, usize>,
    /// Questions left out: another shard's.
    pub other_shards: usize,
    /// Questions left out: the output has their record already.
    pub recorded: usize,
    /// Of those, the ones whose record is a failure (not retried).
    pub failed_before: usize,
    /// Searches made (not answered from the cache).
    pub searches: usize,
    /// Pages read and used as sources.
    pub pages: usize,
    /// Model tokens, prompt and written, as the model server counted them.
    pub tokens: u64,
    /// Time since the batch started.
    pub elapsed: Duration,
    /// Stopped before every question was asked (Ctrl-C).
    pub interrupted: bool,
    /// The output (stdout) was closed by its reader: the run ended there.
    pub closed: bool,
}

impl Tally {
    /// Failed questions, of every kind.
    pub fn failures(&self) -> usize {
        self.failed.values().sum()
    }

    /// Whether the output, earlier runs' records included, holds a failure of this
    /// shard's questions.
    pub fn any_failed(&self) -> bool {
        self.failures() + self.failed_before > 0
    }

    /// The summary printed at the end, a few lines.
    pub fn summary(&self) -> String {
        let mut text = format!(
            "ground batch: {} of {} questions recorded in {:.1} s: {} answered ({} grounded), {} failed",
            self.done,
            self.total,
            self.elapsed.as_secs_f64(),
            self.answered,
            self.grounded,
            self.failures(),
        );
        if !self.failed.is_empty() {
            let kinds: Vec<String> = self
                .failed
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            text.push_str(&format!(" ({})", kinds.join(", ")));
        }
        text.push_str(&format!(
            "\n  searches {}, pages {}, model tokens {}",
            self.searches, self.pages, self.tokens
        ));
        if self.recorded + self.other_shards > 0 {
            text.push_str(&format!(
                "\n  left out: {} recorded by an earlier run ({} of them failures: --retry-failed asks them again), {} of other shards",
                self.recorded, self.failed_before, self.other_shards
            ));
        }
        if self.interrupted {
            text.push_str(&format!(
                "\n  interrupted: {} not asked; run the same command again to resume",
                self.total.saturating_sub(self.done)
            ));
        }
        text
    }
}

/// A record as one JSON line (without its end): `id` first, as the input wrote it
/// ([`input::Id::json`]), then the other fields as `--json` writes them.
fn record_line(entry: &Entry, mut fields: Map<String, Value>) -> String {
    fields.remove("id");
    let rest = crate::text::json_line(&Value::Object(fields));
    let id = entry.id.json();
    match rest.strip_prefix('{') {
        Some("}") | None => format!("{{\"id\":{id}}}"),
        Some(rest) => format!("{{\"id\":{id},{rest}"),
    }
}

/// The record of an answered question: `answer --json`'s object with `id`, `line`
/// and the input's other keys (the answer's own keys win a clash).
fn answer_record(entry: &Entry, answered: &Answered) -> String {
    let mut record = entry.extra.clone();
    record.insert("line".into(), entry.line.into());
    if let Value::Object(object) = crate::render::json::answered(answered) {
        record.extend(object);
    }
    record_line(entry, record)
}

/// The record of a failed question: `{id, line, error {kind, message, hint}}` and the
/// input's other keys.
fn failure_record(entry: &Entry, failure: &Failure) -> String {
    let mut record: Map<String, Value> = entry.extra.clone();
    record.insert("line".into(), entry.line.into());
    record.insert("error".into(), failure.json());
    record_line(entry, record)
}

/// The lines of a batch's input, from its first: what [`run`] reads, twice.
pub type Lines<'a> = Box<dyn Iterator<Item = Result<Line, Error>> + 'a>;

/// What this run does with an entry.
enum Part {
    /// Another shard's.
    OtherShard,
    /// The output has its record already.
    Recorded(out::Earlier),
    /// Ask it.
    Ask,
}

fn part(entry: &Entry, options: Options, earlier: &out::Lookup) -> Part {
    if options.shard.is_some_and(|s| !s.holds(&entry.key)) {
        Part::OtherShard
    } else if let Some(record) = earlier(&entry.key) {
        Part::Recorded(record)
    } else {
        Part::Ask
    }
}

/// Asks every question of the input that is this shard's and has no `earlier`
/// record, at most `options.jobs` at once, appending each record to `out` as it ends
/// and telling `progress` after each. `open` gives the input's lines from the first,
/// each time it is called: once to count, once to ask. Ends early, after the
/// questions under way, when `stop` resolves; at once, with [`Tally::closed`], when
/// `out` is a pipe whose reader has gone. Fails when the input cannot be read or
/// `out` cannot be written.
pub async fn run<'a>(
    service: &Service,
    open: &mut dyn FnMut() -> Result<Lines<'a>, Error>,
    earlier: &out::Lookup,
    options: Options,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(&Tally),
    stop: impl Future<Output = ()>,
) -> Result<Tally, Error> {
    let started = Instant::now();
    let mut tally = Tally::default();
    // The first reading counts: nothing of it is kept.
    for entry in Entries::new(open()?, Parser::keys_only()) {
        match part(&entry?, options, earlier) {
            Part::OtherShard => tally.other_shards += 1,
            Part::Recorded(record) => {
                tally.recorded += 1;
                if record == out::Earlier::Failed {
                    tally.failed_before += 1;
                }
            }
            Part::Ask => tally.total += 1,
        }
    }
    let write_failed = |e: std::io::Error| Error::Usage {
        message: format!("cannot write a record to the output: {e}"),
        hint: "check the disk has room and --out is writable; run again to resume".into(),
    };

    let client = Client::one_user(service.settings());
    let note = |line: &str| crate::error::log_line(&format!("ground: {line}"));
    let shown = |report: &crate::report::Report| report.answer.answer.clone();
    let ask = |entry: Entry| {
        let (client, note, shown) = (&client, &note, &shown);
        async move {
            let outcome = match &entry.question {
                Ok(question) => {
                    let mut no_download = |_| {};
                    service
                        .answer(
                            client,
                            AnswerRequest {
                                question,
                                conversation: &[],
                                events: crate::events::Events::silent(),
                                watch: crate::service::unwatched(),
                                download: &mut no_download,
                                note,
                                shown_answer: shown,
                                adjust: None,
                            },
                        )
                        .await
                }
                Err(failure) => Err(failure.clone()),
            };
            (entry, outcome)
        }
    };

    let jobs = options.jobs.max(1);
    // The second reading asks, an entry taken as a place frees up.
    let mut waiting = Entries::new(open()?, Parser::new()).filter(|entry| {
        entry
            .as_ref()
            .map_or(true, |e| matches!(part(e, options, earlier), Part::Ask))
    });
    // At most `jobs` questions under way: the bound of the whole batch.
    let mut under_way = FuturesUnordered::new();
    let mut stop = std::pin::pin!(stop);
    loop {
        while !tally.interrupted && under_way.len() < jobs {
            match waiting.next() {
                Some(entry) => under_way.push(ask(entry?)),
                None => break,
            }
        }
        let ended = tokio::select! {
            ended = under_way.next() => ended,
            () = &mut stop, if !tally.interrupted => {
                tally.interrupted = true;
                continue;
            }
        };
        let Some((entry, outcome)) = ended else { break };
        let record = match &outcome {
            Ok(answered) => {
                tally.answered += 1;
                if matches!(answered.verdict, crate::report::Verdict::Accepted) {
                    tally.grounded += 1;
                }
                let report = &answered.report;
                if answered.reused.is_none() {
                    tally.searches += report.searches.iter().filter(|s| !s.cached).count();
                    tally.pages += report.sources.len();
                    tally.tokens += u64::from(report.model.prompt_tokens.unwrap_or(0))
                        + u64::from(report.model.completion_tokens.unwrap_or(0));
                }
                answer_record(&entry, answered)
            }
            Err(failure) => {
                *tally.failed.entry(failure.kind.to_string()).or_default() += 1;
                failure_record(&entry, failure)
            }
        };
        match out::append(out, &record) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                tally.closed = true;
                break;
            }
            Err(e) => return Err(write_failed(e)),
        }
        tally.done += 1;
        // The input changed between its readings: the total is at least what is done.
        tally.total = tally.total.max(tally.done);
        tally.elapsed = started.elapsed();
        progress(&tally);
    }
    tally.elapsed = started.elapsed();
    Ok(tally)
}
