//! The on-disk cache of search results and fetched pages, so that asking again (or
//! asking a follow-up that runs the same search) does not repeat the slow part.
//!
//! The cache is an optimisation and never a reason for a run to fail: every method
//! swallows its errors, and a run behaves the same with the cache off. The design:
//!
//! - **One file per entry**, `<dir>/search/HASH.json` and `<dir>/pages/HASH.json`.
//!   `HASH` is the FNV-1a 64-bit hash (16 hex digits) of the entry's *normalised key*
//!   (see [`SearchKey`] and [`normalize_url`]), never of anything a web page says, so
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

use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::hits::SearchOutcome;
use crate::settings::{CacheMode, CacheSettings, SearchSettings};

/// Version of the entry format; entries of another version are dropped.
pub const FORMAT: u32 = 1;

/// Largest entry stored (and read): bigger pages are simply not cached.
pub const MAX_ENTRY_BYTES: u64 = 4 * 1024 * 1024;

/// Temp files older than this are left-overs of a crashed run and are removed.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// An entry whose `stored_at` lies further in the future than this is not trusted.
const CLOCK_SKEW_SECS: u64 = 300;

/// "Not counted yet" for the running size total.
const UNKNOWN: u64 = u64::MAX;

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
}

/// The two kinds of entries, each in its own folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Search,
    Page,
}

const KINDS: [Kind; 2] = [Kind::Search, Kind::Page];

impl Kind {
    fn folder(self) -> &'static str {
        match self {
            Kind::Search => "search",
            Kind::Page => "pages",
        }
    }
}

/// What identifies one search: the service and every parameter that changes its
/// results. Two keys that differ only in case or spacing of the query, or in the
/// order of comma-separated lists, are the same entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SearchKey {
    /// The service, and for a self-hosted one its address (see [`SearchKey::new`]).
    pub backend: String,
    /// The query as sent.
    pub query: String,
    /// `language`.
    pub language: Option<String>,
    /// Region hint.
    pub region: Option<String>,
    /// `time_range`.
    pub time_range: Option<String>,
    /// `categories`, comma-separated.
    pub categories: Option<String>,
    /// `engines`, comma-separated.
    pub engines: Option<String>,
    /// `safesearch`.
    pub safesearch: Option<u8>,
    /// How many results (or result pages) were asked for.
    pub page_count: usize,
}

impl SearchKey {
    /// The key of `query` run with `settings`. The backend part is the service's name
    /// and URL (without any user name or password in it, which would otherwise be
    /// written to disk), so two SearXNG instances never share entries. `region` is
    /// left empty for the caller to fill.
    pub fn new(settings: &SearchSettings, query: &str, page_count: usize) -> SearchKey {
        let mut url = settings.url.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        SearchKey {
            backend: format!("{} {url}", settings.backend.to_string().to_lowercase()),
            query: query.to_string(),
            language: settings.language.clone(),
            region: None,
            time_range: settings.time_range.map(|r| r.as_str().to_string()),
            categories: settings.categories.clone(),
            engines: settings.engines.clone(),
            safesearch: settings.safesearch,
            page_count,
        }
    }

    /// The normalised key as one string: what is hashed for the file name and stored
    /// in the entry to detect collisions.
    fn canonical(&self) -> String {
        fn word(value: &Option<String>) -> Option<String> {
            value
                .as_deref()
                .map(|v| v.trim().to_lowercase())
                .filter(|v| !v.is_empty())
        }
        fn list(value: &Option<String>) -> Option<String> {
            let mut items: Vec<String> = value
                .as_deref()?
                .split(',')
                .map(|v| v.trim().to_lowercase())
                .filter(|v| !v.is_empty())
                .collect();
            items.sort();
            items.dedup();
            (!items.is_empty()).then(|| items.join(","))
        }
        let normal = SearchKey {
            backend: self.backend.trim().to_string(),
            query: normalize_query(&self.query),
            language: word(&self.language),
            region: word(&self.region),
            time_range: word(&self.time_range),
            categories: list(&self.categories),
            engines: list(&self.engines),
            safesearch: self.safesearch,
            page_count: self.page_count,
        };
        serde_json::to_string(&normal).unwrap_or_default()
    }
}

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

/// One entry on disk. `K` is `&str`/`String` and `V` a reference or owned value, so
/// writing does not clone the value.
#[derive(Serialize, Deserialize)]
struct Entry<K, V> {
    format: u32,
    stored_at: u64,
    key: K,
    value: V,
}

/// One entry file found when listing the folders.
struct FileInfo {
    path: PathBuf,
    kind: Kind,
    bytes: u64,
    modified: SystemTime,
}

