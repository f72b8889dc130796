//! `ground index add` and `remove`: the incremental update of one collection.
//!
//! A file is read again only when its size or modification time changed, and
//! re-indexed only when its content hash (SHA-256) changed too; a file indexed before
//! but no longer found under a folder walked now is dropped. Files are read and cut
//! on every core (each one's passages replace its old ones in the same commit); one
//! commit at the end publishes the whole update, so a reader sees all of it or none.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::UNIX_EPOCH;

use serde::Serialize;
use sha2::{Digest, Sha256};
use tantivy::indexer::UserOperation;
use tantivy::{TantivyDocument, Term};

use super::formats::{self, Unreadable};
use super::passages;
use super::store::{Collection, Fields, FileEntry, Writing};
use super::walk::{self, Found, LINK_OUT};
use super::{IndexError, IndexHome};

/// Why a file was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// Not text (a NUL byte near its start).
    Binary,
    /// No text in it.
    Empty,
    /// Larger than [`formats::MAX_FILE_BYTES`].
    TooLarge,
    /// It could not be read (permissions, a broken link, a PDF the reader refused).
    Unreadable,
    /// A symbolic link whose target is outside the folder indexed.
    LinkOutside,
}

/// One file not indexed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skip {
    /// The file.
    pub path: PathBuf,
    /// Why, as a word a script can test.
    pub reason: SkipReason,
    /// Why, for a person.
    pub detail: String,
}

/// What an `add` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// The collection.
    pub collection: String,
    /// Files indexed for the first time.
    pub added: Vec<PathBuf>,
    /// Files whose content changed, indexed again.
    pub updated: Vec<PathBuf>,
    /// Files dropped: gone, or no longer readable as a document.
    pub removed: Vec<PathBuf>,
    /// Files not indexed, each with its reason.
    pub skipped: Vec<Skip>,
    /// Files found unchanged (not read again, or read and of the same content).
    pub unchanged: u64,
    /// Files passed over as not documents (source code, data), not listed.
    pub not_documents: u64,
    /// Files in the collection after the update.
    pub files: u64,
    /// Passages in the collection after the update.
    pub passages: u64,
    /// Why the collection was rebuilt from scratch, when its files could not be read.
    pub rebuilt: Option<String>,
}

/// Where an `add` has got to, for a progress bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Files looked at so far.
    pub done: usize,
    /// Files to look at.
    pub total: usize,
}

/// Adds `paths` (folders or files) to collection `name`, or, with no path, reads
/// the collection's folders again. `hidden`: read hidden files too. Blocking (walks,
/// reads and indexes on every core): call it off the async runtime.
pub fn add(
    home: &IndexHome,
    name: &str,
    paths: &[PathBuf],
    hidden: bool,
    progress: &(dyn Fn(Progress) + Sync),
) -> Result<Summary, IndexError> {
    let collection = Collection::at(home, name)?;
    let mut roots = Vec::new();
    for path in paths {
        let root = std::fs::canonicalize(path).map_err(|e| IndexError::Path {
            path: path.clone(),
            reason: e.to_string(),
        })?;
        roots.push(root);
    }
    let mut writing = collection.writer()?;
    if roots.is_empty() {
        roots = writing.manifest.roots.clone();
        if roots.is_empty() {
            return Err(IndexError::NoCollection(name.to_string()));
        }
    }
    let walked = walk::walk(&roots, hidden);
    let mut summary = Summary {
        collection: name.to_string(),
        not_documents: walked.not_documents,
        rebuilt: writing.rebuilt.clone(),
        ..Summary::default()
    };
    for (path, detail) in walked.skipped {
        let reason = if detail == LINK_OUT {
            SkipReason::LinkOutside
        } else {
            SkipReason::Unreadable
        };
        summary.skipped.push(Skip {
            path,
            reason,
            detail,
        });
    }
    let outcomes = read_all(&writing, &walked.found, progress);
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for (found, outcome) in walked.found.iter().zip(outcomes) {
        let path = found.path.clone();
        match outcome {
            Outcome::Same(entry) => {
                summary.unchanged += 1;
                writing.manifest.files.insert(path.clone(), entry);
                seen.insert(path);
            }
            Outcome::Indexed(entry) => {
                let before = writing.manifest.files.insert(path.clone(), entry);
                if before.is_some() {
                    summary.updated.push(path.clone());
                } else {
                    summary.added.push(path.clone());
                }
                seen.insert(path);
            }
            Outcome::Skipped(reason, detail) => summary.skipped.push(Skip {
                path,
                reason,
                detail,
            }),
        }
    }
    // Files indexed before under the folders walked now and not indexed now: gone,
    // renamed, ignored now, or no longer readable.
    let gone: Vec<PathBuf> = writing
        .manifest
        .files
        .keys()
        .filter(|p| roots.iter().any(|r| walk::is_under(p, r)) && !seen.contains(*p))
        .cloned()
        .collect();
    for path in gone {
        delete_file(&writing.writer, writing.fields, &path);
        writing.manifest.files.remove(&path);
        summary.removed.push(path);
    }
    for root in roots {
        if !writing
            .manifest
            .roots
            .iter()
            .any(|r| walk::is_under(&root, r))
        {
            writing.manifest.roots.retain(|r| !walk::is_under(r, &root));
            writing.manifest.roots.push(root);
        }
    }
    writing.manifest.roots.sort();
    finish(&mut writing)?;
    summary.files = writing.manifest.files.len() as u64;
    summary.passages = writing.manifest.files.values().map(|f| f.passages).sum();
    summary.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(summary)
}

