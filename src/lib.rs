//! `ground`: answer a question from live web search, with citations a reader can check.
//!
//! # Layout
//!
//! Layers, each importing only the ones below it (checked by `scripts/import-graph.py`,
//! which fails on a module it cannot place):
//!
//! - **Leaves**, plain data and pure functions: [`text`] (sanitising, shortening,
//!   normal form, the redactor), `http` (User-Agent, client builder, bounded body
//!   reader, URLs for people), `files` (shared state files written whole),
//!   [`settings`] (resolved settings as data), `hits` (search results), `image_hits` (image results), [`answer`]
//!   (the model's reply, its parsing, and statements found while it streams),
//!   [`events`], [`extract`] (HTML to main text), `language` (the answer's language),
//!   [`context`] (passages that fit the window: tokens, passages, ranking,
//!   selection), `robots` (robots.txt rules), [`keystore`] (API keys in the OS
//!   keyring), [`sites`] (the site filter).
//! - **Errors and configuration**: [`error`] (every failure, its hint and exit
//!   code, and the one renderer of error, hint and warning lines), [`config`] (the
//!   file format, and one resolver per section: flags over environment over file over
//!   keyring over defaults).
//! - **Stages**: [`search`] (SearXNG, Brave, Tavily, Wikipedia, DuckDuckGo; `auto`
//!   picks one), `fetch`, [`pdf`] (PDF to text, bounded, in a sandboxed child),
//!   [`page`] (fetch + extract + cache for one page), [`extract_files`] (local files
//!   and folders), [`llm`], [`grounding`] (quote verification), `plan`, [`cache`],
//!   `calibration` (the model's tokens per estimated token, kept beside the cache).
//! - **The run**: [`pipeline`] sequences the stages through one door,
//!   [`pipeline::answer`], into a [`report::Report`]; [`report::verdict`] decides
//!   whether it is grounded; [`session`] keeps a conversation (turns and the sources
//!   read) between runs, for follow-up questions.
//! - **The service**: [`service`], what every long-lived face shares per process and
//!   per client: the model made ready once, conversations, reuse, admission and
//!   failures.
//! - **Faces**: [`render`] (person, Markdown, JSON, doctor, live printing), [`doctor`]
//!   (the checks), [`mcp`] (the MCP server), [`serve`] (the OpenAI- and
//!   Gemini-compatible HTTP server), [`batch`] (many questions, one JSON record each).
//!
//! Modules the binary and the tests use are `pub`; the others are `pub(crate)`.
//! The `ground` binary (`src/bin/ground/`) is the only code that knows the command
//! line: it parses arguments, calls the service, [`pipeline::answer`] or a stage,
//! and maps errors to exit codes ([`error::exit`]).
//!
//! search -> fetch -> extract -> context -> llm -> grounding -> render

pub mod answer;
pub mod batch;
pub mod cache;
pub(crate) mod calibration;
pub mod claims;
pub mod config;
pub mod context;
pub mod docs;
pub mod doctor;
pub mod error;
pub mod events;
pub mod extract;
pub mod extract_files;
pub(crate) mod fetch;
pub(crate) mod files;
pub mod grounding;
pub(crate) mod hits;
pub(crate) mod http;
pub mod image_hits;
pub(crate) mod index_home;
pub mod keystore;
pub(crate) mod language;
pub mod llm;
pub mod mcp;
pub mod page;
pub mod pdf;
pub mod pipeline;
pub(crate) mod plan;
pub mod render;
pub mod report;
pub(crate) mod robots;
pub mod search;
pub mod serve;
pub mod service;
pub mod session;
pub mod settings;
pub mod sites;
pub mod state;
#[cfg(test)]
pub(crate) mod testing;
pub mod text;

pub use error::Error;
pub use report::{Report, Verdict, verdict};
pub use settings::Settings;
