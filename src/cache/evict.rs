//! The size cap: after a write, when the folder holds more than `max_bytes`, the
//! oldest entries go until it holds at most 90% of the cap; stale temp files of a
//! crashed run go on the way.
//!
//! Kept apart because it is the one part that lists the folders and deletes entries
//! no reader asked about, and because `stats` lists the folders the same way.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Cache;
use super::keys::{KINDS, Kind, is_entry_name, is_temp_name};

/// Temp files older than this are left-overs of a crashed run and are removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// "Not counted yet" for the running size total.
pub(super) const UNKNOWN: u64 = u64::MAX;

/// One entry file found when listing the folders.
pub(super) struct FileInfo {
    pub(super) path: PathBuf,
    pub(super) kind: Kind,
    pub(super) bytes: u64,
    pub(super) modified: SystemTime,
}

impl Cache {
    /// Adds `added` bytes to the running total and evicts when it passes the cap.
    pub(super) fn account(&self, added: u64) {
        let estimate = &self.inner.estimated_bytes;
        let before = estimate.load(Ordering::Relaxed);
        let over = before == UNKNOWN
            || estimate.fetch_add(added, Ordering::Relaxed) + added > self.inner.max_bytes;
        if over {
            let remaining = self.evict();
            estimate.store(remaining, Ordering::Relaxed);
        }
    }

    /// Lists the folders, removes stale temp files and, when over the cap, the oldest
    /// entries until at most 90% of the cap is used. Returns the bytes left.
    fn evict(&self) -> u64 {
        let mut files = self.list_entries();
        let mut total: u64 = files.iter().map(|f| f.bytes).sum();
        let max = self.inner.max_bytes;
        if total > max {
            let target = max / 10 * 9;
            files.sort_by_key(|f| f.modified);
            for file in files {
                if total <= target {
                    break;
                }
                match fs::remove_file(&file.path) {
                    Ok(()) => total -= file.bytes,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => total -= file.bytes,
                    Err(_) => {}
                }
            }
        }
        total
    }

    /// Every entry file in both folders (stale temp files are removed on the way).
    pub(super) fn list_entries(&self) -> Vec<FileInfo> {
        let Some(dir) = &self.inner.dir else {
            return Vec::new();
        };
        let now = SystemTime::now();
        let mut files = Vec::new();
        for kind in KINDS {
            let Ok(items) = fs::read_dir(dir.join(kind.folder())) else {
                continue;
            };
            for item in items.flatten() {
                let name = item.file_name();
                let name = name.to_str().unwrap_or("");
                let Ok(meta) = item.metadata() else { continue };
                if !meta.is_file() {
                    continue;
                }
                let modified = meta.modified().unwrap_or(UNIX_EPOCH);
                if is_entry_name(name) {
                    files.push(FileInfo {
                        path: item.path(),
                        kind,
                        bytes: meta.len(),
                        modified,
                    });
                } else if is_temp_name(name)
                    && now.duration_since(modified).unwrap_or_default() > STALE_TEMP
                {
                    let _ = fs::remove_file(item.path());
                }
            }
        }
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fixtures::*;
    use crate::hits::normalise_url;
    use crate::settings::CacheMode;

    #[test]
    fn eviction_removes_the_oldest_entries_first() {
        let dir = tempfile::tempdir().unwrap();
        let text = "x".repeat(10_000);
        let mut capped = settings(dir.path(), CacheMode::Use);
        capped.max_bytes = 35_000; // three entries of ~10.2 kB fit, four do not
        let cache = Cache::open(&capped);
        let url = |i: usize| format!("https://example.org/{i}");
        for i in 0..3 {
            cache.put_page(&[&url(i)], &page(&text));
            // Age the entry by (3 - i) hours so the order does not depend on timing.
            let path = cache
                .entry_path(Kind::Page, &normalise_url(&url(i)))
                .unwrap();
            let when = SystemTime::now() - Duration::from_secs(3600 * (3 - i as u64));
            fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        assert_eq!(entry_files(dir.path(), Kind::Page).len(), 3);
        cache.put_page(&[&url(3)], &page(&text));
        assert_eq!(cache.get_page(&url(0)), None, "the oldest goes");
        for i in 1..4 {
            assert_eq!(
                cache.get_page(&url(i)),
                Some(page(&text)),
                "entry {i} stays"
            );
        }
        assert!(cache.stats().bytes <= 35_000 / 10 * 9);
    }
}
