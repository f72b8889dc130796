//! What a cache entry is stored under: the normalised search key and page URL, and
//! the file name hashed from them (never from anything a web page says).
//!
//! Kept apart from the reading and writing so that the one rule an entry's name
//! follows, and the normal forms that make two requests the same entry, are in one
//! place with their tests.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use crate::settings::SearchSettings;

/// The two kinds of entries, each in its own folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Search,
    Page,
}

pub(super) const KINDS: [Kind; 2] = [Kind::Search, Kind::Page];

impl Kind {
    pub(super) fn folder(self) -> &'static str {
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
    /// The site filter, as its query terms (`site:a -site:b`); absent without one, so
    /// entries made before filters existed keep their names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sites: Option<String>,
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
            sites: (!settings.sites.is_empty()).then(|| settings.sites.query_terms()),
        }
    }

    /// The normalised key as one string: what is hashed for the file name and stored
    /// in the entry to detect collisions.
    pub(super) fn canonical(&self) -> String {
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
            query: normalise_query(&self.query),
            language: word(&self.language),
            region: word(&self.region),
            time_range: word(&self.time_range),
            categories: list(&self.categories),
            engines: list(&self.engines),
            safesearch: self.safesearch,
            page_count: self.page_count,
            sites: self.sites.clone(),
        };
        serde_json::to_string(&normal).unwrap_or_default()
    }
}

/// A query as a cache key: trimmed, inner whitespace collapsed to one space,
/// lower-cased.
pub fn normalise_query(query: &str) -> String {
    query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// FNV-1a, 64 bits: a stable, dependency-free hash for file names (collisions are
/// caught by the key stored in the entry).
pub(super) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// `HASH.json` for a normalised key.
pub(super) fn file_name(kind: Kind, key: &str) -> String {
    let hashed = format!("{}\n{key}", kind.folder());
    format!("{:016x}.json", fnv1a64(hashed.as_bytes()))
}

/// `.HASH.json.PID.N.tmp`: unique per process and write, in the entry's folder.
pub(super) fn temp_name(entry_name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{entry_name}.{}.{n}.tmp", std::process::id())
}

pub(super) fn is_entry_name(name: &str) -> bool {
    name.len() == 21 && name.ends_with(".json") && name[..16].bytes().all(|b| b.is_ascii_hexdigit())
}

pub(super) fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp") && name.get(1..22).is_some_and(is_entry_name)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::cache::Cache;
    use crate::cache::fixtures::*;
    use crate::settings::CacheMode;

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
            max_per_minute: Some(10),
            rate_window: crate::settings::RATE_WINDOW,
            monthly_quota: None,
            state_dir: None,
            log_searches: false,
            hosted: Vec::new(),
            wikipedia_url: crate::settings::DEFAULT_WIKIPEDIA_URL.into(),
            duckduckgo_url: url::Url::parse(crate::settings::DEFAULT_DUCKDUCKGO_URL).unwrap(),
            contact: None,
            sites: Default::default(),
            images: false,
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
    fn file_names_are_hashes_of_keys_only() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c); // published FNV-1a test vector
        let name = file_name(Kind::Page, "https://example.org/../../etc/passwd");
        assert!(is_entry_name(&name), "{name}");
        assert!(is_temp_name(&temp_name(&name)));
        assert!(!is_entry_name("notes.json") && !is_temp_name(".bashrc.tmp"));
    }
}
