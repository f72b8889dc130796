//! `ground doctor`: checks the configured search service and model server and says
//! exactly what to fix.
//!
//! The checks run in the order a request travels: the config file and settings, then
//! the search service (reachable, SearXNG's limiter, SearXNG's JSON format, a test
//! query's results) and the model server (reachable, model installed, context window).
//! The search and model checks run concurrently, each under its own time limit (the
//! configured one, capped at [`CHECK_TIMEOUT`]), so doctor never hangs.
//!
//! The search checks send one real search through [`crate::search::search`], the very
//! code `ground answer` uses, so a passing doctor means the same headers, parameters
//! and reply parsing work; each failure that search maps to an [`Error`] becomes the
//! check it diagnoses. A check that depends on an earlier failed one is left out
//! rather than guessed: a SearXNG that cannot be reached says nothing about its
//! limiter.
//!
//! Exit code: [`exit::SEARCH`] when a search check fails, else [`exit::MODEL`] when a
//! model check fails, else [`exit::USAGE`] when the configuration is invalid, else 0
//! (warnings allowed).
//!
//! The checks come back as plain [`Check`]s, and [`exit_code`] says what they mean for
//! the process; printing them (for a person or as JSON) is
//! [`crate::render::doctor`]'s, and running them on a runtime is the binary's.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use url::Url;

use crate::config::{self, Overrides};
use crate::error::{Error, exit};
use crate::settings::{LlmBackend, LlmSettings, SearchBackend, SearchSettings, Settings};
use crate::text::{sanitize_line, shorten};

/// The longest any one check may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The test query: a word every general-purpose engine has results for.
pub const TEST_QUERY: &str = "wikipedia";

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Works, but something deserves attention.
    Warn,
    /// Broken: `ground answer` will fail until it is fixed.
    Fail,
}

/// Which part of the setup a check is about; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The config file and settings.
    Config,
    /// The search service.
    Search,
    /// The model server.
    Model,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Stable machine name, e.g. `search.json`.
    pub name: &'static str,
    /// ok, warn or fail.
    pub status: Status,
    /// What was checked and what was found, one line.
    pub detail: String,
    /// The exact fix (may span lines); present on fail and warn.
    pub hint: Option<String>,
    #[serde(skip)]
    area: Area,
}

impl Check {
    /// A check named `name` about `area`, without a hint.
    pub(crate) fn new(
        name: &'static str,
        area: Area,
        status: Status,
        detail: impl Into<String>,
    ) -> Self {
        Check {
            name,
            status,
            detail: detail.into(),
            hint: None,
            area,
        }
    }

    /// A check that passed.
    pub(crate) fn ok(name: &'static str, area: Area, detail: impl Into<String>) -> Self {
        Self::new(name, area, Status::Ok, detail)
    }

    /// A check that passed with something to look at, and what to do about it.
    pub(crate) fn warn(
        name: &'static str,
        area: Area,
        detail: impl Into<String>,
        hint: String,
    ) -> Self {
        Self::new(name, area, Status::Warn, detail).with_hint(hint)
    }

    /// A check that failed, with the fix.
    pub(crate) fn fail(
        name: &'static str,
        area: Area,
        detail: impl Into<String>,
        hint: String,
    ) -> Self {
        Self::new(name, area, Status::Fail, detail).with_hint(hint)
    }

    /// The same check with `hint` as its fix.
    fn with_hint(mut self, hint: String) -> Self {
        self.hint = Some(hint);
        self
    }

    /// A failed check from an error: its message (without the "invalid
    /// configuration" prefix of config errors) and its hint.
    fn from_error(name: &'static str, area: Area, error: &Error) -> Self {
        let message = match error {
            Error::Config { message, .. } => message.clone(),
            Error::MissingKey { backend, keyring } => match keyring {
                None => format!("{backend} needs an API key and none is set"),
                Some(why) => format!(
                    "{backend} needs an API key and none is set (the OS keyring could not be asked: {why})"
                ),
            },
            other => other.to_string(),
        };
        Self::fail(
            name,
            area,
            sanitize_line(&message),
            error.hint().unwrap_or_default(),
        )
    }

