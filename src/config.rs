//! Settings: command-line flags over environment variables over the config file over
//! defaults, resolved once into a [`Settings`] value that the pipeline reads.
//!
//! All precedence logic lives in [`resolve`], which takes the environment as a lookup
//! function so that tests never depend on (or change) the real process environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use crate::error::Error;
use crate::keystore::{self, KeyName, Lookup};
use crate::settings::*;

/// Values given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config PATH`.
    pub config_path: Option<PathBuf>,
    /// `--search`.
    pub search_backend: Option<SearchBackend>,
    /// `--searxng-url`, in the order given (several: tried in turn).
    pub searxng_urls: Vec<String>,
    /// `--language`.
    pub language: Option<String>,
    /// `--categories`.
    pub categories: Option<String>,
    /// `--engines`.
    pub engines: Option<String>,
    /// `--time-range`.
    pub time_range: Option<TimeRange>,
    /// `--safesearch`.
    pub safesearch: Option<u8>,
    /// `--pages`.
    pub pages: Option<usize>,
    /// `--allow-private-addresses`.
    pub allow_private_addresses: bool,
    /// `--llm`.
    pub llm_backend: Option<LlmBackend>,
    /// `--llm-url`.
    pub llm_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--context-tokens`.
    pub context_tokens: Option<u32>,
    /// `--max-answer-tokens`.
    pub max_answer_tokens: Option<u32>,
    /// `--answer-language`.
    pub answer_language: Option<String>,
    /// `--timeout` in seconds.
    pub timeout_secs: Option<u64>,
    /// `--max-searches`.
    pub max_searches: Option<usize>,
    /// `--queries`.
    pub queries: Option<usize>,
    /// `--auto`.
    pub auto: bool,
    /// `--fallback`.
    pub fallback: Option<Fallback>,
    /// `--region`.
    pub region: Option<String>,
    /// `--session-searches` (ground mcp).
    pub session_searches: Option<usize>,
    /// `--pack`.
    pub pack: bool,
    /// `--plan-mode`.
    pub plan_mode: Option<PlanMode>,
    /// `--reuse-secs` (ground mcp).
    pub reuse_secs: Option<u64>,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--refresh`.
    pub refresh: bool,
    /// `--max-per-minute`: searches per rolling minute, 0 = no limit.
    pub max_per_minute: Option<u32>,
    /// `--log-searches`.
    pub log_searches: bool,
    /// `--obey-robots` (Always) or `ground mcp --ignore-robots` (Never).
    pub robots: Option<RobotsPolicy>,
    /// The fetches are an agent's (`ground mcp`): obeys robots.txt under the default
    /// policy.
    pub agent: bool,
}

/// The config file's shape (config.example.toml documents every key).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `[search]`.
    #[serde(default)]
    pub search: FileSearch,
    /// `[fetch]`.
    #[serde(default)]
    pub fetch: FileFetch,
    /// `[llm]`.
    #[serde(default)]
    pub llm: FileLlm,
    /// `[run]`.
    #[serde(default)]
    pub run: FileRun,
    /// `[cache]`.
    #[serde(default)]
    pub cache: FileCache,
    /// `[privacy]`.
    #[serde(default)]
    pub privacy: FilePrivacy,
}

/// `[privacy]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FilePrivacy {
    pub log_searches: Option<bool>,
}

/// `[run]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FileRun {
    pub timeout_secs: Option<u64>,
    pub max_searches: Option<usize>,
    pub queries: Option<usize>,
    pub auto: Option<bool>,
    pub fallback: Option<String>,
    pub region: Option<String>,
    pub session_searches: Option<usize>,
    pub plan_mode: Option<String>,
    pub reuse_secs: Option<u64>,
}

/// `[cache]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FileCache {
    pub enabled: Option<bool>,
    pub dir: Option<PathBuf>,
    pub search_ttl_hours: Option<u64>,
    pub page_ttl_hours: Option<u64>,
    pub max_mb: Option<u64>,
}

/// `[search]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FileSearch {
    pub backend: Option<String>,
    pub api_key: Option<String>,
    pub url: Option<String>,
    pub urls: Option<Vec<String>>,
    pub language: Option<String>,
    pub categories: Option<String>,
    pub engines: Option<String>,
    pub time_range: Option<String>,
    pub safesearch: Option<u8>,
    pub timeout_secs: Option<u64>,
    pub max_results: Option<usize>,
    pub max_per_minute: Option<u32>,
    pub monthly_quota: Option<u64>,
}

/// `[fetch]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FileFetch {
    pub pages: Option<usize>,
    pub connect_timeout_secs: Option<u64>,
    pub timeout_secs: Option<u64>,
    pub max_bytes: Option<usize>,
    pub max_redirects: Option<usize>,
    pub allow_private_addresses: Option<bool>,
    pub robots: Option<String>,
}

/// `[llm]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct FileLlm {
    pub backend: Option<String>,
    pub api_key: Option<String>,
    pub url: Option<String>,
    pub model: Option<String>,
    pub context_tokens: Option<u32>,
    pub max_answer_tokens: Option<u32>,
    pub answer_language: Option<String>,
    pub timeout_secs: Option<u64>,
}

