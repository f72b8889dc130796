//! llama.cpp inside the process: load a GGUF model once, then write replies with it,
//! token by token, constrained to the answer's JSON schema.
//!
//! Why each part is the way it is:
//!
//! - **Loaded once per process, memory-mapped** ([`load`]): a process-wide cache keyed
//!   by the file's path, so `ground mcp` answers its second call without loading
//!   again. Before llama.cpp sees a file, [`super::gguf`] checks it (a corrupt or
//!   truncated file is an error, never a crash), and the free memory is compared with
//!   what the model needs (weights, the key/value cache of the window, working
//!   memory): too little is an error naming the smaller catalogue model, not a
//!   machine pushed into swap.
//! - **The model's own chat template** from the GGUF file; for Qwen3, the
//!   non-thinking switch its chat template documents (`enable_thinking=False`: an
//!   empty `<think>\n\n</think>\n\n` opening the assistant turn), so it answers
//!   instead of thinking aloud for a thousand tokens.
//! - **The JSON schema as a grammar** (llama.cpp's `json_schema_to_grammar`), applied
//!   the cheap way: the most likely token is checked against the grammar alone, and
//!   only when the grammar refuses it is the whole vocabulary filtered (llama.cpp's
//!   server samples the same way). Greedy: temperature 0, like the other backends.
//! - **Exact token counts**: the prompt is tokenized here, so its count is the
//!   model's own; the window is the smaller of the trained context and the requested
//!   `context_tokens`, and the reply is capped at `max_tokens` ("length").
//! - **Stoppable within a second**: generation checks a cancel flag between steps, and
//!   the prompt is decoded in chunks sized to take about 0.4 s each (re-measured after
//!   every chunk, down to a few tokens when the machine is busy), so Ctrl-C,
//!   `--timeout` and an MCP deadline never wait for a long prefill. The chunks are
//!   also the prefill's progress ([`Step::Prefill`]), thinned to at most
//!   [`PREFILL_STEPS`] reports however long the prompt.
//! - **Replies written together** ([`batching`]): each model has one engine thread
//!   that owns its context and writes the replies under way in one batch per step
//!   (continuous batching: every reply's next token and the prompts' chunks in one
//!   `llama_decode`), each reply with its own grammar, cancel flag and progress, up
//!   to [`GenerateRequest::parallel`] at once; more wait in the thread's queue.
//!   Greedy, so a reply is the one it would be alone.
//! - **A prompt is never read twice**: the context lives as long as the process,
//!   holding at least [`SEQUENCES`] sequences (llama.cpp sequence ids) in one unified
//!   key/value cache of a window's cells for each reply written at once. A reply
//!   evaluates only the prompt's tokens after the longest prefix any sequence shares
//!   with them (`sequences::place`), so a second question on the same sources, or a
//!   follow-up, costs its own tail; a reply that would cut another prompt's tail (a
//!   follow-up's short rewrite call after the answer), or a prefix another reply is
//!   being written after, goes to another sequence with the prefix copied there (the
//!   copy shares the cells), so the answer's prompt stays for the follow-up's answer.
//!   The least recently used idle sequences give way when the cells run short. A
//!   request for another window, thread or parallel count, or a cache that cannot be
//!   cut, starts the context afresh and says why ([`Generated::fresh`]). Only a
//!   sequence of the same [`GenerateRequest::scope`] is searched: with `[serve]
//!   isolate_clients`, one client's prompt is never another's cached prefix.
//! - **On the GPU when built with one** ([`GPU_BACKEND`]): every layer offloaded
//!   unless `gpu_layers` says fewer; [`devices`] lists what llama.cpp found, and
//!   [`Model::placement`] where the load put the weights (from llama.cpp's log, its
//!   only account of it), so a test can tell that offloading happened.
//! - **Quiet**: llama.cpp's log goes nowhere (its last errors are kept for the error
//!   message) unless `verbose` lets it through to stderr.
//!
//! Everything here blocks: callers run it on a thread of its own ([`super::Embedded`]
//! does), never on the async runtime; the decoding itself runs on the model's engine
//! thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::token::LlamaToken;

