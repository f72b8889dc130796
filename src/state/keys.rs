//! What each kind of shared state is stored under: the deployment's prefix, the
//! kind, and a digest of the local key (never text a web page chose, and never
//! longer than a few dozen bytes whatever the question).

use sha2::{Digest, Sha256};

/// The kinds of state kept in Redis, each under its own part of the key space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A conversation's evidence, by its turns.
    Conversation,
    /// A grounded run's report kept for reuse, by its request key.
    Answer,
    /// A cached search result.
    Search,
    /// A cached page.
    Page,
    /// A replica's claim on fetching a page that no cache holds yet.
    PageClaim,
    /// The search rate limit's window (one per deployment).
    RateWindow,
    /// A hosted search API's count for one month.
    Quota,
}

impl Kind {
    /// Its part of the key.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Conversation => "conversation",
            Kind::Answer => "answer",
            Kind::Search => "search",
            Kind::Page => "page",
            Kind::PageClaim => "claim",
            Kind::RateWindow => "rate",
            Kind::Quota => "quota",
        }
    }
}

/// The key of `local` (a conversation key, a cache key, a service's name) of `kind`
/// under `prefix`: `PREFIX KIND ":" SHA-256 of local, in hex`.
pub fn key(prefix: &str, kind: Kind, local: &str) -> String {
    let digest = Sha256::digest(local.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{}:{hex}", kind.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_prefixed_by_kind_and_fixed_in_length() {
        let short = key("ground:", Kind::Search, "q");
        let long = key("ground:", Kind::Search, &"q".repeat(10_000));
        assert!(short.starts_with("ground:search:"), "{short}");
        assert_eq!(short.len(), long.len());
        assert_ne!(short, long);
        // Each kind and each deployment has its own key for the same local key.
        assert_ne!(short, key("ground:", Kind::Page, "q"));
        assert_ne!(short, key("prod:", Kind::Search, "q"));
        assert_eq!(short, key("ground:", Kind::Search, "q"));
        assert_eq!(
            key("", Kind::Conversation, "abc"),
            "conversation:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
