//! The on-disk cache of search results and fetched pages, so that asking again (or
//! asking a follow-up that runs the same search) does not repeat the slow part.
//!
//! The cache is an optimisation and never a reason for a run to fail: every method
//! swallows its errors, and a run behaves the same with the cache off. The design:
//!
//! - **One file per entry**, `<dir>/search/HASH.json` and `<dir>/pages/HASH.json`.
//!   `HASH` is the FNV-1a 64-bit hash (16 hex digits) of the entry's *normalised key*
//!   (see [`SearchKey`] and [`normalise_url`]), never of anything a web page says, so
//!   untrusted content cannot steer which files we touch. `clear` and eviction delete
//!   only files named like that (and our own temp files), nothing else in the folder.
//! - **An entry** is `{"format": 1, "stored_at": UNIX_SECS, "key": "...", "value": ...}`.
//!   The full key is stored and compared on read: a hash collision is a miss, never
//!   someone else's answer.
//! - **Atomic writes**: an entry is written to a temp file in the same folder, then
//!   renamed over the old one, so a reader (another thread, another `ground` run) sees
//!   the old entry or the new one, never half of one.
//! - **Corrupt entries** (unparsable, wrong format, oversized) are deleted and read as
//!   a miss.
//! - **Freshness**: an entry older than its TTL (`search_ttl` / `page_ttl`) is a miss;
//!   a TTL of 0 turns reading that kind off.
//! - **Size cap**: after a put, when the folder holds more than `max_bytes`, the oldest
//!   entries (by modification time, which is the time of the last write) are deleted
//!   until it holds at most 90% of the cap. The running total is kept in memory, so the
//!   folder is listed only on the first put of a run and when the total passes the cap.
//!   A single entry over [`MAX_ENTRY_BYTES`] is never stored.
//! - **Modes** ([`CacheMode`]): `Use` reads and writes, `Refresh` (`--refresh`) only
//!   writes, `Off` (`--no-cache`) does neither.
//!
//! File access is blocking `std::fs`; entries are small, but a caller on an async
//! runtime that cares can move calls into `spawn_blocking` (a [`Cache`] is cheap to
//! clone and shares its state between clones).
//!
//! - **Shared by replicas**: with a Redis named (`[state] redis_url`), an entry
//!   missing here is looked for there and every entry written here is written there
//!   too, same TTL and size cap (`shared`: [`Cache::find_search`],
//!   [`Cache::keep_search`], [`Cache::find_page`], [`Cache::keep_page`]); replicas
//!   missing one page at once fetch it once ([`Cache::claim_page`]).
//!
//! The parts: this module is the [`Cache`] handle (open, modes, get and put);
//! `keys` says what an entry is stored under (the normalised search key and URL, and
//! the file names hashed from them), `store` reads and writes one entry file, `evict`
//! keeps the folder under its size cap, and `stats` counts and clears it for
//! `ground cache`.

mod evict;
mod keys;
mod shared;
mod stats;
mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

pub use self::keys::{SearchKey, normalise_query};
pub use self::shared::PageTurn;
pub use self::stats::{CacheStats, ClearedStats, KindStats};
pub use self::store::{CachedPage, FORMAT, MAX_ENTRY_BYTES};

use self::evict::UNKNOWN;
use self::keys::{KINDS, Kind};
use crate::hits::{SearchOutcome, normalise_url};
use crate::settings::{CacheMode, CacheSettings, SharedState};

/// The cache of one run. Cheap to clone; clones share the running size total.
#[derive(Debug, Clone)]
pub struct Cache {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: Option<PathBuf>,
    mode: CacheMode,
    search_ttl: Duration,
    page_ttl: Duration,
    max_bytes: u64,
    /// Why the cache is not used, when it is not.
    disabled_reason: Option<String>,
    /// Bytes believed to be in the folder; [`UNKNOWN`] until the first listing.
    estimated_bytes: AtomicU64,
    /// The Redis replicas share (`[state] redis_url`): the second level
    /// (`shared.rs`); `None` without one, or with the cache off.
    shared: Option<Arc<crate::state::Redis>>,
}

