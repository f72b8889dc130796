//! Settings as plain data: what every stage reads, fully resolved, with the closed
//! sets of choices (backends, time ranges) as enums.
//!
//! Only data and its defaults live here; how flags, the environment and the config
//! file are layered into it is `config`'s job, and the command line is the binary's.
//! Every stage can import this leaf without importing the layers above it.

mod serve;

pub use serve::{DEFAULT_REDIS_PREFIX, DEFAULT_REDIS_TIMEOUT, ServeSettings, SharedState};

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

/// SearXNG's address in its Docker image.
pub const DEFAULT_SEARXNG_URL: &str = "http://localhost:8080";
/// Wikipedia's address, `{lang}` standing for the wiki's language code (`en`, `de`).
pub const DEFAULT_WIKIPEDIA_URL: &str = "https://{lang}.wikipedia.org";
/// The address of DuckDuckGo's HTML results page (the one made for browsers without
/// JavaScript).
pub const DEFAULT_DUCKDUCKGO_URL: &str = "https://html.duckduckgo.com";
/// Searches a rolling minute allows by default, for public services.
pub const DEFAULT_MAX_PER_MINUTE: u32 = 10;
/// The rate limit's rolling window.
pub const RATE_WINDOW: Duration = Duration::from_secs(60);
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
    /// `ground serve`: address, key and limits.
    pub serve: ServeSettings,
    /// Local document collections searched beside the web (`--docs`, `[docs]`).
    pub docs: DocsSettings,
    /// State shared by the replicas of a deployment (`--redis-url`, `[state]`);
    /// `None`: every process keeps its own.
    pub state: Option<SharedState>,
}

/// Local documents in a run (`--docs`, `--no-web`, `[docs] collections`).
#[derive(Debug, Clone, Default)]
pub struct DocsSettings {
    /// Where the collections live (`None` when no home folder is known).
    pub home: Option<crate::index_home::IndexHome>,
    /// The collections searched; none: the web alone.
    pub collections: Vec<String>,
    /// No search request at all: the collections alone.
    pub no_web: bool,
}

impl DocsSettings {
    /// The collections for a server's start-up line: their names, or "none".
    pub fn describe(&self) -> String {
        if self.collections.is_empty() {
            "none".to_string()
        } else {
            self.collections.join(", ")
        }
    }
}

impl Settings {
    /// Every secret these settings hold: the search and model keys, and passwords in
    /// the configured URLs (as written, and percent-decoded).
    pub fn secrets(&self) -> Vec<String> {
        let keys = [&self.search.api_key, &self.llm.api_key, &self.serve.api_key]
            .into_iter()
            .flatten()
            .chain(self.search.hosted.iter().filter_map(|h| h.api_key.as_ref()))
            .map(|k| k.expose().to_string());
        let passwords = std::iter::once(&self.search.url)
            .chain(&self.search.fallback_urls)
            .chain(std::iter::once(&self.llm.url))
            .filter_map(|u| u.password())
            .flat_map(|p| {
                let decoded =
                    url::form_urlencoded::parse(format!("p={}", p.replace('+', "%2B")).as_bytes())
                        .next()
                        .map(|(_, v)| v.into_owned());
                std::iter::once(p.to_string()).chain(decoded)
            });
        let mut all: Vec<String> = keys
            .chain(passwords)
            .filter(|s| !s.trim().is_empty())
            .collect();
        all.dedup();
        all
    }

    /// Hands [`Settings::secrets`] to the redactor ([`crate::text::remember_secret`]),
    /// so text written where only part of the settings reaches (the search log) is
    /// redacted of all of them. The binary calls it once the settings are resolved.
    pub fn remember_secrets(&self) {
        for secret in self.secrets() {
            crate::text::remember_secret(&secret);
        }
    }
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
    /// How planned queries run (`--plan-mode`): in rounds that stop once the
    /// must-have evidence is found (the default), or all at once.
    pub plan_mode: PlanMode,
    /// How long `ground mcp` reuses a `grounded_answer`'s evidence for the same
    /// question in the same session (`--reuse-secs`); zero turns reuse off.
    pub session_reuse: Duration,
}

/// How planned queries run (`--plan-mode`, `[run] plan_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlanMode {
    /// One query per round: search, read its pages, check the must-have evidence, and
    /// search again only while it is missing and the budget allows.
    Rounds,
    /// Every planned query at once (faster, never stops early).
    Concurrent,
}

