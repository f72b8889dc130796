//! Search results as plain data: what every search backend returns and what the
//! later stages (fetch, cache, context, output) read, with the URL form used to tell
//! two results of the same page apart.
//!
//! The search stage's own bookkeeping that the faces show (this month's counts of the
//! hosted services, where the state files are) is plain data too and lives here, so
//! that printing it never needs the stage itself.

use std::path::PathBuf;

use serde::Serialize;

/// One search result, as the later stages need it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchHit {
    /// The result's address (http or https).
    pub url: String,
    /// The result's title as the engine gave it.
    pub title: String,
    /// The engine's snippet (SearXNG's `content`).
    pub snippet: String,
    /// The engines that returned it.
    pub engines: Vec<String>,
    /// Publication date when the engine knew it (ISO 8601 in SearXNG, a display
    /// string in old searx).
    pub published: Option<String>,
}

/// The outcome of one search call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchOutcome {
    /// The query that ran.
    pub query: String,
    /// Results in rank order, de-duplicated by URL, http(s) only.
    pub hits: Vec<SearchHit>,
    /// Engines that failed, with SearXNG's reason ("timeout", "Suspended: ...").
    pub unresponsive_engines: Vec<(String, String)>,
    /// What the user should know about how the results were got (an instance that
    /// failed over, JSON off so the HTML page was read); shown once per run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A URL in the form used to recognise the same page across queries and in the
/// cache: scheme and host lower-cased and the default port dropped (the parser does
/// that), fragment dropped, tracking parameters (`utm_*`, `fbclid`, `gclid`,
/// `mc_cid`, `mc_eid`) removed while the others keep their order and encoding, and a
/// trailing slash on a longer path dropped. Unparsable input is returned trimmed.
pub fn normalise_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url.trim()) else {
        return url.trim().to_string();
    };
    parsed.set_fragment(None);
    let kept: Vec<String> = parsed
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| {
            let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
            !(name.is_empty()
                || name.starts_with("utm_")
                || matches!(name.as_str(), "fbclid" | "gclid" | "mc_cid" | "mc_eid"))
        })
        .map(str::to_string)
        .collect();
    parsed.set_query((!kept.is_empty()).then(|| kept.join("&")).as_deref());
    let path = parsed.path().to_string();
    if path.len() > 1 && path.ends_with('/') {
        parsed.set_path(path.trim_end_matches('/'));
    }
    parsed.to_string()
}

/// Keeps the http(s) results in order, each URL once, at most `max` of them. Each
/// item is the provider's URL and the hit to fill it into.
pub fn collect_hits(
    results: impl Iterator<Item = (Option<String>, SearchHit)>,
    max: usize,
) -> Vec<SearchHit> {
    let mut hits: Vec<SearchHit> = Vec::new();
    for (url, mut hit) in results {
        let Some(url) = url.filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        else {
            continue;
        };
        if hits.len() >= max {
            break;
        }
        if !hits.iter().any(|h| h.url == url) {
            hit.url = url;
            hits.push(hit);
        }
    }
    hits
}

/// Formats unresponsive engines as "name (reason), ..." for messages.
pub fn describe_unresponsive(engines: &[(String, String)]) -> String {
    engines
        .iter()
        .map(|(name, reason)| format!("{name} ({reason})"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This month's counts of every hosted service, for `ground usage` and `ground doctor`.
#[derive(Debug, Clone, Serialize)]
pub struct MonthUsage {
    /// The calendar month, `YYYY-MM` (UTC).
    pub month: String,
    /// The usage file.
    pub file: PathBuf,
    /// One line per hosted service.
    pub services: Vec<ServiceUsage>,
}

/// One hosted service's use this month.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceUsage {
    /// `brave` or `tavily`.
    pub service: &'static str,
    /// Its name for people.
    pub name: String,
    /// Queries or credits used (ours, or the plan's own from its headers).
    pub used: u64,
    /// The quota in force; `None` = no quota.
    pub quota: Option<u64>,
    /// `queries` or `credits`.
    pub unit: &'static str,
    /// The plan's monthly limit as the service last reported it.
    pub plan_limit: Option<u64>,
}

/// What `ground usage` shows of the search stage's state, gathered by the stage (it
/// reads the state folder) and printed by the faces.
#[derive(Debug, Clone)]
pub struct UsageReport {
    /// This month's counts of the hosted services; `None` without a state folder.
    pub month: Option<MonthUsage>,
    /// The state files' names in the state folder: the usage counts, the recent
    /// searches of the rate limit, the search log.
    pub files: [&'static str; 3],
    /// Where the search log is (or would be) written; `None` without a state folder.
    pub log_path: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::normalise_url;

    #[test]
    fn urls_are_normalised_for_merging() {
        assert_eq!(
            normalise_url("HTTPS://Example.ORG:443/a/?utm_source=x&id=3#top"),
            "https://example.org/a?id=3"
        );
        assert_eq!(
            normalise_url("https://example.org/a/"),
            normalise_url("https://example.org/a")
        );
        assert_eq!(
            normalise_url("https://example.org/"),
            normalise_url("https://example.org")
        );
        assert_eq!(
            normalise_url("https://example.org/?fbclid=1&gclid=2"),
            "https://example.org/"
        );
        assert_ne!(
            normalise_url("https://example.org/a?id=1"),
            normalise_url("https://example.org/a?id=2")
        );
        assert_eq!(normalise_url(" not a url "), "not a url");
    }

    #[test]
    fn urls_are_normalised() {
        assert_eq!(
            normalise_url("HTTPS://Example.ORG:443/a/?utm_source=x&id=3&gclid=1#top"),
            "https://example.org/a?id=3"
        );
        assert_eq!(
            normalise_url("http://example.org:80/"),
            "http://example.org/"
        );
        assert_eq!(normalise_url("https://example.org"), "https://example.org/");
        assert_eq!(
            normalise_url("https://example.org:8443/a"),
            "https://example.org:8443/a"
        );
        assert_eq!(
            normalise_url("https://example.org/?UTM_Medium=1"),
            "https://example.org/"
        );
        assert_eq!(
            normalise_url("https://example.org/a?q=a%20b&b=2"),
            "https://example.org/a?q=a%20b&b=2"
        );
        assert_eq!(normalise_url(" not a url "), "not a url");
    }
}
