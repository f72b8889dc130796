//! The engine's thread, one per model: continuous batching. It owns the model's
//! context and writes every reply under way together: each step puts the next token
//! of every reply being written, and the next prompt chunk of those being read, into
//! one `llama_decode` batch (each reply in a sequence of its own), then takes each
//! reply's next token from its own scores with its own grammar. Replies beyond the
//! context's parallel sequences wait in the thread's queue; a reply whose caller
//! stopped waiting leaves between steps, its sequence kept as far as it was read, for
//! a later prompt to reuse.
//!
//! Why a thread and a batch rather than a lock: behind a lock, N replies take N times
//! as long. A decoding step reads every weight of the model for one token; in one
//! batch it reads them once for all the replies' tokens, so on a CPU N replies cost
//! far less than N times one. llama.cpp's own server does the same (`update_slots`):
//! one batch per step, every slot's sampled token plus prompt chunks in arrival order.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use super::native::{WorkingOn, backend};
use super::sampling::{Utf8Pieces, argmax, pick_with_grammar};
use super::sequences::{Sequence, place, shared_prefix};
use super::{
    CHUNK_TARGET, FIRST_CHUNK, Generated, MAX_BATCH, MIN_CHUNK, PREFILL_STEPS, SEQUENCES,
    engine_error,
};
use crate::error::Error;

/// What the engine's thread knows of its model.
pub(super) struct Engine {
    /// The model (loaded models live for the whole process).
    pub(super) llama: &'static LlamaModel,
    /// Its file, named if ggml aborts.
    pub(super) path: PathBuf,
    /// Key/value cache bytes one token takes, when the file says.
    pub(super) kv_bytes_per_token: Option<u64>,
    /// Memory free beyond what the load counted (the weights and one window), when
    /// known: what bounds the windows of parallel sequences.
    pub(super) spare_memory: Option<u64>,
}

/// What a context is made for; a reply asking for another shape waits until the
/// replies under way are written, then the context is made anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shape {
    /// Each sequence's window.
    pub(super) window: u32,
    /// llama.cpp's threads.
    pub(super) threads: i32,
    /// Replies written at once, as asked (memory may allow fewer).
    pub(super) parallel: usize,
}

/// One reply asked of the engine's thread.
pub(super) struct Job {
    /// The prompt's tokens.
    pub(super) tokens: Vec<LlamaToken>,
    /// Most tokens to write.
    pub(super) max_tokens: u32,
    /// Whether the end-of-text token ends the reply.
    pub(super) stop_at_end_of_text: bool,
    /// Whose prefixes it may reuse (`GenerateRequest::scope`).
    pub(super) scope: Option<String>,
    /// The context it needs.
    pub(super) shape: Shape,
    /// The answer's grammar; `None`: free text.
    pub(super) grammar: Option<LlamaSampler>,
    /// Raised when its caller stops waiting.
    pub(super) stop: Arc<AtomicBool>,
    /// Where its progress, text and result go.
    pub(super) events: Sender<Event>,
}

/// What the engine's thread tells a reply's caller, in order: prefill steps, text
/// pieces, then the result.
pub(super) enum Event {
    /// `done` of the prompt's `total` tokens are in the context, `cached` of them
    /// from before.
    Prefill { done: u32, total: u32, cached: u32 },
    /// The next piece of the reply.
    Text(String),
    /// The reply, or why there is none.
    Done(Box<Result<Generated, Error>>),
}

impl Job {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Tells the caller; a caller that has gone no longer listens, which is fine.
    fn send(&self, event: Event) {
        let _ = self.events.send(event);
    }

    fn fail(&self, error: Error) {
        self.send(Event::Done(Box::new(Err(error))));
    }
}

