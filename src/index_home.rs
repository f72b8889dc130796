//! Where the local document index keeps its collections, from the environment
//! (`GROUND_INDEX_DIR`, `XDG_DATA_HOME`, `HOME`): a setting every layer may read
//! (the run's settings carry it, `ground index` resolves it), so it sits with the
//! leaves rather than in the `docs` stage.

use std::path::{Path, PathBuf};

/// Where the local document index keeps its collections (`ground index`, `--docs`): `GROUND_INDEX_DIR`, else `$XDG_DATA_HOME/ground/index`,
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

    /// The folder from the process environment; `None` when no variable names one
    /// (the caller's error says what to set: `IndexError::NoHome`).
    pub fn from_env() -> Option<IndexHome> {
        Self::resolve(&|name| std::env::var(name).ok())
    }

    /// One collection's folder.
    pub(crate) fn collection(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}
