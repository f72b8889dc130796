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

impl SearchHit {
    /// A page named by its address alone (`ground fetch URL`, a URL an answer
    /// lists), standing where a search result would: no title, snippet or engine.
    pub fn of_url(url: &str) -> SearchHit {
        SearchHit {
            url: url.to_string(),
            title: String::new(),
            snippet: String::new(),
            engines: Vec::new(),
            published: None,
        }
    }
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
    /// SearXNG's infoboxes (Wikipedia/Wikidata summaries), bounded; empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub infoboxes: Vec<Infobox>,
    /// SearXNG's instant answers (answerers, plugins), bounded; empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<InstantAnswer>,
    /// Related searches the service offered (SearXNG's `suggestions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// "Did you mean" queries: SearXNG's `corrections`, Brave's altered query.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub corrections: Vec<String>,
    /// The results page a person would open for this query on the service that
    /// answered (the SearXNG instance, or the backend's public search page); `None`
    /// for a service without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_page: Option<String>,
    /// Results dropped for lying outside `--site` / `--exclude-site`
    /// ([`SearchOutcome::keep_sites`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: usize,
}

impl SearchOutcome {
    /// The outcome of `query` with these results and nothing else: what a backend
    /// without engines, warnings or extras of its own returns.
    pub fn of(query: &str, hits: Vec<SearchHit>) -> Self {
        SearchOutcome {
            query: query.to_string(),
            hits,
            ..SearchOutcome::default()
        }
    }

    /// Drops what lies outside `filter`: results, infoboxes whose
    /// source is off-site, and instant answers whose address is off-site (with
    /// `--site`, also those naming no address, which nothing shows to be on-site).
    /// Returns how many results were dropped, and adds them to `dropped`.
    pub fn keep_sites(&mut self, filter: &crate::sites::SiteFilter) -> usize {
        if filter.is_empty() {
            return 0;
        }
        let before = self.hits.len();
        self.hits.retain(|hit| filter.allows(&hit.url));
        let dropped = before - self.hits.len();
        self.infoboxes
            .retain(|infobox| infobox.url().is_some_and(|url| filter.allows(url)));
        for infobox in &mut self.infoboxes {
            infobox.urls.retain(|link| filter.allows(&link.url));
        }
        let keep_unaddressed = filter.sites.is_empty();
        self.answers.retain(|answer| match &answer.url {
            Some(url) => filter.allows(url),
            None => keep_unaddressed,
        });
        self.dropped += dropped;
        dropped
    }
}

/// Whether a count is zero (for leaving it out of serialised outcomes).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Most infoboxes kept from one reply.
pub const MAX_INFOBOXES: usize = 3;
/// Most instant answers kept from one reply.
pub const MAX_ANSWERS: usize = 3;
/// Most suggestions (related searches) kept, from one reply or merged over a run.
pub const MAX_SUGGESTIONS: usize = 8;
/// Most corrections kept, from one reply or merged over a run.
pub const MAX_CORRECTIONS: usize = 3;
/// Longest suggestion or correction kept, in characters; a longer one is cut.
pub const MAX_SUGGESTION_CHARS: usize = 100;

/// An infobox: a search engine's summary of the query's subject (SearXNG's
/// Wikipedia and Wikidata engines give them), as plain text with its links.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Infobox {
    /// Its heading (SearXNG's `infobox` key).
    pub title: String,
    /// Its summary as plain text (SearXNG's `content`, HTML removed).
    pub content: String,
    /// Its facts, in order: "label: value" when shown to the model.
    pub attributes: Vec<InfoboxAttribute>,
    /// Its links, http(s) only, in order; the first one is its source URL.
    pub urls: Vec<InfoboxLink>,
    /// The engines that gave it.
    pub engines: Vec<String>,
}

/// One fact of an infobox.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct InfoboxAttribute {
    /// What the fact is ("Born", "Height").
    pub label: String,
    /// Its value as text.
    pub value: String,
}

/// One link of an infobox.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct InfoboxLink {
    /// The link's name ("Wikipedia", "Official website").
    pub title: String,
    /// The address (http or https).
    pub url: String,
}

impl Infobox {
    /// The text a source made of it holds: the summary, then one "label: value" line
    /// per attribute.
    pub fn text(&self) -> String {
        let mut text = self.content.trim().to_string();
        for attribute in &self.attributes {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!("{}: {}", attribute.label, attribute.value));
        }
        text
    }

    /// Its source URL: the first of its links.
    pub fn url(&self) -> Option<&str> {
        self.urls.first().map(|link| link.url.as_str())
    }
}

/// An instant answer: a short answer computed or looked up by the search service
/// itself (SearXNG's answerers and plugins: a sum, a hash, a conversion).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct InstantAnswer {
    /// The answer as text.
    pub answer: String,
    /// Where it came from, or the results page that showed it (see
    /// [`SearchOutcome::search_page`]) when the service named no address.
    pub url: Option<String>,
    /// The engine, answerer or plugin that gave it, when named.
    pub engine: Option<String>,
}