/// What `remove` did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Removed {
    /// The collection.
    pub collection: String,
    /// Files dropped from the index.
    pub removed: Vec<PathBuf>,
    /// Files left in the collection.
    pub files: u64,
}

/// Drops every file under `paths` (folders or files, whether they still exist or
/// not) from collection `name`, and those folders from its list.
pub fn remove(home: &IndexHome, name: &str, paths: &[PathBuf]) -> Result<Removed, IndexError> {
    let collection = Collection::at(home, name)?;
    if !collection.exists() {
        return Err(IndexError::NoCollection(name.to_string()));
    }
    let mut writing = collection.writer()?;
    let targets: Vec<PathBuf> = paths
        .iter()
        .flat_map(|p| {
            let absolute = std::path::absolute(p).unwrap_or_else(|_| p.clone());
            let canonical = std::fs::canonicalize(p).ok();
            std::iter::once(absolute).chain(canonical)
        })
        .collect();
    let under = |p: &Path| targets.iter().any(|t| walk::is_under(p, t));
    let gone: Vec<PathBuf> = writing
        .manifest
        .files
        .keys()
        .filter(|p| under(p))
        .cloned()
        .collect();
    for path in &gone {
        delete_file(&writing.writer, writing.fields, path);
        writing.manifest.files.remove(path);
    }
    writing.manifest.roots.retain(|r| !under(r));
    finish(&mut writing)?;
    Ok(Removed {
        collection: name.to_string(),
        removed: gone,
        files: writing.manifest.files.len() as u64,
    })
}

/// Commits the index, writes the manifest, and makes the files private.
fn finish(writing: &mut Writing) -> Result<(), IndexError> {
    let collection = writing.collection.clone();
    writing.writer.commit().map_err(|e| IndexError::Write {
        dir: collection.dir.clone(),
        reason: e.to_string(),
    })?;
    collection.save_manifest(&mut writing.manifest)?;
    collection.make_private();
    Ok(())
}

/// What reading one file came to.
enum Outcome {
    /// The same content as indexed (its entry, with the new mtime).
    Same(FileEntry),
    /// Indexed anew (its old passages, if any, deleted).
    Indexed(FileEntry),
    /// Not indexed, and why (its old passages, if any, deleted).
    Skipped(SkipReason, String),
}

