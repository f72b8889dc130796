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

mod formats;
mod passages;
mod search;
mod store;
mod update;
mod walk;

use std::path::{Path, PathBuf};

pub use formats::{DocText, Format, MAX_FILE_BYTES};
pub use passages::{Passage, line_of, lines, split};
pub use search::{Hit, ReadAgain, read_again, search};
pub use store::{CollectionInfo, list};
pub use update::{Progress, Skip, Summary, add, remove};
pub use walk::LINK_OUT;

/// The collection used when none is named.
pub const DEFAULT_COLLECTION: &str = "default";

/// Where the collections live: `GROUND_INDEX_DIR`, else `$XDG_DATA_HOME/ground/index`,
/// else `~/.local/share/ground/index`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexHome {
    /// The folder holding one folder per collection.
    pub dir: PathBuf,
}

impl IndexHome {
    /// The folder from the environment (`env` reads a variable); `None` when neither
    /// `GROUND_INDEX_DIR`, `XDG_DATA_HOME` nor `HOME` is set.
    pub fn resolve(env: &dyn Fn(&str) -> Option<String>) -> Option<IndexHome> {
        let dir = env("GROUND_INDEX_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                env("XDG_DATA_HOME")
                    .filter(|v| !v.is_empty())
                    .map(|d| Path::new(&d).join("ground").join("index"))
            })
            .or_else(|| {
                env("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| Path::new(&h).join(".local/share/ground/index"))
            })?;
        Some(IndexHome { dir })
    }

    /// The folder from the process environment, or the error saying what to set.
    pub fn from_env() -> Result<IndexHome, IndexError> {
        Self::resolve(&|name| std::env::var(name).ok()).ok_or(IndexError::NoHome)
    }

    /// One collection's folder.
    pub(crate) fn collection(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

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

/// Why the index could not be used; each has a hint ([`IndexError::hint`]).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// No folder for the index: none of the variables is set.
    #[error("there is no folder for the document index: none of GROUND_INDEX_DIR, XDG_DATA_HOME and HOME is set")]
    NoHome,
    /// A collection name that cannot name a folder.
    #[error("{0:?} is not a collection name")]
    BadName(String),
    /// The collection has never been indexed.
    #[error("there is no collection {0:?}")]
    NoCollection(String),
    /// Another process is writing the collection.
    #[error("another `ground index` is writing collection {0:?}")]
    Busy(String),
    /// The collection's files cannot be read as an index (damaged, cut, of another
    /// version).
    #[error("the index of collection {collection:?} cannot be read: {reason}")]
    Corrupt {
        /// The collection.
        collection: String,
        /// What failed.
        reason: String,
    },
    /// A path given to `add` does not exist or cannot be read.
    #[error("cannot read {}: {reason}", path.display())]
    Path {
        /// The path as given.
        path: PathBuf,
        /// The system's reason.
        reason: String,
    },
    /// The index folder cannot be written.
    #[error("cannot write the index in {}: {reason}", dir.display())]
    Write {
        /// The collection's folder.
        dir: PathBuf,
        /// What failed.
        reason: String,
    },
}

impl IndexError {
    /// What to do next.
    pub fn hint(&self) -> String {
        match self {
            IndexError::NoHome => "set GROUND_INDEX_DIR (or XDG_DATA_HOME, or HOME)".into(),
            IndexError::BadName(_) => {
                "use letters, digits, `-` and `_` only, at most 64 (e.g. --collection notes)".into()
            }
            IndexError::NoCollection(name) => format!(
                "index a folder first: ground index add PATH --collection {name} (ground index list shows the collections)"
            ),
            IndexError::Busy(_) => "wait for it to finish, then run the command again".into(),
            IndexError::Corrupt { collection, .. } => format!(
                "rebuild it: ground index add --collection {collection} (reads its folders again), or ground index add PATH --collection {collection}"
            ),
            IndexError::Path { .. } => "check the path and its permissions".into(),
            IndexError::Write { .. } => {
                "check that the folder is writable and has room, or set GROUND_INDEX_DIR".into()
            }
        }
    }
}
