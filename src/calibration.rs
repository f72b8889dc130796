//! Token calibration: how many tokens the model's own tokenizer makes of what
//! [`crate::context::estimate_tokens`] estimates, learned from the server's count and
//! kept per model beside the cache, so that the sources fill the window the model
//! really has; and, for the embedded model, how fast it reads and writes on this
//! machine ([`Speed`]), so that `ground doctor` and the first-run line can say how
//! long an answer takes.
//!
//! - **What is learned**: after each answer call, the server's prompt token count
//!   (Ollama's `prompt_eval_count`, `usage.prompt_tokens` on OpenAI-compatible
//!   servers) divided by the estimate of the same prompt is one *sample*. The stored
//!   [`TokenRatio`] is a moving average of the samples that moves up fast (half way to
//!   a higher sample) and down slowly (a quarter of the way to a lower one): a ratio
//!   too high only leaves room unused, one too low overflows the window. A server that
//!   counts only the prompt tokens it did not have cached makes low samples, which is
//!   one more reason to move down slowly. Beside it, `spread`, the moving average of
//!   how far samples land from it, sets the safety margin ([`TokenRatio::margin`]).
//! - **A count at the whole window** means the server cut the prompt (Ollama keeps the
//!   last `num_ctx` tokens), so the real count is unknown and only bounded below: the
//!   ratio is raised to at least that bound, then by [`EDGE_RAISE`], and the spread
//!   widened, so the next run sends less. A count below the window is exact, even when
//!   it ate into the answer reserve.
//! - **Implausible samples** (a ratio outside [`MIN_RATIO`]..[`MAX_RATIO`], or a prompt
//!   too small to say anything) are ignored.
//! - **Where**: one small JSON file, `<cache dir>/calibration.json`, keyed by backend,
//!   server URL (without user name or password) and model name, at most
//!   [`MAX_MODELS`] models (the least recently updated are dropped). Written to a temp
//!   file and renamed over the old one; a file that is corrupt or of another format is
//!   ignored (and replaced on the next write). What is not a small regular file (over
//!   [`MAX_FILE_BYTES`], a FIFO, a device: see [`crate::files::read_small`]) is not
//!   read, never waited on, and left alone; [`Calibration::load_checked`] says so.
//!   With the cache off (`--no-cache`) nothing is read or written; `--refresh` is
//!   about web content and reads and writes it as usual.
//! - **Never a reason to fail**: every error is swallowed (or becomes a warning);
//!   without a stored ratio the budget is today's estimate ([`source_budget`] with
//!   `None`).
//! - **Speed** (the embedded model only: the servers do not say how long reading took):
//!   after each answer call, prompt tokens read per second and reply tokens written per
//!   second, and the reply's length, each a moving average half way to the new sample;
//!   a call that read fewer than [`MIN_SPEED_PROMPT_TOKENS`] (a follow-up whose pages
//!   the model held) or wrote fewer than [`MIN_SPEED_REPLY_TOKENS`] says too little and
//!   is not kept. Same file, same key, same bounds as the ratio.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::files::StateFileError;
use crate::settings::{CacheMode, CacheSettings, LlmBackend, LlmSettings};

