//! Command-line types only. Their doc comments are the `--help` text, so help and
//! behaviour cannot drift apart.
//!
//! Here: the top-level [`Cli`] and [`Command`], and the option groups several commands
//! share; each command's own arguments are in the file named for it (`answer.rs`,
//! `serve.rs`, `batch.rs`, ...).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ground::config::Overrides;
use ground::error::{EXIT_CODE_TABLE, exit, exit_codes_help};
use ground::settings;

mod answer;
mod batch;
mod cache;
mod chat;
mod check;
mod completions;
pub(crate) mod docs;
mod doctor;
mod extract;
mod fetch;
mod index;
mod key;
mod mcp;
mod model;
mod search;
mod serve;
mod usage;

pub use answer::AnswerArgs;
pub use batch::BatchArgs;
pub use cache::{CacheAction, CacheArgs};
pub use chat::ChatArgs;
pub use check::CheckArgs;
pub use completions::CompletionsArgs;
pub use docs::DocsOpts;
pub use doctor::DoctorArgs;
pub use extract::ExtractArgs;
pub use fetch::FetchArgs;
pub use index::{IndexAction, IndexArgs};
pub use key::{KeyAction, KeyArgs};
pub use mcp::McpArgs;
pub use model::{ModelAction, ModelArgs};
pub use search::SearchArgs;
pub use serve::ServeArgs;
pub use usage::UsageArgs;

/// Exit codes of `ground doctor`: the same codes, with their meaning for checks.
const DOCTOR_EXIT_CODES: &[(i32, &str)] = &[
    (exit::SUCCESS, "every check passed (warnings allowed)"),
    (
        exit::USAGE,
        "the configuration is invalid (config file, environment or flags)",
    ),
    (exit::SEARCH, "a search check failed"),
    (
        exit::MODEL,
        "a model check failed (and no search check did)",
    ),
];

/// Answer questions from live web search, with citations you can check.
///
/// Searches your own SearXNG when it answers (else Brave or Tavily with your key, else
/// Wikipedia) and asks Ollama when it runs here, else a model inside ground itself
/// (llama.cpp; downloaded once), or any OpenAI-compatible server.
#[derive(Debug, Parser)]
#[command(name = "ground", version, about, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Search the web, read the top pages and answer with verified citations.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Answer(AnswerArgs),
    /// Ask follow-up questions in a conversation: each answered like `answer`, the
    /// pages already read tried first (/sources, /new, /save FILE, /quit; Ctrl-C
    /// cancels an answer, Ctrl-D ends). Reads one question per line when stdin is not
    /// a terminal.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Chat(ChatArgs),
    /// Search only: results with URL, title, snippet, engines and date.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Search(SearchArgs),
    /// Check claims, or another AI tool's cited answer, against the web: each claim
    /// supported, contradicted, disputed or not found, with the quotes (no model
    /// needed). Exit 0 when every claim is supported, 6 when one is not.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Check(CheckArgs),
    /// Fetch one page and print its main text.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Fetch(FetchArgs),
    /// Print the main text of local HTML files (or stdin).
    Extract(ExtractArgs),
    /// Check the configured search engine and model, and say what to fix.
    #[command(after_help = exit_codes_help(DOCTOR_EXIT_CODES))]
    Doctor(DoctorArgs),
    /// Serve web_search, web_fetch and grounded_answer to AI agents over MCP (stdio).
    Mcp(McpArgs),
    /// Answer many questions from a file (JSON Lines or one a line), concurrently,
    /// one JSON record each; resumable and shardable across machines.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Batch(BatchArgs),
    /// Serve grounded answers over HTTP: OpenAI's Chat Completions (model `ground`)
    /// and Gemini's generateContent with Grounding with Google Search.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Serve(ServeArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Show or clear the on-disk cache of search results and pages.
    Cache(CacheArgs),
    /// This month's Brave and Tavily use against their quotas, the search rate limit,
    /// and where the state files and the search log are.
    Usage(UsageArgs),
    /// Store, delete or list API keys in the OS keyring (Brave, Tavily, hosted model),
    /// and the shared Redis's password.
    Key(KeyArgs),
    /// Index local documents (folders of Markdown, text, HTML, PDF) and search them;
    /// `ground answer --docs` answers from them beside the web.
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Index(IndexArgs),
    /// Download, list or delete the embedded models (the catalogue built into ground).
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Model(ModelArgs),
}