/// Where the config file is looked for when `--config` is not given:
/// `$GROUND_CONFIG`, else `$XDG_CONFIG_HOME/ground/config.toml`, else
/// `$HOME/.config/ground/config.toml`.
pub fn default_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = env("GROUND_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let base = env("XDG_CONFIG_HOME")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|p| !p.is_empty())
                .map(|h| Path::new(&h).join(".config"))
        })?;
    Some(base.join("ground").join("config.toml"))
}

/// Reads and parses a config file. `explicit` says whether the user named it (then a
/// missing file is an error) or it is the default location (then missing is fine).
pub fn load_file(path: &Path, explicit: bool) -> Result<Option<FileConfig>, Error> {
    let text = match read_capped(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !explicit => return Ok(None),
        Err(e) => {
            return Err(Error::Config {
                message: format!("cannot read config file {}: {e}", path.display()),
                hint: "check the path given to --config (or GROUND_CONFIG)".into(),
            });
        }
    };
    toml::from_str(&text).map(Some).map_err(|e| Error::Config {
        message: format!(
            "config file {} is not valid: {}",
            path.display(),
            crate::text::shorten(e.message(), 160)
        ),
        hint: "compare it with config.example.toml (keys and types)".into(),
    })
}

/// Largest config file read: far more than any real one, and a bound for
/// `--config /dev/zero`.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Reads a config file of at most [`MAX_CONFIG_BYTES`]; a longer one is an error.
fn read_capped(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_CONFIG_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("it is larger than {} KiB", MAX_CONFIG_BYTES / 1024),
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

/// Resolves every setting: flags > environment > config file > OS keyring (API keys
/// only) > defaults. The keyring is asked only for a key that is needed and set
/// nowhere else, with [`keystore::get`] (bounded by [`keystore::TIMEOUT`]).
pub fn resolve(flags: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
    resolve_with_keyring(flags, env, &keystore::get)
}

/// [`resolve`] with the keyring given as a lookup function, as the environment is,
/// so that tests need no keyring daemon.
pub fn resolve_with_keyring(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Settings, Error> {
    let file = match &flags.config_path {
        Some(path) => load_file(path, true)?,
        None => match default_config_path(env) {
            Some(path) => load_file(&path, env("GROUND_CONFIG").is_some())?,
            None => None,
        },
    }
    .unwrap_or_default();
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());

    let search_backend = choose(
        flags.search_backend,
        [
            ("GROUND_SEARCH", env("GROUND_SEARCH")),
            ("[search] backend", file.search.backend.clone()),
        ],
        SearchBackend::parse,
        "not searxng, brave or tavily",
        "use searxng (your own instance), brave or tavily (hosted, with an API key)",
    )?
    .unwrap_or(SearchBackend::Searxng);
    let (search_urls, source): (Vec<String>, &str) = match search_backend {
        SearchBackend::Searxng if !flags.searxng_urls.is_empty() => {
            (flags.searxng_urls.clone(), "--searxng-url")
        }
        SearchBackend::Searxng if env("GROUND_SEARXNG_URL").is_some() => (
            env("GROUND_SEARXNG_URL")
                .unwrap_or_default()
                .split(',')
                .map(|u| u.trim().to_string())
                .filter(|u| !u.is_empty())
                .collect(),
            "GROUND_SEARXNG_URL",
        ),
        SearchBackend::Searxng => (
            file.search
                .url
                .iter()
                .chain(file.search.urls.iter().flatten())
                .cloned()
                .collect(),
            "[search] url / urls",
        ),
        _ => (file.search.url.iter().cloned().collect(), "[search] url"),
    };
    let mut parsed_urls = Vec::new();
    for url in &search_urls {
        let url = parse_base_url(url, source)?;
        if !parsed_urls.contains(&url) {
            parsed_urls.push(url);
        }
    }
    if parsed_urls.is_empty() {
        parsed_urls.push(parse_base_url(search_backend.default_url(), "the default")?);
    }
    let search_url = parsed_urls.remove(0);
    let search_key = match search_backend {
        SearchBackend::Searxng => None,
        SearchBackend::Brave => env("GROUND_BRAVE_API_KEY").or_else(|| env("BRAVE_API_KEY")),
        SearchBackend::Tavily => env("GROUND_TAVILY_API_KEY").or_else(|| env("TAVILY_API_KEY")),
    }
    .or_else(|| {
        file.search
            .api_key
            .clone()
            .filter(|_| search_backend != SearchBackend::Searxng)
    })
    .filter(|k| !k.trim().is_empty())
    .map(|k| Secret::new(&k));
    let search_key = match (search_key, key_name(search_backend)) {
        (Some(key), _) => Some(key),
        (None, None) => None,
        (None, Some(name)) => match keyring(name) {
            Lookup::Found(key) => Some(Secret::new(&key)),
            Lookup::Absent => {
                return Err(Error::MissingKey {
                    backend: search_backend,
                    keyring: None,
                });
            }
            Lookup::Unavailable(reason) => {
                return Err(Error::MissingKey {
                    backend: search_backend,
                    keyring: Some(reason),
                });
            }
        },
    };

    let backend = choose(
        flags.llm_backend,
        [
            ("GROUND_LLM", env("GROUND_LLM")),
            ("[llm] backend", file.llm.backend.clone()),
        ],
        LlmBackend::parse,
        "not ollama or openai",
        "use ollama (Ollama's own API) or openai (llama.cpp, vLLM, LM Studio, hosted)",
    )?
    .unwrap_or(LlmBackend::Ollama);
    let llm_url = match flags
        .llm_url
        .clone()
        .map(|v| (v, "--llm-url"))
        .or_else(|| env("GROUND_LLM_URL").map(|v| (v, "GROUND_LLM_URL")))
    {
        Some((v, origin)) => parse_base_url(&v, origin)?,
        None => match (backend, env("OLLAMA_HOST"), file.llm.url.as_deref()) {
            (LlmBackend::Ollama, Some(host), _) => {
                parse_base_url(&ollama_host_to_url(&host), "OLLAMA_HOST")?
            }
            (_, _, Some(url)) => parse_base_url(url, "[llm] url")?,
            (LlmBackend::Ollama, None, None) => parse_base_url(DEFAULT_OLLAMA_URL, "the default")?,
            (LlmBackend::OpenAi, _, None) => parse_base_url(DEFAULT_OPENAI_URL, "the default")?,
        },
    };
    let api_key = env("GROUND_LLM_API_KEY")
        .or_else(|| file.llm.api_key.clone())
        .filter(|k| !k.trim().is_empty())
        .or_else(|| {
            // Only a hosted server needs a key: a local one is never worth a keyring
            // lookup (nor its warning when there is no keyring).
            if backend != LlmBackend::OpenAi || is_local(&llm_url) {
                return None;
            }
            match keyring(KeyName::Llm) {
                Lookup::Found(key) => Some(key),
                Lookup::Absent | Lookup::Unavailable(_) => None,
            }
        })
        .map(|k| Secret::new(&k));

    let time_range = choose(
        flags.time_range,
        [("[search] time_range", file.search.time_range.clone())],
        TimeRange::parse,
        "not one of day, week, month, year",
        "use --time-range day|week|month|year",
    )?;
    let safesearch = flags.safesearch.or(file.search.safesearch);
    if let Some(level) = safesearch.filter(|l| *l > 2) {
        return Err(Error::Config {
            message: format!("safesearch level {level} is not 0, 1 or 2"),
            hint: "use --safesearch 0 (off), 1 (moderate) or 2 (strict)".into(),
        });
    }

    let pages = pick_number(
        flags.pages,
        env("GROUND_PAGES"),
        "GROUND_PAGES",
        file.fetch.pages,
    )?
    .unwrap_or(3);
    check_range("pages", pages as u64, 1, 20)?;
    let context_tokens = pick_number(
        flags.context_tokens,
        env("GROUND_CONTEXT_TOKENS"),
        "GROUND_CONTEXT_TOKENS",
        file.llm.context_tokens,
    )?
    .unwrap_or(DEFAULT_CONTEXT_TOKENS);
    check_range("context tokens", context_tokens.into(), 1024, 1_048_576)?;
    let max_answer_tokens = pick_number(
        flags.max_answer_tokens,
        env("GROUND_MAX_ANSWER_TOKENS"),
        "GROUND_MAX_ANSWER_TOKENS",
        file.llm.max_answer_tokens,
    )?;
    let max_answer_tokens = match max_answer_tokens {
        None => default_answer_tokens(context_tokens),
        Some(set) => {
            check_answer_tokens(set, context_tokens)?;
            set
        }
    };

    let answer_language = flags
        .answer_language
        .clone()
        .map(|v| (v, "--answer-language"))
        .or_else(|| env("GROUND_ANSWER_LANGUAGE").map(|v| (v, "GROUND_ANSWER_LANGUAGE")))
        .or_else(|| {
            file.llm
                .answer_language
                .clone()
                .map(|v| (v, "[llm] answer_language"))
        });
    let answer_language = match answer_language {
        Some((code, _)) if code.trim().eq_ignore_ascii_case("auto") => None,
        Some((code, origin)) if !crate::language::valid_code(code.trim()) => {
            return Err(Error::Config {
                message: format!("{origin} {code:?} is not a language code"),
                hint: format!(
                    "give {origin} a code such as de, fr or pt-BR, or auto for the question's language"
                ),
            });
        }
        Some((code, _)) => Some(code.trim().to_string()),
        None => None,
    };
    let model = flags
        .model
        .clone()
        .or_else(|| env("GROUND_MODEL"))
        .or_else(|| file.llm.model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.into());
    let allow_private_addresses = flags.allow_private_addresses
        || match env("GROUND_ALLOW_PRIVATE_ADDRESSES") {
            Some(v) => parse_bool(&v, "GROUND_ALLOW_PRIVATE_ADDRESSES")?,
            None => file.fetch.allow_private_addresses.unwrap_or(false),
        };
    let robots = match (flags.robots, &file.fetch.robots) {
        (Some(policy), _) => policy,
        (None, Some(value)) => RobotsPolicy::parse(value).ok_or_else(|| Error::Config {
            message: format!("[fetch] robots = {value:?} is not agents, always or never"),
            hint: "set [fetch] robots to \"agents\" (the default), \"always\" or \"never\"".into(),
        })?,
        (None, None) => RobotsPolicy::Agents,
    };
    let obey_robots = match robots {
        RobotsPolicy::Always => true,
        RobotsPolicy::Never => false,
        RobotsPolicy::Agents => flags.agent,
    };

    let queries = flags.queries.or(file.run.queries).unwrap_or(1);
    check_range("queries", queries as u64, 1, 3)?;
    let max_searches = flags.max_searches.or(file.run.max_searches).unwrap_or(3);
    check_range("max searches", max_searches as u64, 1, 100)?;
    let fallback_offline = choose(
        flags.fallback,
        [("[run] fallback", file.run.fallback.clone())],
        Fallback::parse,
        "not fail or offline",
        "use --fallback fail (the default) or --fallback offline",
    )? == Some(Fallback::Offline);
    let run = RunSettings {
        timeout: secs(
            flags.timeout_secs.or(file.run.timeout_secs),
            600,
            "--timeout / [run] timeout_secs",
        )?,
        max_searches,
        queries,
        auto: flags.auto || file.run.auto.unwrap_or(false),
        fallback_offline,
        region: flags.region.clone().or(file.run.region.clone()),
        session_searches: flags
            .session_searches
            .or(file.run.session_searches)
            .unwrap_or(100),
        pack: flags.pack,
        plan_mode: choose(
            flags.plan_mode,
            [("[run] plan_mode", file.run.plan_mode.clone())],
            PlanMode::parse,
            "not rounds or concurrent",
            "use plan_mode = \"rounds\" (the default) or \"concurrent\"",
        )?
        .unwrap_or(PlanMode::Rounds),
        session_reuse: Duration::from_secs(flags.reuse_secs.or(file.run.reuse_secs).unwrap_or(600)),
    };
    check_range("reuse secs", run.session_reuse.as_secs(), 0, 86_400)?;
    check_range("session searches", run.session_searches as u64, 1, 100_000)?;
    let cache_dir = env("GROUND_CACHE_DIR")
        .map(PathBuf::from)
        .or(file.cache.dir.clone())
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("ground")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache").join("ground")));
    let state_dir = env("GROUND_STATE_DIR")
        .map(PathBuf::from)
        .or_else(|| env("XDG_STATE_HOME").map(|d| Path::new(&d).join("ground")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local").join("state").join("ground")));
    let max_per_minute = pick_number(
        flags.max_per_minute,
        env("GROUND_MAX_PER_MINUTE"),
        "GROUND_MAX_PER_MINUTE",
        file.search.max_per_minute,
    )?
    .unwrap_or(10);
    check_range(
        "--max-per-minute / [search] max_per_minute",
        u64::from(max_per_minute),
        0,
        10_000,
    )?;
    let cache = CacheSettings {
        dir: cache_dir,
        mode: if flags.no_cache || file.cache.enabled == Some(false) {
            CacheMode::Off
        } else if flags.refresh {
            CacheMode::Refresh
        } else {
            CacheMode::Use
        },
        search_ttl: Duration::from_secs(
            3600 * file.cache.search_ttl_hours.unwrap_or(24).clamp(0, 24 * 365),
        ),
        page_ttl: Duration::from_secs(
            3600 * file.cache.page_ttl_hours.unwrap_or(24).clamp(0, 24 * 365),
        ),
        max_bytes: file.cache.max_mb.unwrap_or(200).clamp(1, 100_000) * 1024 * 1024,
    };

    Ok(Settings {
        run,
        cache,
        search: SearchSettings {
            backend: search_backend,
            api_key: search_key,
            url: search_url,
            fallback_urls: parsed_urls,
            language: flags.language.clone().or(file.search.language),
            categories: flags.categories.clone().or(file.search.categories),
            engines: flags.engines.clone().or(file.search.engines),
            time_range,
            safesearch,
            timeout: secs(file.search.timeout_secs, 20, "[search] timeout_secs")?,
            max_results: file.search.max_results.unwrap_or(20).clamp(1, 100),
            max_per_minute,
            monthly_quota: file.search.monthly_quota,
            state_dir,
            log_searches: flags.log_searches || file.privacy.log_searches.unwrap_or(false),
        },
        fetch: FetchSettings {
            pages,
            connect_timeout: secs(
                file.fetch.connect_timeout_secs,
                5,
                "[fetch] connect_timeout_secs",
            )?,
            timeout: secs(file.fetch.timeout_secs, 15, "[fetch] timeout_secs")?,
            max_bytes: file
                .fetch
                .max_bytes
                .unwrap_or(2 * 1024 * 1024)
                .clamp(1024, 64 * 1024 * 1024),
            max_redirects: file.fetch.max_redirects.unwrap_or(5).min(20),
            allow_private_addresses,
            obey_robots,
        },
        llm: LlmSettings {
            backend,
            api_key,
            url: llm_url,
            model,
            context_tokens,
            max_answer_tokens,
            answer_language,
            timeout: secs(file.llm.timeout_secs, 300, "[llm] timeout_secs")?,
        },
    })
}

/// The keyring name of a search backend's key; `None` for SearXNG, which needs none.
pub fn key_name(backend: SearchBackend) -> Option<KeyName> {
    match backend {
        SearchBackend::Searxng => None,
        SearchBackend::Brave => Some(KeyName::Brave),
        SearchBackend::Tavily => Some(KeyName::Tavily),
    }
}

/// Whether a server runs on this machine (loopback or `localhost`).
fn is_local(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    }
}

/// Where a key comes from at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// An environment variable, named.
    Env(&'static str),
    /// The config file, with the setting's name.
    File(&'static str),
    /// The OS keyring.
    Keyring,
    /// Nowhere; with the reason when the keyring could not be asked.
    None(Option<String>),
}

/// Where each key would come from, in the order flag > env > config > keyring,
/// without the key itself. The config file's `[search] api_key` belongs to the
/// search backend chosen by `--search`, `GROUND_SEARCH` or `[search] backend`.
pub fn key_sources(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Vec<(KeyName, KeySource)>, Error> {
    let file = match &flags.config_path {
        Some(path) => load_file(path, true)?,
        None => match default_config_path(env) {
            Some(path) => load_file(&path, env("GROUND_CONFIG").is_some())?,
            None => None,
        },
    }
    .unwrap_or_default();
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let set = |v: &Option<String>| v.as_deref().is_some_and(|k| !k.trim().is_empty());
    let backend = flags
        .search_backend
        .or_else(|| env("GROUND_SEARCH").and_then(|b| SearchBackend::parse(&b)))
        .or_else(|| {
            file.search
                .backend
                .as_deref()
                .and_then(SearchBackend::parse)
        });
    let mut out = Vec::new();
    for name in KeyName::ALL {
        let vars: &[&'static str] = match name {
            KeyName::Brave => &["GROUND_BRAVE_API_KEY", "BRAVE_API_KEY"],
            KeyName::Tavily => &["GROUND_TAVILY_API_KEY", "TAVILY_API_KEY"],
            KeyName::Llm => &["GROUND_LLM_API_KEY"],
        };
        let in_file = match name {
            KeyName::Llm => set(&file.llm.api_key).then_some("[llm] api_key"),
            _ => (set(&file.search.api_key) && backend.and_then(key_name) == Some(name))
                .then_some("[search] api_key"),
        };
        let source = if let Some(var) = vars.iter().find(|v| env(v).is_some()) {
            KeySource::Env(var)
        } else if let Some(setting) = in_file {
            KeySource::File(setting)
        } else {
            match keyring(name) {
                Lookup::Found(_) => KeySource::Keyring,
                Lookup::Absent => KeySource::None(None),
                Lookup::Unavailable(reason) => KeySource::None(Some(reason)),
            }
        };
        out.push((name, source));
    }
    Ok(out)
}

/// Turns Ollama's `OLLAMA_HOST` forms (`host`, `host:port`, `:port`, `scheme://host`)
/// into a base URL, defaulting to http and port 11434 as Ollama's own client does.
pub fn ollama_host_to_url(host: &str) -> String {
    let host = host.trim().trim_end_matches('/');
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme.to_string(), rest.to_string()),
        None => ("http".to_string(), host.to_string()),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (rest[..i].to_string(), rest[i..].to_string()),
        None => (rest, String::new()),
    };
    let has_port = authority.rsplit_once(':').is_some_and(|(h, p)| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()) && !h.ends_with(':')
    }) && !(authority.starts_with('[') && authority.ends_with(']'));
    let authority = if authority.is_empty() {
        "127.0.0.1:11434".to_string()
    } else if let Some(port) = authority.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else if has_port {
        authority
    } else if scheme == "https" {
        format!("{authority}:443")
    } else {
        format!("{authority}:11434")
    };
    format!("{scheme}://{authority}{path}")
}