use super::gguf;
use crate::error::Error;

/// Most tokens decoded in one call (llama.cpp's physical batch).
const MAX_BATCH: usize = 512;

/// What one prompt chunk should take, so a cancel is seen well within a second while
/// chunks stay large enough for llama.cpp's matrix kernels.
const CHUNK_TARGET: Duration = Duration::from_millis(400);

/// The first prompt chunk, and the smallest. Smaller chunks see a cancel sooner on a
/// machine so busy that a token takes 200 ms (a chunk of 16 then took 3.3 s past a
/// cancel), but every llama.cpp call has a fixed cost: with chunks of 4-8 tokens the
/// 1.7B model's prefill ran at 2.2 tokens/s against the server's 47.5 on the same
/// busy machine. 16 keeps a cancel well within a second on a quiet machine (about
/// 0.25 s at Qwen3-1.7B's 65 tokens/s on 2 cores) without starving the kernels.
const FIRST_CHUNK: usize = 32;
const MIN_CHUNK: usize = 16;

/// Qwen3's documented non-thinking switch: what its chat template writes after the
/// assistant's opening when `enable_thinking` is false.
const EMPTY_THINK: &str = "<think>\n\n</think>\n\n";

/// How a model is to be loaded.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// How the model is named in messages: a catalogue name or the file's name.
    pub label: String,
    /// A smaller catalogue model to suggest when memory is short.
    pub smaller: Option<String>,
    /// The window that will be asked for, to size the memory check.
    pub context_tokens: u32,
    /// Let llama.cpp's log through to stderr.
    pub verbose: bool,
    /// Free memory to assume instead of reading /proc/meminfo (tests).
    pub memory_available: Option<u64>,
    /// Layers to offload to the GPU ([`GPU_BACKEND`] builds); `None`: all.
    pub gpu_layers: Option<u32>,
}

/// The GPU backend llama.cpp is built with (cargo features `cuda`, `vulkan`; Metal on
/// macOS, where llama.cpp builds it by default), or `None` for the CPU only.
pub const GPU_BACKEND: Option<&str> = if cfg!(feature = "cuda") {
    Some("CUDA")
} else if cfg!(feature = "vulkan") {
    Some("Vulkan")
} else if cfg!(target_os = "macos") {
    Some("Metal")
} else {
    None
};

/// One device llama.cpp can run a model on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// Its backend ("CPU", "Vulkan", "CUDA", "Metal").
    pub backend: String,
    /// Its name, e.g. "Vulkan0".
    pub name: String,
    /// What it is, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" (its name when it does not
    /// say).
    pub description: String,
    /// Whether it is a GPU (discrete or integrated) or an accelerator.
    pub gpu: bool,
    /// Its free memory in bytes, when it says.
    pub memory_free: Option<u64>,
}

/// The devices llama.cpp found in this process (starting llama.cpp if needed).
pub fn devices() -> Result<Vec<Device>, Error> {
    use llama_cpp_2::LlamaBackendDeviceType as Type;
    backend()?;
    Ok(llama_cpp_2::list_llama_ggml_backend_devices()
        .into_iter()
        .map(|d| Device {
            gpu: matches!(
                d.device_type,
                Type::Gpu | Type::IntegratedGpu | Type::Accelerator
            ),
            description: crate::text::sanitize_line(if d.description.is_empty() {
                &d.name
            } else {
                &d.description
            }),
            name: crate::text::sanitize_line(&d.name),
            backend: crate::text::sanitize_line(&d.backend),
            memory_free: (d.memory_free > 0).then_some(d.memory_free as u64),
        })
        .collect())
}

