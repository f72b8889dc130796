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

/// SearXNG's address in its Docker image.
pub const DEFAULT_SEARXNG_URL: &str = "http://localhost:8080";
/// Ollama's default address.
pub const DEFAULT_OLLAMA_URL: &str = "http://localhost:11434";
/// A small, widely available instruct model.
pub const DEFAULT_MODEL: &str = "llama3.2";
/// Ollama's default context window on CPUs and small GPUs.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 4096;

/// Everything the pipeline needs to know, fully resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The search stage.
    pub search: SearchSettings,
    /// The fetch stage.
    pub fetch: FetchSettings,
    /// The model stage.
    pub llm: LlmSettings,
    /// The whole run: deadline, search budget, planning.
    pub run: RunSettings,
    /// The on-disk cache of search results and pages.
    pub cache: CacheSettings,
}

/// Settings of one run as a whole.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// Deadline for the whole run (`--timeout`).
    pub timeout: Duration,
    /// Searches one run may make at most (`--max-searches`); the planner never
    /// exceeds it.
    pub max_searches: usize,
    /// Search queries to plan (`--queries`, 1-3; 1 = the question itself).
    pub queries: usize,
    /// Let the model decide whether the question needs the web at all (`--auto`).
    pub auto: bool,
    /// When search fails, answer from the model alone, labelled not grounded
    /// (`--fallback offline`).
    pub fallback_offline: bool,
    /// Region hint for the query planner (`--region`, e.g. `de` or `us`).
    pub region: Option<String>,
    /// Searches one `ground mcp` client session may make in all
    /// (`--session-searches`).
    pub session_searches: usize,
    /// Ask for a grounding pack (`--pack`): the model also lists questions for the
    /// user.
    pub pack: bool,
}

/// Whether and how the cache is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// Read fresh entries, write new ones.
    Use,
    /// Do not read, but write what is fetched (`--refresh`).
    Refresh,
    /// Neither read nor write (`--no-cache`).
    Off,
}

/// The on-disk cache.
#[derive(Debug, Clone)]
pub struct CacheSettings {
    /// Folder of the cache (`$XDG_CACHE_HOME/ground`); `None` when no home is known,
    /// which turns the cache off.
    pub dir: Option<PathBuf>,
    /// Use, refresh or off.
    pub mode: CacheMode,
    /// How long a search result stays fresh.
    pub search_ttl: Duration,
    /// How long a fetched page stays fresh.
    pub page_ttl: Duration,
    /// Size cap; the oldest entries are evicted past it.
    pub max_bytes: u64,
}

/// Which search service to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// The user's own SearXNG (the default).
    Searxng,
    /// Brave Search API (needs a key).
    Brave,
    /// Tavily search API (needs a key).
    Tavily,
}

impl std::fmt::Display for SearchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchBackend::Searxng => "SearXNG",
            SearchBackend::Brave => "Brave Search",
            SearchBackend::Tavily => "Tavily",
        })
    }
}

impl SearchBackend {
    /// Parses `searxng` / `brave` / `tavily`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "searxng" | "searx" => Some(Self::Searxng),
            "brave" => Some(Self::Brave),
            "tavily" => Some(Self::Tavily),
            _ => None,
        }
    }

    /// The environment variable holding this service's API key.
    pub fn key_env(&self) -> &'static str {
        match self {
            SearchBackend::Searxng => "(none)",
            SearchBackend::Brave => "GROUND_BRAVE_API_KEY",
            SearchBackend::Tavily => "GROUND_TAVILY_API_KEY",
        }
    }

    fn default_url(&self) -> &'static str {
        match self {
            SearchBackend::Searxng => DEFAULT_SEARXNG_URL,
            SearchBackend::Brave => "https://api.search.brave.com",
            SearchBackend::Tavily => "https://api.tavily.com",
        }
    }
}

/// Where and how to search.
#[derive(Debug, Clone)]
pub struct SearchSettings {
    /// Which service.
    pub backend: SearchBackend,
    /// Its API key (Brave, Tavily); never printed.
    pub api_key: Option<Secret>,
    /// The service's base URL (for SearXNG, the page with the search box).
    pub url: Url,
    /// `language` parameter, e.g. `en` or `de-CH`.
    pub language: Option<String>,
    /// `categories` parameter, comma-separated.
    pub categories: Option<String>,
    /// `engines` parameter, comma-separated.
    pub engines: Option<String>,
    /// `time_range`: day, week, month or year.
    pub time_range: Option<String>,
    /// `safesearch`: 0, 1 or 2.
    pub safesearch: Option<u8>,
    /// Whole-request limit for the search call.
    pub timeout: Duration,
    /// How many results are read from the reply at most.
    pub max_results: usize,
}