/// The first of a closed-set setting's sources that is set: the flag (already typed
/// by the command line), else each `(origin, text)` in order, parsed with `parse`. A
/// text that does not parse is a usage error naming its origin.
fn choose<T, const N: usize>(
    flag: Option<T>,
    sources: [(&str, Option<String>); N],
    parse: fn(&str) -> Option<T>,
    expected: &str,
    hint: &str,
) -> Result<Option<T>, Error> {
    if flag.is_some() {
        return Ok(flag);
    }
    for (origin, value) in sources {
        if let Some(value) = value {
            return match parse(&value) {
                Some(choice) => Ok(Some(choice)),
                None => Err(Error::Config {
                    message: format!("{origin} is {value:?}, {expected}"),
                    hint: hint.to_string(),
                }),
            };
        }
    }
    Ok(None)
}

fn parse_base_url(value: &str, origin: &str) -> Result<Url, Error> {
    let url = Url::parse(value.trim()).map_err(|e| Error::Config {
        message: format!("{origin} is not a valid URL ({value:?}: {e})"),
        hint: format!("give {origin} a full URL such as http://localhost:8080"),
    })?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(Error::Config {
            message: format!("{origin} must be an http(s) URL with a host, not {value:?}"),
            hint: format!("give {origin} a full URL such as http://localhost:8080"),
        });
    }
    Ok(url)
}

