//! Local documents as sources: `ground index` keeps a full-text index (tantivy, BM25)
//! of folders a person names, cut into passages that keep their file and line range,
//! and a run can search it beside the web.
//!
//! - `formats.rs`: what is read and how (Markdown, text, reStructuredText, HTML
//!   through the extractor, PDF through the sandboxed reader), and titles;
//! - `walk.rs`: the folder walk (ripgrep's walker: .gitignore, .ignore, hidden);
//! - `passages.rs`: text cut into passages with line ranges;
//! - `store.rs`: one collection on disk: the tantivy index, the manifest of files
//!   read, the writer's lock, private modes;
//! - `update.rs`: `add` (incremental: size and mtime, then content hash) and `remove`;
//! - `search.rs`: a query over collections, and a hit's text read again at answer time.
//!
//! A collection lives in `DIR/NAME/` where DIR is [`IndexHome::resolve`]'s folder.
//! Nothing here talks to the network: a document's text never leaves the machine
//! except in the model's prompt.

mod analyzer;
mod formats;
mod passages;
mod search;
mod store;
mod update;
mod walk;

pub use formats::{DocText, Format, MAX_FILE_BYTES};
pub use passages::{Passage, line_of, lines, split};
pub use search::{Hit, ReadAgain, find, read_again, search, update_hint};
pub use store::{CollectionInfo, exists, list};
pub use update::{Progress, Skip, Summary, add, remove};
pub use walk::LINK_OUT;

/// Why the index could not be used (an error of the one error enum's family).
pub use crate::error::IndexError;
/// Where the collections live (a setting: `GROUND_INDEX_DIR`, `XDG_DATA_HOME`, `HOME`).
pub use crate::index_home::IndexHome;

/// The collection used when none is named.
pub const DEFAULT_COLLECTION: &str = "default";

/// Checks a collection name: 1-64 letters, digits, `-` or `_` (it names a folder).
pub fn check_name(name: &str) -> Result<(), IndexError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(IndexError::BadName(name.to_string()))
    }
}
