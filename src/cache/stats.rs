//! What is in the cache and how to empty it, for `ground cache stats` and `ground
//! cache clear`: both work in every mode and never create the folder.
//!
//! Kept apart from the run's reads and writes: nothing here is on the path of a
//! question, and `clear` is the one place that reports file errors instead of
//! swallowing them.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use serde::Serialize;

use super::Cache;
use super::evict::UNKNOWN;
use super::keys::{KINDS, Kind, is_entry_name, is_temp_name};
use crate::settings::CacheMode;

/// What is in the cache, for `ground cache stats`.
#[derive(Debug, Clone, Serialize)]
pub struct CacheStats {
    /// The folder, when one is configured.
    pub dir: Option<PathBuf>,
    /// Whether runs use the cache.
    pub enabled: bool,
    /// Use, refresh or off.
    pub mode: CacheMode,
    /// Why runs do not use it, when they do not.
    pub disabled_reason: Option<String>,
    /// Search entries.
    pub searches: KindStats,
    /// Page entries.
    pub pages: KindStats,
    /// Bytes of all entries.
    pub bytes: u64,
    /// The size cap.
    pub max_bytes: u64,
    /// Age of the oldest entry in seconds.
    pub oldest_age_secs: Option<u64>,
    /// Age of the newest entry in seconds.
    pub newest_age_secs: Option<u64>,
}

/// Counts for one kind of entry.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KindStats {
    /// Entries on disk.
    pub entries: usize,
    /// Of those, older than the TTL (they will be replaced or evicted).
    pub expired: usize,
    /// Their bytes.
    pub bytes: u64,
    /// How long an entry stays fresh, in seconds.
    pub ttl_secs: u64,
}

/// What `clear` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ClearedStats {
    /// Entries removed.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
}

impl Cache {
    /// Counts entries, bytes and ages. Never creates the folder.
    pub fn stats(&self) -> CacheStats {
        let inner = &self.inner;
        let mut stats = CacheStats {
            dir: inner.dir.clone(),
            enabled: self.is_enabled(),
            mode: inner.mode,
            disabled_reason: inner.disabled_reason.clone(),
            searches: KindStats {
                ttl_secs: inner.search_ttl.as_secs(),
                ..KindStats::default()
            },
            pages: KindStats {
                ttl_secs: inner.page_ttl.as_secs(),
                ..KindStats::default()
            },
            bytes: 0,
            max_bytes: inner.max_bytes,
            oldest_age_secs: None,
            newest_age_secs: None,
        };
        let now = SystemTime::now();
        for file in self.list_entries() {
            let age = now
                .duration_since(file.modified)
                .unwrap_or_default()
                .as_secs();
            let kind = match file.kind {
                Kind::Search => &mut stats.searches,
                Kind::Page => &mut stats.pages,
            };
            kind.entries += 1;
            kind.bytes += file.bytes;
            if age >= kind.ttl_secs {
                kind.expired += 1;
            }
            stats.bytes += file.bytes;
            stats.oldest_age_secs = Some(stats.oldest_age_secs.map_or(age, |a| a.max(age)));
            stats.newest_age_secs = Some(stats.newest_age_secs.map_or(age, |a| a.min(age)));
        }
        stats
    }

    /// Deletes every entry (and left-over temp file); the folders themselves and any
    /// other file in them stay. Works in every mode.
    pub fn clear(&self) -> io::Result<ClearedStats> {
        let Some(dir) = &self.inner.dir else {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                "no cache folder is configured",
            ));
        };
        let mut cleared = ClearedStats::default();
        for kind in KINDS {
            let folder = dir.join(kind.folder());
            let items = match fs::read_dir(&folder) {
                Ok(items) => items,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(with_path(e, &folder)),
            };
            for item in items {
                let item = item.map_err(|e| with_path(e, &folder))?;
                let name = item.file_name();
                let name = name.to_str().unwrap_or("");
                let entry = is_entry_name(name);
                if !entry && !is_temp_name(name) {
                    continue;
                }
                let path = item.path();
                let bytes = item.metadata().map(|m| m.len()).unwrap_or(0);
                match fs::remove_file(&path) {
                    Ok(()) => {
                        if entry {
                            cleared.entries += 1;
                            cleared.bytes += bytes;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(with_path(e, &path)),
                }
            }
        }
        self.inner.estimated_bytes.store(UNKNOWN, Ordering::Relaxed);
        Ok(cleared)
    }
}

fn with_path(error: io::Error, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fixtures::*;

    #[test]
    fn stats_count_and_clear_removes_only_entries() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        cache.put_search(&key("a"), &outcome("a"));
        cache.put_search(&key("b"), &outcome("b"));
        cache.put_page(
            &["https://example.org/a", "https://example.org/b"],
            &page("t"),
        );
        fs::write(dir.path().join("search").join("notes.txt"), "mine").unwrap();

        let stats = cache.stats();
        assert_eq!((stats.searches.entries, stats.pages.entries), (2, 2));
        assert_eq!(stats.searches.expired, 0);
        assert_eq!(stats.bytes, stats.searches.bytes + stats.pages.bytes);
        assert!(stats.newest_age_secs.unwrap() <= stats.oldest_age_secs.unwrap());
        assert_eq!(stats.dir.as_deref(), Some(dir.path()));

        let cleared = cache.clear().unwrap();
        assert_eq!(cleared.entries, 4);
        assert_eq!(cleared.bytes, stats.bytes);
        assert_eq!(
            cache.stats().searches.entries + cache.stats().pages.entries,
            0
        );
        assert!(dir.path().join("search").join("notes.txt").exists());
        assert_eq!(cache.get_search(&key("a")), None);
    }

    #[test]
    fn stats_never_create_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let cache = Cache::open(&settings(&missing, CacheMode::Off));
        let stats = Cache::inspect(&settings(&missing, CacheMode::Use)).stats();
        assert!(stats.enabled);
        assert_eq!(stats.bytes, 0);
        assert!(!missing.exists());
        let stats = cache.stats();
        assert_eq!(stats.bytes, 0);
        assert!(!stats.enabled);
        assert!(!missing.exists());
        assert_eq!(cache.clear().unwrap(), ClearedStats::default());
    }
}