fn pick_number<T: std::str::FromStr + Copy>(
    flag: Option<T>,
    env_value: Option<String>,
    env_name: &str,
    file: Option<T>,
) -> Result<Option<T>, Error> {
    if flag.is_some() {
        return Ok(flag);
    }
    if let Some(v) = env_value {
        return v.trim().parse().map(Some).map_err(|_| Error::Config {
            message: format!("{env_name}={v:?} is not a whole number"),
            hint: format!("set {env_name} to a number, or unset it"),
        });
    }
    Ok(file)
}

/// The answer reserve when none is set: a quarter of the window, at most 1024 (so
/// 1024 for windows of 4096 and up, 256 for the smallest, 1024-token window), always
/// within the valid range `64..=context/2`.
pub fn default_answer_tokens(context_tokens: u32) -> u32 {
    (context_tokens / 4).clamp(64, 1024)
}

/// An explicit answer reserve must be at least 64 and at most half the window; the
/// hint names both numbers and both ways out.
fn check_answer_tokens(max_answer_tokens: u32, context_tokens: u32) -> Result<(), Error> {
    if max_answer_tokens < 64 {
        return check_range("max answer tokens", max_answer_tokens.into(), 64, 64);
    }
    let most = context_tokens / 2;
    if max_answer_tokens > most {
        return Err(Error::Config {
            message: format!(
                "max answer tokens is {max_answer_tokens}, more than half of the {context_tokens}-token context window"
            ),
            hint: format!(
                "lower --max-answer-tokens to at most {most} (half of --context-tokens {context_tokens}), raise --context-tokens to at least {}, or leave --max-answer-tokens unset to scale it with the window",
                max_answer_tokens.saturating_mul(2)
            ),
        });
    }
    Ok(())
}

