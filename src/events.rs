//! Stage events: what a run is doing, for the terminal (progress lines) and for logs
//! (`--events FILE`, one JSON object per line).
//!
//! An [`Events`] value is shared by reference through the whole pipeline and is
//! `Sync`, so the pipeline's future stays `Send`. It also remembers the stage the run
//! is in, so a deadline can say where it struck (and pick the matching exit code).

use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Instant;

use serde_json::{Value, json};

/// The stages of `ground answer`, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// Before anything ran.
    Starting = 0,
    /// The NeedSearch gate (`--auto`).
    Deciding = 1,
    /// The query planner (`--queries`).
    Planning = 2,
    /// Search calls.
    Searching = 3,
    /// Fetching and extracting pages.
    Fetching = 4,
    /// Fitting the context.
    Building = 5,
    /// The answer call.
    Asking = 6,
    /// Checking citations.
    Checking = 7,
}

impl Stage {
    fn from_u8(value: u8) -> Stage {
        match value {
            1 => Stage::Deciding,
            2 => Stage::Planning,
            3 => Stage::Searching,
            4 => Stage::Fetching,
            5 => Stage::Building,
            6 => Stage::Asking,
            7 => Stage::Checking,
            _ => Stage::Starting,
        }
    }

    /// A short name for messages ("searching", "asking the model", ...).
    pub fn describe(self) -> &'static str {
        match self {
            Stage::Starting => "starting",
            Stage::Deciding => "deciding whether to search",
            Stage::Planning => "planning queries",
            Stage::Searching => "searching",
            Stage::Fetching => "fetching pages",
            Stage::Building => "building the context",
            Stage::Asking => "asking the model",
            Stage::Checking => "checking citations",
        }
    }
}

/// A progress-line printer.
pub type Progress = Box<dyn Fn(&str) + Send + Sync>;

/// Where a run reports what it does.
pub struct Events {
    progress: Option<Progress>,
    log: Option<Mutex<Box<dyn Write + Send>>>,
    stage: AtomicU8,
    started: Instant,
}

impl Default for Events {
    fn default() -> Self {
        Self::silent()
    }
}

impl Events {
    /// Reports nothing (tests, MCP).
    pub fn silent() -> Self {
        Events {
            progress: None,
            log: None,
            stage: AtomicU8::new(0),
            started: Instant::now(),
        }
    }

    /// Progress lines to `progress` (when given) and JSON lines to `log` (when given).
    pub fn new(progress: Option<Progress>, log: Option<Box<dyn Write + Send>>) -> Self {
        Events {
            progress,
            log: log.map(Mutex::new),
            stage: AtomicU8::new(0),
            started: Instant::now(),
        }
    }

    /// Enters `stage` and shows `line` as progress.
    pub fn stage(&self, stage: Stage, line: &str) {
        self.stage.store(stage as u8, Ordering::Relaxed);
        if let Some(progress) = &self.progress {
            progress(line);
        }
    }

    /// The stage the run is in.
    pub fn current(&self) -> Stage {
        Stage::from_u8(self.stage.load(Ordering::Relaxed))
    }

    /// Writes one event line: `{"event": name, "ms": since start, ...fields}`.
    /// Fields must never hold secrets; a write failure is ignored (logging never
    /// breaks a run).
    pub fn emit(&self, name: &str, fields: Value) {
        let Some(log) = &self.log else { return };
        let mut line = json!({"event": name, "ms": self.started.elapsed().as_millis() as u64});
        if let (Some(line), Value::Object(fields)) = (line.as_object_mut(), fields) {
            line.extend(fields);
        }
        if let Ok(mut out) = log.lock() {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn one_json_line_per_event_and_stage_is_remembered() {
        let sink = Shared::default();
        let events = Events::new(None, Some(Box::new(sink.clone())));
        events.stage(Stage::Searching, "searching");
        events.emit("search_called", json!({"query": "q", "results": 3}));
        assert_eq!(events.current(), Stage::Searching);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["event"], "search_called");
        assert_eq!(line["results"], 3);
        assert!(line["ms"].is_u64());
    }
}