impl Command {
    /// Whether the command may write with the embedded model (`answer`, `chat`,
    /// `mcp`, `batch`, `serve`): only these need llama.cpp's threads set up before
    /// `main` goes on (`ground::llm::embedded::engine::brief_openmp_spin`).
    #[cfg(all(feature = "embedded", target_os = "linux"))]
    pub fn may_run_the_model(&self) -> bool {
        matches!(
            self,
            Command::Answer(_)
                | Command::Chat(_)
                | Command::Mcp(_)
                | Command::Batch(_)
                | Command::Serve(_)
        )
    }
}

/// How to print the answer for a person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Plain text with [n] markers (coloured on a terminal unless NO_COLOR is set).
    Text,
    /// Markdown with footnote-style source links.
    Markdown,
}

/// SearXNG time ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
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

impl From<TimeRange> for settings::TimeRange {
    fn from(range: TimeRange) -> Self {
        match range {
            TimeRange::Day => settings::TimeRange::Day,
            TimeRange::Week => settings::TimeRange::Week,
            TimeRange::Month => settings::TimeRange::Month,
            TimeRange::Year => settings::TimeRange::Year,
        }
    }
}

/// `--search`: which search service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SearchService {
    /// Your SearXNG when it answers, else Brave or Tavily when a key is set, else
    /// Wikipedia (the default).
    Auto,
    /// Your own SearXNG instance.
    Searxng,
    /// The hosted Brave Search API (needs a key).
    Brave,
    /// The hosted Tavily API (needs a key).
    Tavily,
    /// Wikipedia's own search: no key, one encyclopedia, not the web.
    Wikipedia,
    /// DuckDuckGo's HTML page: no key, but a page made for people that may block
    /// ground or change at any time.
    Duckduckgo,
}

impl From<SearchService> for settings::SearchBackend {
    fn from(service: SearchService) -> Self {
        match service {
            SearchService::Auto => settings::SearchBackend::Auto,
            SearchService::Searxng => settings::SearchBackend::Searxng,
            SearchService::Brave => settings::SearchBackend::Brave,
            SearchService::Tavily => settings::SearchBackend::Tavily,
            SearchService::Wikipedia => settings::SearchBackend::Wikipedia,
            SearchService::Duckduckgo => settings::SearchBackend::DuckDuckGo,
        }
    }
}

/// `--llm`: which model answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelApi {
    /// Ollama when it answers at its URL and has the model, else the embedded model.
    Auto,
    /// Ollama's own API.
    Ollama,
    /// The OpenAI-compatible API (llama.cpp's llama-server, vLLM, LM Studio, hosted).
    #[value(name = "openai")]
    OpenAi,
    /// llama.cpp inside ground, on a catalogue model (downloaded once) or --model-file.
    Embedded,
}

impl From<ModelApi> for settings::LlmBackend {
    fn from(api: ModelApi) -> Self {
        match api {
            ModelApi::Auto => settings::LlmBackend::Auto,
            ModelApi::Ollama => settings::LlmBackend::Ollama,
            ModelApi::OpenAi => settings::LlmBackend::OpenAi,
            ModelApi::Embedded => settings::LlmBackend::Embedded,
        }
    }
}

/// `--plan-mode`: how planned queries run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanModeArg {
    /// One query per round, stopping once the planner's must-have evidence is found.
    Rounds,
    /// Every planned query at once: faster, never stops early.
    Concurrent,
}

impl From<PlanModeArg> for settings::PlanMode {
    fn from(mode: PlanModeArg) -> Self {
        match mode {
            PlanModeArg::Rounds => settings::PlanMode::Rounds,
            PlanModeArg::Concurrent => settings::PlanMode::Concurrent,
        }
    }
}

/// `--fallback`: what to do when search fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FallbackMode {
    /// Fail with the search error (exit 3).
    Fail,
    /// Answer from the model alone, labelled not grounded (exit 7).
    Offline,
}

impl From<FallbackMode> for settings::Fallback {
    fn from(mode: FallbackMode) -> Self {
        match mode {
            FallbackMode::Fail => settings::Fallback::Fail,
            FallbackMode::Offline => settings::Fallback::Offline,
        }
    }
}

/// The config file and cache options, shared by every command that reads settings.
#[derive(Debug, Clone, Default, Args)]
pub struct ConfigOpts {
    /// Config file [default: $XDG_CONFIG_HOME/ground/config.toml; env: GROUND_CONFIG].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Neither read nor write the cache ($XDG_CACHE_HOME/ground).
    #[arg(long)]
    pub no_cache: bool,