fn check_range(name: &str, value: u64, min: u64, max: u64) -> Result<(), Error> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(Error::Config {
            message: format!("{name} is {value}, outside {min}..={max}"),
            hint: format!("choose {name} between {min} and {max}"),
        })
    }
}

fn secs(value: Option<u64>, default: u64, name: &str) -> Result<Duration, Error> {
    let value = value.unwrap_or(default);
    check_range(name, value, 1, 3600)?;
    Ok(Duration::from_secs(value))
}

fn parse_bool(value: &str, name: &str) -> Result<bool, Error> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(Error::Config {
            message: format!("{name}={value:?} is not a boolean"),
            hint: format!("set {name} to true or false"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The resolution under test, with no keyring at all.
    fn resolve(flags: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
        resolve_with_keyring(flags, env, &|_| Lookup::Absent)
    }

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_apply_without_anything() {
        let s = resolve(&Overrides::default(), &env_of(&[])).unwrap();
        assert_eq!(s.search.url.as_str(), "http://localhost:8080/");
        assert_eq!(s.llm.url.as_str(), "http://localhost:11434/");
        assert_eq!(s.fetch.pages, 3);
        assert_eq!(s.llm.context_tokens, 4096);
        assert!(!s.fetch.allow_private_addresses);
    }

    #[test]
    fn the_answer_reserve_scales_with_a_small_window() {
        for (window, reserve) in [
            (1024, 256),
            (2048, 512),
            (3000, 750),
            (4096, 1024),
            (32768, 1024),
        ] {
            let flags = Overrides {
                context_tokens: Some(window),
                ..Default::default()
            };
            let s = resolve(&flags, &env_of(&[])).unwrap();
            assert_eq!(s.llm.max_answer_tokens, reserve, "window {window}");
            assert!(reserve <= window / 2 && reserve >= 64);
        }
    }

    #[test]
    fn an_explicit_reserve_too_big_for_the_window_names_both_numbers() {
        let flags = Overrides {
            context_tokens: Some(1024),
            max_answer_tokens: Some(1024),
            ..Default::default()
        };
        let e = resolve(&flags, &env_of(&[])).unwrap_err();
        let (message, hint) = (e.to_string(), e.hint().unwrap());
        assert!(
            message.contains("1024") && message.contains("1024-token"),
            "{message}"
        );
        assert!(
            hint.contains("at most 512") && hint.contains("--context-tokens 1024"),
            "{hint}"
        );
        assert!(hint.contains("at least 2048"), "{hint}");
        // The environment counts as explicit too.
        let flags = Overrides {
            context_tokens: Some(1024),
            ..Default::default()
        };
        let e = resolve(&flags, &env_of(&[("GROUND_MAX_ANSWER_TOKENS", "600")])).unwrap_err();
        assert!(e.hint().unwrap().contains("at most 512"), "{e:?}");
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm]\nmodel = \"from-file\"\n[fetch]\npages = 5\n").unwrap();
        let flags = Overrides {
            config_path: Some(path.clone()),
            ..Default::default()
        };
        let s = resolve(&flags, &env_of(&[("GROUND_MODEL", "from-env")])).unwrap();
        assert_eq!(s.llm.model, "from-env");
        assert_eq!(s.fetch.pages, 5);
        let flags = Overrides {
            model: Some("from-flag".into()),
            ..flags
        };
        let s = resolve(&flags, &env_of(&[("GROUND_MODEL", "from-env")])).unwrap();
        assert_eq!(s.llm.model, "from-flag");
    }

    #[test]
    fn example_config_parses_and_states_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
        let flags = Overrides {
            config_path: Some(path),
            ..Default::default()
        };
        let from_example = resolve(&flags, &env_of(&[])).unwrap();
        let defaults = resolve(&Overrides::default(), &env_of(&[])).unwrap();
        assert_eq!(format!("{from_example:?}"), format!("{defaults:?}"));
    }

    #[test]
    fn ollama_host_forms() {
        assert_eq!(ollama_host_to_url("0.0.0.0"), "http://0.0.0.0:11434");
        assert_eq!(
            ollama_host_to_url("example.com:1234"),
            "http://example.com:1234"
        );
        assert_eq!(ollama_host_to_url(":5000"), "http://127.0.0.1:5000");
        assert_eq!(
            ollama_host_to_url("https://ollama.internal"),
            "https://ollama.internal:443"
        );
        assert_eq!(ollama_host_to_url("http://h:1/"), "http://h:1");
        let s = resolve(
            &Overrides::default(),
            &env_of(&[("OLLAMA_HOST", "10.0.0.2")]),
        )
        .unwrap();
        assert_eq!(s.llm.url.as_str(), "http://10.0.0.2:11434/");
    }

    #[test]
    fn openai_backend_and_secret_key() {
        let flags = Overrides {
            llm_backend: Some(LlmBackend::OpenAi),
            ..Default::default()
        };
        let s = resolve(
            &flags,
            &env_of(&[
                ("OLLAMA_HOST", "x:1"),
                ("GROUND_LLM_API_KEY", "sk-secret-123"),
            ]),
        )
        .unwrap();
        assert_eq!(s.llm.backend, LlmBackend::OpenAi);
        assert_eq!(
            s.llm.url.as_str(),
            "http://localhost:8080/v1",
            "OLLAMA_HOST is Ollama's only"
        );
        assert_eq!(s.llm.api_key.as_ref().unwrap().expose(), "sk-secret-123");
        assert!(
            !format!("{s:?}").contains("sk-secret-123"),
            "keys never appear in Debug output"
        );
        // A bad flag value cannot reach here (the command line's enum refuses it); a bad
        // environment value is a configuration error naming its origin.
        assert!(matches!(
            resolve(&Overrides::default(), &env_of(&[("GROUND_LLM", "gpt")])),
            Err(Error::Config { .. })
        ));
    }

    #[test]
    fn hosted_search_needs_a_key() {
        let flags = Overrides {
            search_backend: Some(SearchBackend::Tavily),
            ..Default::default()
        };
        let err = resolve(&flags, &env_of(&[])).unwrap_err();
        assert!(
            err.hint().unwrap().contains("GROUND_TAVILY_API_KEY"),
            "{err:?}"
        );
        let s = resolve(&flags, &env_of(&[("TAVILY_API_KEY", "tvly-secret")])).unwrap();
        assert_eq!(s.search.url.as_str(), "https://api.tavily.com/");
        assert!(!format!("{s:?}").contains("tvly-secret"));
    }

    /// A keyring holding `pairs`, recording which names were asked for.
    fn keyring_of(
        pairs: &[(KeyName, &str)],
        asked: &std::cell::RefCell<Vec<KeyName>>,
    ) -> impl Fn(KeyName) -> Lookup {
        let map: Vec<(KeyName, String)> = pairs.iter().map(|(n, k)| (*n, k.to_string())).collect();
        move |name| {
            asked.borrow_mut().push(name);
            map.iter()
                .find(|(n, _)| *n == name)
                .map_or(Lookup::Absent, |(_, k)| Lookup::Found(k.clone()))
        }
    }

    #[test]
    fn keys_come_from_env_then_config_then_keyring() {
        let dir = tempfile::tempdir().unwrap();
        let with_key = dir.path().join("with-key.toml");
        std::fs::write(&with_key, "[search]\napi_key = \"BSAfromTHEfile\"\n").unwrap();
        let brave = |config: Option<&Path>| Overrides {
            search_backend: Some(SearchBackend::Brave),
            config_path: config.map(Path::to_path_buf),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Brave, "BSAfromTHEkeyring")], &asked);
        let key = |flags: &Overrides, env: &[(&str, &str)]| {
            resolve_with_keyring(flags, &env_of(env), &keyring)
                .unwrap()
                .search
                .api_key
                .unwrap()
                .expose()
                .to_string()
        };
        // env > config > keyring, and the keyring is asked only when nothing else has it.
        let env = [("GROUND_BRAVE_API_KEY", "BSAfromTHEenv")];
        assert_eq!(key(&brave(Some(&with_key)), &env), "BSAfromTHEenv");
        assert_eq!(key(&brave(Some(&with_key)), &[]), "BSAfromTHEfile");
        assert!(asked.borrow().is_empty(), "asked: {:?}", asked.borrow());
        assert_eq!(key(&brave(None), &[]), "BSAfromTHEkeyring");
        assert_eq!(*asked.borrow(), [KeyName::Brave]);
        // SearXNG needs no key and never asks.
        asked.borrow_mut().clear();
        resolve_with_keyring(&Overrides::default(), &env_of(&[]), &keyring).unwrap();
        assert!(asked.borrow().is_empty());
    }

    #[test]
    fn a_keyring_without_the_key_or_unreachable_is_an_error_only_when_needed() {
        let tavily = Overrides {
            search_backend: Some(SearchBackend::Tavily),
            ..Default::default()
        };
        let absent = |_| Lookup::Absent;
        let err = resolve_with_keyring(&tavily, &env_of(&[]), &absent).unwrap_err();
        assert!(matches!(err, Error::MissingKey { keyring: None, .. }));
        assert!(
            err.hint().unwrap().contains("ground key set tavily"),
            "{err:?}"
        );

        let locked = |_| Lookup::Unavailable("the collection is locked".into());
        let err = resolve_with_keyring(&tavily, &env_of(&[]), &locked).unwrap_err();
        assert!(
            err.to_string().contains("the collection is locked"),
            "{err}"
        );
        assert!(err.hint().unwrap().contains("ground key set tavily"));
        // Not needed: no error, whatever the keyring says.
        assert!(resolve_with_keyring(&Overrides::default(), &env_of(&[]), &locked).is_ok());
        let hosted = Overrides {
            llm_backend: Some(LlmBackend::OpenAi),
            llm_url: Some("https://api.example.com/v1".into()),
            ..Default::default()
        };
        let s = resolve_with_keyring(&hosted, &env_of(&[]), &locked).unwrap();
        assert!(s.llm.api_key.is_none());
    }

    #[test]
    fn the_model_key_comes_from_the_keyring_only_for_a_hosted_server() {
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Llm, "sk-from-keyring")], &asked);
        let openai = |url: &str| Overrides {
            llm_backend: Some(LlmBackend::OpenAi),
            llm_url: Some(url.into()),
            ..Default::default()
        };
        let s = resolve_with_keyring(
            &openai("https://api.example.com/v1"),
            &env_of(&[]),
            &keyring,
        )
        .unwrap();
        assert_eq!(s.llm.api_key.unwrap().expose(), "sk-from-keyring");
        let env = [("GROUND_LLM_API_KEY", "sk-from-env")];
        let s = resolve_with_keyring(
            &openai("https://api.example.com/v1"),
            &env_of(&env),
            &keyring,
        )
        .unwrap();
        assert_eq!(s.llm.api_key.unwrap().expose(), "sk-from-env");
        asked.borrow_mut().clear();
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:8080/v1",
            "http://[::1]:1/",
        ] {
            let s = resolve_with_keyring(&openai(local), &env_of(&[]), &keyring).unwrap();
            assert!(s.llm.api_key.is_none(), "{local}");
        }
        assert!(
            asked.borrow().is_empty(),
            "a local server never asks the keyring"
        );
    }

    #[test]
    fn key_sources_name_where_each_key_comes_from() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("c.toml");
        std::fs::write(
            &config,
            "[search]\nbackend = \"tavily\"\napi_key = \"tvly-file\"\n[llm]\napi_key = \"sk-file\"\n",
        )
        .unwrap();
        let flags = Overrides {
            config_path: Some(config),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Brave, "BSAfromTHEkeyring")], &asked);
        let sources = key_sources(
            &flags,
            &env_of(&[("GROUND_LLM_API_KEY", "sk-env")]),
            &keyring,
        )
        .unwrap();
        assert_eq!(
            sources,
            [
                (KeyName::Brave, KeySource::Keyring),
                (KeyName::Tavily, KeySource::File("[search] api_key")),
                (KeyName::Llm, KeySource::Env("GROUND_LLM_API_KEY")),
            ]
        );
        let locked = |_| Lookup::Unavailable("locked".into());
        let sources = key_sources(&Overrides::default(), &env_of(&[]), &locked).unwrap();
        assert_eq!(
            sources[0],
            (KeyName::Brave, KeySource::None(Some("locked".into())))
        );
    }

    #[test]
    fn bad_values_are_config_errors() {
        let bad_url = Overrides {
            searxng_urls: vec!["localhost:8080".into()],
            ..Default::default()
        };
        assert!(matches!(
            resolve(&bad_url, &env_of(&[])),
            Err(Error::Config { .. })
        ));
        assert!(matches!(
            resolve(&Overrides::default(), &env_of(&[("GROUND_PAGES", "many")])),
            Err(Error::Config { .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm]\nmodle = \"x\"\n").unwrap();
        let flags = Overrides {
            config_path: Some(path),
            ..Default::default()
        };
        let err = resolve(&flags, &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("modle"), "{err}");
        let missing = Overrides {
            config_path: Some("/nonexistent/ground.toml".into()),
            ..Default::default()
        };
        assert!(matches!(
            resolve(&missing, &env_of(&[])),
            Err(Error::Config { .. })
        ));
    }
}
