//! How long an answer takes with the embedded model on this machine, for a person to
//! plan on: `ground doctor` says it, and so does the line that names the embedded
//! model when `--llm auto` chooses it.
//!
//! Measured figures come first: every answer of the embedded model records how fast it
//! read the prompt and wrote the reply ([`crate::calibration::Speed`], in the cache
//! folder beside the token calibration). Before the first answer there are none, so
//! the figure is a rough one from the model file's size and the threads, scaled from
//! what this engine measured on a 2-core x86-64 machine (Qwen3-1.7B Q4_K_M, 1.1 GB:
//! reading 117 tokens/s, writing 20 tokens/s; `scripts/bench-embedded.py`), and it
//! says so. A GPU build reads far faster than the rough figure: its first answer
//! replaces it.
//!
//! An answer here reads a full window of sources (the window less the answer's
//! reserve) afresh; a follow-up on the same pages reads only its own tokens and takes
//! a fraction of it.

use crate::calibration::{Calibration, Speed};
use crate::settings::{CacheSettings, LlmBackend, LlmSettings};

/// Prompt tokens one thread reads per second for each GB of model file (rough figure).
const READ_PER_THREAD_GB: f64 = 64.0;
/// Reply tokens one thread writes per second for each GB of model file (rough figure).
const WRITE_PER_THREAD_GB: f64 = 11.0;
/// Threads beyond which writing no longer speeds up (memory bandwidth bounds it).
const WRITE_THREADS_CAP: f64 = 4.0;
/// Reply tokens of an answer when none was measured (answers run 200-300).
const USUAL_REPLY_TOKENS: f64 = 250.0;

/// How long an answer takes, and where the figure comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerTime {
    /// Seconds for an answer that reads a full window of sources.
    pub seconds: f64,
    /// Prompt tokens read per second.
    pub read_per_sec: f64,
    /// Reply tokens written per second.
    pub write_per_sec: f64,
    /// Answers measured on this machine; 0 for the rough figure.
    pub measured_answers: u32,
}

impl AnswerTime {
    /// One clause for a person: "about 43 s an answer here (measured: reads 117
    /// tokens/s, writes 20 tokens/s)", or the rough figure saying it is one.
    pub fn describe(&self) -> String {
        let seconds = self.seconds.round().max(1.0);
        let speeds = format!(
            "reads {:.0} tokens/s, writes {:.0} tokens/s",
            self.read_per_sec, self.write_per_sec
        );
        if self.measured_answers > 0 {
            format!("about {seconds} s an answer here (measured: {speeds})")
        } else {
            format!(
                "roughly {seconds} s an answer here (an estimate from the model's size: {speeds}; measured from the first answer on)"
            )
        }
    }
}

/// How long an answer of the embedded model takes with `llm`, the measured figure
/// from `cache`'s folder when there is one; `None` for a model server (it does not
/// say how it spends its time) or when the model file's size is unknown.
pub fn answer_time(llm: &LlmSettings, cache: &CacheSettings) -> Option<AnswerTime> {
    if llm.backend != LlmBackend::Embedded {
        return None;
    }
    let prompt_tokens = llm.context_tokens.saturating_sub(llm.max_answer_tokens);
    let speed = match Calibration::open(cache, llm).load_speed() {
        Some(measured) => measured,
        None => rough_speed(model_bytes(llm)?, threads(llm)),
    };
    Some(AnswerTime {
        seconds: speed.answer_seconds(prompt_tokens),
        read_per_sec: speed.read_per_sec,
        write_per_sec: speed.write_per_sec,
        measured_answers: speed.samples,
    })
}

/// The rough speed of a model file of `bytes` on `threads` CPU threads.
fn rough_speed(bytes: u64, threads: usize) -> Speed {
    let gb = (bytes as f64 / 1e9).max(0.05);
    let threads = threads.max(1) as f64;
    Speed {
        read_per_sec: READ_PER_THREAD_GB * threads / gb,
        write_per_sec: WRITE_PER_THREAD_GB * threads.min(WRITE_THREADS_CAP) / gb,
        reply_tokens: USUAL_REPLY_TOKENS,
        samples: 0,
        updated_at: 0,
    }
}

