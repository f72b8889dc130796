//! The faces' printing: everything `ground` shows, for a person or as JSON, built from
//! the plain data of the stages and the [`Report`](crate::report::Report) of a run.
//!
//! - [`person`]: an answer as text (coloured on a terminal) or Markdown;
//! - [`json`]: an answer as `--json`, the grounding pack, error objects;
//! - [`results`]: search results; [`documents`]: passages of the local index; [`images`]: image results; [`page`]: one fetched page; [`cache`]: cache stats;
//! - [`check`]: `ground check`'s verdicts on claims (person and JSON);
//! - [`doctor`]: `ground doctor`'s checks; [`transcript`]: a conversation as Markdown;
//! - [`live`]: `ground answer`'s statements printed while the model writes, reconciled
//!   with the report.

pub mod cache;
pub mod check;
pub mod doctor;
pub mod documents;
pub mod images;
pub mod json;
pub mod live;
pub mod page;
pub mod person;
pub mod results;
pub mod transcript;
pub mod usage;

pub use json::{JSON_VERSION, json, json_error, json_failed, pack};
pub use person::{Style, person};