impl PlanMode {
    /// Parses `rounds` / `concurrent`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "rounds" => Some(Self::Rounds),
            "concurrent" => Some(Self::Concurrent),
            _ => None,
        }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// Pick at run time (the default): the user's SearXNG when one answers, else a
    /// hosted API whose key is set, else Wikipedia (see `search::auto`). Never the
    /// backend of a search that was sent: that is always one of the others.
    Auto,
    /// The user's own SearXNG.
    Searxng,
    /// Brave Search API (needs a key).
    Brave,
    /// Tavily search API (needs a key).
    Tavily,
    /// Wikipedia's own search (MediaWiki's Action API): no key, one encyclopedia.
    Wikipedia,
    /// DuckDuckGo's HTML results page, made for people: opt-in only.
    #[serde(rename = "duckduckgo")]
    DuckDuckGo,
}

impl std::fmt::Display for SearchBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SearchBackend::Auto => "auto",
            SearchBackend::Searxng => "SearXNG",
            SearchBackend::Brave => "Brave Search",
            SearchBackend::Tavily => "Tavily",
            SearchBackend::Wikipedia => "Wikipedia",
            SearchBackend::DuckDuckGo => "DuckDuckGo",
        })
    }
}

impl SearchBackend {
    /// Every choice, in the order help texts list them.
    pub const ALL: [SearchBackend; 6] = [
        Self::Auto,
        Self::Searxng,
        Self::Brave,
        Self::Tavily,
        Self::Wikipedia,
        Self::DuckDuckGo,
    ];

    /// Parses `auto` / `searxng` / `brave` / `tavily` / `wikipedia` / `duckduckgo`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "searxng" | "searx" => Some(Self::Searxng),
            "brave" => Some(Self::Brave),
            "tavily" => Some(Self::Tavily),
            "wikipedia" => Some(Self::Wikipedia),
            "duckduckgo" | "ddg" => Some(Self::DuckDuckGo),
            _ => None,
        }
    }

    /// The environment variable holding this service's API key.
    pub fn key_env(&self) -> &'static str {
        match self {
            SearchBackend::Brave => "GROUND_BRAVE_API_KEY",
            SearchBackend::Tavily => "GROUND_TAVILY_API_KEY",
            _ => "(none)",
        }
    }

    /// The free tier's monthly allowance: Brave 2,000 queries, Tavily 1,000 credits;
    /// `None` for the services that are not counted (SearXNG is the user's own;
    /// Wikipedia and DuckDuckGo have no plans).
    pub fn free_tier(&self) -> Option<u64> {
        match self {
            SearchBackend::Brave => Some(2_000),
            SearchBackend::Tavily => Some(1_000),
            _ => None,
        }
    }

    /// The service's name in the usage file, the search log and `--json`.
    pub fn id(&self) -> &'static str {
        match self {
            SearchBackend::Auto => "auto",
            SearchBackend::Searxng => "searxng",
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
            SearchBackend::Wikipedia => "wikipedia",
            SearchBackend::DuckDuckGo => "duckduckgo",
        }
    }

    /// The service's own address, used when none is configured (Wikipedia's with
    /// `{lang}` in it; `auto` starts with SearXNG).
    pub fn default_url(&self) -> &'static str {
        match self {
            SearchBackend::Auto | SearchBackend::Searxng => DEFAULT_SEARXNG_URL,
            SearchBackend::Brave => "https://api.search.brave.com",
            SearchBackend::Tavily => "https://api.tavily.com",
            SearchBackend::Wikipedia => DEFAULT_WIKIPEDIA_URL,
            SearchBackend::DuckDuckGo => DEFAULT_DUCKDUCKGO_URL,
        }
    }

    /// Whether the service is the user's own by nature: only SearXNG can be (when it
    /// runs on the user's machine or network; see [`SearchSettings::rate_limit`]).
    pub fn can_be_own(&self) -> bool {
        matches!(self, SearchBackend::Auto | SearchBackend::Searxng)
    }
}

/// A rate limit as people say it: "10 a minute", or "10 per 2000 ms" for a window
/// the tests shortened.
pub fn describe_rate(limit: u32, window: Duration) -> String {
    if window == RATE_WINDOW {
        format!("{limit} a minute")
    } else {
        format!("{limit} per {} ms", window.as_millis())
    }
}

