//! The integration tests, one binary: the crate is linked once and `common` built once.
//! One module per command or concern; most run the real `ground` binary against
//! wiremock servers on loopback standing in for SearXNG, the web pages and the model
//! server (see `common`). The property tests are the other binary, `tests/props`.
//!
//! The keyring tests need a real Secret Service and are ignored here; `.ci/keyring`
//! runs exactly them: `cargo test --test it keyring:: -- --ignored --test-threads=1`.
//! The tests that need a model that writes sense (`embedded::real_model`, on SmolLM2)
//! are ignored too; `.ci/test` runs exactly them:
//! `cargo test --test it embedded::real_model:: -- --ignored`.

mod common;

mod addresses;
mod answer;
mod batch;
mod cache;
mod calibration;
mod chat;
mod check;
mod cross_check;
mod deadline;
mod dev_script;
mod docs;
mod doctor;
mod duckduckgo;
mod embedded;
mod evidence;
mod extract;
mod fetch;
mod grounding;
mod images;
mod index;
mod keyring;
mod language;
mod limits;
mod mcp;
mod model_faults;
mod ollama;
mod openai;
mod pack;
mod pdf;
mod pdf_sandbox;
mod planner;
mod redaction;
mod redis_support;
mod replicas;
mod robots;
mod sanitising;
mod search;
mod search_auto;
mod search_extras;
mod searxng;
mod secrets;
mod serve;
mod serve_connections;
#[cfg(feature = "embedded")]
mod serve_engine;
mod serve_filters;
mod setup_files;
mod sites;
mod state_files;
mod streaming;
mod usage_errors;
mod wikipedia;