/// How pages are fetched.
#[derive(Debug, Clone)]
pub struct FetchSettings {
    /// How many pages to use (fetched concurrently; failures are replaced by the next
    /// result).
    pub pages: usize,
    /// Limit for connecting to a page's server.
    pub connect_timeout: Duration,
    /// Limit for one page, from request to last byte.
    pub timeout: Duration,
    /// Body bytes read at most (after decompression); the rest is not read.
    pub max_bytes: usize,
    /// Redirects followed at most.
    pub max_redirects: usize,
    /// Allow pages on loopback, private and link-local addresses.
    pub allow_private_addresses: bool,
}

/// Which API the model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmBackend {
    /// Ollama's native `/api/chat` (the default; lets us set the context window).
    Ollama,
    /// `/v1/chat/completions` as served by llama.cpp's llama-server, vLLM, LM Studio
    /// and hosted OpenAI-compatible services.
    OpenAi,
}

impl std::fmt::Display for LlmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LlmBackend::Ollama => "Ollama",
            LlmBackend::OpenAi => "OpenAI-compatible",
        })
    }
}

impl LlmBackend {
    /// Parses `ollama` / `openai` (as in flags, env and the config file).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "ollama" => Some(Self::Ollama),
            "openai" => Some(Self::OpenAi),
            _ => None,
        }
    }
}

/// An API key: never printed (its `Debug` is redacted), only sent to the model server.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The key itself, for the Authorization header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

/// Default URL of an OpenAI-compatible server: llama.cpp's llama-server.
pub const DEFAULT_OPENAI_URL: &str = "http://localhost:8080/v1";

/// Which model to ask and how.
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// Which API to speak.
    pub backend: LlmBackend,
    /// Bearer key for hosted OpenAI-compatible endpoints.
    pub api_key: Option<Secret>,
    /// The model server's base URL.
    pub url: Url,
    /// The model name, e.g. `llama3.2` or `qwen2.5:7b`.
    pub model: String,
    /// The context window to request (`options.num_ctx`) and budget the prompt to.
    pub context_tokens: u32,
    /// Output-token cap (`options.num_predict`), also reserved in the budget.
    pub max_answer_tokens: u32,
    /// Whole-request limit for one model call.
    pub timeout: Duration,
}

