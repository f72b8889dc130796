//! One collection on disk: `DIR/NAME/index/` (tantivy's files), `DIR/NAME/manifest.json`
//! (the folders indexed and every file read: size, mtime, content hash, passages) and
//! `DIR/NAME/write.lock` (held by the one writer).
//!
//! Folders are 0700 and files 0600: a person's notes are as private as their
//! sessions. One writer at a time holds the lock (an advisory `flock`, released when
//! the process ends, however it ends); readers take no lock: tantivy publishes a
//! commit atomically and the manifest is written whole by rename, so a reader sees
//! the last commit or the one before, never half of one.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::schema::{
    Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{Index, IndexReader, ReloadPolicy};

use super::{IndexError, IndexHome, check_name};

/// The manifest's format version; another one is rebuilt.
const MANIFEST_VERSION: u32 = 1;
/// Largest manifest read (a million files' worth).
const MAX_MANIFEST_BYTES: u64 = 512 * 1024 * 1024;
/// Memory tantivy's writer may use before it flushes a segment, in all.
const WRITER_BYTES: usize = 128 * 1024 * 1024;

/// Makes `index` know the analyzers its schema may name (tantivy knows its own).
fn with_analyzers(index: Index) -> Index {
    index
        .tokenizers()
        .register(super::analyzer::NAME, super::analyzer::english());
    index
}

/// The index's fields.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// The file's absolute path (one token: a file's passages are deleted by it).
    pub path: Field,
    /// The file's title (searched, stored).
    pub title: Field,
    /// The passage's text (searched with English stemming). Not stored: a hit's
    /// lines are read from its file (see [`Fields::text`]); a collection made before
    /// 2026-11-29 stores it too.
    pub body: Field,
    /// The passage's text when it was extracted (HTML, PDF), stored for snippets;
    /// a Markdown, text or reStructuredText passage is the file's own lines, and the
    /// file is its store. `None` in a collection made before 2026-11-29.
    pub text: Option<Field>,
    /// First line of the passage.
    pub line_start: Field,
    /// Last line of the passage.
    pub line_end: Field,
}

/// The schema every collection uses.
fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let stemmed = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(super::analyzer::NAME)
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    let fields = Fields {
        path: builder.add_text_field("path", STRING | STORED),
        title: builder.add_text_field("title", stemmed.clone().set_stored()),
        // Storing every passage's text cost a sixth of the indexing time (compressing
        // it) and two thirds of the disk; the files themselves hold it.
        body: builder.add_text_field("body", stemmed),
        text: Some(builder.add_text_field("text", STORED)),
        line_start: builder.add_u64_field("line_start", STORED | INDEXED),
        line_end: builder.add_u64_field("line_end", STORED),
    };
    (builder.build(), fields)
}

/// What the manifest remembers of one file read.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct FileEntry {
    /// Size in bytes when read.
    pub size: u64,
    /// Modification time when read, in nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// SHA-256 of the bytes, hex.
    pub hash: String,
    /// The title indexed.
    pub title: String,
    /// Passages indexed.
    pub passages: u64,
}

/// The collection's manifest: its folders and the files read.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub(crate) struct Manifest {
    /// Format version ([`MANIFEST_VERSION`]).
    pub version: u32,
    /// The folders and files given to `add`, absolute.
    pub roots: Vec<PathBuf>,
    /// Every file indexed, by absolute path.
    pub files: BTreeMap<PathBuf, FileEntry>,
    /// When it was last written, seconds since the epoch.
    pub updated: u64,
}

/// One collection's folder and files.
#[derive(Debug, Clone)]
pub(crate) struct Collection {
    /// Its name.
    pub name: String,
    /// `DIR/NAME`.
    pub dir: PathBuf,
}

impl Collection {
    /// The collection `name` under `home` (not opened).
    pub fn at(home: &IndexHome, name: &str) -> Result<Self, IndexError> {
        check_name(name)?;
        Ok(Collection {
            name: name.to_string(),
            dir: home.collection(name),
        })
    }

