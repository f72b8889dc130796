//! One entry file: read whole and checked (size, format, key, age), or written to a
//! temp file and renamed over the old one, so that a reader never sees half of one.
//!
//! Kept apart from the handle so that every rule about what is on disk (the entry
//! format, what counts as corrupt, when an entry is fresh) sits beside its tests.

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Cache;
use super::keys::{Kind, file_name, temp_name};
use crate::settings::CacheMode;

/// Version of the entry format; entries of another version are dropped.
pub const FORMAT: u32 = 1;

/// Largest entry stored (and read): bigger pages are simply not cached.
pub const MAX_ENTRY_BYTES: u64 = 4 * 1024 * 1024;

/// An entry whose `stored_at` lies further in the future than this is not trusted.
pub(super) const CLOCK_SKEW_SECS: u64 = 300;

/// A page that was fetched and read successfully (only those are cached).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedPage {
    /// The address after redirects.
    pub final_url: String,
    /// HTTP status of the final response.
    pub http_status: u16,
    /// `Content-Type` header.
    pub content_type: Option<String>,
    /// The page's title.
    pub title: String,
    /// The extracted main text.
    pub text: String,
    /// Characters of decoded page body.
    pub chars_fetched: usize,
    /// Whether the body was cut at the size limit.
    pub body_truncated: bool,
    /// Whether the page was fetched with private addresses allowed, so its address
    /// was not checked. A run without `--allow-private-addresses` never reads such an
    /// entry (entries written before this field existed count as unchecked).
    #[serde(default = "unchecked")]
    pub private_allowed: bool,
}

/// The policy of a page entry that does not say: private addresses may have been
/// allowed.
fn unchecked() -> bool {
    true
}

/// One entry on disk. `K` is `&str`/`String` and `V` a reference or owned value, so
/// writing does not clone the value.
#[derive(Serialize, Deserialize)]
pub(super) struct Entry<K, V> {
    pub(super) format: u32,
    pub(super) stored_at: u64,
    pub(super) key: K,
    pub(super) value: V,
}

/// `value` stored now under `key`, as the bytes of its entry; `None` when it cannot
/// be written or is over [`MAX_ENTRY_BYTES`] (such a value is not kept anywhere).
pub(super) fn entry_bytes<V: Serialize>(key: &str, value: &V) -> Option<Vec<u8>> {
    let entry = Entry {
        format: FORMAT,
        stored_at: crate::files::unix_secs(),
        key,
        value,
    };
    let bytes = serde_json::to_vec(&entry).ok()?;
    (bytes.len() as u64 <= MAX_ENTRY_BYTES).then_some(bytes)
}

impl Cache {
    /// The folder of `kind`, when the cache may be used at all.
    pub(super) fn folder(&self, kind: Kind) -> Option<PathBuf> {
        if !self.is_enabled() {
            return None;
        }
        Some(self.inner.dir.as_ref()?.join(kind.folder()))
    }

    /// The entry file of `key` (a normalised key).
    pub(super) fn entry_path(&self, kind: Kind, key: &str) -> Option<PathBuf> {
        Some(self.folder(kind)?.join(file_name(kind, key)))
    }

    pub(super) fn ttl(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Search => self.inner.search_ttl,
            Kind::Page => self.inner.page_ttl,
        }
    }

    /// Reads a fresh entry of `key`: `None` for anything else.
    pub(super) fn read<V: serde::de::DeserializeOwned>(&self, kind: Kind, key: &str) -> Option<V> {
        if self.inner.mode != CacheMode::Use {
            return None;
        }
        let path = self.entry_path(kind, key)?;
        let bytes = match read_bounded(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                let _ = fs::remove_file(&path); // oversized: not ours, or corrupt
                return None;
            }
            Err(_) => return None, // a miss (or unreadable: nothing we can do)
        };
        let entry: Entry<String, V> = match serde_json::from_slice(&bytes) {
            Ok(entry) => entry,
            Err(_) => {
                let _ = fs::remove_file(&path);
                return None;
            }
        };
        if entry.format != FORMAT {
            let _ = fs::remove_file(&path);
            return None;
        }
        if entry.key != key {
            return None; // a hash collision: another key's entry, which stays
        }
        let now = crate::files::unix_secs();
        if entry.stored_at > now + CLOCK_SKEW_SECS {
            return None;
        }
        let age = now.saturating_sub(entry.stored_at);
        (age < self.ttl(kind).as_secs()).then_some(entry.value)
    }

    /// Stores `value` under `key`: temp file, then rename. Any failure is ignored.
    pub(super) fn write<V: Serialize>(&self, kind: Kind, key: &str, value: &V) {
        if self.inner.mode == CacheMode::Off {
            return;
        }
        let Some(folder) = self.folder(kind) else {
            return;
        };
        let Some(bytes) = entry_bytes(key, value) else {
            return;
        };
        let name = file_name(kind, key);
        let temp = folder.join(temp_name(&name));
        let written = (|| {
            let mut file = crate::files::create_private_new(&temp)?;
            file.write_all(&bytes)?;
            drop(file);
            fs::rename(&temp, folder.join(&name))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&temp);
            return;
        }
        self.account(bytes.len() as u64);
    }
}

