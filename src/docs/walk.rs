//! Which files a folder holds for the index: ripgrep's walker (the `ignore` crate), so
//! `.gitignore`, `.ignore` and hidden files are honoured as `rg` honours them, and
//! symbolic links are never followed out of the folder.
//!
//! A link whose target lies inside the folder is read like a file; one leading
//! out of it is skipped with a reason (a folder given to the index is the whole of
//! what may be read). Links to folders are not entered.

use std::path::{Path, PathBuf};

use super::formats::Format;

/// One file the walk found to read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The file, as an absolute path under its root (a link keeps its own name).
    pub path: PathBuf,
    /// Its format (plain text for a file named on the command line whatever its name).
    pub format: Format,
}

/// What walking the roots gave: files to read, files skipped with a reason, and how
/// many files were passed over as not documents.
#[derive(Debug, Default)]
pub struct Walked {
    /// Files to read, in path order.
    pub found: Vec<Found>,
    /// Files not read, with why (a link out of the folder, an unreadable entry).
    pub skipped: Vec<(PathBuf, String)>,
    /// Files that are not documents (source code, data), not listed.
    pub not_documents: u64,
}

/// The reason given for a link that leads out of the folder.
pub const LINK_OUT: &str = "a symbolic link leading out of the folder";

/// Walks each root (a folder, or one file) and gathers what to read. `hidden`: read
/// hidden files and folders too. Roots must be absolute and canonical.
pub fn walk(roots: &[PathBuf], hidden: bool) -> Walked {
    let mut walked = Walked::default();
    for root in roots {
        if root.is_file() {
            walked.found.push(Found {
                path: root.clone(),
                format: Format::of(root).unwrap_or(Format::Text),
            });
            continue;
        }
        let walker = ignore::WalkBuilder::new(root)
            .hidden(!hidden)
            .follow_links(false)
            .require_git(false)
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    let path = error_path(&e).unwrap_or_else(|| root.clone());
                    walked.skipped.push((path, format!("unreadable: {e}")));
                    continue;
                }
            };
            let Some(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path().to_path_buf();
            if kind.is_symlink() {
                match std::fs::canonicalize(&path) {
                    Ok(target) if !target.starts_with(root) => {
                        walked.skipped.push((path, LINK_OUT.to_string()));
                        continue;
                    }
                    Ok(target) if !target.is_file() => continue,
                    Ok(_) => {}
                    Err(e) => {
                        walked
                            .skipped
                            .push((path, format!("unreadable: a broken link ({e})")));
                        continue;
                    }
                }
            } else if !kind.is_file() {
                continue;
            }
            match Format::of(&path) {
                Some(format) => walked.found.push(Found { path, format }),
                None => walked.not_documents += 1,
            }
        }
    }
    walked.found.sort_by(|a, b| a.path.cmp(&b.path));
    walked.found.dedup_by(|a, b| a.path == b.path);
    walked
}

/// The path an `ignore` error names, if any.
fn error_path(error: &ignore::Error) -> Option<PathBuf> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

/// Whether `path` lies under `root` (or is it).
pub fn is_under(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}