impl Cache {
    /// Opens the cache described by `settings`, creating its folders. Never fails: with
    /// no folder, a folder that cannot be created or mode `Off`, the cache is disabled
    /// and [`Cache::disabled_reason`] says why.
    pub fn open(settings: &CacheSettings) -> Cache {
        Cache::new(settings, true, None)
    }

    /// [`Cache::open`] with the Redis replicas share (`shared`, [`Settings::state`]) as
    /// its second level: entries missing here are looked for there, and every entry
    /// is written there too (`None`: this folder alone, as [`Cache::open`]).
    ///
    /// [`Settings::state`]: crate::settings::Settings::state
    pub fn open_shared(settings: &CacheSettings, shared: Option<&SharedState>) -> Cache {
        Cache::new(settings, true, shared)
    }

    /// Like [`Cache::open`], but never creates the folders: for `stats` and `clear`,
    /// which work in every mode.
    pub fn inspect(settings: &CacheSettings) -> Cache {
        Cache::new(settings, false, None)
    }

    fn new(settings: &CacheSettings, create: bool, shared: Option<&SharedState>) -> Cache {
        let disabled_reason = match (&settings.dir, settings.mode) {
            (None, _) => Some(
                "no cache folder: none of GROUND_CACHE_DIR, XDG_CACHE_HOME and HOME is set"
                    .to_string(),
            ),
            (Some(_), CacheMode::Off) => {
                Some("turned off (--no-cache or [cache] enabled = false)".to_string())
            }
            (Some(_), _) if !create => None,
            (Some(dir), _) => KINDS.iter().find_map(|kind| {
                let folder = dir.join(kind.folder());
                // The cache holds what was searched for: the user's alone.
                crate::files::create_private_dir(&folder)
                    .err()
                    .map(|e| format!("cannot create {}: {e}", folder.display()))
            }),
        };
        Cache {
            inner: Arc::new(Inner {
                dir: settings.dir.clone(),
                mode: settings.mode,
                search_ttl: settings.search_ttl,
                page_ttl: settings.page_ttl,
                max_bytes: settings.max_bytes,
                disabled_reason,
                estimated_bytes: AtomicU64::new(UNKNOWN),
                shared: match settings.mode {
                    CacheMode::Off => None,
                    _ => crate::state::redis(shared),
                },
            }),
        }
    }

    /// Whether runs read or write the cache at all.
    pub fn is_enabled(&self) -> bool {
        self.inner.disabled_reason.is_none()
    }

    /// Why the cache is disabled, when it is.
    pub fn disabled_reason(&self) -> Option<&str> {
        self.inner.disabled_reason.as_deref()
    }

    /// A fresh stored outcome of this search; `None` on a miss, an expired or corrupt
    /// entry, or in modes `Refresh` and `Off`.
    pub fn get_search(&self, key: &SearchKey) -> Option<SearchOutcome> {
        self.read(Kind::Search, &key.canonical())
    }

    /// Stores a search outcome (best effort; nothing in mode `Off`).
    pub fn put_search(&self, key: &SearchKey, outcome: &SearchOutcome) {
        self.write(Kind::Search, &key.canonical(), outcome);
    }

    /// A fresh stored page for `url` (normalised, see [`normalise_url`]).
    pub fn get_page(&self, url: &str) -> Option<CachedPage> {
        self.read(Kind::Page, &normalise_url(url))
    }

    /// Stores a page under every URL given (typically the requested one and the final
    /// one after redirects), once per distinct normalised URL.
    pub fn put_page(&self, urls: &[&str], page: &CachedPage) {
        let mut keys: Vec<String> = urls.iter().map(|u| normalise_url(u)).collect();
        keys.sort();
        keys.dedup();
        for key in keys.iter().filter(|k| !k.is_empty()) {
            self.write(Kind::Page, key, page);
        }
    }
}

/// What the tests of every part share: settings, keys, outcomes and pages.
#[cfg(test)]
mod fixtures {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use super::keys::Kind;
    use super::{CachedPage, SearchKey};
    use crate::hits::{SearchHit, SearchOutcome};
    use crate::settings::{CacheMode, CacheSettings};

