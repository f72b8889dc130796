//! The model stage: ask for a strict-JSON answer over the numbered sources and parse
//! what comes back.
//!
//! The answer is requested as a short list of statements, each citing source numbers
//! with a verbatim quote, so the grounding stage can check every claim and compute
//! exact segment offsets. The JSON Schema is bounded (lengths, item counts, source
//! number range): measured on small models, unbounded schemas let a model loop inside
//! a string until the token cap, bounded ones give valid JSON (GUIDE 3).
//!
//! - [`prompt`]: instructions, user message, schema and its bounds;
//! - [`client`]: the [`ChatBackend`] trait, request and reply, HTTP helpers (whole and
//!   streamed);
//! - [`frames`]: streamed reply bodies (Ollama NDJSON, Server-Sent Events) into text
//!   pieces and an end marker;
//! - [`backend`]: the configured model as one [`Backend`];
//! - [`choose`](mod@choose): `--llm auto`, Ollama when it runs and has the model, else
//!   the embedded model;
//! - [`server`]: the one backend for a model server over HTTP, parameterised by its
//!   wire protocol; [`ollama`], [`openai`]: each protocol's request and reply;
//! - [`embedded`]: llama.cpp inside the process (the engine behind the cargo feature
//!   `embedded`), its model catalogue and downloads;
//! - [`ask`](mod@ask): one call with its single retry.

pub(crate) mod ask;
pub(crate) mod backend;
pub(crate) mod choose;
pub(crate) mod client;
pub mod embedded;
pub(crate) mod frames;
pub(crate) mod ollama;
pub(crate) mod openai;
pub(crate) mod prompt;
pub(crate) mod server;

pub use ask::{AskEvent, Asked, ask, ask_streaming};
pub use backend::Backend;
pub use choose::{Chosen, PROBE, choose};
pub use client::{ChatBackend, MAX_REPLY_BYTES, ModelReply, ModelRequest, Prefill};
pub use prompt::{
    AnswerBounds, MAX_BUCKET_CITATIONS, MAX_BUCKET_ITEMS, MAX_CITATIONS_PER_STATEMENT,
    MAX_QUOTE_CHARS, MAX_STATEMENT_CHARS, MAX_STATEMENTS, PACK_NOTE, SYSTEM_PROMPT, answer_schema,
    prompt_overhead_tokens, user_message, user_message_with_history, with_pack_buckets,
    with_questions_for_user,
};
