//! `--search auto`, the default: which service searches when the user named none.
//!
//! In order: the configured SearXNG instance(s) when one answers; otherwise a hosted
//! API whose key is set (Brave, then Tavily: environment, config file or OS keyring);
//! otherwise Wikipedia, which needs no setup and no key but covers one encyclopedia,
//! not the web. DuckDuckGo is never picked: its page is made for people, so it is
//! the user's explicit choice only.
//!
//! Whether SearXNG answers is judged by a reply, not by an open port: one `GET
//! /config` to each instance (at once, each within [`PROBE_TIMEOUT`] for the whole
//! exchange), the endpoint every SearXNG (and searx) serves as JSON whatever its
//! `formats`. It answers when that is a JSON object listing `engines` and
//! `categories` (or a 429 from its limiter, so its search then says how to let
//! ground through); a server that replies to `/config` otherwise is asked once for
//! a JSON search with no query, which SearXNG refuses at once with `400 {"error"}`
//! and a SearXNG-shaped stand-in or proxy answers with `{"results"}`. A port that
//! accepts and never replies, another web server's 404 or page, a refused
//! connection (well under a millisecond on this machine): no SearXNG, and `auto`
//! falls back. The keyring is asked only when SearXNG does not
//! answer and no key is set elsewhere, so a run whose SearXNG answers never touches
//! it.
//!
//! The pick is kept for the process ([`RECHECK_AFTER`]; a long `ground mcp` session
//! looks again after that, so a SearXNG started later is found), and each fallback
//! is told once, as a note the callers show on stderr and in `--json`'s warnings:
//! "no SearXNG at http://localhost:8080: searching Wikipedia only; see README to set
//! up SearXNG or add a Brave key". Callers choose before looking in the cache, so
//! that cache entries are keyed by the service that answered.

use std::time::{Duration, Instant};

use tokio::sync::Mutex;
use url::Url;

use crate::keystore::{KeyName, Lookup};
use crate::settings::{SearchBackend, SearchSettings, Secret};

/// The longest a SearXNG instance may take to reply to the probe (connection and
/// reply together) before it counts as not answering.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The most of the probe's reply read: a SearXNG with every engine enabled lists a
/// few hundred of them.
const MAX_PROBE_BYTES: usize = 4 * 1024 * 1024;

/// How long a pick is kept before the next search looks again.
pub const RECHECK_AFTER: Duration = Duration::from_secs(60);

/// The service `auto` picked: settings for it alone (never `auto` again), and the
/// note to show when this is a fallback told for the first time.
#[derive(Debug, Clone)]
pub struct Chosen {
    /// The settings with the picked service as the backend (and its URL and key).
    pub settings: SearchSettings,
    /// "no SearXNG at ...: searching ..." the first time a fallback is picked.
    pub note: Option<String>,
    /// The SearXNG instances looked at, as shown to people.
    pub searxng: String,
}

impl Chosen {
    /// What `auto` uses and why, one line (for `ground doctor`).
    pub fn summary(&self) -> String {
        let picked = self.settings.backend;
        match picked {
            SearchBackend::Searxng => {
                format!(
                    "--search auto uses SearXNG at {} (it answers)",
                    self.searxng
                )
            }
            SearchBackend::Wikipedia => format!(
                "--search auto uses Wikipedia only: no SearXNG answers at {} and no Brave or Tavily key is set",
                self.searxng
            ),
            hosted => format!(
                "--search auto uses {hosted} (your API key): no SearXNG answers at {}",
                self.searxng
            ),
        }
    }
}

/// The pick kept for the process.
pub struct Memo {
    fingerprint: String,
    at: Instant,
    backend: SearchBackend,
    key: Option<Secret>,
    /// The fallback last told, so that it is told once (again only after a change).
    told: Option<SearchBackend>,
}

/// This process's pick.
static PICKED: Mutex<Option<Memo>> = Mutex::const_new(None);

/// Picks the service for `settings` (see the module doc); settings that name a
/// service are returned as they are.
pub async fn choose(settings: &SearchSettings) -> Chosen {
    choose_in(&PICKED, settings, crate::keystore::get).await
}