/// Version of the file format; a file of another version is ignored.
pub const FORMAT: u32 = 1;
/// Name of the file in the cache folder.
pub const FILE_NAME: &str = "calibration.json";
/// Largest file read; a bigger one is ignored.
pub const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Most models kept in the file.
pub const MAX_MODELS: usize = 64;
/// Smallest plausible ratio of real to estimated tokens.
pub const MIN_RATIO: f64 = 0.4;
/// Largest plausible ratio of real to estimated tokens.
pub const MAX_RATIO: f64 = 2.5;
/// Estimated prompts smaller than this say too little to calibrate on.
pub const MIN_SAMPLE_TOKENS: u32 = 200;
/// How much a ratio is raised beyond the lower bound a cut prompt gives.
pub const EDGE_RAISE: f64 = 1.05;
/// Smallest safety margin: the share of the real room left free.
pub const MIN_MARGIN: f64 = 0.02;
/// Largest safety margin.
pub const MAX_MARGIN: f64 = 0.10;
/// Spread assumed after the first sample (a margin of 3 %, today's).
const FIRST_SPREAD: f64 = 0.015;
/// Spread after a cut prompt (a margin of 10 %).
const EDGE_SPREAD: f64 = 0.05;
/// Share of the way the ratio moves to a higher sample.
const UP: f64 = 0.5;
/// Share of the way the ratio moves to a lower sample.
const DOWN: f64 = 0.25;
/// Share of the way the spread moves to a sample's deviation.
const SPREAD_STEP: f64 = 0.25;
/// Tokens the budget's margin is computed as when uncalibrated: today's 3 %.
const UNCALIBRATED_KEEP: u32 = 97;
/// Prompt tokens a call must have read for its reading speed to be kept.
pub const MIN_SPEED_PROMPT_TOKENS: u32 = 64;
/// Reply tokens a call must have written for its writing speed to be kept.
pub const MIN_SPEED_REPLY_TOKENS: u32 = 8;
/// Share of the way a speed moves to a new sample.
const SPEED_STEP: f64 = 0.5;

/// What is known about one model's tokenizer.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenRatio {
    /// Real prompt tokens per estimated token (a moving average).
    pub ratio: f64,
    /// Moving average of `|sample / ratio - 1|`: how much one run's prompt strays.
    pub spread: f64,
    /// Exact samples it was learned from (0 when only cut prompts bounded it).
    pub samples: u32,
    /// When it was last updated (seconds since the Unix epoch).
    #[serde(default)]
    pub updated_at: u64,
}

impl TokenRatio {
    /// The share of the real room left free against a run whose prompt strays from
    /// the average: twice the spread, within [`MIN_MARGIN`]..[`MAX_MARGIN`].
    pub fn margin(&self) -> f64 {
        (2.0 * self.spread).clamp(MIN_MARGIN, MAX_MARGIN)
    }

    /// The ratio with the next sample folded in (see the module documentation);
    /// `at_edge` says the server's count was the whole window (the prompt was cut),
    /// so the sample is only a lower bound.
    fn with_sample(previous: Option<TokenRatio>, sample: f64, at_edge: bool) -> TokenRatio {
        let now = crate::files::unix_secs();
        // A ratio learned from cut prompts alone is a bound, not a measurement: the
        // first exact sample replaces it.
        let previous = previous.filter(|p| p.samples > 0 || at_edge);
        match (previous, at_edge) {
            (None, false) => TokenRatio {
                ratio: sample,
                spread: FIRST_SPREAD,
                samples: 1,
                updated_at: now,
            },
            (Some(old), false) => {
                let step = if sample > old.ratio { UP } else { DOWN };
                let deviation = (sample / old.ratio - 1.0).abs();
                TokenRatio {
                    ratio: old.ratio + step * (sample - old.ratio),
                    spread: old.spread + SPREAD_STEP * (deviation - old.spread),
                    samples: old.samples.saturating_add(1),
                    updated_at: now,
                }
            }
            (old, true) => {
                let base = old.map_or(1.0, |o| o.ratio);
                TokenRatio {
                    ratio: (base.max(sample) * EDGE_RAISE).min(MAX_RATIO),
                    spread: old.map_or(EDGE_SPREAD, |o| o.spread.max(EDGE_SPREAD)),
                    samples: old.map_or(0, |o| o.samples),
                    updated_at: now,
                }
            }
        }
    }
}

/// How fast one embedded model reads and writes on this machine, measured on its
/// answers (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Speed {
    /// Prompt tokens read per second (a moving average).
    pub read_per_sec: f64,
    /// Reply tokens written per second (a moving average).
    pub write_per_sec: f64,
    /// Reply tokens an answer has (a moving average).
    pub reply_tokens: f64,
    /// Calls it was measured on.
    pub samples: u32,
    /// When it was last updated (seconds since the Unix epoch).
    #[serde(default)]
    pub updated_at: u64,
}

impl Speed {
    /// Seconds an answer takes that reads `prompt_tokens` afresh and writes a reply of
    /// the usual length.
    pub fn answer_seconds(&self, prompt_tokens: u32) -> f64 {
        f64::from(prompt_tokens) / self.read_per_sec + self.reply_tokens / self.write_per_sec
    }

