//! The config file: its TOML format, where it is looked for, and reading it.
//!
//! The structs mirror `config.example.toml`, which documents every key and is tested
//! to parse and to state the defaults. Every key is optional (`Option`, sections
//! `#[serde(default)]`), so that "not in the file" stays distinguishable from any
//! value and the resolver can let the environment and the flags win over the file and
//! the file win over the defaults. Unknown keys are refused (`deny_unknown_fields`):
//! a misspelt key is an error naming it, never a setting silently ignored.
//!
//! Reading is bounded at [`MAX_CONFIG_BYTES`] (1 MiB, far more than any real file), so
//! that `--config /dev/zero` or a runaway file is an error and not a hang or an
//! out-of-memory. Nothing here validates values: ranges, URLs and names are checked by
//! the resolver, which knows where each value came from and names that in its errors.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::Error;

/// The config file's shape (config.example.toml documents every key).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileConfig {
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
    /// `[serve]`.
    #[serde(default)]
    pub serve: FileServe,
    /// `[docs]`.
    #[serde(default)]
    pub docs: FileDocs,
    /// `[state]`.
    #[serde(default)]
    pub state: FileState,
}

/// `[state]` in the config file: where replicas of `ground serve` share their state.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileState {
    /// `redis_url`: `redis://` or `rediss://` URL of the shared Redis.
    pub redis_url: Option<String>,
    /// `redis_prefix`: put before every key (one Redis, several deployments).
    pub redis_prefix: Option<String>,
    /// `redis_timeout_ms`: how long one command may take before local state is used.
    pub redis_timeout_ms: Option<u64>,
}

/// `[docs]` in the config file: the local collections every answer searches.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileDocs {
    /// `collections`: names made with `ground index add --collection NAME`.
    pub collections: Option<Vec<String>>,
}

/// `[serve]` in the config file: `ground serve`'s address, key and limits.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileServe {
    /// `listen`: HOST:PORT to bind.
    pub listen: Option<String>,
    /// `api_key`: the key clients must send (required off loopback).
    pub api_key: Option<String>,
    /// `queue`: requests that may wait for a place.
    pub queue: Option<usize>,
    /// `concurrency`: runs at once.
    pub concurrency: Option<usize>,
    /// `cors`: the one browser origin allowed to call the API.
    pub cors: Option<String>,
    /// `max_connections`: connections open at once.
    pub max_connections: Option<usize>,
    /// `header_timeout_secs`: time allowed for a request's headers.
    pub header_timeout_secs: Option<u64>,
    /// `idle_timeout_secs`: how long a kept-alive connection may wait for a request.
    pub idle_timeout_secs: Option<u64>,
    /// `shutdown_grace_secs`: how long the requests under way may take on shutdown.
    pub shutdown_grace_secs: Option<u64>,
    /// `isolate_clients`: no answer reuse or prompt-prefix sharing between clients.
    pub isolate_clients: Option<bool>,
}

/// `[privacy]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FilePrivacy {
    /// `log_searches`: append one JSON line per search to the search log.
    pub log_searches: Option<bool>,
}

/// `[run]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileRun {
    /// `timeout_secs`: deadline for a whole run.
    pub timeout_secs: Option<u64>,
    /// `max_searches`: most searches one run may make.
    pub max_searches: Option<usize>,
    /// `queries`: search queries the model plans from the question.
    pub queries: Option<usize>,
    /// `auto`: ask the model first whether the question needs the web.
    pub auto: Option<bool>,
    /// `fallback`: `fail` or `offline` when search fails.
    pub fallback: Option<String>,
    /// `region`: region hint for the query planner.
    pub region: Option<String>,
    /// `session_searches`: searches one `ground mcp` client session may make.
    pub session_searches: Option<usize>,
    /// `plan_mode`: `rounds` or `concurrent`.
    pub plan_mode: Option<String>,
    /// `reuse_secs`: how long `ground mcp` reuses an answer's evidence.
    pub reuse_secs: Option<u64>,
}

/// `[cache]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileCache {
    /// `enabled`: keep search results and pages on disk.
    pub enabled: Option<bool>,
    /// `dir`: the cache folder.
    pub dir: Option<PathBuf>,
    /// `search_ttl_hours`: how long a search result stays fresh.
    pub search_ttl_hours: Option<u64>,
    /// `page_ttl_hours`: how long a fetched page stays fresh.
    pub page_ttl_hours: Option<u64>,
    /// `max_mb`: size cap in MiB.
    pub max_mb: Option<u64>,
}

