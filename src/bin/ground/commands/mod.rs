//! One file per command, each a `run(args) -> ExitCode`.

pub mod answer;
pub mod batch;
pub mod cache;
pub mod chat;
pub mod check;
pub mod completions;
pub mod doctor;
pub mod extract;
pub mod fetch;
pub mod index;
pub mod key;
pub mod mcp;
pub mod model;
pub mod search;
pub mod serve;
pub mod usage;