/// The context a model keeps between replies, and what its key/value cache holds:
/// at least [`SEQUENCES`] sequences in one unified cache of `cells` cells (any
/// sequence may use any cell).
pub(super) struct Session {
    /// What it was made for.
    shape: Shape,
    /// Replies written at once: the shape's, or fewer when memory is short.
    parallel: usize,
    /// Cells the sequences share: a window for each reply written at once.
    pub(super) cells: usize,
    /// What each sequence (its llama.cpp sequence id is its index) holds.
    pub(super) sequences: Vec<Sequence>,
    /// Counts replies, to tell which sequence was used least recently.
    clock: u64,
    /// Why this context replaced another, told to the first reply written in it.
    fresh: Option<String>,
    /// Prompt tokens per step, re-measured after each step that read some, so a step
    /// takes about [`CHUNK_TARGET`].
    chunk: usize,
    pub(super) ctx: LlamaContext<'static>,
}

/// The sequences' bookkeeping on the context (what `place` decides is done here).
impl Session {
    /// Cells the sequences hold at most (cells a prefix copy shares are counted once
    /// per sequence: an over-count, so a reply never finds the cache full).
    /// A sequence with a reply under way counts the cells that reply may fill.
    pub(super) fn cells_held(&self) -> usize {
        self.sequences
            .iter()
            .map(|s| s.tokens.len().max(s.reserved))
            .sum()
    }

    /// Sequence `seq`'s reply is over: it is idle, holding what was read.
    pub(super) fn release(&mut self, seq: usize) {
        self.sequences[seq].busy = false;
        self.sequences[seq].reserved = 0;
    }

    /// Empties the whole cache.
    pub(super) fn clear(&mut self) {
        self.ctx.clear_kv_cache();
        for sequence in &mut self.sequences {
            sequence.tokens.clear();
        }
    }

    /// Empties sequence `seq`; `false` when llama.cpp could not (then nothing is
    /// known of the cache and the caller empties it all).
    pub(super) fn clear_sequence(&mut self, seq: usize) -> bool {
        if self.sequences[seq].tokens.is_empty() {
            return true;
        }
        let ok = self.ctx.kv_cache_seq_rm(seq as i32, None, None).is_ok();
        self.sequences[seq].tokens.clear();
        ok
    }
}

/// What a reply is told when its sequence could not be cut.
const CANNOT_CUT: &str = "llama.cpp cannot cut this model's cache, so it was emptied";