    /// Ignore cached entries, but store what is fetched now.
    #[arg(long, conflicts_with = "no_cache")]
    pub refresh: bool,
}

/// Where and how to search.
#[derive(Debug, Clone, Default, Args)]
pub struct SearchOpts {
    /// Search service: `auto` (your SearXNG when it answers, else Brave or Tavily when
    /// a key is set, else Wikipedia; says so once), your own `searxng`, the hosted
    /// `brave` or `tavily` APIs (key in GROUND_BRAVE_API_KEY / GROUND_TAVILY_API_KEY or
    /// the keyring), `wikipedia` (no key; one encyclopedia) or `duckduckgo` (no key; a
    /// page made for people, may stop working) [default: auto; env: GROUND_SEARCH].
    #[arg(long, value_name = "SERVICE", value_enum)]
    pub search: Option<SearchService>,

    /// SearXNG base URL; give it again for more instances, tried in order when one is
    /// down, 5xx, 429 or has every engine failing [default: http://localhost:8080;
    /// env: GROUND_SEARXNG_URL, comma-separated].
    #[arg(long = "searxng-url", value_name = "URL")]
    pub searxng_urls: Vec<String>,

    /// Search language, e.g. `en` or `de-CH`.
    #[arg(long)]
    pub language: Option<String>,

    /// SearXNG categories, comma-separated (e.g. `general,news`).
    #[arg(long)]
    pub categories: Option<String>,

    /// SearXNG engines, comma-separated.
    #[arg(long)]
    pub engines: Option<String>,

    /// Only results from this time range.
    #[arg(long, value_enum)]
    pub time_range: Option<TimeRange>,

    /// Only results from this site: a domain covers its subdomains (`python.org` takes
    /// `docs.python.org`), a bare host or IP address matches exactly; repeat it or
    /// separate with commas for several. Told to the search service and enforced by
    /// ground: no page outside it is read [env: GROUND_SITES; [search] sites].
    #[arg(long = "site", value_name = "DOMAIN", value_delimiter = ',')]
    pub sites: Vec<String>,

    /// No results from this site (its subdomains included); repeatable
    /// [env: GROUND_EXCLUDE_SITES; [search] exclude_sites].
    #[arg(long = "exclude-site", value_name = "DOMAIN", value_delimiter = ',')]
    pub exclude_sites: Vec<String>,

    /// Safe search: 0 off, 1 moderate, 2 strict.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub safesearch: Option<u8>,

    /// Searches sent per rolling minute at most, shared by all your `ground` runs; over
    /// it a search waits for a free slot, and fails with exit 8 only when that slot is
    /// past --timeout (cached searches are free; 0 = no limit) [default: 10 for public
    /// services, none for a SearXNG on this machine or a private network; env:
    /// GROUND_MAX_PER_MINUTE].
    #[arg(long, value_name = "N")]
    pub max_per_minute: Option<u32>,

    /// Append one JSON line per search (time, service, query, result count, cached)
    /// to searches.jsonl in the state dir ([privacy] log_searches).
    #[arg(long)]
    pub log_searches: bool,
}

/// Page fetching.
#[derive(Debug, Clone, Default, Args)]
pub struct FetchOpts {
    /// Allow fetching pages on loopback, private and link-local addresses
    /// [env: GROUND_ALLOW_PRIVATE_ADDRESSES].
    #[arg(long)]
    pub allow_private_addresses: bool,

    /// Obey robots.txt for the `ground` user agent here too (`ground mcp` obeys it by
    /// default; `answer` and `fetch`, which a person types, do not) [[fetch] robots].
    #[arg(long)]
    pub obey_robots: bool,
}

/// Which model to ask.
#[derive(Debug, Clone, Default, Args)]
pub struct ModelOpts {
    /// Which model answers: `auto` (Ollama when it runs and has the model, else the
    /// embedded one), `ollama`, `openai` (llama.cpp's llama-server, vLLM, LM Studio,
    /// hosted) or `embedded` (llama.cpp inside ground) [default: auto; env: GROUND_LLM].
    #[arg(long, value_name = "API", value_enum)]
    pub llm: Option<ModelApi>,

    /// Model server base URL [default: http://localhost:11434 for ollama,
    /// http://localhost:8080/v1 for openai; env: GROUND_LLM_URL, then OLLAMA_HOST].
    #[arg(long, value_name = "URL")]
    pub llm_url: Option<String>,