/// Values given on the command line; `None` means "not given".
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--config PATH`.
    pub config_path: Option<PathBuf>,
    /// `--search`: searxng, brave or tavily.
    pub search_backend: Option<String>,
    /// `--searxng-url`.
    pub searxng_url: Option<String>,
    /// `--language`.
    pub language: Option<String>,
    /// `--categories`.
    pub categories: Option<String>,
    /// `--engines`.
    pub engines: Option<String>,
    /// `--time-range`.
    pub time_range: Option<String>,
    /// `--safesearch`.
    pub safesearch: Option<u8>,
    /// `--pages`.
    pub pages: Option<usize>,
    /// `--allow-private-addresses`.
    pub allow_private_addresses: bool,
    /// `--llm`: `ollama` or `openai`.
    pub llm_backend: Option<String>,
    /// `--llm-url`.
    pub llm_url: Option<String>,
    /// `--model`.
    pub model: Option<String>,
    /// `--context-tokens`.
    pub context_tokens: Option<u32>,
    /// `--max-answer-tokens`.
    pub max_answer_tokens: Option<u32>,
    /// `--timeout` in seconds.
    pub timeout_secs: Option<u64>,
    /// `--max-searches`.
    pub max_searches: Option<usize>,
    /// `--queries`.
    pub queries: Option<usize>,
    /// `--auto`.
    pub auto: bool,
    /// `--fallback offline|fail`.
    pub fallback: Option<String>,
    /// `--region`.
    pub region: Option<String>,
    /// `--session-searches` (ground mcp).
    pub session_searches: Option<usize>,
    /// `--pack`.
    pub pack: bool,
    /// `--no-cache`.
    pub no_cache: bool,
    /// `--refresh`.
    pub refresh: bool,
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
    pub language: Option<String>,
    pub categories: Option<String>,
    pub engines: Option<String>,
    pub time_range: Option<String>,
    pub safesearch: Option<u8>,
    pub timeout_secs: Option<u64>,
    pub max_results: Option<usize>,
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
    let text = match std::fs::read_to_string(path) {
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
            crate::error::shorten(e.message(), 160)
        ),
        hint: "compare it with config.example.toml (keys and types)".into(),
    })
}

/// Resolves every setting: flags > environment > config file > defaults.
pub fn resolve(flags: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
    let file = match &flags.config_path {
        Some(path) => load_file(path, true)?,
        None => match default_config_path(env) {
            Some(path) => load_file(&path, env("GROUND_CONFIG").is_some())?,
            None => None,
        },
    }
    .unwrap_or_default();
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());

    let search_backend = match flags
        .search_backend
        .clone()
        .map(|v| (v, "--search"))
        .or_else(|| env("GROUND_SEARCH").map(|v| (v, "GROUND_SEARCH")))
        .or_else(|| file.search.backend.clone().map(|v| (v, "[search] backend")))
    {
        Some((value, origin)) => SearchBackend::parse(&value).ok_or_else(|| Error::Config {
            message: format!("{origin} is {value:?}, not searxng, brave or tavily"),
            hint: "use searxng (your own instance), brave or tavily (hosted, with an API key)"
                .into(),
        })?,
        None => SearchBackend::Searxng,
    };
    let search_url = match search_backend {
        SearchBackend::Searxng => flags
            .searxng_url
            .clone()
            .map(|v| (v, "--searxng-url"))
            .or_else(|| env("GROUND_SEARXNG_URL").map(|v| (v, "GROUND_SEARXNG_URL")))
            .or_else(|| file.search.url.clone().map(|v| (v, "[search] url"))),
        _ => file.search.url.clone().map(|v| (v, "[search] url")),
    }
    .unwrap_or_else(|| (search_backend.default_url().into(), "the default"));
    let search_url = parse_base_url(&search_url.0, search_url.1)?;
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
    .map(|k| Secret(k.trim().to_string()));
    if search_backend != SearchBackend::Searxng && search_key.is_none() {
        return Err(Error::Config {
            message: format!("{search_backend} needs an API key and none is set"),
            hint: format!(
                "set {} (or [search] api_key in the config file), or use your SearXNG with --search searxng",
                search_backend.key_env()
            ),
        });
    }

    let backend = match flags
        .llm_backend
        .clone()
        .map(|v| (v, "--llm"))
        .or_else(|| env("GROUND_LLM").map(|v| (v, "GROUND_LLM")))
        .or_else(|| file.llm.backend.clone().map(|v| (v, "[llm] backend")))
    {
        Some((value, origin)) => LlmBackend::parse(&value).ok_or_else(|| Error::Config {
            message: format!("{origin} is {value:?}, not ollama or openai"),
            hint: "use ollama (Ollama's own API) or openai (llama.cpp, vLLM, LM Studio, hosted)"
                .into(),
        })?,
        None => LlmBackend::Ollama,
    };
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
        .map(|k| Secret(k.trim().to_string()));

    let time_range = flags
        .time_range
        .clone()
        .or_else(|| file.search.time_range.clone());
    if let Some(range) = time_range
        .as_ref()
        .filter(|r| !matches!(r.as_str(), "day" | "week" | "month" | "year"))
    {
        return Err(Error::Config {
            message: format!("time range {range:?} is not one of day, week, month, year"),
            hint: "use --time-range day|week|month|year".into(),
        });
    }
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
    )?
    .unwrap_or(1024);
    check_range(
        "max answer tokens",
        max_answer_tokens.into(),
        64,
        u64::from(context_tokens / 2),
    )?;

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

    let queries = flags.queries.or(file.run.queries).unwrap_or(1);
    check_range("queries", queries as u64, 1, 3)?;
    let max_searches = flags.max_searches.or(file.run.max_searches).unwrap_or(3);
    check_range("max searches", max_searches as u64, 1, 100)?;
    let fallback_offline = match flags
        .fallback
        .clone()
        .or(file.run.fallback.clone())
        .as_deref()
    {
        None | Some("fail") => false,
        Some("offline") => true,
        Some(other) => {
            return Err(Error::Config {
                message: format!("fallback {other:?} is not fail or offline"),
                hint: "use --fallback fail (the default) or --fallback offline".into(),
            });
        }
    };
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
    };
    check_range("session searches", run.session_searches as u64, 1, 100_000)?;
    let cache_dir = env("GROUND_CACHE_DIR")
        .map(PathBuf::from)
        .or(file.cache.dir.clone())
        .or_else(|| env("XDG_CACHE_HOME").map(|d| Path::new(&d).join("ground")))
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache").join("ground")));
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
            language: flags.language.clone().or(file.search.language),
            categories: flags.categories.clone().or(file.search.categories),
            engines: flags.engines.clone().or(file.search.engines),
            time_range,
            safesearch,
            timeout: secs(file.search.timeout_secs, 20, "[search] timeout_secs")?,
            max_results: file.search.max_results.unwrap_or(20).clamp(1, 100),
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
        },
        llm: LlmSettings {
            backend,
            api_key,
            url: llm_url,
            model,
            context_tokens,
            max_answer_tokens,
            timeout: secs(file.llm.timeout_secs, 300, "[llm] timeout_secs")?,
        },
    })
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
            llm_backend: Some("openai".into()),
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
        let bad = Overrides {
            llm_backend: Some("gpt".into()),
            ..Default::default()
        };
        assert!(matches!(
            resolve(&bad, &env_of(&[])),
            Err(Error::Config { .. })
        ));
    }

    #[test]
    fn hosted_search_needs_a_key() {
        let flags = Overrides {
            search_backend: Some("tavily".into()),
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

    #[test]
    fn bad_values_are_config_errors() {
        let bad_url = Overrides {
            searxng_url: Some("localhost:8080".into()),
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