impl Session {
    /// A new context for `shape`: a window of cells for each reply written at once,
    /// as many as memory allows (at least one).
    fn open(engine: &Engine, shape: Shape) -> Result<Session, Error> {
        let window = u64::from(shape.window);
        let fit = match (engine.kv_bytes_per_token, engine.spare_memory) {
            (Some(per), Some(spare)) => {
                1 + usize::try_from(spare / per.saturating_mul(window).max(1)).unwrap_or(0)
            }
            _ => shape.parallel,
        };
        let parallel = shape.parallel.min(fit).max(1);
        let cells = shape.window as usize * parallel;
        let sequences = SEQUENCES.max(parallel);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(u32::try_from(cells).unwrap_or(u32::MAX)))
            // Several sequences in one cache (unified: any sequence may use any cell,
            // so each still has the whole window).
            .with_n_seq_max(sequences as u32)
            .with_kv_unified(true)
            .with_n_batch(MAX_BATCH as u32)
            .with_n_ubatch(MAX_BATCH as u32)
            .with_n_threads(shape.threads)
            .with_n_threads_batch(shape.threads)
            // Measured (scripts/bench-embedded.py, 2 cores, a 2,500-token prompt): the
            // CPU's flash-attention path, which "auto" picks, decodes at half the speed.
            .with_flash_attention_policy(llama_cpp_sys_2::LLAMA_FLASH_ATTN_TYPE_DISABLED);
        let ctx = engine
            .llama
            .new_context(backend()?, params)
            .map_err(|e| engine_error("cannot create the model's context", &e))?;
        Ok(Session {
            shape,
            parallel,
            cells,
            sequences: (0..sequences).map(|_| Sequence::default()).collect(),
            clock: 0,
            fresh: None,
            chunk: FIRST_CHUNK,
            ctx,
        })
    }

    /// Why a context for `shape` replaces this one.
    fn changed_to(&self, shape: &Shape) -> String {
        let was = &self.shape;
        if was.window != shape.window {
            format!(
                "the window changed from {} to {} tokens",
                was.window, shape.window
            )
        } else if was.threads != shape.threads {
            format!(
                "the thread count changed from {} to {}",
                was.threads, shape.threads
            )
        } else {
            format!(
                "the replies written at once changed from {} to {}",
                was.parallel, shape.parallel
            )
        }
    }

    /// Takes a sequence for `job` (whose reply has at most `max_new` tokens): the one
    /// holding the longest prefix of its prompt, or another with that prefix copied
    /// there ([`place`]); the least recently used idle sequences give way while the
    /// cells held could run short. The sequence, and why the cache was emptied if it
    /// was.
    fn take_sequence(
        &mut self,
        job: &Job,
        max_new: usize,
    ) -> Result<(usize, Option<String>), Error> {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut fresh = self.fresh.take();
        self.clock += 1;
        let placed = place(&self.sequences, &job.tokens, job.scope.as_ref()).ok_or_else(|| {
            Error::Internal {
                message: "no sequence of the model's context is free".into(),
            }
        })?;
        let seq = placed.target;
        let cut = if placed.source == seq {
            self.sequences[seq].tokens.len() <= placed.prefix
                || self
                    .ctx
                    .kv_cache_seq_rm(seq as i32, Some(count(placed.prefix)), None)
                    .is_ok()
        } else {
            self.clear_sequence(seq)
                && self
                    .ctx
                    .kv_cache_seq_cp(
                        placed.source as i32,
                        seq as i32,
                        None,
                        Some(count(placed.prefix)),
                    )
                    .is_ok()
        };
        if cut {
            let prefix = self.sequences[placed.source].tokens[..placed.prefix].to_vec();
            self.sequences[seq].tokens = prefix;
        } else {
            fresh = Some(self.empty_for(seq)?);
        }
        self.sequences[seq].scope = job.scope.clone();
        self.sequences[seq].used = self.clock;
        self.sequences[seq].busy = true;
        self.sequences[seq].reserved = job.tokens.len() + max_new;
        // Room for the rest of the prompt and the reply, and for the replies under
        // way: the least recently used idle sequences give way while the cells held
        // could run short.
        while self.cells_held() > self.cells {
            let Some(oldest) = (0..self.sequences.len())
                .filter(|&i| {
                    i != seq && !self.sequences[i].busy && !self.sequences[i].tokens.is_empty()
                })
                .min_by_key(|&i| self.sequences[i].used)
            else {
                break;
            };
            if !self.clear_sequence(oldest) {
                fresh = Some(self.empty_for(seq)?);
            }
        }
        Ok((seq, fresh))
    }

    /// When llama.cpp could not cut a sequence: the whole cache is emptied when no
    /// other reply is under way, else sequence `seq` alone (its prompt is read again);
    /// an error when even that fails.
    fn empty_for(&mut self, seq: usize) -> Result<String, Error> {
        let others_busy = (0..self.sequences.len()).any(|i| i != seq && self.sequences[i].busy);
        if !others_busy {
            self.clear();
            return Ok(CANNOT_CUT.into());
        }
        if self.ctx.kv_cache_seq_rm(seq as i32, None, None).is_ok() {
            self.sequences[seq].tokens.clear();
            return Ok(
                "llama.cpp cannot cut this model's cache, so the prompt was read again".into(),
            );
        }
        Err(Error::ModelEngine {
            message: "llama.cpp cannot cut this model's cache while other replies are written"
                .into(),
        })
    }
}

