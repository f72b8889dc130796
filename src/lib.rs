//! `ground`: answer a question from live web search, with citations a reader can check.
//!
//! # Layout
//!
//! Layers, each importing only the ones below it (checked by `scripts/import-graph.py`):
//!
//! - **Leaves**, plain data and pure functions: [`text`] (sanitising, shortening,
//!   normal form, the redactor), [`http`] (User-Agent, client builder, bounded body
//!   reader, URLs for people), [`files`] (shared state files written whole),
//!   [`settings`] (resolved settings as data), [`hits`]
//!   (search results), [`answer`] (the model's answer and its parsing), [`answer_stream`]
//!   (statements found in a reply still arriving), [`events`], [`extract`] (HTML to
//!   main text), [`pdf`] (PDF to text in a sandboxed worker process), [`language`]
//!   (the answer's language), [`context`] (passages that fit the window), [`robots`]
//!   (robots.txt rules), [`keystore`] (API keys in the OS keyring, format checks,
//!   bounded lookups).
//! - **Errors and configuration**: [`error`] (every failure, its hint and exit
//!   code), [`config`] (flags over environment over file over keyring over defaults).
//! - **Stages**: [`search`], [`fetch`], [`page`] (fetch + extract + cache for one
//!   page), [`llm`], [`grounding`] (quote verification), [`plan`], [`cache`],
//!   [`calibration`] (the model's tokens per estimated token, kept beside the cache).
//! - **The run**: [`pipeline`] sequences the stages into a [`report::Report`];
//!   [`report::verdict`] decides whether it is grounded.
//! - **Faces**: [`render`] (person, Markdown, JSON), [`doctor`], [`mcp`] with
//!   [`mcp_stdio`] (the line guard in front of its JSON-RPC).
//!
//! The `ground` binary (`src/bin/ground/`) is the only code that knows the command
//! line: it parses arguments, calls [`pipeline::answer`] and friends, and maps errors
//! to exit codes ([`error::exit`]).
//!
//! search -> fetch -> extract -> context -> llm -> grounding -> render

pub mod answer;
pub mod answer_stream;
pub mod cache;
pub mod calibration;
pub mod config;
pub mod context;
pub mod doctor;
pub mod error;
pub mod events;
pub mod extract;
pub mod fetch;
pub mod files;
pub mod grounding;
pub mod hits;
pub mod http;
pub mod keystore;
pub mod language;
pub mod llm;
pub mod mcp;
pub mod mcp_stdio;
pub mod page;
pub mod pdf;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod report;
pub mod robots;
pub mod search;
pub mod settings;
pub mod text;

pub use error::Error;
pub use report::{Report, Verdict, verdict};
pub use settings::Settings;
