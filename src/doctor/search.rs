//! `ground doctor`'s search checks: one real search through the code `ground answer`
//! uses, per configured instance, each failure the search maps to an [`Error`] turned
//! into the check it diagnoses (reachable, SearXNG's limiter, its JSON format, the
//! test query's results, a hosted API's key and monthly usage).
//!
//! Apart from the model checks because the two share nothing but the [`Check`] they
//! return, and each reads best next to the fixes it prints.

use std::time::Duration;

use url::Url;

use super::{Area, CHECK_TIMEOUT, Check, TEST_QUERY};
use crate::error::Error;
use crate::settings::{SearchBackend, SearchSettings};
use crate::text::sanitize_line;

/// The search checks: with `--search auto`, first what it would use now
/// (`search.auto`), then the checks of that service; for SearXNG, every configured
/// instance in turn (each through its JSON API alone: the HTML fallback does not make
/// a JSON-off instance pass). The test search ignores `--site`: it checks the service,
/// and a narrow filter could leave it with nothing to show.
pub(super) async fn search_checks(settings: &SearchSettings) -> Vec<Check> {
    let settings = &SearchSettings {
        sites: Default::default(),
        ..settings.clone()
    };
    let mut checks = Vec::new();
    let chosen = crate::search::auto::choose(settings).await;
    if settings.backend == SearchBackend::Auto {
        checks.push(match chosen.settings.backend {
            SearchBackend::Wikipedia => Check::warn(
                "search.auto",
                Area::Search,
                chosen.summary(),
                "to search the whole web, set up SearXNG (README, \"Search backends\") or add a Brave key (`ground key set brave`)".into(),
            ),
            _ => Check::ok("search.auto", Area::Search, chosen.summary()),
        });
    }
    let settings = &chosen.settings;
    if settings.backend != SearchBackend::Searxng || settings.fallback_urls.is_empty() {
        checks.extend(instance_checks(settings).await);
        return checks;
    }
    for url in settings.searxng_urls() {
        let mut one = settings.clone();
        one.url = url.clone();
        one.fallback_urls = Vec::new();
        checks.extend(instance_checks(&one).await);
    }
    checks
}

/// The checks of one search service or SearXNG instance.
async fn instance_checks(settings: &SearchSettings) -> Vec<Check> {
    let mut settings = settings.clone();
    settings.timeout = settings.timeout.min(CHECK_TIMEOUT);
    let seconds = settings.timeout.as_secs();
    let url = crate::http::display_url(&settings.url);
    let backend = settings.backend;
    let search = Area::Search;

    let mut checks = Vec::new();
    if backend.free_tier().is_some() {
        checks.push(Check::ok(
            "search.api_key",
            search,
            format!("{backend} API key is set"),
        ));
    }
    // The client's own timeout applies; this outer one is a guard for the guard.
    let outcome = tokio::time::timeout(settings.timeout + Duration::from_secs(1), async {
        if backend == SearchBackend::Searxng {
            crate::search::searxng::search_json(&settings, TEST_QUERY).await
        } else {
            // Over the rate limit the check waits for a slot, within its own limit.
            let pace = crate::search::Pace::until(tokio::time::Instant::now() + CHECK_TIMEOUT);
            crate::search::search(&settings, TEST_QUERY, &pace).await
        }
    })
    .await
    .unwrap_or_else(|_| {
        Err(Error::SearchUnreachable {
            backend,
            url: url.clone(),
            reason: "timed out".into(),
        })
    });
    let reachable = Check::ok(
        "search.reachable",
        search,
        format!("{backend} at {url} answers"),
    );
    let limiter_ok = || {
        Check::ok(
            "search.limiter",
            search,
            "SearXNG's limiter lets ground through (no HTTP 429)",
        )
    };
    let json_ok = || {
        Check::ok(
            "search.json",
            search,
            "SearXNG's JSON format is enabled (format=json answered 200)",
        )
    };
    match outcome {
        Err(Error::SearchUnreachable { reason, .. }) => {
            let reason = if reason == "timed out" {
                format!("no answer within {seconds} s")
            } else {
                reason
            };
            let hint = Error::SearchUnreachable {
                backend,
                url: url.clone(),
                reason: String::new(),
            }
            .hint()
            .unwrap_or_default();
            checks.push(Check::fail(
                "search.reachable",
                search,
                format!("cannot reach {backend} at {url}: {reason}"),
                hint,
            ));
        }
        Err(Error::SearchRateLimited { .. }) => {
            checks.push(reachable);
            checks.push(Check::fail(
                "search.limiter",
                search,
                format!("SearXNG at {url} answered HTTP 429 Too Many Requests: its limiter (bot detection) blocks ground"),
                limiter_fix(&settings.url),
            ));
        }
        Err(Error::SearchJsonDisabled { .. }) => {
            checks.push(reachable);
            checks.push(limiter_ok());
            checks.push(Check::fail(
                "search.json",
                search,
                format!("SearXNG at {url} answered HTTP 403 to format=json: the JSON format is not enabled"),
                JSON_FIX.into(),
            ));
        }
        Err(e @ (Error::SearchAuth { .. } | Error::SearchQuota { .. }))
            if backend.free_tier().is_some() =>
        {
            checks.retain(|c| c.name != "search.api_key");
            checks.push(reachable);
            checks.push(Check::from_error("search.api_key", search, &e));
        }
        Err(e) => {
            checks.push(reachable);
            checks.push(Check::from_error("search.results", search, &e));
        }
        Ok(outcome) => {
            checks.push(reachable);
            if backend == SearchBackend::Searxng {
                checks.push(limiter_ok());
                checks.push(json_ok());
            }
            checks.push(results_check(&outcome, backend));
        }
    }
    checks.extend(usage_check(&settings));
    checks
}