/// A hosted search API that `--search auto` may fall back to when no SearXNG answers.
#[derive(Debug, Clone)]
pub struct HostedService {
    /// Brave or Tavily.
    pub backend: SearchBackend,
    /// Its key when the environment or the config file holds one; `None`: the OS
    /// keyring is asked, only when the fallback is needed.
    pub api_key: Option<Secret>,
    /// Its base URL (`[search] brave_url` / `tavily_url`, else its own).
    pub url: Url,
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
    /// Further SearXNG instances, tried in order when the one before is unreachable,
    /// answers 5xx or 429, or has every engine failing (`--searxng-url` given again,
    /// `[search] urls`).
    pub fallback_urls: Vec<Url>,
    /// `language` parameter, e.g. `en` or `de-CH`.
    pub language: Option<String>,
    /// `categories` parameter, comma-separated.
    pub categories: Option<String>,
    /// `engines` parameter, comma-separated.
    pub engines: Option<String>,
    /// `time_range`: day, week, month or year.
    pub time_range: Option<TimeRange>,
    /// `safesearch`: 0, 1 or 2.
    pub safesearch: Option<u8>,
    /// Whole-request limit for the search call.
    pub timeout: Duration,
    /// How many results are read from the reply at most.
    pub max_results: usize,
    /// Searches sent per rolling window at most, shared by every `ground` process of
    /// the user (`--max-per-minute`, `[search] max_per_minute`); 0 = no limit; `None`:
    /// the default, which depends on the service ([`SearchSettings::rate_limit`]).
    pub max_per_minute: Option<u32>,
    /// The rate limit's rolling window: a minute ([`RATE_WINDOW`]). Only the tests
    /// shorten it (`GROUND_TEST_RATE_WINDOW_MS`), to see minutes of pacing in seconds.
    pub rate_window: Duration,
    /// Queries (Brave) or credits (Tavily) a calendar month may use; `None` = the
    /// free tier's ([`SearchBackend::free_tier`]); 0 = no quota.
    pub monthly_quota: Option<u64>,
    /// Folder of the rate limit, usage counts and search log
    /// (`$XDG_STATE_HOME/ground`); `None` when no home is known: then nothing is
    /// counted or limited.
    pub state_dir: Option<PathBuf>,
    /// The Redis shared by replicas ([`SharedState`]): the rate limit's window is
    /// kept there (one window for every process that names it), the state dir
    /// being the fallback while it does not answer.
    pub shared: Option<SharedState>,
    /// Append one JSON line per search to `searches.jsonl` in the state dir
    /// (`[privacy] log_searches`, `--log-searches`).
    pub log_searches: bool,
    /// `--search auto`: the hosted APIs tried, in order, when no SearXNG answers
    /// (Brave, then Tavily); empty for every other choice.
    pub hosted: Vec<HostedService>,
    /// Wikipedia's base URL with `{lang}` for the wiki's language
    /// (`[search] wikipedia_url`, `GROUND_WIKIPEDIA_URL`).
    pub wikipedia_url: String,
    /// DuckDuckGo's base URL (`[search] duckduckgo_url`, `GROUND_DUCKDUCKGO_URL`).
    pub duckduckgo_url: Url,
    /// Who runs this copy of `ground`, for the User-Agent that Wikimedia's policy asks
    /// for (`[search] contact`, `GROUND_CONTACT`): an e-mail address or URL.
    pub contact: Option<String>,
    /// `--site` / `--exclude-site` (`[search] sites`, `exclude_sites`; `GROUND_SITES`,
    /// `GROUND_EXCLUDE_SITES`): told to the service and enforced on its results.
    pub sites: crate::sites::SiteFilter,
    /// `--images`, `[search] images`: an answer also runs one images search for the
    /// question (SearXNG or Brave), its images listed beside the sources; the answer
    /// is unchanged by it, and no image is ever downloaded.
    pub images: bool,
}

impl SearchSettings {
    /// The SearXNG instances, in the order they are tried: `url`, then
    /// `fallback_urls`.
    pub fn searxng_urls(&self) -> impl Iterator<Item = &Url> {
        std::iter::once(&self.url).chain(&self.fallback_urls)
    }

    /// The searches a rolling window allows: the one set (0 = none), else the default
    /// for the service: none for a SearXNG that is the user's own (on this machine or
    /// a private network: it has its own limiter), [`DEFAULT_MAX_PER_MINUTE`] for
    /// everything public (hosted APIs, Wikipedia, DuckDuckGo, SearXNG instances on
    /// public addresses).
    pub fn rate_limit(&self) -> u32 {
        if let Some(set) = self.max_per_minute {
            return set;
        }
        let own = self.backend.can_be_own() && self.searxng_urls().all(crate::http::is_own_server);
        if own { 0 } else { DEFAULT_MAX_PER_MINUTE }
    }