    /// Whether every figure is a positive number (a hand-edited entry may not be).
    fn plausible(&self) -> bool {
        [self.read_per_sec, self.write_per_sec, self.reply_tokens]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    }

    /// `previous` moved half way to `sample`, or `sample` alone.
    fn with_sample(previous: Option<Speed>, sample: Speed) -> Speed {
        let Some(old) = previous else {
            return sample;
        };
        let toward = |old: f64, new: f64| old + SPEED_STEP * (new - old);
        Speed {
            read_per_sec: toward(old.read_per_sec, sample.read_per_sec),
            write_per_sec: toward(old.write_per_sec, sample.write_per_sec),
            reply_tokens: toward(old.reply_tokens, sample.reply_tokens),
            samples: old.samples.saturating_add(1),
            updated_at: sample.updated_at,
        }
    }
}

/// The source budget, in estimated tokens, for a window of `context_tokens` with
/// `max_answer_tokens` reserved and `overhead` estimated tokens of instructions and
/// question.
///
/// Without a ratio it is today's estimate: 97 % of what is left. With one, the room
/// left in the model's own tokens (the window less the answer reserve less the
/// overhead times the ratio) less the [`TokenRatio::margin`], converted back to
/// estimated tokens: the sources then fill about `1 - margin` of the room the model
/// really has, and the whole prompt stays inside the window while this run's pages
/// stray from the average by less than the margin.
pub fn source_budget(
    context_tokens: u32,
    max_answer_tokens: u32,
    overhead: u32,
    ratio: Option<&TokenRatio>,
) -> u32 {
    let room = context_tokens.saturating_sub(max_answer_tokens);
    match ratio {
        None => {
            room.saturating_sub(overhead)
                .saturating_mul(UNCALIBRATED_KEEP)
                / 100
        }
        Some(r) => {
            let real_overhead = (f64::from(overhead) * r.ratio).ceil();
            let real_room = (f64::from(room) - real_overhead).max(0.0);
            (real_room * (1.0 - r.margin()) / r.ratio).floor() as u32
        }
    }
}

/// One model's calibration in the cache folder: [`Calibration::load`] before
/// building the context, [`Calibration::record`] after the answer call.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// The file, or `None` with the cache off or without a cache folder.
    path: Option<PathBuf>,
    /// Backend, server URL without credentials, and model.
    key: String,
}

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    format: u32,
    models: BTreeMap<String, TokenRatio>,
    /// The embedded models' speeds (absent from files written before them).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    speeds: BTreeMap<String, Speed>,
}

impl File {
    /// The speed kept for `key` when it is plausible (a hand-edited one may not be).
    fn speed(&self, key: &str) -> Option<Speed> {
        self.speeds.get(key).copied().filter(Speed::plausible)
    }

    /// The entry for `key` when it is plausible (a hand-edited or damaged entry is not).
    fn get(&self, key: &str) -> Option<TokenRatio> {
        self.models
            .get(key)
            .copied()
            .filter(|r| r.ratio.is_finite() && (MIN_RATIO..=MAX_RATIO).contains(&r.ratio))
            .map(|mut r| {
                r.spread = if r.spread.is_finite() {
                    r.spread.abs()
                } else {
                    EDGE_SPREAD
                };
                r
            })
    }
}

impl Calibration {
    /// The calibration of the model `llm` names, stored in `cache`'s folder unless the
    /// cache is off.
    pub fn open(cache: &CacheSettings, llm: &LlmSettings) -> Calibration {
        let mut url = llm.url.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        // A `--model-file` is its own model, whatever the model name says.
        let model = match (llm.backend, &llm.embedded.model_file) {
            (LlmBackend::Embedded, Some(file)) => file.to_string_lossy().into_owned(),
            _ => llm.model.clone(),
        };
        let key = format!(
            "{} {url} {model}",
            serde_json::to_value(llm.backend)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
        );
        let path = match cache.mode {
            CacheMode::Off => None,
            CacheMode::Use | CacheMode::Refresh => cache.dir.as_ref().map(|d| d.join(FILE_NAME)),
        };
        Calibration { path, key }
    }