    /// Which part of the setup this check is about.
    pub fn area(&self) -> Area {
        self.area
    }
}

/// Runs every check and returns them in order. API keys never appear in the result.
pub async fn diagnose(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Vec<Check> {
    let (mut checks, settings) = config_checks(overrides, env);
    let Some((settings, search_ok)) = settings else {
        return checks;
    };
    // Concurrent, each bounded by its own time limit inside.
    let search = async {
        if search_ok {
            search_checks(&settings.search).await
        } else {
            Vec::new()
        }
    };
    let (search, model) = tokio::join!(search, model_checks(&settings));
    checks.extend(search);
    checks.extend(model);
    redact(&mut checks, &settings);
    checks
}

/// The process exit code for these checks: search failures first, then model
/// failures, then configuration.
pub fn exit_code(checks: &[Check]) -> i32 {
    let failed = |area| {
        checks
            .iter()
            .any(|c| c.status == Status::Fail && c.area == area)
    };
    if failed(Area::Search) {
        exit::SEARCH
    } else if failed(Area::Model) {
        exit::MODEL
    } else if failed(Area::Config) {
        exit::USAGE
    } else {
        exit::SUCCESS
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// The config file check and the resolved settings. The settings are `None` when the
/// configuration is unusable (nothing else can be checked); the flag says whether
/// the search service can be checked (false when its API key is missing, which is
/// reported as a failed search check while the model is still checked).
fn config_checks(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<Check>, Option<(Settings, bool)>) {
    let (path, explicit) = match &overrides.config_path {
        Some(p) => (Some(p.clone()), true),
        None => (
            config::default_config_path(env),
            env("GROUND_CONFIG").is_some(),
        ),
    };
    let file_detail = match &path {
        None => "no config file (HOME is not set), using defaults".to_string(),
        Some(p) => match config::load_file(p, explicit) {
            Ok(None) => format!(
                "no config file ({} does not exist), using defaults",
                p.display()
            ),
            Ok(Some(_)) => format!("{} is valid", p.display()),
            Err(e) => return (vec![config_fail(&e)], None),
        },
    };
    match config::resolve(overrides, env) {
        Ok(settings) => (
            vec![Check::ok("config", Area::Config, file_detail)],
            Some((settings, true)),
        ),
        Err(e @ Error::MissingKey { .. }) => {
            // A hosted search API without a key: a search failure, and the model can
            // still be checked with the rest of the settings.
            let on_searxng = Overrides {
                search_backend: Some(SearchBackend::Searxng),
                ..overrides.clone()
            };
            match config::resolve(&on_searxng, env) {
                Ok(settings) => (
                    vec![
                        Check::ok("config", Area::Config, file_detail),
                        Check::from_error("search.api_key", Area::Search, &e),
                    ],
                    Some((settings, false)),
                ),
                Err(_) => (vec![config_fail(&e)], None),
            }
        }
        Err(e) => (vec![config_fail(&e)], None),
    }
}

fn config_fail(error: &Error) -> Check {
    let mut check = Check::from_error("config", Area::Config, error);
    check.detail.push_str("; nothing else was checked");
    check
}

// ---------------------------------------------------------------------------
// Search

/// The search checks: for SearXNG, every configured instance in turn (each through
/// its JSON API alone: the HTML fallback does not make a JSON-off instance pass).
async fn search_checks(settings: &SearchSettings) -> Vec<Check> {
    if settings.backend != SearchBackend::Searxng || settings.fallback_urls.is_empty() {
        return instance_checks(settings).await;
    }
    let mut checks = Vec::new();
    for url in std::iter::once(&settings.url).chain(settings.fallback_urls.iter()) {
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
    if backend != SearchBackend::Searxng {
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
            crate::search::search(&settings, TEST_QUERY).await
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
            if backend != SearchBackend::Searxng =>
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

// ---------------------------------------------------------------------------
// Model

async fn model_checks(settings: &Settings) -> Vec<Check> {
    let mut llm = settings.llm.clone();
    llm.timeout = llm.timeout.min(CHECK_TIMEOUT);
    let (mut checks, trained) = match llm.backend {
        LlmBackend::Ollama => ollama_checks(&llm).await,
        LlmBackend::OpenAi => (openai_checks(&llm).await, None),
    };
    checks.push(context_check(settings, trained));
    checks
}

/// Ollama's checks, and the model's trained context length when the server said.
async fn ollama_checks(llm: &LlmSettings) -> (Vec<Check>, Option<u64>) {
    let url = crate::http::display_url(&llm.url);
    let client = match crate::llm::client::http_client(llm) {
        Ok(c) => c,
        Err(e) => {
            return (
                vec![Check::from_error("model.reachable", Area::Model, &e)],
                None,
            );
        }
    };
    let listed = match get_json(&client, llm, endpoint(&llm.url, "/api/tags")).await {
        Ok(v) => v,
        Err(check) => return (vec![check], None),
    };
    let Some(models) = listed.get("models").and_then(Value::as_array) else {
        return (vec![not_the_api(llm, "/api/tags")], None);
    };
    let names: Vec<String> = models
        .iter()
        .filter_map(|m| m.get("name").or_else(|| m.get("model"))?.as_str())
        .map(sanitize_line)
        .collect();
    let reachable = Check::ok(
        "model.reachable",
        Area::Model,
        format!(
            "Ollama at {url} answers ({} installed)",
            count(names.len(), "model")
        ),
    );
    // `llama3.2` is `llama3.2:latest` to Ollama.
    let wanted = with_tag(&llm.model);
    let found = models.iter().find_map(|m| {
        ["name", "model"]
            .iter()
            .filter_map(|k| m.get(*k)?.as_str())
            .find(|n| with_tag(n) == wanted)
    });
    let model = &llm.model;
    let Some(found) = found else {
        let installed = if names.is_empty() {
            "no models are installed".to_string()
        } else {
            format!("installed: {}", names.join(", "))
        };
        let missing = Check::fail(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not installed; {installed}"),
            format!(
                "download it with `ollama pull {model}`, or use an installed one with --model NAME"
            ),
        );
        return (vec![reachable, missing], None);
    };
    let shown = if found == model {
        String::new()
    } else {
        format!(" (as {})", sanitize_line(found))
    };
    let installed = Check::ok(
        "model.installed",
        Area::Model,
        format!("model {model:?} is installed{shown}"),
    );
    let trained = trained_context(&client, llm, found).await;
    (vec![reachable, installed], trained)
}

/// `NAME` as Ollama stores it: with `:latest` when no tag is given.
fn with_tag(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    if last.contains(':') {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// The model's trained context length from `POST /api/show` (`model_info.
/// <arch>.context_length`), when the server says; any failure means "unknown".
async fn trained_context(client: &reqwest::Client, llm: &LlmSettings, model: &str) -> Option<u64> {
    let reply = client
        .post(endpoint(&llm.url, "/api/show"))
        .json(&json!({"model": model}))
        .send()
        .await
        .ok()?;
    if !reply.status().is_success() {
        return None;
    }
    let body = crate::http::read_bounded(reply, crate::llm::MAX_REPLY_BYTES)
        .await
        .ok()?;
    let value: Value = serde_json::from_slice(&body.bytes).ok()?;
    value
        .get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

async fn openai_checks(llm: &LlmSettings) -> Vec<Check> {
    let url = crate::http::display_url(&llm.url);
    let client = match crate::llm::client::http_client(llm) {
        Ok(c) => c,
        Err(e) => return vec![Check::from_error("model.reachable", Area::Model, &e)],
    };
    let base = llm.url.path().trim_end_matches('/');
    let path = if base.ends_with("/v1") {
        "/models"
    } else {
        "/v1/models"
    };
    let listed = match get_json(&client, llm, endpoint(&llm.url, path)).await {
        Ok(v) => v,
        Err(check) => return vec![check],
    };
    let Some(data) = listed.get("data").and_then(Value::as_array) else {
        return vec![not_the_api(llm, "/v1/models")];
    };
    let ids: Vec<String> = data
        .iter()
        .filter_map(|m| m.get("id")?.as_str())
        .map(sanitize_line)
        .collect();
    let reachable = Check::ok(
        "model.reachable",
        Area::Model,
        format!(
            "OpenAI-compatible server at {url} answers ({} served)",
            count(ids.len(), "model")
        ),
    );
    let model = &llm.model;
    let check = if ids.iter().any(|id| id == model) {
        Check::ok(
            "model.installed",
            Area::Model,
            format!("model {model:?} is served"),
        )
    } else if let [only] = ids.as_slice() {
        Check::warn(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not listed; the server serves only {only:?}"),
            format!(
                "use --model {only:?} (llama.cpp's llama-server answers with its one model whatever the name; vLLM and LM Studio refuse other names)"
            ),
        )
    } else {
        let served = if ids.is_empty() {
            "the server lists no models".to_string()
        } else {
            format!("served: {}", ids.join(", "))
        };
        Check::fail(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not served; {served}"),
            "use one of the served names with --model NAME, or load the model on the server".into(),
        )
    };
    vec![reachable, check]
}

/// GETs a JSON document from the model server (with the bearer key when one is
/// configured), turning every failure into a failed `model.reachable` check.
async fn get_json(client: &reqwest::Client, llm: &LlmSettings, url: Url) -> Result<Value, Check> {
    let api_path = url.path().to_string();
    let mut request = client.get(url);
    if let Some(key) = &llm.api_key {
        request = request.bearer_auth(key.expose());
    }
    let seconds = llm.timeout.as_secs();
    let reply = tokio::time::timeout(llm.timeout + Duration::from_secs(1), async {
        let reply = request.send().await?;
        let status = reply.status().as_u16();
        // Bounded like every reply; a cut body then fails to parse as JSON.
        let body = crate::http::read_bounded(reply, crate::llm::MAX_REPLY_BYTES).await?;
        Ok::<_, reqwest::Error>((status, body.bytes))
    })
    .await;
    let unreachable = |reason: String| {
        Check::from_error(
            "model.reachable",
            Area::Model,
            &Error::ModelUnreachable {
                backend: llm.backend,
                url: crate::http::display_url(&llm.url),
                reason,
            },
        )
    };
    let (status, bytes) = match reply {
        Err(_) => return Err(unreachable(format!("no answer within {seconds} s"))),
        Ok(Err(e)) if e.is_timeout() => {
            return Err(unreachable(format!("no answer within {seconds} s")));
        }
        Ok(Err(e)) => return Err(unreachable(crate::http::describe_error(&e))),
        Ok(Ok(r)) => r,
    };
    if status == 401 || status == 403 {
        let e = Error::ModelAuth {
            status,
            message: crate::llm::client::error_message(&bytes),
        };
        return Err(Check::from_error("model.reachable", Area::Model, &e));
    }
    if status != 200 {
        return Err(Check::fail(
            "model.reachable",
            Area::Model,
            format!(
                "{} server at {} answered HTTP {status} to GET {api_path}: {}",
                llm.backend,
                crate::http::display_url(&llm.url),
                crate::llm::client::error_message(&bytes)
            ),
            wrong_server_hint(llm.backend),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|_| not_the_api(llm, &api_path))
}

fn not_the_api(llm: &LlmSettings, api_path: &str) -> Check {
    Check::fail(
        "model.reachable",
        Area::Model,
        format!(
            "the server at {} answered GET {api_path}, but not with the {} API's model list",
            crate::http::display_url(&llm.url),
            llm.backend
        ),
        wrong_server_hint(llm.backend),
    )
}

fn wrong_server_hint(backend: LlmBackend) -> String {
    match backend {
        LlmBackend::Ollama => format!(
            "point --llm-url (or OLLAMA_HOST) at Ollama, by default {}; for llama-server, vLLM or LM Studio use --llm openai",
            crate::settings::DEFAULT_OLLAMA_URL
        ),
        LlmBackend::OpenAi => format!(
            "point --llm-url at the server's OpenAI API, e.g. {}; for Ollama's own API use --llm ollama",
            crate::settings::DEFAULT_OPENAI_URL
        ),
    }
}

/// The window the prompt is fitted to, split the way `ground answer` splits it.
fn context_check(settings: &Settings, trained: Option<u64>) -> Check {
    let llm = &settings.llm;
    let pages = settings.fetch.pages;
    let overhead = crate::llm::prompt_overhead_tokens("");
    let sources = llm
        .context_tokens
        .saturating_sub(llm.max_answer_tokens)
        .saturating_sub(overhead)
        .saturating_mul(97)
        / 100;
    let detail = format!(
        "context window {} tokens: {} for the answer, about {overhead} for instructions, about {sources} for {}",
        llm.context_tokens,
        llm.max_answer_tokens,
        count(pages, "source")
    );
    match trained {
        Some(trained) if u64::from(llm.context_tokens) > trained => Check::warn(
            "model.context",
            Area::Model,
            format!("{detail}; the model was trained for {trained} tokens only"),
            format!(
                "use --context-tokens {trained} (or [llm] context_tokens = {trained} in the config file)"
            ),
        ),
        Some(trained) => Check::ok(
            "model.context",
            Area::Model,
            format!("{detail} (the model was trained for {trained})"),
        ),
        None if llm.backend == LlmBackend::OpenAi => Check::ok(
            "model.context",
            Area::Model,
            format!(
                "{detail}; the server's own window must be at least this (llama-server -c {})",
                llm.context_tokens
            ),
        ),
        None => Check::ok("model.context", Area::Model, detail),
    }
}

// ---------------------------------------------------------------------------
// Helpers

/// `{base}{path}`, keeping a base path (e.g. behind a reverse proxy).
fn endpoint(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!("{}{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    url.set_query(None);
    url
}

fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// Removes any API key that slipped into a message (a server echoing it back), with
/// the one redactor, before shortening.
fn redact(checks: &mut [Check], settings: &Settings) {
    let keys: Vec<&str> = [&settings.search.api_key, &settings.llm.api_key]
        .into_iter()
        .flatten()
        .map(|k| k.expose())
        .collect();
    for check in checks {
        check.detail = shorten(&crate::text::redact(&check.detail, &keys), 600);
        if let Some(hint) = &mut check.hint {
            *hint = crate::text::redact(hint, &keys);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_names_match_latest() {
        assert_eq!(with_tag("llama3.2"), "llama3.2:latest");
        assert_eq!(with_tag("llama3.2:latest"), "llama3.2:latest");
        assert_eq!(with_tag("qwen2.5:7b"), "qwen2.5:7b");
        assert_eq!(
            with_tag("registry.local:5000/me/model"),
            "registry.local:5000/me/model:latest"
        );
    }

    #[test]
    fn exit_code_prefers_search_then_model_then_config() {
        let fail = |area| Check::fail("x", area, "d", "h".into());
        let ok = Check::ok("y", Area::Search, "d");
        assert_eq!(exit_code(std::slice::from_ref(&ok)), exit::SUCCESS);
        assert_eq!(
            exit_code(&[fail(Area::Config), fail(Area::Model)]),
            exit::MODEL
        );
        assert_eq!(
            exit_code(&[fail(Area::Model), fail(Area::Search)]),
            exit::SEARCH
        );
        assert_eq!(exit_code(&[ok, fail(Area::Config)]), exit::USAGE);
    }

    #[test]
    fn passwords_stay_out_of_urls() {
        let url = Url::parse("http://me:hunter2@searx.example/").unwrap();
        assert_eq!(
            crate::http::display_url(&url),
            "http://me:redacted@searx.example"
        );
    }
}