    /// Wikipedia's base URL for the wiki of `lang`.
    pub fn wikipedia_base(&self, lang: &str) -> String {
        self.wikipedia_url.replace("{lang}", lang)
    }
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
    /// Obey robots.txt for the `ground` user agent: resolved from [`RobotsPolicy`]
    /// and whether an agent (MCP) starts the fetches.
    pub obey_robots: bool,
}

/// When page fetches obey robots.txt (`[fetch] robots`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsPolicy {
    /// Fetches an agent starts (`ground mcp`) obey it; a person's `ground answer` and
    /// `ground fetch` do not (the default).
    Agents,
    /// Every fetch obeys it (`--obey-robots`).
    Always,
    /// No fetch obeys it, MCP included (`ground mcp --ignore-robots`).
    Never,
}

impl RobotsPolicy {
    /// Parses `agents` / `always` / `never`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "agents" => Some(Self::Agents),
            "always" => Some(Self::Always),
            "never" => Some(Self::Never),
            _ => None,
        }
    }
}

/// Which API the model server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LlmBackend {
    /// Ollama's native `/api/chat` (the default; lets us set the context window).
    Ollama,
    /// `/v1/chat/completions` as served by llama.cpp's llama-server, vLLM, LM Studio
    /// and hosted OpenAI-compatible services.
    OpenAi,
    /// llama.cpp inside this process, on a GGUF file (cargo feature `embedded`).
    Embedded,
    /// The default: Ollama when it answers at its URL and has the model, else the
    /// embedded model. Resolved once per run by `llm::choose`.
    #[default]
    Auto,
}

impl std::fmt::Display for LlmBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LlmBackend::Ollama => "Ollama",
            LlmBackend::OpenAi => "OpenAI-compatible",
            LlmBackend::Embedded => "embedded",
            LlmBackend::Auto => "auto",
        })
    }
}

impl LlmBackend {
    /// Parses `auto` / `ollama` / `openai` / `embedded` (as in flags, env and the
    /// config file).
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "ollama" => Some(Self::Ollama),
            "openai" => Some(Self::OpenAi),
            "embedded" => Some(Self::Embedded),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }
}

/// An API key: never printed (its `Debug` is redacted), only sent to the model server.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a key read from the environment or the config file (trimmed).
    pub fn new(key: &str) -> Self {
        Self(key.trim().to_string())
    }
}

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
    /// The model name, e.g. `llama3.2` or `qwen2.5:7b` (for the embedded model, a
    /// catalogue name such as `qwen3-1.7b`).
    pub model: String,
    /// Whether `--model`, `GROUND_MODEL` or `[llm] model` named it (else `model` is
    /// the backend's default, and `--llm auto` may pick another backend's default).
    pub model_explicit: bool,
    /// The context window to request (`options.num_ctx`) and budget the prompt to.
    pub context_tokens: u32,
    /// Output-token cap (`options.num_predict`), also reserved in the budget.
    pub max_answer_tokens: u32,
    /// The language to answer in (`--answer-language`); `None`: the question's.
    pub answer_language: Option<String>,
    /// Whole-request limit for one model call.
    pub timeout: Duration,
    /// The embedded model: its file, downloads and threads.
    pub embedded: EmbeddedSettings,
}

/// How the embedded model (`--llm embedded`) is found, fetched and run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedSettings {
    /// A local GGUF file to use instead of a catalogue model (`--model-file`); it is
    /// never downloaded.
    pub model_file: Option<PathBuf>,
    /// Where catalogue models are kept (`$XDG_DATA_HOME/ground/models`); `None` when
    /// no home is known.
    pub models_dir: Option<PathBuf>,
    /// The model hub's base URL (`[llm] hub_url`, `GROUND_MODEL_HUB`).
    pub hub_url: Url,
    /// Whether a missing catalogue model may be downloaded (`--no-download`,
    /// `GROUND_NO_DOWNLOAD=1` turn it off).
    pub download: bool,
    /// Threads for generation; 0 = the machine's physical cores.
    pub threads: usize,
    /// Layers offloaded to the GPU in a build with a GPU backend (`--gpu-layers`,
    /// `[llm] gpu_layers`); `None`: all of them. Ignored by a CPU-only build.
    pub gpu_layers: Option<u32>,
    /// Let llama.cpp's own log through to stderr (`--verbose`).
    pub verbose: bool,
    /// How long a download may receive nothing before it gives up.
    pub stall: Duration,
    /// Free memory in bytes to assume instead of /proc/meminfo's `MemAvailable`
    /// (tests); `None` reads it.
    pub memory_available: Option<u64>,
    /// Who may reuse the prompt prefix the engine keeps from the previous reply:
    /// `None`, any caller in this process (the default); `Some(scope)`, only a call
    /// with the same scope: a call of another scope finds the cache emptied. Never
    /// configured: `ground serve` sets it per request when clients are isolated
    /// (`[serve] isolate_clients`), so that `cached_prompt_tokens` (and the reply's
    /// speed) cannot tell one client what another asked.
    pub cache_scope: Option<String>,
    /// Replies the engine writes at once, in one batch (1: one at a time). Never
    /// configured: the service sets it from `ground serve --concurrency` and `ground
    /// batch -j`; the key/value cache holds a window for each (fewer when memory is
    /// short).
    pub parallel: usize,
}