/// A reply under way: where it is in its prompt and its text.
struct Reply {
    job: Job,
    /// Its sequence.
    seq: usize,
    /// The prompt's tokens, the first `cached` found in the cache, `done` read so far.
    total: usize,
    cached: usize,
    done: usize,
    /// Where this step's prompt chunk ends (`done` when it has none).
    chunk_end: usize,
    /// Prefill progress is told every `report_every` tokens; last told at `reported`.
    report_every: usize,
    reported: usize,
    /// Most tokens it may write, and written so far.
    max_new: usize,
    written: usize,
    /// The token sampled last, to be fed in the next step.
    next: Option<LlamaToken>,
    /// Where its scores are in this step's batch, when it has some.
    logits_at: Option<i32>,
    text: String,
    utf8: Utf8Pieces,
    done_reason: &'static str,
    window: u32,
    started: Instant,
    prefill: Duration,
    decoding_since: Option<Instant>,
    fresh: Option<String>,
    /// The most replies that had tokens in one step with this one, itself included.
    alongside: usize,
}

impl Reply {
    fn new(job: Job, session: &Session, seq: usize, max_new: usize, fresh: Option<String>) -> Self {
        let total = job.tokens.len();
        let cached = session.sequences[seq].tokens.len();
        let reply = Reply {
            seq,
            total,
            cached,
            done: cached,
            chunk_end: cached,
            report_every: (total - cached).div_ceil(PREFILL_STEPS).max(1),
            reported: cached,
            max_new,
            written: 0,
            next: None,
            logits_at: None,
            text: String::new(),
            utf8: Utf8Pieces::default(),
            done_reason: "length",
            window: session.shape.window,
            started: Instant::now(),
            prefill: Duration::ZERO,
            decoding_since: None,
            fresh,
            alongside: 0,
            job,
        };
        reply.progress();
        reply
    }

    fn progress(&self) {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.job.send(Event::Prefill {
            done: count(self.done),
            total: count(self.total),
            cached: count(self.cached),
        });
    }

    /// Takes the reply's next token from `logits`; `true` when the reply is complete.
    fn sample(&mut self, logits: &[f32], engine: &Engine) -> Result<bool, Error> {
        if self.written >= self.max_new {
            return Ok(true);
        }
        let vocab = engine.llama.vocab();
        let token = match self.job.grammar.as_mut() {
            Some(grammar) => {
                pick_with_grammar(logits, grammar).ok_or_else(|| Error::ModelEngine {
                    message: "the answer grammar allows no next token".into(),
                })?
            }
            None => argmax(logits).ok_or_else(|| Error::ModelEngine {
                message: "the model gave no scores".into(),
            })?,
        };
        if self.job.stop_at_end_of_text && vocab.is_eog(token) {
            self.done_reason = "stop";
            return Ok(true);
        }
        if let Some(grammar) = self.job.grammar.as_mut() {
            grammar
                .try_accept(token)
                .map_err(|e| engine_error("the answer grammar refused a token", &e))?;
        }
        self.written += 1;
        let piece = vocab.token_to_piece(token, false, None);
        let piece = self.utf8.push(&piece);
        if !piece.is_empty() {
            self.text.push_str(&piece);
            self.job.send(Event::Text(piece));
        }
        if self.written == self.max_new {
            return Ok(true);
        }
        self.next = Some(token);
        Ok(false)
    }

    /// Sends the finished reply.
    fn finish(mut self) {
        let rest = self.utf8.finish();
        if !rest.is_empty() {
            self.text.push_str(&rest);
            self.job.send(Event::Text(rest));
        }
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let generated = Generated {
            text: std::mem::take(&mut self.text),
            done_reason: self.done_reason.into(),
            prompt_tokens: count(self.total),
            cached_prompt_tokens: count(self.cached),
            completion_tokens: count(self.written),
            window: self.window,
            prefill: self.prefill,
            decode: self.decoding_since.map(|t| t.elapsed()).unwrap_or_default(),
            fresh: self.fresh.take(),
            alongside: count(self.alongside.max(1)),
        };
        self.job.send(Event::Done(Box::new(Ok(generated))));
    }
}