/// `[search]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileSearch {
    /// `backend`: `auto`, `searxng`, `brave`, `tavily`, `wikipedia` or `duckduckgo`.
    pub backend: Option<String>,
    /// `api_key`: the key of the backend this section names (`backend`); with `auto`
    /// (or none named), of the service whose form it has.
    pub api_key: Option<String>,
    /// `brave_api_key`: Brave's key, whichever backend is named.
    pub brave_api_key: Option<String>,
    /// `tavily_api_key`: Tavily's key, whichever backend is named.
    pub tavily_api_key: Option<String>,
    /// `url`: the chosen service's base URL (with `auto`: SearXNG's).
    pub url: Option<String>,
    /// `brave_url`: Brave's base URL.
    pub brave_url: Option<String>,
    /// `tavily_url`: Tavily's base URL.
    pub tavily_url: Option<String>,
    /// `wikipedia_url`: Wikipedia's base URL, `{lang}` for the wiki's language.
    pub wikipedia_url: Option<String>,
    /// `duckduckgo_url`: DuckDuckGo's base URL.
    pub duckduckgo_url: Option<String>,
    /// `contact`: an e-mail address or URL sent in the User-Agent to Wikipedia.
    pub contact: Option<String>,
    /// `urls`: further SearXNG instances, tried in order.
    pub urls: Option<Vec<String>>,
    /// `language`, passed to SearXNG.
    pub language: Option<String>,
    /// `categories`, passed to SearXNG.
    pub categories: Option<String>,
    /// `engines`, passed to SearXNG.
    pub engines: Option<String>,
    /// `time_range`: `day`, `week`, `month` or `year`.
    pub time_range: Option<String>,
    /// `safesearch`: 0, 1 or 2.
    pub safesearch: Option<u8>,
    /// `timeout_secs`: limit for the whole search request.
    pub timeout_secs: Option<u64>,
    /// `max_results`: results read from the reply at most.
    pub max_results: Option<usize>,
    /// `max_per_minute`: searches per rolling minute at most.
    pub max_per_minute: Option<u32>,
    /// `monthly_quota`: Brave queries or Tavily credits a month may use.
    pub monthly_quota: Option<u64>,
    /// `sites`: only results on these sites (subdomains included).
    pub sites: Option<Vec<String>>,
    /// `exclude_sites`: no results on these sites.
    pub exclude_sites: Option<Vec<String>>,
    /// `images`: answers also search images for the question (SearXNG or Brave).
    pub images: Option<bool>,
}

/// `[fetch]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileFetch {
    /// `pages`: how many pages to read.
    pub pages: Option<usize>,
    /// `connect_timeout_secs`: limit for connecting to a page's server.
    pub connect_timeout_secs: Option<u64>,
    /// `timeout_secs`: limit for one page.
    pub timeout_secs: Option<u64>,
    /// `max_bytes`: body bytes read per page at most.
    pub max_bytes: Option<usize>,
    /// `max_redirects`: redirects followed per page at most.
    pub max_redirects: Option<usize>,
    /// `allow_private_addresses`: allow pages on loopback and private addresses.
    pub allow_private_addresses: Option<bool>,
    /// `robots`: `agents`, `always` or `never`.
    pub robots: Option<String>,
}

/// `[llm]` in the config file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct FileLlm {
    /// `backend`: `auto`, `ollama`, `openai` or `embedded`.
    pub backend: Option<String>,
    /// `api_key`: bearer key for a hosted OpenAI-compatible server.
    pub api_key: Option<String>,
    /// `url`: the model server's base URL.
    pub url: Option<String>,
    /// `model`: the model's name.
    pub model: Option<String>,
    /// `context_tokens`: the context window.
    pub context_tokens: Option<u32>,
    /// `max_answer_tokens`: cap on the answer's tokens.
    pub max_answer_tokens: Option<u32>,
    /// `answer_language`: the language to answer in, or `auto`.
    pub answer_language: Option<String>,
    /// `timeout_secs`: limit for one model call.
    pub timeout_secs: Option<u64>,
    /// `model_file`: a local GGUF file for the embedded model.
    pub model_file: Option<PathBuf>,
    /// `hub_url`: where embedded models are downloaded from.
    pub hub_url: Option<String>,
    /// `download`: whether a missing embedded model may be downloaded.
    pub download: Option<bool>,
    /// `threads`: threads of the embedded model (0: the physical cores).
    pub threads: Option<usize>,
    /// `gpu_layers`: the embedded model's layers offloaded to the GPU (builds with a
    /// GPU backend; default all).
    pub gpu_layers: Option<u32>,
}

/// Where the config file is looked for when `--config` is not given:
/// `$GROUND_CONFIG`, else `$XDG_CONFIG_HOME/ground/config.toml`, else
/// `$HOME/.config/ground/config.toml`.
pub(crate) fn default_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
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

/// The config file that applies: the one named by `--config` (`config_path`), which
/// must exist, else the one at [`default_config_path`], which must exist only when
/// `GROUND_CONFIG` names it; an empty one (all defaults) when there is none.
pub(super) fn load_chosen(
    config_path: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<FileConfig, Error> {
    Ok(match config_path {
        Some(path) => load_file(path, true)?,
        None => match default_config_path(env) {
            Some(path) => load_file(&path, env("GROUND_CONFIG").is_some())?,
            None => None,
        },
    }
    .unwrap_or_default())
}

/// Reads and parses a config file. `explicit` says whether the user named it (then a
/// missing file is an error) or it is the default location (then missing is fine).
pub(crate) fn load_file(path: &Path, explicit: bool) -> Result<Option<FileConfig>, Error> {
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
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

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