/// `search.usage` for a hosted API: this month's count against the quota (a warning
/// from 80 %, a failure when spent).
fn usage_check(settings: &SearchSettings) -> Option<Check> {
    let backend = settings.backend;
    backend.free_tier()?;
    let month = crate::search::usage::this_month(settings)?;
    let used = month.services.iter().find(|s| s.service == backend.id())?;
    let unit = crate::search::usage::unit(backend);
    let area = Area::Search;
    let Some(quota) = used.quota else {
        return Some(Check::ok(
            "search.usage",
            area,
            format!(
                "{backend}: {} {unit} used in {} (no quota set)",
                used.used, month.month
            ),
        ));
    };
    let detail = format!(
        "{backend}: {} of {quota} {unit} used in {} ({} %)",
        used.used,
        month.month,
        used.used * 100 / quota
    );
    if let Err(e) = crate::search::usage::check(settings) {
        return Some(Check::fail(
            "search.usage",
            area,
            detail,
            e.hint().unwrap_or_default(),
        ));
    }
    Some(match crate::search::usage::warning(settings) {
        Some(_) => Check::warn(
            "search.usage",
            area,
            detail,
            "the month's quota is nearly spent: `ground usage` shows the counts; raise [search] monthly_quota if your plan allows more".into(),
        ),
        None => Check::ok("search.usage", area, detail),
    })
}

fn results_check(outcome: &crate::search::SearchOutcome, backend: SearchBackend) -> Check {
    let n = outcome.hits.len();
    let failing = sanitize_line(&crate::hits::describe_unresponsive(
        &outcome.unresponsive_engines,
    ));
    let area = Area::Search;
    match (n, outcome.unresponsive_engines.is_empty()) {
        (0, false) => Check::from_error(
            "search.results",
            area,
            &Error::SearchEnginesFailed { engines: failing },
        ),
        (0, true) => Check::warn(
            "search.results",
            area,
            format!("test query {TEST_QUERY:?} returned no results"),
            match backend {
                SearchBackend::Searxng => "check that SearXNG has engines enabled (`engines:` in settings.yml) and that it can reach the internet".into(),
                _ => format!("check your {backend} plan and the [search] settings"),
            },
        ),
        (n, true) => Check::ok(
            "search.results",
            area,
            format!("test query {TEST_QUERY:?} returned {n} results"),
        ),
        (n, false) => Check::warn(
            "search.results",
            area,
            format!("test query {TEST_QUERY:?} returned {n} results, but some engines did not answer: {failing}"),
            "look at SearXNG's logs for these engines; suspended engines come back on their own, blocked ones may need to be disabled in settings.yml".into(),
        ),
    }
}

/// SearXNG's settings.yml lines that enable JSON.
const JSON_FIX: &str = "enable JSON in SearXNG's settings.yml, then restart SearXNG:
search:
  formats:
    - html
    - json";

/// How to let ground past SearXNG's limiter, with this machine's address when
/// SearXNG runs on the same machine.
fn limiter_fix(url: &Url) -> String {
    let loopback = match url.host() {
        Some(url::Host::Domain(d)) => d == "localhost",
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    };
    let address = if loopback {
        "\"127.0.0.1\", \"::1\""
    } else {
        "\"ADDRESS\"  # this machine's address as SearXNG sees it"
    };
    format!(
        "let this machine through SearXNG's bot detection in limiter.toml:
[botdetection.ip_lists]
pass_ip = [{address}]
or turn the limiter off in settings.yml:
server:
  limiter: false
then restart SearXNG"
    )
}