/// The file's bytes; `Ok(None)` when it is larger than [`MAX_ENTRY_BYTES`].
fn read_bounded(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_ENTRY_BYTES).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::fixtures::*;
    use crate::hits::normalise_url;

    #[test]
    fn expired_entries_miss() {
        let dir = tempfile::tempdir().unwrap();
        let mut zero = settings(dir.path(), CacheMode::Use);
        zero.search_ttl = Duration::ZERO;
        let cache = Cache::open(&zero);
        cache.put_search(&key("q"), &outcome("q"));
        assert_eq!(cache.get_search(&key("q")), None, "a TTL of 0 never reads");

        // An entry written two hours ago is stale for a one-hour TTL.
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        let path = cache
            .entry_path(Kind::Search, &key("q").canonical())
            .unwrap();
        let entry = Entry {
            format: FORMAT,
            stored_at: crate::files::unix_secs() - 7200,
            key: key("q").canonical(),
            value: outcome("q"),
        };
        fs::write(&path, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(cache.get_search(&key("q")), None);
        assert!(
            path.exists(),
            "an expired entry is replaced, not deleted on read"
        );
    }

    #[test]
    fn corrupt_entries_are_deleted_and_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        cache.put_page(&["https://example.org/a"], &page("text"));
        let path = cache
            .entry_path(Kind::Page, &normalise_url("https://example.org/a"))
            .unwrap();
        for garbage in [
            &b"{\"format\":1,\"stored_at\":"[..],
            b"",
            b"\xff\xfe",
            b"[1,2]",
        ] {
            fs::write(&path, garbage).unwrap();
            assert_eq!(cache.get_page("https://example.org/a"), None);
            assert!(!path.exists(), "{garbage:?} should be deleted");
        }
        // Another format version is dropped as well.
        let entry = Entry {
            format: FORMAT + 1,
            stored_at: crate::files::unix_secs(),
            key: normalise_url("https://example.org/a"),
            value: page("text"),
        };
        fs::write(&path, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(cache.get_page("https://example.org/a"), None);
        assert!(!path.exists());
    }

    #[test]
    fn a_hash_collision_is_a_miss_not_another_keys_value() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        // Pretend "q2" hashed to the same file as "q1": its entry sits in q1's file.
        let path = cache
            .entry_path(Kind::Search, &key("q1").canonical())
            .unwrap();
        let entry = Entry {
            format: FORMAT,
            stored_at: crate::files::unix_secs(),
            key: key("q2").canonical(),
            value: outcome("q2"),
        };
        fs::write(&path, serde_json::to_vec(&entry).unwrap()).unwrap();
        assert_eq!(cache.get_search(&key("q1")), None);
        assert!(path.exists(), "the other key's entry stays");
        cache.put_search(&key("q1"), &outcome("q1"));
        assert_eq!(cache.get_search(&key("q1")), Some(outcome("q1")));
    }

    #[test]
    fn oversized_pages_are_not_stored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        let big = "x".repeat(MAX_ENTRY_BYTES as usize);
        cache.put_page(&["https://example.org/big"], &page(&big));
        assert_eq!(cache.get_page("https://example.org/big"), None);
        assert!(entry_files(dir.path(), Kind::Page).is_empty());
    }

    #[test]
    fn parallel_writers_never_produce_a_torn_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        let url = "https://example.org/contended";
        // Each writer stores a page whose text is one letter repeated: a complete
        // value is recognisable by its length and uniformity.
        let value = |letter: char, len: usize| page(&letter.to_string().repeat(len));
        cache.put_page(&[url], &value('a', 50_000));
        std::thread::scope(|scope| {
            for (t, letter) in ['a', 'b', 'c', 'd'].into_iter().enumerate() {
                let cache = cache.clone();
                scope.spawn(move || {
                    for i in 0..200 {
                        cache.put_page(&[url], &value(letter, 50_000 + 1000 * t + i));
                    }
                });
            }
            for _ in 0..4 {
                let cache = cache.clone();
                scope.spawn(move || {
                    for _ in 0..400 {
                        let got = cache.get_page(url).expect("an entry is always present");
                        let first = got.text.chars().next().unwrap();
                        assert!(got.text.chars().all(|c| c == first), "mixed text");
                        assert_eq!(got.chars_fetched, got.text.chars().count());
                    }
                });
            }
        });
        assert_eq!(
            entry_files(dir.path(), Kind::Page).len(),
            1,
            "no temp files left"
        );
    }
}