/// What a run's searches returned besides their results, merged over its queries in
/// the order they ran: each infobox and answer once, suggestions and corrections
/// deduplicated (none that is a query of the run) and bounded, and each query's
/// results page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct SearchExtras {
    /// Infoboxes, at most [`MAX_INFOBOXES`].
    pub infoboxes: Vec<Infobox>,
    /// Instant answers, at most [`MAX_ANSWERS`].
    pub answers: Vec<InstantAnswer>,
    /// Related searches, at most [`MAX_SUGGESTIONS`].
    pub suggestions: Vec<String>,
    /// "Did you mean" queries, at most [`MAX_CORRECTIONS`].
    pub corrections: Vec<String>,
    /// Each query that ran, once, with the results page for it when its service has
    /// one ([`SearchOutcome::search_page`]).
    pub search_pages: Vec<(String, Option<String>)>,
    /// Results dropped for lying outside the site filter, over every search.
    pub dropped: usize,
    /// The site filter the searches ran under (`--site`, `--exclude-site`).
    pub sites: crate::sites::SiteFilter,
}

impl SearchExtras {
    /// What the search for `query` returned besides results.
    pub fn of(query: &str, outcome: &SearchOutcome) -> SearchExtras {
        let mut extras = SearchExtras::default();
        extras.merge(SearchExtras {
            infoboxes: outcome.infoboxes.clone(),
            answers: outcome.answers.clone(),
            suggestions: outcome.suggestions.clone(),
            corrections: outcome.corrections.clone(),
            search_pages: vec![(query.to_string(), outcome.search_page.clone())],
            dropped: outcome.dropped,
            sites: Default::default(),
        });
        extras
    }

    /// Whether the searches gave evidence of their own: an infobox or an instant
    /// answer with an address to cite it by (each becomes a source). A run with such
    /// evidence goes on even when no result page can be read.
    pub fn has_sources(&self) -> bool {
        self.infoboxes.iter().any(|i| i.url().is_some())
            || self.answers.iter().any(|a| a.url.is_some())
    }

    /// Adds `other`'s after these, keeping the bounds and dropping repeats.
    pub fn merge(&mut self, other: SearchExtras) {
        self.dropped += other.dropped;
        if self.sites.is_empty() {
            self.sites = other.sites;
        }
        for infobox in other.infoboxes {
            let same = |kept: &Infobox| {
                kept.url() == infobox.url()
                    && kept.title.to_lowercase() == infobox.title.to_lowercase()
            };
            if self.infoboxes.len() < MAX_INFOBOXES && !self.infoboxes.iter().any(same) {
                self.infoboxes.push(infobox);
            }
        }
        for answer in other.answers {
            let seen = self.answers.iter().any(|a| a.answer == answer.answer);
            if self.answers.len() < MAX_ANSWERS && !seen {
                self.answers.push(answer);
            }
        }
        for (query, page) in other.search_pages {
            if !self.search_pages.iter().any(|(q, _)| *q == query) {
                self.search_pages.push((query, page));
            }
        }
        // A query the run made is no suggestion for it.
        let ran: Vec<String> = self
            .search_pages
            .iter()
            .map(|(q, _)| q.trim().to_lowercase())
            .collect();
        let not_ran = |texts: Vec<String>| -> Vec<String> {
            texts
                .into_iter()
                .filter(|s| !ran.contains(&s.trim().to_lowercase()))
                .collect()
        };
        self.suggestions
            .retain(|s| !ran.contains(&s.to_lowercase()));
        self.corrections
            .retain(|s| !ran.contains(&s.to_lowercase()));
        let (suggestions, corrections) = (not_ran(other.suggestions), not_ran(other.corrections));
        merge_queries(&mut self.suggestions, suggestions, MAX_SUGGESTIONS);
        merge_queries(&mut self.corrections, corrections, MAX_CORRECTIONS);
    }
}

/// Adds `new` strings to `into` in order, skipping empty ones and ones already there
/// (compared case-insensitively), each cut to [`MAX_SUGGESTION_CHARS`], while `into`
/// holds fewer than `max`: how suggestions and corrections are kept per reply and
/// merged over the queries of a run.
pub fn merge_queries(into: &mut Vec<String>, new: impl IntoIterator<Item = String>, max: usize) {
    for text in new {
        if into.len() >= max {
            return;
        }
        let one_line = crate::text::sanitize_line(&text);
        let cut = crate::text::shorten(&one_line, MAX_SUGGESTION_CHARS);
        if cut.is_empty()
            || into
                .iter()
                .any(|kept| kept.to_lowercase() == cut.to_lowercase())
        {
            continue;
        }
        into.push(cut);
    }
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
    use super::*;

    #[test]
    fn extras_merge_over_queries_once_each_and_bounded() {
        let outcome = |suggestions: &[&str], corrections: &[&str]| SearchOutcome {
            suggestions: suggestions.iter().map(|s| s.to_string()).collect(),
            corrections: corrections.iter().map(|s| s.to_string()).collect(),
            answers: vec![InstantAnswer {
                answer: "42".into(),
                url: None,
                engine: None,
            }],
            search_page: Some("https://searx.example/search?q=a".into()),
            ..SearchOutcome::default()
        };
        let mut extras =
            SearchExtras::of("first query", &outcome(&["a b", "First Query"], &["fix"]));
        let many: Vec<String> = (0..20).map(|i| format!("s{i}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        extras.merge(SearchExtras::of("A B", &outcome(&many, &["FIX", "other"])));
        // A query of the run is no suggestion; repeats (any case) are dropped.
        assert_eq!(extras.suggestions.len(), MAX_SUGGESTIONS);
        assert!(
            !extras
                .suggestions
                .iter()
                .any(|s| s == "a b" || s == "First Query")
        );
        assert_eq!(extras.corrections, ["fix", "other"]);
        assert_eq!(extras.answers.len(), 1);
        assert_eq!(extras.search_pages.len(), 2);
        assert_eq!(extras.search_pages[1].0, "A B");
    }

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