/// A model loaded into this process, shared by every call.
pub struct Model {
    /// Leaked on purpose: a loaded model stays for the life of the process (see
    /// [`load`]), and the context kept with it borrows it.
    llama: &'static LlamaModel,
    path: PathBuf,
    template: LlamaChatTemplate,
    /// Whether the file's own template was usable (else ChatML is used).
    own_template: bool,
    /// Whether the template has Qwen3's `enable_thinking` switch.
    thinks: bool,
    trained_context: u32,
    file_bytes: u64,
    placement: Placement,
    /// Key/value cache bytes per token, when the file says (bounds parallel replies).
    kv_bytes_per_token: Option<u64>,
    /// Memory free beyond what the load counted, when known.
    spare_memory: Option<u64>,
    /// The way to the model's engine thread ([`batching`]), started by the first
    /// reply: it owns the context kept between replies (its sequences hold the recent
    /// prompts) and writes the replies under way in one batch. One thread per model
    /// also means contexts are never built concurrently (llama.cpp mutates the model
    /// while building one).
    engine: Mutex<Option<Sender<Job>>>,
}

/// How many sequences one context keeps at least: the prompts of that many recent
/// replies stay in the key/value cache side by side, so a follow-up's rewrite call, a
/// planning call or another conversation does not push an answer's prompt out.
pub const SEQUENCES: usize = 4;

/// Most replies one context writes at once ([`GenerateRequest::parallel`]): each
/// needs a window of key/value cells, and on a CPU a batch of more tokens than this
/// gains little.
pub const MAX_PARALLEL: usize = 8;

/// How often a caller waiting for its reply looks at its cancel flag.
const CANCEL_POLL: Duration = Duration::from_millis(20);

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("path", &self.path)
            .field("trained_context", &self.trained_context)
            .finish_non_exhaustive()
    }
}

impl Model {
    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The context length it was trained for.
    pub fn trained_context(&self) -> u32 {
        self.trained_context
    }

    /// The file's size.
    pub fn file_bytes(&self) -> u64 {
        self.file_bytes
    }

    /// Where the load put the weights, as llama.cpp's log said: the layers offloaded
    /// to a GPU (`None` without a GPU device) and the buffers holding weights.
    pub fn placement(&self) -> &Placement {
        &self.placement
    }

    /// Whether the file carries a chat template llama.cpp can apply (otherwise the
    /// generic ChatML layout is used).
    pub fn has_own_template(&self) -> bool {
        self.own_template
    }

    /// The prompt as the model reads it: system and user message through the model's
    /// chat template, opened for the assistant's reply (with Qwen3's thinking off).
    pub fn render_prompt(&self, system: &str, user: &str) -> Result<String, Error> {
        let message = |role: &str, content: &str| {
            // A NUL cannot cross into C; page text has no business holding one.
            LlamaChatMessage::new(role.into(), content.replace('\0', "")).map_err(|e| {
                Error::ModelEngine {
                    message: format!("cannot build the chat message: {e}"),
                }
            })
        };
        let chat = [message("system", system)?, message("user", user)?];
        let mut text = self
            .llama
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| Error::ModelEngine {
                message: format!("cannot apply the model's chat template: {e}"),
            })?;
        if self.thinks {
            text.push_str(EMPTY_THINK);
        }
        Ok(text)
    }

    /// The prompt's tokens, exactly as they are fed to the model.
    pub fn prompt_tokens(&self, system: &str, user: &str) -> Result<Vec<LlamaToken>, Error> {
        let text = self.render_prompt(system, user)?;
        let vocab = self.llama.vocab();
        let mut tokens = vocab.tokenize(text.as_bytes(), true, true);
        // A template that writes the BOS itself, tokenized with BOS added: one is enough.
        if tokens.len() >= 2 && tokens[0] == vocab.bos() && tokens[1] == vocab.bos() {
            tokens.remove(0);
        }
        Ok(tokens)
    }

    /// How many tokens the prompt is for this model.
    pub fn count_prompt_tokens(&self, system: &str, user: &str) -> Result<u32, Error> {
        Ok(u32::try_from(self.prompt_tokens(system, user)?.len()).unwrap_or(u32::MAX))
    }
}

/// The machine's physical cores (llama.cpp runs best with one thread per core).
pub fn physical_cores() -> usize {
    num_cpus::get_physical().max(1)
}