impl Cache {
    /// Opens the cache described by `settings`, creating its folders. Never fails: with
    /// no folder, a folder that cannot be created or mode `Off`, the cache is disabled
    /// and [`Cache::disabled_reason`] says why.
    pub fn open(settings: &CacheSettings) -> Cache {
        Cache::new(settings, true)
    }

    /// Like [`Cache::open`], but never creates the folders: for `stats` and `clear`,
    /// which work in every mode.
    pub fn inspect(settings: &CacheSettings) -> Cache {
        Cache::new(settings, false)
    }

    fn new(settings: &CacheSettings, create: bool) -> Cache {
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
                fs::create_dir_all(&folder)
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

    /// A fresh stored page for `url` (normalised, see [`normalize_url`]).
    pub fn get_page(&self, url: &str) -> Option<CachedPage> {
        self.read(Kind::Page, &normalize_url(url))
    }

    /// Stores a page under every URL given (typically the requested one and the final
    /// one after redirects), once per distinct normalised URL.
    pub fn put_page(&self, urls: &[&str], page: &CachedPage) {
        let mut keys: Vec<String> = urls.iter().map(|u| normalize_url(u)).collect();
        keys.sort();
        keys.dedup();
        for key in keys.iter().filter(|k| !k.is_empty()) {
            self.write(Kind::Page, key, page);
        }
    }

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

    /// The folder of `kind`, when the cache may be used at all.
    fn folder(&self, kind: Kind) -> Option<PathBuf> {
        if !self.is_enabled() {
            return None;
        }
        Some(self.inner.dir.as_ref()?.join(kind.folder()))
    }

    /// The entry file of `key` (a normalised key).
    fn entry_path(&self, kind: Kind, key: &str) -> Option<PathBuf> {
        Some(self.folder(kind)?.join(file_name(kind, key)))
    }

    fn ttl(&self, kind: Kind) -> Duration {
        match kind {
            Kind::Search => self.inner.search_ttl,
            Kind::Page => self.inner.page_ttl,
        }
    }

    /// Reads a fresh entry of `key`: `None` for anything else.
    fn read<V: serde::de::DeserializeOwned>(&self, kind: Kind, key: &str) -> Option<V> {
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
    fn write<V: Serialize>(&self, kind: Kind, key: &str, value: &V) {
        if self.inner.mode == CacheMode::Off {
            return;
        }
        let Some(folder) = self.folder(kind) else {
            return;
        };
        let entry = Entry {
            format: FORMAT,
            stored_at: crate::files::unix_secs(),
            key,
            value,
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            return;
        }
        let name = file_name(kind, key);
        let temp = folder.join(temp_name(&name));
        let written = (|| {
            let mut file = fs::File::create_new(&temp)?;
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

    /// Adds `added` bytes to the running total and evicts when it passes the cap.
    fn account(&self, added: u64) {
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
    fn list_entries(&self) -> Vec<FileInfo> {
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

/// A query as a cache key: trimmed, inner whitespace collapsed to one space,
/// lower-cased.
pub fn normalize_query(query: &str) -> String {
    query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The URL form pages are stored under; see [`crate::hits::normalize_url`].
pub use crate::hits::normalize_url;

/// FNV-1a, 64 bits: a stable, dependency-free hash for file names (collisions are
/// caught by the key stored in the entry).
fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// `HASH.json` for a normalised key.
fn file_name(kind: Kind, key: &str) -> String {
    let hashed = format!("{}\n{key}", kind.folder());
    format!("{:016x}.json", fnv1a64(hashed.as_bytes()))
}

/// `.HASH.json.PID.N.tmp`: unique per process and write, in the entry's folder.
fn temp_name(entry_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{entry_name}.{}.{n}.tmp", std::process::id())
}

fn is_entry_name(name: &str) -> bool {
    name.len() == 21 && name.ends_with(".json") && name[..16].bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.get(1..22).is_some_and(is_entry_name)
}

/// The file's bytes; `Ok(None)` when it is larger than [`MAX_ENTRY_BYTES`].
fn read_bounded(path: &Path) -> io::Result<Option<Vec<u8>>> {
    let mut bytes = Vec::new();
    fs::File::open(path)?
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_ENTRY_BYTES).then_some(bytes))
}

fn with_path(error: io::Error, path: &Path) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hits::SearchHit;

    fn settings(dir: &Path, mode: CacheMode) -> CacheSettings {
        CacheSettings {
            dir: Some(dir.to_path_buf()),
            mode,
            search_ttl: Duration::from_secs(3600),
            page_ttl: Duration::from_secs(3600),
            max_bytes: 100 * 1024 * 1024,
        }
    }

    fn key(query: &str) -> SearchKey {
        SearchKey {
            backend: "searxng http://localhost:8080/".into(),
            query: query.into(),
            language: Some("en".into()),
            engines: Some("bing,duckduckgo".into()),
            page_count: 10,
            ..SearchKey::default()
        }
    }

    fn outcome(query: &str) -> SearchOutcome {
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
        }
    }

    fn page(text: &str) -> CachedPage {
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

    fn entry_files(dir: &Path, kind: Kind) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = fs::read_dir(dir.join(kind.folder()))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        files
    }

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
    fn keys_from_settings_name_the_instance_but_not_its_credentials() {
        let settings = SearchSettings {
            backend: crate::settings::SearchBackend::Searxng,
            api_key: None,
            url: url::Url::parse("https://me:secret@searx.example.org/").unwrap(),
            fallback_urls: Vec::new(),
            language: Some("en".into()),
            categories: None,
            engines: None,
            time_range: Some(crate::settings::TimeRange::Week),
            safesearch: Some(1),
            timeout: Duration::from_secs(5),
            max_results: 20,
            max_per_minute: 10,
            monthly_quota: None,
            state_dir: None,
            log_searches: false,
        };
        let key = SearchKey::new(&settings, "q", 20);
        assert_eq!(key.backend, "searxng https://searx.example.org/");
        assert_eq!(
            (key.time_range.as_deref(), key.safesearch),
            (Some("week"), Some(1))
        );
        assert!(!key.canonical().contains("secret"));
    }

    #[test]
    fn search_keys_are_normalised() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        cache.put_search(&key("  Tardigrades   in\tSPACE "), &outcome("q"));
        let mut same = key("tardigrades in space");
        same.engines = Some(" DuckDuckGo , bing,".into());
        same.language = Some(" EN ".into());
        assert_eq!(cache.get_search(&same), Some(outcome("q")));
        assert_eq!(entry_files(dir.path(), Kind::Search).len(), 1);
    }

    #[test]
    fn pages_are_stored_under_both_urls_and_normalised() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        cache.put_page(
            &[
                "HTTPS://Example.ORG:443/start/?utm_source=x&id=3&fbclid=9#top",
                "https://example.org/final",
            ],
            &page("text"),
        );
        assert_eq!(entry_files(dir.path(), Kind::Page).len(), 2);
        assert_eq!(
            cache.get_page("https://example.org/start?id=3"),
            Some(page("text"))
        );
        assert_eq!(
            cache.get_page("https://example.org/final/#x"),
            Some(page("text"))
        );
        assert_eq!(cache.get_page("https://example.org/start?id=4"), None);
        assert_eq!(cache.get_page("http://example.org/final"), None);
    }

    #[test]
    fn urls_are_normalised() {
        assert_eq!(
            normalize_url("HTTPS://Example.ORG:443/a/?utm_source=x&id=3&gclid=1#top"),
            "https://example.org/a?id=3"
        );
        assert_eq!(
            normalize_url("http://example.org:80/"),
            "http://example.org/"
        );
        assert_eq!(normalize_url("https://example.org"), "https://example.org/");
        assert_eq!(
            normalize_url("https://example.org:8443/a"),
            "https://example.org:8443/a"
        );
        assert_eq!(
            normalize_url("https://example.org/?UTM_Medium=1"),
            "https://example.org/"
        );
        assert_eq!(
            normalize_url("https://example.org/a?q=a%20b&b=2"),
            "https://example.org/a?q=a%20b&b=2"
        );
        assert_eq!(normalize_url(" not a url "), "not a url");
    }

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
        fs::write(&file, "not a folder").unwrap();
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

    #[test]
    fn corrupt_entries_are_deleted_and_miss() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(&settings(dir.path(), CacheMode::Use));
        cache.put_page(&["https://example.org/a"], &page("text"));
        let path = cache
            .entry_path(Kind::Page, &normalize_url("https://example.org/a"))
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
            key: normalize_url("https://example.org/a"),
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
    fn file_names_are_hashes_of_keys_only() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c); // published FNV-1a test vector
        let name = file_name(Kind::Page, "https://example.org/../../etc/passwd");
        assert!(is_entry_name(&name), "{name}");
        assert!(is_temp_name(&temp_name(&name)));
        assert!(!is_entry_name("notes.json") && !is_temp_name(".bashrc.tmp"));
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
                .entry_path(Kind::Page, &normalize_url(&url(i)))
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