/// The engine's thread: takes jobs from `jobs` and writes them, batched, until the
/// model is gone (never, in practice: a loaded model lives for the process).
pub(super) fn run(engine: Engine, jobs: Receiver<Job>) {
    let mut session: Option<Session> = None;
    let mut waiting: VecDeque<Job> = VecDeque::new();
    let mut active: Vec<Reply> = Vec::new();
    let mut batch = LlamaBatch::new(MAX_BATCH, 1);
    loop {
        if active.is_empty() && waiting.is_empty() {
            match jobs.recv() {
                Ok(job) => waiting.push_back(job),
                Err(_) => return,
            }
        }
        waiting.extend(jobs.try_iter());
        // A reply whose caller stopped waiting leaves: a waiting one at once, one under
        // way between steps, its sequence kept as far as it was read.
        waiting.retain(|job| {
            let stopped = job.stopped();
            if stopped {
                job.fail(Error::Interrupted);
            }
            !stopped
        });
        if let Some(session) = session.as_mut() {
            active.retain(|reply| {
                let stopped = reply.job.stopped();
                if stopped {
                    session.release(reply.seq);
                    reply.job.fail(Error::Interrupted);
                }
                !stopped
            });
        }
        admit(&engine, &mut session, &mut waiting, &mut active);
        let Some(open) = session.as_mut() else {
            continue;
        };
        if active.is_empty() {
            continue;
        }
        if let Err(message) = step(&engine, open, &mut active, &mut batch) {
            // After a failed decode the cache's contents are unknown: the replies
            // under way fail, and the next starts from a new context.
            for reply in active.drain(..) {
                reply.job.fail(Error::ModelEngine {
                    message: message.clone(),
                });
            }
            session = None;
        }
    }
}

/// Starts waiting jobs, in arrival order, while the context has a free parallel
/// sequence; a job needing a context of another shape waits for the replies under
/// way, then the context is made anew for it.
fn admit(
    engine: &Engine,
    session: &mut Option<Session>,
    waiting: &mut VecDeque<Job>,
    active: &mut Vec<Reply>,
) {
    while let Some(job) = waiting.front() {
        if session.as_ref().is_none_or(|s| s.shape != job.shape) {
            if !active.is_empty() {
                return;
            }
            let fresh = session.as_ref().map(|s| s.changed_to(&job.shape));
            // The old context goes first: two caches are never held at once.
            *session = None;
            match Session::open(engine, job.shape) {
                Ok(mut opened) => {
                    opened.fresh = fresh;
                    *session = Some(opened);
                }
                Err(e) => {
                    if let Some(job) = waiting.pop_front() {
                        job.fail(e);
                    }
                    continue;
                }
            }
        }
        let Some(open) = session.as_mut() else {
            return;
        };
        if active.len() >= open.parallel || reads_what_a_reply_is_reading(job, active) {
            return;
        }
        let Some(job) = waiting.pop_front() else {
            return;
        };
        // The prompt was checked to leave room for a reply in the window.
        let max_new = (job.max_tokens as usize).min(open.shape.window as usize - job.tokens.len());
        match open.take_sequence(&job, max_new) {
            Ok((seq, fresh)) => active.push(Reply::new(job, open, seq, max_new, fresh)),
            Err(e) => job.fail(e),
        }
    }
}

/// Prompt tokens a job shares with a reply under way that make it worth waiting for
/// that reply to read them.
const SHARED_WORTH_WAITING: usize = 64;

/// Whether `job`'s prompt begins with at least [`SHARED_WORTH_WAITING`] tokens that a
/// reply under way (in the same cache scope) has still to read. Then the job waits
/// (a step or a few) until they are read, and takes them from that reply's sequence
/// instead of reading them again alongside it: replies asked at once share their
/// instructions, which were otherwise read once per reply (measured on the Qwen3
/// 0.6B shape, 4 at once: 1,107 prompt tokens read where one at a time read 460).
fn reads_what_a_reply_is_reading(job: &Job, active: &[Reply]) -> bool {
    let reusable = job.tokens.len().saturating_sub(1);
    active.iter().any(|reply| {
        let shared = shared_prefix(&reply.job.tokens, &job.tokens).min(reusable);
        reply.job.scope == job.scope && shared >= SHARED_WORTH_WAITING && reply.done < shared
    })
}