/// The model at `path`, loaded now or earlier in this process. Blocking; `cancel`
/// stops a load in progress.
pub fn load(
    path: &Path,
    options: &LoadOptions,
    cancel: &Arc<AtomicBool>,
) -> Result<Arc<Model>, Error> {
    static MODELS: Mutex<Option<HashMap<PathBuf, Arc<Model>>>> = Mutex::new(None);
    let invalid = |reason: String| Error::ModelFileInvalid {
        path: path.to_path_buf(),
        reason,
    };
    let key = std::fs::canonicalize(path).map_err(|e| invalid(format!("cannot open it: {e}")))?;
    // Loads are serialised: two threads asking for one file load it once.
    let mut models = MODELS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(model) = models.get_or_insert_with(HashMap::new).get(&key) {
        return Ok(model.clone());
    }
    LOG_TO_STDERR.store(options.verbose, Ordering::Relaxed);
    let info = gguf::read(&key).map_err(|e| invalid(e.to_string()))?;
    // What llama.cpp would abort on rather than refuse is refused here.
    gguf::check_runnable(&info).map_err(|e| invalid(e.to_string()))?;
    let trained = match info.trained_context() {
        Some(n) if n > 0 && n <= i32::MAX as u64 => n as u32,
        Some(n) => {
            return Err(invalid(format!(
                "its trained context length {n} is impossible"
            )));
        }
        None => return Err(invalid("it does not say its context length".into())),
    };
    let needed = gguf::memory_needed(&info, options.context_tokens);
    let available = options.memory_available.or_else(gguf::memory_available);
    if let Some(available) = available
        && available < needed
    {
        return Err(Error::ModelMemory {
            model: options.label.clone(),
            needed,
            available,
            smaller: options.smaller.clone(),
        });
    }
    let backend = backend()?;
    take_errors();
    let _working = WorkingOn::file(&key);
    let flag = cancel.clone();
    let mut params = LlamaModelParams::default()
        .with_use_mmap(true)
        .with_progress_callback(move |_| !flag.load(Ordering::Relaxed));
    // llama.cpp's default offloads every layer a GPU backend can take.
    if let Some(layers) = options.gpu_layers {
        params = params.with_n_gpu_layers(layers);
    }
    native::watch_placement();
    let loaded = LlamaModel::load_from_file(backend, &key, &params);
    let placement = native::take_placement();
    let llama = loaded.map_err(|e| {
        if cancel.load(Ordering::Relaxed) {
            return Error::Interrupted;
        }
        invalid(take_errors().unwrap_or_else(|| format!("llama.cpp cannot load it ({e})")))
    })?;
    let (template, own_template) = match llama.chat_template(None) {
        Ok(t) => (t, true),
        Err(_) => (chatml()?, false),
    };
    let thinks = info
        .chat_template()
        .is_some_and(|t| t.contains("enable_thinking"));
    let mut model = Model {
        llama: Box::leak(Box::new(llama)),
        path: key.clone(),
        template,
        own_template,
        thinks,
        trained_context: trained,
        file_bytes: info.file_bytes,
        placement,
        kv_bytes_per_token: info.kv_bytes_per_token(),
        spare_memory: available.map(|a| a.saturating_sub(needed)),
        engine: Mutex::new(None),
    };
    // A template llama.cpp cannot apply falls back to ChatML, as llama.cpp's server does.
    if model.own_template && model.render_prompt("s", "u").is_err() {
        model.template = chatml()?;
        model.own_template = false;
    }
    let model = Arc::new(model);
    models
        .get_or_insert_with(HashMap::new)
        .insert(key, model.clone());
    Ok(model)
}

fn chatml() -> Result<LlamaChatTemplate, Error> {
    LlamaChatTemplate::new("chatml").map_err(|e| Error::ModelEngine {
        message: format!("cannot build the ChatML template: {e}"),
    })
}

/// Most prefill reports ([`Step::Prefill`]) one reply gives after its first (which
/// comes before any token is read), however long the prompt: a terminal redraws its
/// line a few times a second, and an event log stays short.
pub const PREFILL_STEPS: usize = 32;

