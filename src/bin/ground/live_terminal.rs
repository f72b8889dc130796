//! `ground answer` while the model writes: a live progress line on stderr (only on a
//! terminal) and each statement on stdout the moment it is complete and checked.
//!
//! The progress line says how long the server has been reading the prompt (with the
//! embedded model, how many of its tokens and about how long is left), then how long
//! it has been writing, how many tokens it wrote and how fast. It is redrawn in
//! place by a small timer thread and cleared before any answer line is printed; once
//! statements are on a terminal's current line it stays away, so the two never mix.
//!
//! Warnings come on stderr as the run adds them (on a terminal, not with `-q`), so a
//! person can act on one (a SearXNG with JSON off) while the model still works; the
//! ones shown are remembered, and the end of the run prints only the others
//! ([`Live::warned`]). One that comes while statements hold the terminal's current
//! line waits for the end.
//!
//! Which statements to print, what the progress line and the notes say, and how the
//! printed statements are reconciled with the report at the end are
//! [`ground::render::live`]'s; this file is only the terminal plumbing: the timer
//! thread, clearing and drawing the line, and writing to stdout.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ground::error;
use ground::grounding::Statement;
use ground::pipeline::Watch;
use ground::render::Style;
use ground::render::live::{Reading, Shown, cut_note, progress_line};
use ground::report::Report;

/// How often the progress line is redrawn.
const TICK: Duration = Duration::from_millis(200);
/// Clears the terminal line the cursor is on.
const CLEAR: &str = "\r\x1b[K";

/// The live output of one run; see the [module documentation](self).
pub struct Live {
    state: Arc<Mutex<State>>,
    ticker: Mutex<Option<JoinHandle<()>>>,
}

struct State {
    /// Draw the progress line on stderr.
    progress: bool,
    /// Print statements on stdout as they come, in this style.
    print: Option<Style>,
    /// stdout is a terminal (then it shares the screen with the progress line).
    stdout_tty: bool,
    /// The answer attempt under way.
    asking: Option<Asking>,
    /// A progress line is on stderr now.
    drawn: bool,
    /// The statements printed on stdout.
    shown: Shown,
    /// stdout was closed (e.g. piped into `head`).
    stdout_closed: bool,
    /// The run is over: draw nothing more.
    stopped: bool,
    /// Say a follow-up's standalone question on stderr (not with `-q`).
    tell_rewrites: bool,
    /// The warnings printed as they came (with `progress` only).
    warned: Vec<String>,
}

struct Asking {
    attempt: u32,
    since: Instant,
    /// The model's reading of the prompt, when it reports it: the first report's
    /// time, the sources and the last report.
    reading: Option<(Instant, usize, ground::llm::Prefill)>,
    first_text: Option<Instant>,
    pieces: u64,
}

impl Live {
    /// Starts the live output: `progress` draws the progress line on stderr, `print`
    /// prints statements as they come (person output), `stdout_tty` says stdout
    /// shares the terminal.
    pub fn start(progress: bool, print: Option<Style>, stdout_tty: bool) -> Self {
        let state = Arc::new(Mutex::new(State {
            progress,
            print,
            stdout_tty,
            asking: None,
            drawn: false,
            shown: Shown::new(),
            stdout_closed: false,
            stopped: false,
            tell_rewrites: false,
            warned: Vec::new(),
        }));
        let ticker = progress.then(|| {
            let state = Arc::clone(&state);
            std::thread::spawn(move || {
                loop {
                    std::thread::sleep(TICK);
                    let Ok(mut state) = state.lock() else { return };
                    if state.stopped {
                        return;
                    }
                    state.draw();
                }
            })
        });
        Live {
            state,
            ticker: Mutex::new(ticker),
        }
    }

    /// Says a follow-up's standalone question on stderr ("searching for: ...") when
    /// `on` (any stderr, so scripts see it too).
    pub fn telling_rewrites(self, on: bool) -> Self {
        if let Some(mut state) = self.lock() {
            state.tell_rewrites = on;
        }
        self
    }