    /// Model name [default: llama3.2 for Ollama, qwen3-1.7b for the embedded model
    /// (see `ground model list`); env: GROUND_MODEL].
    #[arg(long)]
    pub model: Option<String>,

    /// A local GGUF file for the embedded model (never downloaded)
    /// [env: GROUND_MODEL_FILE].
    #[arg(long, value_name = "PATH.gguf")]
    pub model_file: Option<PathBuf>,

    /// Never download an embedded model; a missing one is an error
    /// [env: GROUND_NO_DOWNLOAD=1].
    #[arg(long)]
    pub no_download: bool,

    /// Layers of the embedded model offloaded to the GPU, in a build with a GPU
    /// backend (0: the CPU only) [default: all; env: GROUND_GPU_LAYERS].
    #[arg(long, value_name = "N")]
    pub gpu_layers: Option<u32>,

    /// The model's context window in tokens; the prompt is fitted to it
    /// [default: 4096; env: GROUND_CONTEXT_TOKENS].
    #[arg(long, value_name = "N")]
    pub context_tokens: Option<u32>,

    /// Cap on the answer's tokens, reserved in the window [default: a quarter of the
    /// window, at most 1024; env: GROUND_MAX_ANSWER_TOKENS].
    #[arg(long, value_name = "N")]
    pub max_answer_tokens: Option<u32>,

    /// Language to answer in, e.g. `de`, `fr`, `pt-BR` [default: the question's,
    /// detected; env: GROUND_ANSWER_LANGUAGE]. Quotes stay in the page's language.
    #[arg(long, value_name = "CODE")]
    pub answer_language: Option<String>,
}

/// The options of a run of the pipeline that every command answering questions
/// shares (`answer` and `chat`; `serve` and `batch` alike): the config file and
/// cache, where and how to search, how pages are fetched, which model answers.
/// Flattened last into each command's arguments, so `--help` lists them after the
/// command's own. `--pages` and `--timeout` stay with each command: their help says
/// what they bound there (the whole run, each answer), and they are listed among the
/// command's own options; [`RunArgs::overrides`] takes them.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub config: ConfigOpts,
    #[command(flatten)]
    pub search: SearchOpts,
    #[command(flatten)]
    pub fetch: FetchOpts,
    #[command(flatten)]
    pub model: ModelOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub docs: DocsOpts,
}

impl RunArgs {
    /// The settings overrides these options make, with the command's `--pages` and
    /// `--timeout`.
    pub fn overrides(&self, pages: Option<usize>, timeout: Option<u64>) -> Overrides {
        let mut overrides = overrides(
            &self.config,
            Some(&self.search),
            Some(&self.fetch),
            Some(&self.model),
            pages,
        );
        overrides.timeout_secs = timeout;
        overrides.docs = self.docs.docs.clone();
        overrides.no_web = self.docs.no_web;
        overrides
    }
}

/// Collects the settings-related options of any command into config overrides.
pub fn overrides(
    config: &ConfigOpts,
    search: Option<&SearchOpts>,
    fetch: Option<&FetchOpts>,
    model: Option<&ModelOpts>,
    pages: Option<usize>,
) -> Overrides {
    let search = search.cloned().unwrap_or_default();
    let fetch = fetch.cloned().unwrap_or_default();
    let model = model.cloned().unwrap_or_default();
    Overrides {
        config_path: config.config.clone(),
        search_backend: search.search.map(Into::into),
        searxng_urls: search.searxng_urls,
        language: search.language,
        categories: search.categories,
        engines: search.engines,
        time_range: search.time_range.map(Into::into),
        safesearch: search.safesearch,
        sites: search.sites,
        exclude_sites: search.exclude_sites,
        max_per_minute: search.max_per_minute,
        log_searches: search.log_searches,
        pages,
        allow_private_addresses: fetch.allow_private_addresses,
        robots: fetch
            .obey_robots
            .then_some(ground::settings::RobotsPolicy::Always),
        llm_backend: model.llm.map(Into::into),
        llm_url: model.llm_url,
        model: model.model,
        model_file: model.model_file,
        no_download: model.no_download,
        gpu_layers: model.gpu_layers,
        context_tokens: model.context_tokens,
        max_answer_tokens: model.max_answer_tokens,
        answer_language: model.answer_language,
        no_cache: config.no_cache,
        refresh: config.refresh,
        ..Default::default()
    }
}