/// One step: a batch with the next token of every reply being written and prompt
/// chunks of those being read (in arrival order, about [`CHUNK_TARGET`] of work in
/// all), decoded at once; then each reply takes its next token. Finished replies
/// are sent and leave. An error is a failed decode (the message).
fn step(
    engine: &Engine,
    session: &mut Session,
    active: &mut Vec<Reply>,
    batch: &mut LlamaBatch,
) -> Result<(), String> {
    let _working = WorkingOn::file(&engine.path);
    let fill = |e: &dyn std::fmt::Display| match engine_error("cannot fill the batch", e) {
        Error::ModelEngine { message } => message,
        other => other.to_string(),
    };
    batch.clear();
    for reply in active.iter_mut() {
        reply.logits_at = None;
        reply.chunk_end = reply.done;
        if let Some(token) = reply.next {
            let position = session.sequences[reply.seq].tokens.len() as i32;
            batch
                .add(token, position, &[reply.seq as i32], true)
                .map_err(|e| fill(&e))?;
            reply.logits_at = Some(batch.n_tokens() - 1);
        }
    }
    let writing = batch.n_tokens() as usize;
    let mut room = session
        .chunk
        .saturating_sub(writing)
        .max(MIN_CHUNK)
        .min(MAX_BATCH - writing);
    for reply in active.iter_mut().filter(|r| r.done < r.total) {
        let end = (reply.done + room).min(reply.total);
        if end == reply.done {
            break;
        }
        for i in reply.done..end {
            batch
                .add(
                    reply.job.tokens[i],
                    i as i32,
                    &[reply.seq as i32],
                    i + 1 == reply.total,
                )
                .map_err(|e| fill(&e))?;
        }
        if end == reply.total {
            reply.logits_at = Some(batch.n_tokens() - 1);
        }
        room -= end - reply.done;
        reply.chunk_end = end;
    }
    let in_step = active
        .iter()
        .filter(|r| r.next.is_some() || r.chunk_end > r.done)
        .count();
    let read = batch.n_tokens() as usize - writing;
    let t = Instant::now();
    session
        .ctx
        .decode(batch)
        .map_err(|e| match engine_error("cannot decode the batch", &e) {
            Error::ModelEngine { message } => message,
            other => other.to_string(),
        })?;
    if read > 0 {
        let per_token = t.elapsed() / batch.n_tokens().max(1) as u32;
        session.chunk = match per_token.as_nanos() {
            0 => MAX_BATCH,
            n => ((CHUNK_TARGET.as_nanos() / n) as usize).clamp(MIN_CHUNK, MAX_BATCH),
        };
    }
    let mut complete = Vec::new();
    for (i, reply) in active.iter_mut().enumerate() {
        let held = &mut session.sequences[reply.seq].tokens;
        if let Some(token) = reply.next.take() {
            held.push(token);
            reply.alongside = reply.alongside.max(in_step);
        }
        if reply.chunk_end > reply.done {
            held.extend_from_slice(&reply.job.tokens[reply.done..reply.chunk_end]);
            reply.done = reply.chunk_end;
            reply.alongside = reply.alongside.max(in_step);
            if reply.done == reply.total || reply.done - reply.reported >= reply.report_every {
                reply.progress();
                reply.reported = reply.done;
            }
            if reply.done == reply.total {
                reply.prefill = reply.started.elapsed();
                reply.decoding_since = Some(Instant::now());
            }
        }
        if let Some(at) = reply.logits_at {
            match reply.sample(session.ctx.get_logits_ith(at), engine) {
                Ok(false) => {}
                Ok(true) => complete.push((i, None)),
                Err(e) => complete.push((i, Some(e))),
            }
        }
    }
    // Complete replies leave; their sequences stay for a later prompt to reuse.
    for (i, error) in complete.into_iter().rev() {
        let reply = active.remove(i);
        session.release(reply.seq);
        match error {
            None => reply.finish(),
            Some(e) => reply.job.fail(e),
        }
    }
    Ok(())
}
