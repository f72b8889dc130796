//! The local document index's errors (`ground index`, `--docs`): one enum with a hint
//! for each, part of the one error type ([`super::Error::Index`]), kept here so that
//! the error layer names no stage.

use std::path::PathBuf;

/// Why the index could not be used; each has a hint ([`IndexError::hint`]).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// No folder for the index: none of the variables is set.
    #[error(
        "there is no folder for the document index: none of GROUND_INDEX_DIR, XDG_DATA_HOME and HOME is set"
    )]
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
