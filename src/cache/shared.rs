//! The cache's second level for replicas that name a Redis (`[state] redis_url`):
//! an entry missing from this process's folder is looked for there, and every entry
//! written to the folder is written there too, with the same freshness (the TTL of
//! its kind, as the Redis key's expiry) and the same size cap
//! ([`super::MAX_ENTRY_BYTES`]). So one replica's search or page is another's hit.
//!
//! The same rules as the folder: modes (`Refresh` writes without reading, `Off` does
//! neither), the full key stored in the entry and compared on read, the entry's age
//! checked against the TTL. Redis not answering is a miss, never an error.
//!
//! Replicas that miss the same page at the same moment fetch it once
//! ([`Cache::claim_page`]): the first claims it for [`PAGE_CLAIM`] (`SET NX PX`), the
//! others look for the entry it keeps every [`CLAIM_POLL`] and fetch the page
//! themselves when none came within the claim (or the claim ended without one).

use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::keys::Kind;
use super::store::Entry;
use super::{Cache, CachedPage, FORMAT, MAX_ENTRY_BYTES, SearchKey};
use crate::hits::{SearchOutcome, normalise_url};
use crate::settings::CacheMode;
use crate::state::keys::Kind as StateKind;

/// How long a replica's claim on fetching a page lasts: the longest another replica
/// waits for that page before fetching it itself.
pub const PAGE_CLAIM: Duration = Duration::from_secs(3);

/// How often a replica waiting for a claimed page looks for it.
pub const CLAIM_POLL: Duration = Duration::from_millis(50);

/// What a replica that misses a page in every cache does ([`Cache::claim_page`]).
#[derive(Debug)]
pub enum PageTurn {
    /// Fetch it: this replica claimed it (`claimed`: end the claim with
    /// [`Cache::release_page`] when no page is kept), or nobody could be asked, or
    /// the replica that claimed it kept nothing in time.
    Fetch {
        /// Whether this replica holds the claim.
        claimed: bool,
    },
    /// Another replica fetched it meanwhile: its entry.
    Found(CachedPage),
}

impl Cache {
    /// For a page missing from every cache: claims its fetch for this replica, or,
    /// when another replica holds the claim, waits up to [`PAGE_CLAIM`] for the page
    /// it keeps. Without a shared Redis (or in another mode than `Use`), or while it
    /// does not answer: fetch.
    pub async fn claim_page(&self, url: &str) -> PageTurn {
        let fetch = PageTurn::Fetch { claimed: false };
        let Some(redis) = self.inner.shared.as_ref() else {
            return fetch;
        };
        // A page that is not kept in Redis (a page TTL of 0) is never there to wait for.
        if self.inner.mode != CacheMode::Use || self.ttl(Kind::Page).is_zero() {
            return fetch;
        }
        let key = normalise_url(url);
        let claim = redis.key(StateKind::PageClaim, &key);
        match redis.claim(&claim, PAGE_CLAIM).await {
            Some(true) => return PageTurn::Fetch { claimed: true },
            None => return fetch,
            Some(false) => {}
        }
        let deadline = Instant::now() + PAGE_CLAIM;
        while Instant::now() < deadline {
            tokio::time::sleep(CLAIM_POLL).await;
            if let Some(page) = self.read_shared(Kind::Page, &key).await {
                return PageTurn::Found(page);
            }
            if redis.exists(&claim).await != Some(true) {
                break;
            }
        }
        // One last look: the page may have been kept as the claim ended.
        match self.read_shared(Kind::Page, &key).await {
            Some(page) => PageTurn::Found(page),
            None => fetch,
        }
    }

    /// Ends this replica's claim on `url` once its fetch is over (the page kept or
    /// not), so that the replicas waiting for it look once more, and fetch it
    /// themselves at once when it was not kept.
    pub async fn release_page(&self, url: &str) {
        if let Some(redis) = self.inner.shared.as_ref() {
            let claim = redis.key(StateKind::PageClaim, &normalise_url(url));
            redis.delete(&claim).await;
        }
    }

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