    fn index_dir(&self) -> PathBuf {
        self.dir.join("index")
    }

    fn manifest_path(&self) -> PathBuf {
        self.dir.join("manifest.json")
    }

    /// Whether it was ever written.
    pub fn exists(&self) -> bool {
        self.manifest_path().exists() || self.index_dir().exists()
    }

    fn corrupt(&self, reason: impl std::fmt::Display) -> IndexError {
        IndexError::Corrupt {
            collection: self.name.clone(),
            reason: reason.to_string(),
        }
    }

    fn write_error(&self, reason: impl std::fmt::Display) -> IndexError {
        IndexError::Write {
            dir: self.dir.clone(),
            reason: reason.to_string(),
        }
    }

    /// Reads the manifest: [`IndexError::NoCollection`] when there is none.
    pub fn manifest(&self) -> Result<Manifest, IndexError> {
        let bytes = match crate::files::read_small(&self.manifest_path(), MAX_MANIFEST_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) if self.index_dir().exists() => {
                return Err(self.corrupt("its manifest.json is missing"));
            }
            Ok(None) => return Err(IndexError::NoCollection(self.name.clone())),
            Err(e) => return Err(self.corrupt(e)),
        };
        let manifest: Manifest = serde_json::from_slice(&bytes)
            .map_err(|e| self.corrupt(format!("its manifest.json is damaged ({e})")))?;
        if manifest.version != MANIFEST_VERSION {
            return Err(self.corrupt(format!(
                "its manifest.json is of version {}, not {MANIFEST_VERSION}",
                manifest.version
            )));
        }
        Ok(manifest)
    }

    /// Writes the manifest whole (by rename), 0600.
    pub fn save_manifest(&self, manifest: &mut Manifest) -> Result<(), IndexError> {
        manifest.version = MANIFEST_VERSION;
        manifest.updated = crate::files::unix_secs();
        let bytes = serde_json::to_vec(manifest).map_err(|e| self.write_error(e))?;
        crate::files::write_atomically(&self.manifest_path(), &bytes)
            .map_err(|e| self.write_error(e))
    }

    /// Opens the index for reading: a reader of the last commit.
    pub fn reader(&self) -> Result<(Index, IndexReader, Fields), IndexError> {
        if !self.index_dir().exists() {
            return Err(if self.manifest_path().exists() {
                self.corrupt("its index folder is missing")
            } else {
                IndexError::NoCollection(self.name.clone())
            });
        }
        let (index, fields) = self.open_index()?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|e: tantivy::TantivyError| self.corrupt(e))?;
        Ok((index, reader, fields))
    }

    /// The fields of an opened index, checked against the schema this version writes.
    fn fields_of(&self, index: &Index) -> Result<Fields, IndexError> {
        let schema = index.schema();
        let field = |name: &str| {
            schema
                .get_field(name)
                .map_err(|_| self.corrupt(format!("it has no field {name:?}")))
        };
        Ok(Fields {
            path: field("path")?,
            title: field("title")?,
            body: field("body")?,
            text: schema.get_field("text").ok(),
            line_start: field("line_start")?,
            line_end: field("line_end")?,
        })
    }

    /// Takes the writer's lock (failing at once when another process holds it), then
    /// opens the index and its manifest for writing. A collection whose files cannot
    /// be read is emptied and made anew, and `rebuilt` says why, so `add` rebuilds it.
    pub fn writer(&self) -> Result<Writing, IndexError> {
        crate::files::create_private_dir(&self.dir).map_err(|e| self.write_error(e))?;
        let lock = self.lock()?;
        let opened = if self.exists() {
            self.manifest()
                .and_then(|manifest| self.open_index().map(|(index, f)| (index, f, manifest)))
                .map(|opened| (opened, None))
        } else {
            Err(IndexError::NoCollection(self.name.clone()))
        };
        let ((index, fields, manifest), rebuilt) = match opened {
            Ok(opened) => opened,
            Err(error) => {
                let rebuilt = match error {
                    IndexError::NoCollection(_) => None,
                    IndexError::Corrupt { reason, .. } => Some(reason),
                    other => return Err(other),
                };
                let old_roots = self.manifest().map(|m| m.roots).unwrap_or_default();
                let _ = fs::remove_dir_all(self.index_dir());
                let _ = fs::remove_file(self.manifest_path());
                let (index, fields) = self.create_index()?;
                let manifest = Manifest {
                    roots: old_roots,
                    ..Manifest::default()
                };
                ((index, fields, manifest), rebuilt)
            }
        };
        let threads = num_cpus::get().clamp(1, 8);
        let writer = index
            .writer_with_num_threads(threads, WRITER_BYTES.max(threads * 16 * 1024 * 1024))
            .map_err(|e| match e {
                tantivy::TantivyError::LockFailure(..) => IndexError::Busy(self.name.clone()),
                other => self.corrupt(other),
            })?;
        Ok(Writing {
            collection: self.clone(),
            writer,
            fields,
            manifest,
            rebuilt,
            _lock: lock,
        })
    }

    fn open_index(&self) -> Result<(Index, Fields), IndexError> {
        let index = Index::open_in_dir(self.index_dir()).map_err(|e| self.corrupt(e))?;
        let index = with_analyzers(index);
        let fields = self.fields_of(&index)?;
        Ok((index, fields))
    }

    fn create_index(&self) -> Result<(Index, Fields), IndexError> {
        crate::files::create_private_dir(&self.index_dir()).map_err(|e| self.write_error(e))?;
        let (schema, fields) = schema();
        let index =
            Index::create_in_dir(self.index_dir(), schema).map_err(|e| self.write_error(e))?;
        Ok((with_analyzers(index), fields))
    }

    /// The writer's lock file, locked.
    fn lock(&self) -> Result<fs::File, IndexError> {
        let path = self.dir.join("write.lock");
        let file = crate::files::private(
            fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true),
        )
        .open(&path)
        .map_err(|e| self.write_error(e))?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            // SAFETY: flock on a descriptor this function owns; no memory is shared.
            let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if locked != 0 {
                return Err(IndexError::Busy(self.name.clone()));
            }
        }
        Ok(file)
    }

    /// Bytes the collection's files take on disk.
    pub fn disk_bytes(&self) -> u64 {
        fn walk(dir: &Path) -> u64 {
            let Ok(entries) = fs::read_dir(dir) else {
                return 0;
            };
            entries
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.dir)
    }

    /// Makes every file of the collection 0600 and every folder 0700 (tantivy
    /// creates its files with the process's umask).
    pub fn make_private(&self) {
        #[cfg(unix)]
        fn walk(dir: &Path) {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
            let Ok(entries) = fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                match entry.file_type() {
                    Ok(t) if t.is_dir() => walk(&entry.path()),
                    Ok(t) if t.is_file() => {
                        let _ =
                            fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o600));
                    }
                    _ => {}
                }
            }
        }
        #[cfg(unix)]
        walk(&self.dir);
    }
}