    /// The stored ratio for this model, if any (and the cache is on).
    #[cfg(test)]
    pub fn load(&self) -> Option<TokenRatio> {
        self.load_checked().ok().flatten()
    }

    /// The stored ratio for this model, if any, or why the file at the calibration's name is not used
    /// (not a small regular file), for a warning.
    pub fn load_checked(&self) -> Result<Option<TokenRatio>, StateFileError> {
        Ok(self.read_file()?.and_then(|file| file.get(&self.key)))
    }

    /// Folds in the server's count of a prompt estimated at `estimated` tokens and
    /// stores the result; `at_edge` says the count was the whole window (the prompt
    /// was cut). Returns what was stored, or `None` when the sample was
    /// ignored or the cache is off.
    pub fn record(&self, estimated: u32, counted: u32, at_edge: bool) -> Option<TokenRatio> {
        let path = self.path.as_ref()?;
        if estimated < MIN_SAMPLE_TOKENS || counted == 0 {
            return None;
        }
        let sample = f64::from(counted) / f64::from(estimated);
        if !at_edge && !(MIN_RATIO..=MAX_RATIO).contains(&sample) {
            return None;
        }
        self.update(path, |file| {
            let updated = TokenRatio::with_sample(file.get(&self.key), sample, at_edge);
            file.models.insert(self.key.clone(), updated);
            keep_newest(&mut file.models, |r| r.updated_at);
            updated
        })
    }

    /// The stored speed of this model, if any (and the cache is on).
    pub fn load_speed(&self) -> Option<Speed> {
        self.read_file().ok()??.speed(&self.key)
    }

    /// Folds in one call of the embedded model: `read` prompt tokens in `reading`,
    /// `written` reply tokens in `writing`. Returns what was stored, or `None` when
    /// the call said too little or the cache is off.
    pub fn record_speed(
        &self,
        read: u32,
        reading: std::time::Duration,
        written: u32,
        writing: std::time::Duration,
    ) -> Option<Speed> {
        let path = self.path.as_ref()?;
        if read < MIN_SPEED_PROMPT_TOKENS
            || written < MIN_SPEED_REPLY_TOKENS
            || reading.is_zero()
            || writing.is_zero()
        {
            return None;
        }
        let sample = Speed {
            read_per_sec: f64::from(read) / reading.as_secs_f64(),
            write_per_sec: f64::from(written) / writing.as_secs_f64(),
            reply_tokens: f64::from(written),
            samples: 1,
            updated_at: crate::files::unix_secs(),
        };
        self.update(path, |file| {
            let updated = Speed::with_sample(file.speed(&self.key), sample);
            file.speeds.insert(self.key.clone(), updated);
            keep_newest(&mut file.speeds, |s| s.updated_at);
            updated
        })
    }

    /// Reads the file once (a new one when there is none or it is unreadable JSON),
    /// applies `change` and writes it back atomically; what `change` returned, or
    /// `None` when what is at the file's name is not a state file (left alone) or the
    /// write failed.
    fn update<T>(&self, path: &std::path::Path, change: impl FnOnce(&mut File) -> T) -> Option<T> {
        // What is not a state file is left alone.
        let mut file = self.read_file().ok()?.unwrap_or(File {
            format: FORMAT,
            ..File::default()
        });
        let changed = change(&mut file);
        crate::files::write_atomically(path, &serde_json::to_vec_pretty(&file).ok()?).ok()?;
        Some(changed)
    }

    /// The file: `Ok(None)` when there is none (or the cache is off) or it is corrupt
    /// or of another format; `Err` when what is at its name is not a state file.
    fn read_file(&self) -> Result<Option<File>, StateFileError> {
        let Some(path) = self.path.as_ref() else {
            return Ok(None);
        };
        Ok(
            crate::files::read_small(path, MAX_FILE_BYTES)?.and_then(|bytes| {
                serde_json::from_slice::<File>(&bytes)
                    .ok()
                    .filter(|f| f.format == FORMAT)
            }),
        )
    }
}