/// One reply to write.
#[derive(Debug, Clone)]
pub struct GenerateRequest {
    /// Instructions.
    pub system: String,
    /// Sources and question.
    pub user: String,
    /// The JSON Schema the reply must follow, as a grammar; `None`: free text.
    pub schema: Option<serde_json::Value>,
    /// The window to use (capped at the trained context).
    pub context_tokens: u32,
    /// Most tokens to write.
    pub max_tokens: u32,
    /// Threads; 0 = the physical cores.
    pub threads: usize,
    /// Replies the model's context writes at once, in one batch (0 or 1: one at a
    /// time; at most [`MAX_PARALLEL`]): `ground serve --concurrency`, `batch -j`. Each
    /// has a sequence and a window of key/value cells of its own, so the cache's memory
    /// is `context_tokens` times this, or fewer replies at once when the memory free at
    /// load does not hold that many windows. Callers of one model ask the same: a reply
    /// asking for another count (or window, or threads) waits for the replies under
    /// way, then the context is made anew.
    pub parallel: usize,
    /// Whether the model's end-of-text token ends the reply. Always true for answers;
    /// false only to time decoding on a random-weight file (`examples/bench_embedded.rs`),
    /// whose every token is equally likely, the end token included.
    pub stop_at_end_of_text: bool,
    /// Who may reuse the prompt prefix this reply leaves in the cache, and whose
    /// prefix it may reuse: `None`, any caller; `Some(scope)`, only calls of the same
    /// scope. A call searches only the sequences of its own scope, so one isolated
    /// client never finds another's prompt there (`[serve] isolate_clients`).
    pub scope: Option<String>,
}

/// A written reply with its counts and timings.
#[derive(Debug, Clone, Default)]
pub struct Generated {
    /// The reply text.
    pub text: String,
    /// `stop` (the model ended it) or `length` (the cap or the window ended it).
    pub done_reason: String,
    /// The prompt's tokens.
    pub prompt_tokens: u32,
    /// The prompt's tokens that were in the context already, from an earlier reply,
    /// and were not evaluated again.
    pub cached_prompt_tokens: u32,
    /// Tokens written.
    pub completion_tokens: u32,
    /// The window used.
    pub window: u32,
    /// Reading the prompt (its tokens after the cached ones).
    pub prefill: Duration,
    /// Writing the reply.
    pub decode: Duration,
    /// Why the context was started afresh for this reply when it held an earlier one
    /// (another window or thread count, or a cache llama.cpp could not cut).
    pub fresh: Option<String>,
    /// The most replies decoded in one batch with this one, itself included (1: it
    /// was written alone): how much continuous batching shared its steps.
    pub alongside: u32,
}

impl Generated {
    /// The prompt's tokens evaluated for this reply: those after the cached prefix.
    pub fn evaluated_prompt_tokens(&self) -> u32 {
        self.prompt_tokens - self.cached_prompt_tokens
    }
}

/// What a reply reports while it is written, in order: prefill steps, then text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    /// The prompt is being read: `done` of its `total` tokens are in the context, the
    /// first `cached` of them from an earlier reply. The first report comes before any
    /// token is read (`done == cached`), the last at `done == total`.
    Prefill {
        /// Tokens of the prompt in the context so far.
        done: u32,
        /// The prompt's tokens.
        total: u32,
        /// Tokens that were there before this reply.
        cached: u32,
    },
    /// The next piece of the reply's text.
    Text(&'a str),
}

/// Writes the reply to `request` with `model`, calling `on_text` with each piece of
/// text as it is decoded. Blocking. Returns [`Error::Interrupted`] soon after `cancel`
/// is set.
pub fn generate(
    model: &Model,
    request: &GenerateRequest,
    cancel: &AtomicBool,
    on_text: &mut dyn FnMut(&str),
) -> Result<Generated, Error> {
    generate_with(model, request, cancel, &mut |step| {
        if let Step::Text(text) = step {
            on_text(text);
        }
    })
}

