//! What the library's unit tests share: the one reader of the captures and pages in
//! `fixtures/`, so that every test names a fixture by its path there and a missing one
//! fails with that path.

use std::path::Path;

/// The bytes of `fixtures/REL`; panics naming the file when it cannot be read.
pub fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The text of `fixtures/REL` (UTF-8); panics naming the file when it cannot be read.
pub fn fixture_text(rel: &str) -> String {
    String::from_utf8(fixture(rel)).unwrap_or_else(|e| panic!("fixtures/{rel}: {e}"))
}

/// Search settings for `backend` at `url` with nothing else set (no rate limit, no
/// quota, no state folder, 20 results within 5 s, the public Wikipedia and
/// DuckDuckGo addresses): tests change what they are about with `..` on this.
pub fn search_settings(
    backend: crate::settings::SearchBackend,
    url: &str,
) -> crate::settings::SearchSettings {
    use crate::settings::{DEFAULT_DUCKDUCKGO_URL, DEFAULT_WIKIPEDIA_URL, RATE_WINDOW};
    crate::settings::SearchSettings {
        backend,
        api_key: None,
        url: url::Url::parse(url).unwrap(),
        fallback_urls: Vec::new(),
        language: None,
        categories: None,
        engines: None,
        time_range: None,
        safesearch: None,
        timeout: std::time::Duration::from_secs(5),
        max_results: 20,
        max_per_minute: None,
        rate_window: RATE_WINDOW,
        monthly_quota: None,
        state_dir: None,
        shared: None,
        log_searches: false,
        hosted: Vec::new(),
        wikipedia_url: DEFAULT_WIKIPEDIA_URL.into(),
        duckduckgo_url: url::Url::parse(DEFAULT_DUCKDUCKGO_URL).unwrap(),
        contact: None,
        sites: Default::default(),
        images: false,
    }
}
