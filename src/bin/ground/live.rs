//! `ground answer` while the model writes: a live progress line on stderr (only on a
//! terminal) and each statement on stdout the moment it is complete and checked.
//!
//! The progress line says how long the server has been reading the prompt, then how
//! long it has been writing, how many tokens it wrote and how fast. It is redrawn in
//! place by a small timer thread and cleared before any answer line is printed; once
//! statements are on a terminal's current line it stays away, so the two never mix.
//!
//! Statements are printed as parts of the answer's first line (the same parts
//! [`render::person`] joins), so stdout ends up as today's output. At the end the
//! printed parts are reconciled with the report, the one source of truth: the parts
//! still missing and the rest of the report are printed; a statement already shown is
//! never printed again, and when the retry (or the whole-reply parse) changed what
//! was shown, a plain note says so before the corrected statements.

use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ground::grounding::Statement;
use ground::pipeline::Watch;
use ground::render::person::{statement_part, statement_parts};
use ground::render::{self, Style};
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
    /// Parts printed on stdout, in order.
    shown: Vec<String>,
    /// The first index at which a later attempt differed from what was shown.
    diverged: Option<usize>,
    /// stdout was closed (e.g. piped into `head`).
    stdout_closed: bool,
    /// The run is over: draw nothing more.
    stopped: bool,
}

struct Asking {
    attempt: u32,
    since: Instant,
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
            shown: Vec::new(),
            diverged: None,
            stdout_closed: false,
            stopped: false,
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
        let full = render::person(report, style);
        let out = completion(&state.shown, statement_parts(report, style), &full);
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
        let plural = if shown == 1 { "" } else { "s" };
        if interrupted {
            eprintln!(
                "ground: interrupted: the answer above was cut off after {shown} statement{plural}; the rest and its sources were not printed"
            );
        } else {
            eprintln!(
                "ground: the answer above was cut off after {shown} statement{plural}: the model's reply could not be used (see the error below)"
            );
        }
    }
}

impl Watch for Live {
    fn attempt(&self, attempt: u32) {
        if let Some(mut state) = self.lock() {
            state.asking = Some(Asking {
                attempt,
                since: Instant::now(),
                first_text: None,
                pieces: 0,
            });
            state.draw();
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
        if state.stdout_closed || state.diverged.is_some() {
            return;
        }
        let part = statement_part(statement, style);
        if let Some(shown) = state.shown.get(index) {
            // A retry's statement where one is already shown: the same is not printed
            // twice; a different one is reported at the end.
            if *shown != part {
                state.diverged = Some(index);
            }
            return;
        }
        if index != state.shown.len() {
            return;
        }
        state.clear();
        let separator = if state.shown.is_empty() { "" } else { " " };
        if write_out(&format!("{separator}{part}")) {
            state.shown.push(part);
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
        let retry = if asking.attempt > 1 { " (retry)" } else { "" };
        let elapsed = asking.since.elapsed().as_secs_f64();
        let line = match asking.first_text {
            None => format!("ground: the model is reading the prompt{retry}… {elapsed:.1} s"),
            Some(first) => {
                let writing = first.elapsed().as_secs_f64();
                let rate = if writing > 0.05 {
                    format!(", {:.1} tokens/s", asking.pieces as f64 / writing)
                } else {
                    String::new()
                };
                format!(
                    "ground: the model is writing{retry}… {elapsed:.1} s, {} tokens{rate}",
                    asking.pieces
                )
            }
        };
        eprint!("{CLEAR}{line}");
        let _ = std::io::stderr().flush();
        self.drawn = true;
    }
}

/// What stdout still needs after the parts `shown`, given the report's first-line
/// `parts` (`None` when that line is not statements) and its `full` person output.
fn completion(shown: &[String], parts: Option<Vec<String>>, full: &str) -> String {
    if shown.is_empty() {
        return full.to_string();
    }
    let Some(parts) = parts else {
        return format!(
            "\n(The model's final answer differs from the statements shown above; they are withdrawn. The checked answer:)\n{full}"
        );
    };
    let line = format!("{}\n", parts.join(" "));
    let rest = full.strip_prefix(&line).unwrap_or(full);
    if parts.starts_with(shown) {
        let mut out = String::new();
        for part in &parts[shown.len()..] {
            out.push(' ');
            out.push_str(part);
        }
        out.push('\n');
        out.push_str(rest);
        return out;
    }
    let first = shown
        .iter()
        .zip(&parts)
        .position(|(a, b)| a != b)
        .unwrap_or(parts.len());
    let note = if first >= parts.len() {
        format!(
            "(The model's final answer has {} statement{}: the statement{} shown above after that {} withdrawn.)",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" },
            if shown.len() - parts.len() == 1 {
                ""
            } else {
                "s"
            },
            if shown.len() - parts.len() == 1 {
                "is"
            } else {
                "are"
            },
        )
    } else {
        format!(
            "(The model's final answer differs from what is shown above from statement {} on; the checked statements from there:)",
            first + 1
        )
    };
    let mut out = format!("\n{note}\n");
    if first < parts.len() {
        out.push_str(&parts[first..].join(" "));
        out.push('\n');
    }
    out.push_str(rest);
    out
}

/// Writes to stdout and flushes; false when stdout is closed.
fn write_out(text: &str) -> bool {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).is_ok() && out.flush().is_ok()
}

#[cfg(test)]
mod tests {
    use super::completion;

    fn parts(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn completion_adds_only_what_was_not_shown() {
        let full = "A[1] B[2] C[1]\n\nSources:\n";
        let out = completion(
            &parts(&["A[1]"]),
            Some(parts(&["A[1]", "B[2]", "C[1]"])),
            full,
        );
        assert_eq!(format!("A[1]{out}"), full);
        assert_eq!(completion(&[], None, full), full);
    }

    #[test]
    fn completion_says_plainly_when_the_answer_changed() {
        let full = "A[1] X[2]\n\nSources:\n";
        let out = completion(
            &parts(&["A[1]", "B[2]"]),
            Some(parts(&["A[1]", "X[2]"])),
            full,
        );
        assert_eq!(
            out,
            "\n(The model's final answer differs from what is shown above from statement 2 on; the checked statements from there:)\nX[2]\n\nSources:\n"
        );
        assert!(
            !out.contains("A[1]"),
            "a statement already shown is not printed twice"
        );
        let fewer = completion(
            &parts(&["A[1]", "B[2]"]),
            Some(parts(&["A[1]"])),
            "A[1]\n\nS\n",
        );
        assert!(fewer.contains("withdrawn"), "{fewer}");
        assert!(fewer.ends_with("\n\nS\n"), "{fewer}");
        let none = completion(&parts(&["A[1]"]), None, "No answer.\n");
        assert!(
            none.contains("withdrawn") && none.ends_with("No answer.\n"),
            "{none}"
        );
    }
}