/// The model file's size: the file on disk, else the catalogue's figure.
fn model_bytes(llm: &LlmSettings) -> Option<u64> {
    crate::llm::embedded::model_path(llm)
        .and_then(|p| std::fs::metadata(p).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .or_else(|| crate::llm::embedded::models::find(&llm.model).map(|m| m.approx_bytes))
}

/// The threads the engine will use: the setting, or the physical cores.
fn threads(llm: &LlmSettings) -> usize {
    match llm.embedded.threads {
        0 => physical_cores(),
        n => n,
    }
}

#[cfg(feature = "embedded")]
fn physical_cores() -> usize {
    crate::llm::embedded::engine::physical_cores()
}

#[cfg(not(feature = "embedded"))]
fn physical_cores() -> usize {
    1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::CacheMode;
    use std::time::Duration;

    fn settings(dir: &std::path::Path) -> (LlmSettings, CacheSettings) {
        let mut llm = LlmSettings {
            backend: LlmBackend::Embedded,
            api_key: None,
            url: "http://127.0.0.1:11434/".parse().unwrap(),
            model: "qwen3-1.7b".into(),
            context_tokens: 4096,
            max_answer_tokens: 512,
            timeout: Duration::from_secs(60),
            answer_language: None,
            model_explicit: false,
            embedded: Default::default(),
        };
        llm.embedded.models_dir = Some(dir.join("models"));
        llm.embedded.threads = 2;
        let cache = CacheSettings {
            dir: Some(dir.to_path_buf()),
            mode: CacheMode::Use,
            search_ttl: Duration::from_secs(60),
            page_ttl: Duration::from_secs(60),
            max_bytes: 1 << 20,
        };
        (llm, cache)
    }

    #[test]
    fn before_any_answer_the_figure_is_rough_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (llm, cache) = settings(dir.path());
        let time = answer_time(&llm, &cache).unwrap();
        assert_eq!(time.measured_answers, 0);
        // 1.1 GB on 2 threads: 3,584 tokens at ~116/s and 250 at ~20/s.
        assert!((40.0..55.0).contains(&time.seconds), "{time:?}");
        assert!(
            time.describe().starts_with("roughly "),
            "{}",
            time.describe()
        );
        // More threads read faster; a smaller file too.
        let mut more = llm.clone();
        more.embedded.threads = 8;
        assert!(answer_time(&more, &cache).unwrap().seconds < time.seconds);
        let mut small = llm.clone();
        small.model = "qwen3-0.6b".into();
        assert!(answer_time(&small, &cache).unwrap().seconds < time.seconds);
    }

    #[test]
    fn a_measured_answer_replaces_the_rough_figure() {
        let dir = tempfile::tempdir().unwrap();
        let (llm, cache) = settings(dir.path());
        let calibration = Calibration::open(&cache, &llm);
        // 2,000 tokens read in 20 s (100/s), 200 written in 10 s (20/s).
        calibration
            .record_speed(2000, Duration::from_secs(20), 200, Duration::from_secs(10))
            .unwrap();
        let time = answer_time(&llm, &cache).unwrap();
        assert_eq!(time.measured_answers, 1);
        assert!((time.read_per_sec - 100.0).abs() < 1e-9);
        // 3,584 / 100 + 200 / 20.
        assert!((time.seconds - 45.84).abs() < 1e-6, "{time:?}");
        assert_eq!(
            time.describe(),
            "about 46 s an answer here (measured: reads 100 tokens/s, writes 20 tokens/s)"
        );
    }

    #[test]
    fn a_model_server_has_no_figure() {
        let dir = tempfile::tempdir().unwrap();
        let (mut llm, cache) = settings(dir.path());
        llm.backend = LlmBackend::Ollama;
        assert_eq!(answer_time(&llm, &cache), None);
    }
}