/// Reads every found file on every core, in order of `found`.
fn read_all(
    writing: &Writing,
    found: &[Found],
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<Outcome> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..found.len()).map(|_| None).collect());
    let threads = num_cpus::get().clamp(1, 8);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = found.get(i) else { break };
                    let outcome = read_one(writing, file);
                    if let Ok(mut results) = results.lock() {
                        results[i] = Some(outcome);
                    }
                    let done = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(Progress {
                        done,
                        total: found.len(),
                    });
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|o| {
            o.unwrap_or(Outcome::Skipped(
                SkipReason::Unreadable,
                "unreadable: its reader stopped".into(),
            ))
        })
        .collect()
}

/// Reads one file and indexes it when new or changed.
fn read_one(writing: &Writing, file: &Found) -> Outcome {
    let path = &file.path;
    let before = writing.manifest.files.get(path);
    let skip = |reason, detail: String| {
        if before.is_some() {
            delete_file(&writing.writer, writing.fields, path);
        }
        Outcome::Skipped(reason, detail)
    };
    let metadata = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return skip(SkipReason::Unreadable, format!("unreadable: {e}")),
    };
    let size = metadata.len();
    let mtime_ns = metadata
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i128);
    if let Some(entry) = before
        && entry.size == size
        && entry.mtime_ns == mtime_ns
    {
        return Outcome::Same(entry.clone());
    }
    if size == 0 {
        return skip(SkipReason::Empty, "empty".into());
    }
    if size > formats::MAX_FILE_BYTES {
        return skip(
            SkipReason::TooLarge,
            format!(
                "over the size limit ({} MiB)",
                formats::MAX_FILE_BYTES / 1024 / 1024
            ),
        );
    }
    let bytes = match formats::read_file(path) {
        Ok(bytes) => bytes,
        Err(e) => return skip(SkipReason::Unreadable, format!("unreadable: {e}")),
    };
    let hash = hex(&Sha256::digest(&bytes));
    if let Some(entry) = before
        && entry.hash == hash
    {
        return Outcome::Same(FileEntry {
            size,
            mtime_ns,
            ..entry.clone()
        });
    }
    let doc = match formats::read(path, file.format, bytes) {
        Ok(doc) => doc,
        Err(Unreadable::Binary) => return skip(SkipReason::Binary, "binary".into()),
        Err(Unreadable::Empty) => return skip(SkipReason::Empty, "no text in it".into()),
        Err(Unreadable::Failed(why)) => {
            return skip(SkipReason::Unreadable, format!("unreadable: {why}"));
        }
    };
    let cut = passages::split(&doc.text);
    // One batch per file: its old passages' deletion and its new passages go to the
    // indexing threads in one message (one per passage woke a thread per passage).
    let f = writing.fields;
    let path_text = path.to_string_lossy();
    let mut batch = Vec::with_capacity(cut.len() + 1);
    if before.is_some() {
        batch.push(UserOperation::Delete(path_term(f, path)));
    }
    for passage in &cut {
        let mut d = TantivyDocument::default();
        d.add_text(f.path, &path_text);
        d.add_text(f.title, &doc.title);
        d.add_text(f.body, &passage.text);
        if let (true, Some(text)) = (doc.extracted, f.text) {
            d.add_text(text, &passage.text);
        }
        d.add_u64(f.line_start, passage.line_start);
        d.add_u64(f.line_end, passage.line_end);
        batch.push(UserOperation::Add(d));
    }
    if let Err(e) = writing.writer.run(batch) {
        return Outcome::Skipped(SkipReason::Unreadable, format!("not indexed: {e}"));
    }
    Outcome::Indexed(FileEntry {
        size,
        mtime_ns,
        hash,
        title: doc.title,
        passages: cut.len() as u64,
    })
}

/// Deletes every passage of `path`.
fn delete_file(writer: &tantivy::IndexWriter, fields: Fields, path: &Path) {
    writer.delete_term(path_term(fields, path));
}

/// The term that names every passage of `path`.
fn path_term(fields: Fields, path: &Path) -> Term {
    Term::from_field_text(fields.path, &path.to_string_lossy())
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