/// Drops the least recently updated entries of `map` beyond [`MAX_MODELS`].
fn keep_newest<T>(map: &mut BTreeMap<String, T>, updated_at: impl Fn(&T) -> u64) {
    while map.len() > MAX_MODELS {
        let Some(oldest) = map
            .iter()
            .min_by_key(|(_, v)| updated_at(v))
            .map(|(k, _)| k.clone())
        else {
            return;
        };
        map.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::LlmBackend;
    use std::fs;
    use std::time::Duration;

    fn settings(dir: &std::path::Path, mode: CacheMode) -> (CacheSettings, LlmSettings) {
        (
            CacheSettings {
                dir: Some(dir.to_path_buf()),
                mode,
                search_ttl: Duration::from_secs(60),
                page_ttl: Duration::from_secs(60),
                max_bytes: 1 << 20,
            },
            LlmSettings {
                backend: LlmBackend::Ollama,
                api_key: None,
                url: "http://user:secret@127.0.0.1:11434/".parse().unwrap(),
                model: "llama3.2".into(),
                context_tokens: 4096,
                max_answer_tokens: 512,
                timeout: Duration::from_secs(60),
                answer_language: None,
                model_explicit: true,
                embedded: Default::default(),
            },
        )
    }

    #[test]
    fn uncalibrated_budget_is_todays() {
        assert_eq!(
            source_budget(4096, 512, 300, None),
            (4096 - 512 - 300) * 97 / 100
        );
        assert_eq!(source_budget(1024, 2048, 300, None), 0);
    }

    #[test]
    fn calibrated_budget_fills_the_real_room_less_the_margin() {
        for ratio in [0.6, 0.85, 1.0, 1.2, 1.6] {
            let r = TokenRatio {
                ratio,
                spread: 0.0,
                samples: 3,
                updated_at: 0,
            };
            let budget = source_budget(4096, 512, 300, Some(&r));
            let real_sources = f64::from(budget) * ratio;
            let real_room = 4096.0 - 512.0 - (300.0 * ratio).ceil();
            let used = real_sources / real_room;
            assert!((0.975..=0.98).contains(&used), "{ratio}: {used}");
        }
    }

    #[test]
    fn persisted_per_model_and_moves_up_fast_down_slowly() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, llm) = settings(dir.path(), CacheMode::Use);
        let cal = Calibration::open(&cache, &llm);
        assert_eq!(cal.load(), None);
        let first = cal.record(1000, 800, false).unwrap();
        assert_eq!((first.ratio, first.samples), (0.8, 1));
        assert_eq!(Calibration::open(&cache, &llm).load().unwrap().ratio, 0.8);
        let up = cal.record(1000, 1000, false).unwrap();
        assert!((up.ratio - 0.9).abs() < 1e-9, "{up:?}");
        let down = cal.record(1000, 500, false).unwrap();
        assert!((down.ratio - 0.8).abs() < 1e-9, "{down:?}");
        // Another model on the same server has its own ratio.
        let other = Calibration::open(
            &cache,
            &LlmSettings {
                model: "qwen2.5".into(),
                ..llm.clone()
            },
        );
        assert_eq!(other.load(), None);
        // The file names no password.
        let text = fs::read_to_string(dir.path().join(FILE_NAME)).unwrap();
        assert!(
            !text.contains("secret") && text.contains("llama3.2"),
            "{text}"
        );
    }

    #[test]
    fn a_cut_prompt_raises_the_ratio_and_the_margin() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, llm) = settings(dir.path(), CacheMode::Use);
        let cal = Calibration::open(&cache, &llm);
        cal.record(1000, 900, false).unwrap();
        let cut = cal.record(3000, 3584, true).unwrap();
        assert!(cut.ratio > 3584.0 / 3000.0, "{cut:?}");
        assert_eq!(cut.margin(), MAX_MARGIN);
        // Bounded only by a cut prompt: the first exact sample replaces the bound.
        let (cache, other) = settings(dir.path(), CacheMode::Use);
        let other = Calibration::open(
            &cache,
            &LlmSettings {
                model: "other".into(),
                ..other
            },
        );
        let bound = other.record(3000, 4096, true).unwrap();
        assert_eq!(bound.samples, 0);
        let exact = other.record(3000, 3900, false).unwrap();
        assert_eq!(
            (exact.ratio, exact.samples, exact.spread),
            (1.3, 1, FIRST_SPREAD)
        );
    }

    #[test]
    fn implausible_small_or_off_is_ignored_and_corrupt_files_too() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, llm) = settings(dir.path(), CacheMode::Use);
        let cal = Calibration::open(&cache, &llm);
        assert_eq!(cal.record(1000, 100, false), None);
        assert_eq!(cal.record(100, 90, false), None);
        fs::write(dir.path().join(FILE_NAME), "{not json").unwrap();
        assert_eq!(cal.load(), None);
        assert!(cal.record(1000, 900, false).is_some());
        let (off, _) = settings(dir.path(), CacheMode::Off);
        let off = Calibration::open(&off, &llm);
        assert_eq!(off.load(), None);
        assert_eq!(off.record(1000, 900, false), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_huge_file_is_not_waited_on_nor_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, llm) = settings(dir.path(), CacheMode::Use);
        let cal = Calibration::open(&cache, &llm);
        let path = dir.path().join(FILE_NAME);
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        // Before, `File::open` waited for a writer that never comes.
        let err = cal.load_checked().unwrap_err();
        assert!(
            err.to_string().contains("is not a regular file but a FIFO"),
            "{err}"
        );
        assert_eq!(cal.record(1000, 900, false), None);
        assert!(!fs::metadata(&path).unwrap().is_file(), "left alone");
        fs::remove_file(&path).unwrap();
        fs::write(&path, vec![b' '; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert!(matches!(
            cal.load_checked(),
            Err(StateFileError::TooLarge { .. })
        ));
        assert_eq!(cal.load(), None);
    }

    #[test]
    fn the_file_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, llm) = settings(dir.path(), CacheMode::Use);
        for i in 0..MAX_MODELS + 5 {
            let model = LlmSettings {
                model: format!("m{i}"),
                ..llm.clone()
            };
            Calibration::open(&cache, &model).record(1000, 900, false);
        }
        let file: File =
            serde_json::from_slice(&fs::read(dir.path().join(FILE_NAME)).unwrap()).unwrap();
        assert_eq!(file.models.len(), MAX_MODELS);
    }

    #[test]
    fn speeds_are_kept_per_model_file_and_move_half_way() {
        let dir = tempfile::tempdir().unwrap();
        let (cache, mut llm) = settings(dir.path(), CacheMode::Use);
        llm.backend = LlmBackend::Embedded;
        llm.embedded.model_file = Some("/models/a.gguf".into());
        let a = Calibration::open(&cache, &llm);
        let secs = Duration::from_secs;
        // Too little read (a follow-up on held pages) or written says nothing.
        assert_eq!(a.record_speed(10, secs(1), 100, secs(5)), None);
        assert_eq!(a.record_speed(1000, secs(10), 2, secs(1)), None);
        assert_eq!(a.load_speed(), None);
        let first = a.record_speed(1000, secs(10), 200, secs(10)).unwrap();
        assert_eq!((first.read_per_sec, first.write_per_sec), (100.0, 20.0));
        let second = a.record_speed(2000, secs(10), 100, secs(10)).unwrap();
        assert_eq!((second.read_per_sec, second.write_per_sec), (150.0, 15.0));
        assert_eq!((second.reply_tokens, second.samples), (150.0, 2));
        assert_eq!(a.load_speed(), Some(second));
        // Another file under the same model name is another model; the token ratio
        // of the file beside it is untouched.
        llm.embedded.model_file = Some("/models/b.gguf".into());
        assert_eq!(Calibration::open(&cache, &llm).load_speed(), None);
        assert_eq!(a.load(), None);
        // With the cache off nothing is kept.
        let (off, _) = settings(dir.path(), CacheMode::Off);
        assert_eq!(
            Calibration::open(&off, &llm).record_speed(1000, secs(10), 200, secs(10)),
            None
        );
    }
}