/// [`choose`] with the memo and the keyring given (tests use their own).
pub async fn choose_in(
    memo: &Mutex<Option<Memo>>,
    settings: &SearchSettings,
    keyring: fn(KeyName) -> Lookup,
) -> Chosen {
    let searxng = settings
        .searxng_urls()
        .map(crate::http::display_url)
        .collect::<Vec<_>>()
        .join(", ");
    if settings.backend != SearchBackend::Auto {
        return Chosen {
            settings: settings.clone(),
            note: None,
            searxng,
        };
    }
    let fingerprint = fingerprint(settings);
    // Held while deciding: concurrent searches wait for one pick instead of each
    // probing and each telling it.
    let mut memo = memo.lock().await;
    if let Some(kept) = memo
        .as_ref()
        .filter(|m| m.fingerprint == fingerprint && m.at.elapsed() < RECHECK_AFTER)
    {
        return Chosen {
            settings: concrete(settings, kept.backend, kept.key.clone()),
            note: None,
            searxng,
        };
    }
    let (backend, key) = decide(settings, keyring).await;
    let told_before = memo
        .as_ref()
        .filter(|m| m.fingerprint == fingerprint)
        .and_then(|m| m.told);
    let fallback = (backend != SearchBackend::Searxng).then_some(backend);
    let note = fallback
        .filter(|b| told_before != Some(*b))
        .map(|b| note_for(b, &searxng));
    *memo = Some(Memo {
        fingerprint,
        at: Instant::now(),
        backend,
        key: key.clone(),
        told: fallback,
    });
    Chosen {
        settings: concrete(settings, backend, key),
        note,
        searxng,
    }
}

/// The note for a fallback to `backend`, naming what would search the whole web.
fn note_for(backend: SearchBackend, searxng: &str) -> String {
    match backend {
        SearchBackend::Wikipedia => format!(
            "no SearXNG at {searxng}: searching Wikipedia only; see README to set up SearXNG or add a Brave key"
        ),
        hosted => format!(
            "no SearXNG at {searxng}: searching {hosted} with your API key instead; see README to set up SearXNG"
        ),
    }
}

/// What identifies the choice `settings` leave to `auto`: the instances, the hosted
/// services (and whether their keys are set) and Wikipedia's address. Not the
/// query's parameters, which calls change (`web_search`'s limit).
fn fingerprint(settings: &SearchSettings) -> String {
    let hosted: Vec<String> = settings
        .hosted
        .iter()
        .map(|h| format!("{} {} {}", h.backend.id(), h.url, h.api_key.is_some()))
        .collect();
    format!(
        "{} {:?} {:?} {}",
        settings.url, settings.fallback_urls, hosted, settings.wikipedia_url
    )
}

/// SearXNG when an instance answers, else the first hosted service with a key (set,
/// or found in the keyring now), else Wikipedia.
async fn decide(
    settings: &SearchSettings,
    keyring: fn(KeyName) -> Lookup,
) -> (SearchBackend, Option<Secret>) {
    let client = crate::http::client_builder(PROBE_TIMEOUT, Some(PROBE_TIMEOUT)).build();
    let probes = settings
        .searxng_urls()
        .map(|url| is_searxng(client.as_ref().ok(), url));
    if futures_util::future::join_all(probes)
        .await
        .into_iter()
        .any(|up| up)
    {
        return (SearchBackend::Searxng, None);
    }
    for hosted in &settings.hosted {
        let name = match hosted.backend {
            SearchBackend::Brave => KeyName::Brave,
            SearchBackend::Tavily => KeyName::Tavily,
            _ => continue,
        };
        let key = match &hosted.api_key {
            Some(key) => Some(key.clone()),
            None => match super::state::off_runtime(move || keyring(name)).await {
                Lookup::Found(key) => {
                    // Found only now: the redactor must know it as it knows the others.
                    crate::text::remember_secret(&key);
                    Some(Secret::new(&key))
                }
                Lookup::Absent | Lookup::Unavailable(_) => None,
            },
        };
        if let Some(key) = key {
            return (hosted.backend, Some(key));
        }
    }
    (SearchBackend::Wikipedia, None)
}

/// Whether SearXNG answers at `url` (see the module doc): its `/config` within
/// [`PROBE_TIMEOUT`] is SearXNG's configuration, or its limiter's 429. A server that
/// replies to `/config` with something else is asked once more, for its JSON search
/// with no query (`/search?q=&format=json`: SearXNG refuses it at once with `400
/// {"error": ...}` and runs no engine; a SearXNG-shaped stand-in or proxy without
/// `/config` answers `{"results": [...]}`). Without a client nothing answers.
async fn is_searxng(client: Option<&reqwest::Client>, url: &Url) -> bool {
    let Some(client) = client else {
        return false;
    };
    let endpoint = |name: &str, query: Option<&str>| {
        let mut endpoint = url.clone();
        endpoint.set_path(&format!("{}/{name}", url.path().trim_end_matches('/')));
        endpoint.set_query(query);
        endpoint
    };
    // The reply's status and body (bounded), or None when nothing came in time.
    let ask = |target: Url| async move {
        let response = client
            .get(target)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .ok()?;
        let status = response.status().as_u16();
        let body = crate::http::read_bounded(response, MAX_PROBE_BYTES)
            .await
            .ok()?;
        Some((status, (!body.truncated).then_some(body.bytes)))
    };
    let probe = async {
        match ask(endpoint("config", None)).await? {
            (429, _) => return Some(true),
            (200, Some(body)) if is_searxng_config(&body) => return Some(true),
            _ => {}
        }
        let (status, body) = ask(endpoint("search", Some("q=&format=json"))).await?;
        Some(is_searxng_search_reply(status, body.as_deref()?))
    };
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, probe).await,
        Ok(Some(true))
    )
}