/// [`generate`], reporting the prefill's progress too ([`Step`]). The reply is
/// written by the model's engine thread ([`batching`]), batched with the other
/// replies under way; `on_step` is called on this thread.
pub fn generate_with(
    model: &Model,
    request: &GenerateRequest,
    cancel: &AtomicBool,
    on_step: &mut dyn FnMut(Step<'_>),
) -> Result<Generated, Error> {
    let tokens = {
        let _working = WorkingOn::file(&model.path);
        model.prompt_tokens(&request.system, &request.user)?
    };
    let prompt_len = tokens.len();
    let window = request.context_tokens.clamp(1, model.trained_context);
    // The reply needs room too: a prompt that leaves less than a few tokens is refused
    // (before the context is touched, so what it holds stays usable).
    if prompt_len == 0 || prompt_len + 16 > window as usize {
        return Err(Error::ModelPromptTooLong {
            prompt_tokens: u32::try_from(prompt_len).unwrap_or(u32::MAX),
            window,
            trained: model.trained_context,
        });
    }
    let threads = match request.threads {
        0 => physical_cores(),
        n => n,
    };
    let grammar = match &request.schema {
        Some(schema) => Some(grammar_sampler(model, schema)?),
        None => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (events, replies) = mpsc::channel();
    model.submit(Job {
        tokens,
        max_tokens: request.max_tokens,
        stop_at_end_of_text: request.stop_at_end_of_text,
        scope: request.scope.clone(),
        shape: Shape {
            window,
            threads: i32::try_from(threads).unwrap_or(1).max(1),
            parallel: request.parallel.clamp(1, MAX_PARALLEL),
        },
        grammar,
        stop: stop.clone(),
        events,
    })?;
    loop {
        if cancel.load(Ordering::Relaxed) {
            stop.store(true, Ordering::Relaxed);
        }
        match replies.recv_timeout(CANCEL_POLL) {
            Ok(Event::Prefill {
                done,
                total,
                cached,
            }) => on_step(Step::Prefill {
                done,
                total,
                cached,
            }),
            Ok(Event::Text(text)) => on_step(Step::Text(&text)),
            Ok(Event::Done(result)) => {
                if let Ok(generated) = result.as_ref()
                    && let Some(reason) = &generated.fresh
                    && LOG_TO_STDERR.load(Ordering::Relaxed)
                {
                    crate::error::log_line(&format!(
                        "ground: the model's context started afresh: {reason}"
                    ));
                }
                return *result;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::ModelEngine {
                    message: "the model's engine stopped without a reply".into(),
                });
            }
        }
    }
}

impl Model {
    /// Hands `job` to the model's engine thread, starting it on the first reply (or
    /// again, if it ended).
    fn submit(&self, job: Job) -> Result<(), Error> {
        let mut engine = self.engine.lock().unwrap_or_else(|e| e.into_inner());
        let job = match engine.as_ref() {
            Some(sender) => match sender.send(job) {
                Ok(()) => return Ok(()),
                Err(mpsc::SendError(job)) => job,
            },
            None => job,
        };
        let (sender, jobs) = mpsc::channel();
        let thread = Engine {
            llama: self.llama,
            path: self.path.clone(),
            kv_bytes_per_token: self.kv_bytes_per_token,
            spare_memory: self.spare_memory,
        };
        std::thread::Builder::new()
            .name("ground-engine".into())
            .spawn(move || batching::run(thread, jobs))
            .map_err(|e| Error::Internal {
                message: format!("cannot start the model's engine thread: {e}"),
            })?;
        let sent = sender.send(job).map_err(|_| Error::ModelEngine {
            message: "the model's engine stopped at its start".into(),
        });
        *engine = Some(sender);
        sent
    }
}

/// An engine error with llama.cpp's last log lines.
fn engine_error(what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::ModelEngine {
        message: match take_errors() {
            Some(log) => format!("{what}: {e} ({log})"),
            None => format!("{what}: {e}"),
        },
    }
}

mod batching;
mod native;
mod sampling;
mod sequences;

use batching::{Engine, Event, Job, Shape};
pub use native::Placement;
#[cfg(target_os = "linux")]
pub use native::brief_openmp_spin;
use native::{LOG_TO_STDERR, WorkingOn, backend, take_errors};
use sampling::grammar_sampler;