/// A collection open for writing, its lock held until dropped.
pub(crate) struct Writing {
    /// The collection.
    pub collection: Collection,
    /// tantivy's writer.
    pub writer: tantivy::IndexWriter,
    /// The fields.
    pub fields: Fields,
    /// The manifest as read (or empty for a new or rebuilt collection).
    pub manifest: Manifest,
    /// Why the collection was made anew, when its files could not be read.
    pub rebuilt: Option<String>,
    _lock: fs::File,
}

/// One collection as `ground index list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct CollectionInfo {
    /// Its name.
    pub name: String,
    /// The folders and files given to `add`.
    pub folders: Vec<PathBuf>,
    /// Files indexed.
    pub files: u64,
    /// Passages indexed.
    pub passages: u64,
    /// Bytes on disk.
    pub size: u64,
    /// Last update, seconds since the epoch.
    pub updated: u64,
    /// Last update, RFC 3339 in UTC.
    pub updated_at: String,
    /// Why it cannot be read, when it cannot (its hint: `ground index add` rebuilds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether `home` holds a collection named `name` (a valid name, ever written).
pub fn exists(home: &IndexHome, name: &str) -> bool {
    Collection::at(home, name).is_ok_and(|c| c.exists())
}

/// Every collection under `home`, by name; none when the folder does not exist.
pub fn list(home: &IndexHome) -> Vec<CollectionInfo> {
    let Ok(entries) = fs::read_dir(&home.dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| check_name(n).is_ok())
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let collection = Collection::at(home, &name).ok()?;
            let size = collection.disk_bytes();
            Some(match collection.manifest() {
                Ok(m) => CollectionInfo {
                    name,
                    folders: m.roots,
                    files: m.files.len() as u64,
                    passages: m.files.values().map(|f| f.passages).sum(),
                    size,
                    updated: m.updated,
                    updated_at: crate::files::rfc3339(m.updated * 1000),
                    error: None,
                },
                Err(IndexError::NoCollection(_)) => return None,
                Err(e) => CollectionInfo {
                    name,
                    folders: Vec::new(),
                    files: 0,
                    passages: 0,
                    size,
                    updated: 0,
                    updated_at: String::new(),
                    error: Some(e.to_string()),
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::doc;

    /// A collection as ground wrote it before 2026-11-29: tantivy's `en_stem`, and
    /// every passage's text stored as `body` (no `text` field).
    fn old_collection(home: &IndexHome, file: &Path) -> Collection {
        let collection = Collection::at(home, "old").unwrap();
        fs::create_dir_all(collection.index_dir()).unwrap();
        let mut builder = Schema::builder();
        let stemmed = TextOptions::default().set_stored().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer("en_stem")
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        );
        let path = builder.add_text_field("path", STRING | STORED);
        let title = builder.add_text_field("title", stemmed.clone());
        let body = builder.add_text_field("body", stemmed);
        let line_start = builder.add_u64_field("line_start", STORED | INDEXED);
        let line_end = builder.add_u64_field("line_end", STORED);
        let index = Index::create_in_dir(collection.index_dir(), builder.build()).unwrap();
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        writer
            .add_document(doc!(
                path => file.to_string_lossy().as_ref(),
                title => "Harbour notes",
                body => "The harbour pilots board every ship at the breakwater.",
                line_start => 3u64,
                line_end => 3u64,
            ))
            .unwrap();
        writer.commit().unwrap();
        let mut manifest = Manifest {
            roots: vec![file.parent().unwrap().to_path_buf()],
            ..Manifest::default()
        };
        collection.save_manifest(&mut manifest).unwrap();
        collection
    }

    #[test]
    fn a_collection_made_before_keeps_its_stored_passages() {
        let dir = tempfile::tempdir().unwrap();
        let home = IndexHome {
            dir: dir.path().join("index"),
        };
        // The file is gone: the hit's text can only come from the index.
        let file = dir.path().join("notes/harbour.md");
        let collection = old_collection(&home, &file);
        let (_, _, fields) = collection.reader().unwrap();
        assert!(fields.text.is_none());
        let hits = crate::docs::search(&home, &["old".to_string()], "pilot boarding", 5).unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(
            hits[0].text,
            "The harbour pilots board every ship at the breakwater."
        );
        assert!(hits[0].snippet.contains("pilots"), "{hits:?}");
        assert_eq!(hits[0].unreadable, None);
        assert_eq!((hits[0].line_start, hits[0].line_end), (3, 3));
    }
}