impl Default for EmbeddedSettings {
    fn default() -> Self {
        Self::with_models_dir(None)
    }
}

impl EmbeddedSettings {
    /// The defaults: catalogue models in `models_dir`, fetched from
    /// [`DEFAULT_MODEL_HUB`] when missing, on every physical core.
    pub fn with_models_dir(models_dir: Option<PathBuf>) -> Self {
        Self {
            model_file: None,
            models_dir,
            hub_url: Url::parse(DEFAULT_MODEL_HUB).expect("the default hub URL is valid"),
            download: true,
            threads: 0,
            gpu_layers: None,
            verbose: false,
            stall: Duration::from_secs(30),
            memory_available: None,
            cache_scope: None,
            parallel: 1,
        }
    }
}

/// Hugging Face: where the embedded model catalogue's files are published.
pub const DEFAULT_MODEL_HUB: &str = "https://huggingface.co";

/// The embedded model used when none is named.
pub const DEFAULT_EMBEDDED_MODEL: &str = "qwen3-1.7b";

/// How recent results must be (SearXNG's `time_range`; Brave's and Tavily's freshness).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeRange {
    /// The last day.
    Day,
    /// The last week.
    Week,
    /// The last month.
    Month,
    /// The last year.
    Year,
}

impl TimeRange {
    /// Every time range, in order.
    pub const ALL: [TimeRange; 4] = [Self::Day, Self::Week, Self::Month, Self::Year];

    /// The parameter value: `day`, `week`, `month` or `year`.
    pub fn as_str(self) -> &'static str {
        match self {
            TimeRange::Day => "day",
            TimeRange::Week => "week",
            TimeRange::Month => "month",
            TimeRange::Year => "year",
        }
    }

    /// Parses `day` / `week` / `month` / `year`.
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == value.trim().to_ascii_lowercase())
    }
}

/// What to do when search fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fallback {
    /// Fail with the search error (the default).
    Fail,
    /// Answer from the model alone, labelled not grounded (exit 7).
    Offline,
}

impl Fallback {
    /// Parses `fail` / `offline`.
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim().to_ascii_lowercase().as_str() {
            "fail" => Some(Self::Fail),
            "offline" => Some(Self::Offline),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(backend: SearchBackend, url: &str, set: Option<u32>) -> SearchSettings {
        SearchSettings {
            timeout: Duration::from_secs(20),
            max_per_minute: set,
            ..crate::testing::search_settings(backend, url)
        }
    }

    #[test]
    fn the_default_limit_is_for_public_services_and_a_set_one_for_all() {
        use SearchBackend::*;
        // The user's own SearXNG has its own limiter.
        assert_eq!(
            search(Searxng, "http://localhost:8080", None).rate_limit(),
            0
        );
        assert_eq!(
            search(Searxng, "http://192.168.1.5:8888", None).rate_limit(),
            0
        );
        assert_eq!(search(Auto, "http://searxng:8080", None).rate_limit(), 0);
        // A public instance, and every other service wherever it is, get the default.
        assert_eq!(
            search(Searxng, "https://searx.example.org", None).rate_limit(),
            10
        );
        let mut mixed = search(Searxng, "http://localhost:8080", None);
        mixed.fallback_urls = vec![Url::parse("https://searx.example.org").unwrap()];
        assert_eq!(mixed.rate_limit(), 10, "one public instance among them");
        for public in [Brave, Tavily, Wikipedia, DuckDuckGo] {
            assert_eq!(search(public, "http://127.0.0.1:9", None).rate_limit(), 10);
        }
        // A limit set applies to anything; 0 is none.
        assert_eq!(
            search(Searxng, "http://localhost:8080", Some(3)).rate_limit(),
            3
        );
        assert_eq!(
            search(Wikipedia, "https://en.wikipedia.org", Some(0)).rate_limit(),
            0
        );
    }
}
