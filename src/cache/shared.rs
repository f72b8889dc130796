//! The cache's second level for replicas that name a Redis (`[state] redis_url`):
//! an entry missing from this process's folder is looked for there, and every entry
//! written to the folder is written there too, with the same freshness (the TTL of
//! its kind, as the Redis key's expiry) and the same size cap
//! ([`super::MAX_ENTRY_BYTES`]). So one replica's search or page is another's hit.
//!
//! The same rules as the folder: modes (`Refresh` writes without reading, `Off` does
//! neither), the full key stored in the entry and compared on read, the entry's age
//! checked against the TTL. Redis not answering is a miss, never an error.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::keys::Kind;
use super::store::Entry;
use super::{Cache, CachedPage, FORMAT, MAX_ENTRY_BYTES, SearchKey};
use crate::hits::{SearchOutcome, normalise_url};
use crate::settings::CacheMode;
use crate::state::keys::Kind as StateKind;

impl Cache {
    /// [`Cache::get_search`], then the shared Redis on a miss.
    pub async fn find_search(&self, key: &SearchKey) -> Option<SearchOutcome> {
        if let Some(found) = self.get_search(key) {
            return Some(found);
        }
        self.read_shared(Kind::Search, &key.canonical()).await
    }

    /// [`Cache::put_search`], and the same entry in the shared Redis.
    pub async fn keep_search(&self, key: &SearchKey, outcome: &SearchOutcome) {
        self.put_search(key, outcome);
        self.write_shared(Kind::Search, &key.canonical(), outcome)
            .await;
    }

    /// [`Cache::get_page`], then the shared Redis on a miss.
    pub async fn find_page(&self, url: &str) -> Option<CachedPage> {
        if let Some(found) = self.get_page(url) {
            return Some(found);
        }
        self.read_shared(Kind::Page, &normalise_url(url)).await
    }

    /// [`Cache::put_page`], and the same entries in the shared Redis.
    pub async fn keep_page(&self, urls: &[&str], page: &CachedPage) {
        self.put_page(urls, page);
        if self.inner.shared.is_none() {
            return;
        }
        let mut keys: Vec<String> = urls.iter().map(|u| normalise_url(u)).collect();
        keys.sort();
        keys.dedup();
        for key in keys.iter().filter(|k| !k.is_empty()) {
            self.write_shared(Kind::Page, key, page).await;
        }
    }

    /// A fresh entry of `key` in the shared Redis; `None` for anything else.
    async fn read_shared<V: DeserializeOwned>(&self, kind: Kind, key: &str) -> Option<V> {
        let redis = self.inner.shared.as_ref()?;
        if self.inner.mode != CacheMode::Use {
            return None;
        }
        let bytes = redis.get(&redis.key(state_kind(kind), key)).await??;
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            return None;
        }
        let entry: Entry<String, V> = serde_json::from_slice(&bytes).ok()?;
        let now = crate::files::unix_secs();
        let fresh = entry.format == FORMAT
            && entry.key == key
            && entry.stored_at <= now + super::store::CLOCK_SKEW_SECS
            && now.saturating_sub(entry.stored_at) < self.ttl(kind).as_secs();
        fresh.then_some(entry.value)
    }

    /// Stores `value` under `key` in the shared Redis for its kind's TTL (best effort).
    async fn write_shared<V: Serialize>(&self, kind: Kind, key: &str, value: &V) {
        let Some(redis) = self.inner.shared.as_ref() else {
            return;
        };
        let ttl = self.ttl(kind);
        if self.inner.mode == CacheMode::Off || ttl.is_zero() {
            return;
        }
        let Some(bytes) = super::store::entry_bytes(key, value) else {
            return;
        };
        redis
            .set(&redis.key(state_kind(kind), key), &bytes, ttl)
            .await;
    }
}

/// The shared state's kind of a cache entry.
fn state_kind(kind: Kind) -> StateKind {
    match kind {
        Kind::Search => StateKind::Search,
        Kind::Page => StateKind::Page,
    }
}