    fn lock(&self) -> Option<MutexGuard<'_, State>> {
        self.state.lock().ok()
    }

    /// Shows a stage line (`ground: searching…`) on stderr, clearing the progress
    /// line first; left out while statements hold the terminal's current line.
    pub fn stage_line(&self, line: &str) {
        let Some(mut state) = self.lock() else { return };
        state.clear();
        if !state.holds_line() {
            eprintln!("ground: {line}…");
        }
    }

    /// Whether `warning` was already printed as it came (so the end leaves it out).
    pub fn warned(&self, warning: &str) -> bool {
        self.lock()
            .is_some_and(|s| s.warned.iter().any(|w| w == warning))
    }

    /// Whether statements were printed.
    pub fn printed(&self) -> bool {
        self.lock().is_some_and(|s| !s.shown.is_empty())
    }

    /// Stops the progress line and clears it (idempotent).
    pub fn stop(&self) {
        if let Some(mut state) = self.lock() {
            state.stopped = true;
            state.clear();
        }
        // The timer thread sees `stopped` at its next tick and ends; not waiting for
        // it keeps its sleep off the run's wall time.
        drop(self.ticker.lock().ok().and_then(|mut t| t.take()));
    }

    /// Ends a run that produced `report`: prints what person output still lacks after
    /// the statements already shown (all of it when none were). Returns false when
    /// stdout is closed.
    pub fn finish(&self, report: &Report, style: Style) -> bool {
        self.stop();
        let Some(state) = self.lock() else {
            return false;
        };
        let out = state.shown.rest(report, style);
        !state.stdout_closed && write_out(&out)
    }

    /// Ends a run that failed (or was interrupted): clears the progress line and ends
    /// a statement line on stdout, with a note on stderr that the answer shown is cut.
    pub fn fail(&self, interrupted: bool) {
        self.stop();
        let Some(state) = self.lock() else { return };
        let shown = state.shown.len();
        if shown == 0 {
            return;
        }
        if !state.stdout_closed {
            write_out("\n");
        }
        eprintln!("{}", cut_note(shown, interrupted));
    }
}

impl Watch for Live {
    fn rewritten(&self, standalone: &str) {
        let Some(mut state) = self.lock() else { return };
        if state.tell_rewrites {
            state.clear();
            eprintln!(
                "ground: searching for: {}",
                ground::text::sanitize_line(standalone)
            );
        }
    }

    fn warning(&self, warning: &str) {
        let Some(mut state) = self.lock() else { return };
        if !state.progress || state.stopped || state.holds_line() {
            return;
        }
        state.clear();
        eprintln!("{}", error::warning(warning));
        state.warned.push(warning.to_string());
    }

    fn attempt(&self, attempt: u32) {
        if let Some(mut state) = self.lock() {
            state.asking = Some(Asking {
                attempt,
                since: Instant::now(),
                reading: None,
                first_text: None,
                pieces: 0,
            });
            state.draw();
        }
    }

    fn reading(&self, sources: usize, prefill: ground::llm::Prefill) {
        if let Some(mut state) = self.lock()
            && let Some(asking) = state.asking.as_mut()
        {
            let since = asking
                .reading
                .map_or_else(Instant::now, |(since, ..)| since);
            asking.reading = Some((since, sources, prefill));
        }
    }

    fn writing(&self, pieces: u64) {
        if let Some(mut state) = self.lock()
            && let Some(asking) = state.asking.as_mut()
        {
            asking.first_text.get_or_insert_with(Instant::now);
            asking.pieces = pieces;
        }
    }

    fn statement(&self, _attempt: u32, index: usize, statement: &Statement) {
        let Some(mut state) = self.lock() else { return };
        let Some(style) = state.print else { return };
        if state.stdout_closed {
            return;
        }
        let Some(next) = state.shown.next(index, statement, style) else {
            return;
        };
        state.clear();
        if write_out(&next.text) {
            state.shown.printed(next);
        } else {
            state.stdout_closed = true;
        }
    }
}

impl State {
    /// Statements are on the terminal's current line, which the progress line would
    /// overwrite.
    fn holds_line(&self) -> bool {
        self.stdout_tty && !self.shown.is_empty()
    }

    fn clear(&mut self) {
        if self.drawn {
            eprint!("{CLEAR}");
            let _ = std::io::stderr().flush();
            self.drawn = false;
        }
    }

    fn draw(&mut self) {
        if !self.progress || self.stopped || self.holds_line() {
            return;
        }
        let Some(asking) = &self.asking else { return };
        let elapsed = asking.since.elapsed().as_secs_f64();
        let writing = asking
            .first_text
            .map(|first| (first.elapsed().as_secs_f64(), asking.pieces));
        let reading = asking.reading.map(|(since, sources, p)| Reading {
            sources,
            done: p.done,
            total: p.total,
            cached: p.cached,
            seconds: since.elapsed().as_secs_f64(),
        });
        let line = progress_line(asking.attempt, elapsed, reading, writing);
        eprint!("{CLEAR}{line}");
        let _ = std::io::stderr().flush();
        self.drawn = true;
    }
}

/// Writes to stdout and flushes; false when stdout is closed.
fn write_out(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).is_ok() && out.flush().is_ok()
}