/// Whether `body` (with `status`) is SearXNG's JSON search reply: a results list, or
/// its refusal of an empty query (`400 {"error": "No query"}`).
fn is_searxng_search_reply(status: u16, body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|reply| match status {
        200 => reply["results"].is_array(),
        400 => reply["error"].is_string(),
        _ => false,
    })
}

/// Whether `body` is SearXNG's `/config`: a JSON object with an `engines` list and a
/// `categories` list (both real captures, searx 1.1 and SearXNG, have them).
fn is_searxng_config(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body)
        .is_ok_and(|config| config["engines"].is_array() && config["categories"].is_array())
}

/// `settings` for `backend` alone: its URL and key, no other instances or fallbacks.
fn concrete(
    settings: &SearchSettings,
    backend: SearchBackend,
    key: Option<Secret>,
) -> SearchSettings {
    let mut one = settings.clone();
    one.backend = backend;
    one.hosted = Vec::new();
    match backend {
        SearchBackend::Searxng | SearchBackend::Auto => return one,
        SearchBackend::Wikipedia => {
            if let Ok(url) = Url::parse(&settings.wikipedia_base("en")) {
                one.url = url;
            }
        }
        SearchBackend::DuckDuckGo => one.url = settings.duckduckgo_url.clone(),
        SearchBackend::Brave | SearchBackend::Tavily => {
            if let Some(hosted) = settings.hosted.iter().find(|h| h.backend == backend) {
                one.url = hosted.url.clone();
            }
        }
    }
    one.api_key = key;
    one.fallback_urls = Vec::new();
    one
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::HostedService;

    fn settings(searxng: &str, hosted: Vec<HostedService>) -> SearchSettings {
        SearchSettings {
            backend: SearchBackend::Auto,
            api_key: None,
            url: Url::parse(searxng).unwrap(),
            fallback_urls: Vec::new(),
            language: None,
            categories: None,
            engines: None,
            time_range: None,
            safesearch: None,
            timeout: Duration::from_secs(5),
            max_results: 10,
            max_per_minute: None,
            rate_window: crate::settings::RATE_WINDOW,
            monthly_quota: None,
            state_dir: None,
            log_searches: false,
            hosted,
            wikipedia_url: "http://127.0.0.1:9/{lang}".into(),
            duckduckgo_url: Url::parse("http://127.0.0.1:9/").unwrap(),
            contact: None,
            sites: Default::default(),
            images: false,
        }
    }

    fn brave(key: Option<&str>) -> HostedService {
        HostedService {
            backend: SearchBackend::Brave,
            api_key: key.map(Secret::new),
            url: Url::parse("http://127.0.0.1:9/brave").unwrap(),
        }
    }

    fn down() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        format!("http://127.0.0.1:{port}")
    }

    fn no_keyring(_: KeyName) -> Lookup {
        Lookup::Unavailable("no keyring in tests".into())
    }

    fn keyring_with_brave(name: KeyName) -> Lookup {
        match name {
            KeyName::Brave => Lookup::Found("BSAfromTHEkeyringABCDEFGH".into()),
            _ => Lookup::Absent,
        }
    }

    /// A stand-in SearXNG whose `/config` (under `base`) is a real capture.
    async fn searxng_at(base: &str) -> wiremock::MockServer {
        use wiremock::matchers::{method, path};
        let server = wiremock::MockServer::start().await;
        let config = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/searxng/searxng/config.body.json"),
        )
        .unwrap();
        wiremock::Mock::given(method("GET"))
            .and(path(format!("{base}/config")))
            .respond_with(
                wiremock::ResponseTemplate::new(200).set_body_raw(config, "application/json"),
            )
            .mount(&server)
            .await;
        server
    }

    #[test]
    fn searxngs_configuration_is_told_from_other_replies() {
        for capture in ["searx11", "searxng"] {
            let body = std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join(format!("fixtures/searxng/{capture}/config.body.json")),
            )
            .unwrap();
            assert!(is_searxng_config(&body), "{capture}");
        }
        for other in [
            &b"<html>It works!</html>"[..],
            b"{}",
            b"{\"engines\": 3, \"categories\": []}",
            b"[]",
            b"",
        ] {
            assert!(!is_searxng_config(other), "{other:?}");
        }
    }

    #[tokio::test]
    async fn an_instance_under_a_path_is_asked_there() {
        let server = searxng_at("/searx").await;
        let memo = Mutex::new(None);
        let under = format!("{}/searx/", server.uri());
        let chosen = choose_in(&memo, &settings(&under, Vec::new()), no_keyring).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Searxng);
    }

    #[tokio::test]
    async fn a_limiters_429_is_searxng_and_a_404_is_not() {
        for (status, searxng) in [(429, true), (404, false), (500, false)] {
            let server = wiremock::MockServer::start().await;
            wiremock::Mock::given(wiremock::matchers::path("/config"))
                .respond_with(wiremock::ResponseTemplate::new(status))
                .mount(&server)
                .await;
            let memo = Mutex::new(None);
            let chosen = choose_in(&memo, &settings(&server.uri(), Vec::new()), no_keyring).await;
            assert_eq!(
                chosen.settings.backend == SearchBackend::Searxng,
                searxng,
                "{status}"
            );
        }
    }

    #[tokio::test]
    async fn an_answering_searxng_is_used_without_a_note() {
        let server = searxng_at("").await;
        let up = server.uri();
        let memo = Mutex::new(None);
        let chosen = choose_in(&memo, &settings(&up, vec![brave(Some("BSAx"))]), no_keyring).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Searxng);
        assert_eq!(chosen.note, None);
        assert!(chosen.summary().contains("(it answers)"));
    }

    #[tokio::test]
    async fn fallbacks_in_order_each_told_once() {
        let down = down();
        // A key set: Brave, told once.
        let memo = Mutex::new(None);
        let with_key = settings(&down, vec![brave(Some("BSAsetINenv"))]);
        let chosen = choose_in(&memo, &with_key, no_keyring).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Brave);
        assert_eq!(chosen.settings.api_key.unwrap().expose(), "BSAsetINenv");
        assert_eq!(chosen.settings.url.as_str(), "http://127.0.0.1:9/brave");
        let note = chosen.note.unwrap();
        assert!(
            note.starts_with(&format!("no SearXNG at {down}: searching Brave Search")),
            "{note}"
        );
        let again = choose_in(&memo, &with_key, no_keyring).await;
        assert_eq!(again.settings.backend, SearchBackend::Brave);
        assert_eq!(again.note, None, "told once");

        // No key set, the keyring has one: Brave.
        let memo = Mutex::new(None);
        let keyless = settings(&down, vec![brave(None)]);
        let chosen = choose_in(&memo, &keyless, keyring_with_brave).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Brave);
        assert_eq!(
            chosen.settings.api_key.unwrap().expose(),
            "BSAfromTHEkeyringABCDEFGH"
        );

        // No key anywhere: Wikipedia, with the README's words.
        let memo = Mutex::new(None);
        let chosen = choose_in(&memo, &keyless, no_keyring).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Wikipedia);
        assert_eq!(chosen.settings.url.as_str(), "http://127.0.0.1:9/en");
        assert_eq!(
            chosen.note.as_deref(),
            Some(
                format!(
                    "no SearXNG at {down}: searching Wikipedia only; see README to set up SearXNG or add a Brave key"
                )
                .as_str()
            )
        );
        assert!(
            chosen
                .summary()
                .starts_with("--search auto uses Wikipedia only")
        );
    }

    #[tokio::test]
    async fn a_named_service_is_not_changed() {
        let memo = Mutex::new(None);
        let mut named = settings(&down(), Vec::new());
        named.backend = SearchBackend::Searxng;
        let chosen = choose_in(&memo, &named, no_keyring).await;
        assert_eq!(chosen.settings.backend, SearchBackend::Searxng);
        assert!(chosen.note.is_none());
        assert!(memo.lock().await.is_none(), "nothing probed");
    }

    #[test]
    fn a_searxng_shaped_search_reply_is_told_from_other_replies() {
        assert!(is_searxng_search_reply(400, br#"{"error": "No query"}"#));
        assert!(is_searxng_search_reply(
            200,
            br#"{"query": "", "results": []}"#
        ));
        assert!(!is_searxng_search_reply(404, br#"{"error": "not found"}"#));
        assert!(!is_searxng_search_reply(200, b"<html>results</html>"));
        assert!(!is_searxng_search_reply(200, br#"{"data": []}"#));
    }
}