    pub(super) fn settings(dir: &Path, mode: CacheMode) -> CacheSettings {
        CacheSettings {
            dir: Some(dir.to_path_buf()),
            mode,
            search_ttl: Duration::from_secs(3600),
            page_ttl: Duration::from_secs(3600),
            max_bytes: 100 * 1024 * 1024,
        }
    }

    pub(super) fn key(query: &str) -> SearchKey {
        SearchKey {
            backend: "searxng http://localhost:8080/".into(),
            query: query.into(),
            language: Some("en".into()),
            engines: Some("bing,duckduckgo".into()),
            page_count: 10,
            ..SearchKey::default()
        }
    }

    pub(super) fn outcome(query: &str) -> SearchOutcome {
        SearchOutcome {
            query: query.into(),
            hits: vec![SearchHit {
                url: "https://example.org/a".into(),
                title: "A".into(),
                snippet: "about a".into(),
                engines: vec!["bing".into()],
                published: Some("2026-01-02".into()),
            }],
            unresponsive_engines: vec![("google".into(), "timeout".into())],
            warnings: Vec::new(),
            ..SearchOutcome::default()
        }
    }

    pub(super) fn page(text: &str) -> CachedPage {
        CachedPage {
            final_url: "https://example.org/final".into(),
            http_status: 200,
            content_type: Some("text/html".into()),
            title: "Final".into(),
            text: text.into(),
            chars_fetched: text.chars().count(),
            body_truncated: false,
            private_allowed: false,
        }
    }

    pub(super) fn entry_files(dir: &Path, kind: Kind) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(dir.join(kind.folder()))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::fixtures::*;
    use super::*;

    #[test]
    fn a_stored_search_is_read_back_and_others_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        assert!(cache.is_enabled());
        assert_eq!(cache.get_search(&key("tardigrades")), None);
        cache.put_search(&key("tardigrades"), &outcome("tardigrades"));
        assert_eq!(
            cache.get_search(&key("tardigrades")),
            Some(outcome("tardigrades"))
        );
        assert_eq!(cache.get_search(&key("sqlite vacuum")), None);
        let mut other_language = key("tardigrades");
        other_language.language = Some("de".into());
        assert_eq!(cache.get_search(&other_language), None);
    }

    #[test]
    fn refresh_writes_without_reading_and_off_does_neither() {
        let dir = tempfile::tempdir().unwrap();
        let use_ = Cache::open(&settings(dir.path(), CacheMode::Use));
        use_.put_search(&key("q"), &outcome("old"));

        let refresh = Cache::open(&settings(dir.path(), CacheMode::Refresh));
        assert!(refresh.is_enabled());
        assert_eq!(refresh.get_search(&key("q")), None);
        refresh.put_search(&key("q"), &outcome("new"));
        assert_eq!(use_.get_search(&key("q")), Some(outcome("new")));

        let off = Cache::open(&settings(dir.path(), CacheMode::Off));
        assert!(!off.is_enabled());
        assert!(off.disabled_reason().unwrap().contains("--no-cache"));
        assert_eq!(off.get_search(&key("q")), None);
        off.put_search(&key("q"), &outcome("off"));
        off.put_page(&["https://example.org/"], &page("off"));
        assert_eq!(use_.get_search(&key("q")), Some(outcome("new")));
        assert!(entry_files(dir.path(), Kind::Page).is_empty());
    }

    #[test]
    fn no_folder_or_an_uncreatable_one_disables_the_cache() {
        let mut none = settings(Path::new("/"), CacheMode::Use);
        none.dir = None;
        let cache = Cache::open(&none);
        assert!(!cache.is_enabled());
        assert!(cache.disabled_reason().unwrap().contains("no cache folder"));
        cache.put_search(&key("q"), &outcome("q"));
        assert_eq!(cache.get_search(&key("q")), None);

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "not a folder").unwrap();
        let cache = Cache::open(&settings(&file, CacheMode::Use));
        assert!(!cache.is_enabled());
        assert!(
            cache
                .disabled_reason()
                .unwrap()
                .starts_with("cannot create")
        );
        cache.put_page(&["https://example.org/"], &page("x"));
        assert_eq!(cache.get_page("https://example.org/"), None);
    }
}
