//! `ground`: answer a question from live web search, with citations a reader can check.
//!
//! The library holds the pipeline, one module per stage, run in this order by
//! [`pipeline::answer`]:
//!
//! search -> fetch -> extract -> context -> llm -> grounding -> render
//!
//! The `ground` binary (src/main.rs) only parses arguments, calls the library and
//! maps errors to exit codes ([`error::exit`]).

pub mod cache;
pub mod cache_command;
pub mod cli;
pub mod config;
pub mod context;
pub mod doctor;
pub mod error;
pub mod events;
pub mod extract;
pub mod extract_command;
pub mod fetch;
pub mod fetch_command;
pub mod grounding;
pub mod llm;
pub mod mcp;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod search;
pub mod search_command;
