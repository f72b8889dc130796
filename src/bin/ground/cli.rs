//! Command-line types only. Their doc comments are the `--help` text, so help and
//! behaviour cannot drift apart.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use ground::config::Overrides;
use ground::error::{EXIT_CODE_TABLE, exit, exit_codes_help};
use ground::settings;

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
    /// Store, delete or list API keys in the OS keyring (Brave, Tavily, hosted model).
    Key(KeyArgs),
    /// Download, list or delete the embedded models (the catalogue built into ground).
    #[command(after_help = exit_codes_help(EXIT_CODE_TABLE))]
    Model(ModelArgs),
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
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub fetch: FetchOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelOpts,
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
        overrides
    }
}

/// `ground answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The question. Use `-` or leave it out to read it from stdin.
    pub question: Vec<String>,

    /// Print one JSON object on stdout instead of text (shape in README).
    #[arg(long)]
    pub json: bool,

    /// Exit with code 6 unless every statement is supported: by a verified quote, or
    /// by a sentence of the sources the model was shown that ground found saying the
    /// same (printed `[n]` alike; the sources list says which). A statement whose quote
    /// is real but says otherwise (`[n?]`) is not supported.
    #[arg(long)]
    pub strict: bool,

    /// Like --strict, but only the model's own verified quotes count: a statement
    /// supported by ground's match alone fails it.
    #[arg(long)]
    pub strict_quotes: bool,

    /// Print a grounding pack instead of prose: JSON with key_points,
    /// norms_and_expectations and constraints_and_rules (each item supported like a
    /// statement: verified quotes or ground's match), disputed_or_uncertain and
    /// what_to_ask_user.
    #[arg(long, conflicts_with = "json")]
    pub pack: bool,

    /// Output style for people.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// No progress or warnings on stderr (errors are still printed), and no "Did you
    /// mean" or "Related searches" line.
    #[arg(short, long)]
    pub quiet: bool,

    /// End the text even when stdout is no terminal with the search service's "Did
    /// you mean" and "Related searches" lines (on a terminal they are printed
    /// unless -q).
    #[arg(long, conflicts_with_all = ["json", "pack"])]
    pub related: bool,

    /// Details on stderr: every page tried with its status, token estimates.
    #[arg(short, long)]
    pub verbose: bool,

    /// How many pages to read [default: 3; env: GROUND_PAGES].
    ///
    /// All their passages are ranked in one pool under the same token budget, so more
    /// pages do not make the prompt larger. --pages 10 is the wide mode: it costs more
    /// requests to more sites (ten pages and two spares instead of three), and about
    /// the same wall time (hedged fetching waits for the fastest pages plus a grace,
    /// never for a slow one); it buys answers that are not in the top three results
    /// (on held-out news questions the answer was in the top 3 pages for 47 % of them,
    /// in the top 10 for 69 %; a replay of the context stage reached it for 58 % with
    /// ten pages against 50 % with three).
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for the whole run in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Let the model decide first whether the question needs the web; if not, the
    /// answer is printed labelled "not grounded" with no sources.
    #[arg(long)]
    pub auto: bool,

    /// Search queries to plan from the question (1-3; 1 = the question itself).
    #[arg(long, value_name = "N")]
    pub queries: Option<usize>,

    /// How planned queries run: `rounds` (one at a time, stopping once the planner's
    /// must-have evidence is found) or `concurrent` (all at once) [default: rounds].
    #[arg(long, value_name = "MODE", value_enum)]
    pub plan_mode: Option<PlanModeArg>,

    /// Region hint for the query planner, e.g. `de` or `us`.
    #[arg(long)]
    pub region: Option<String>,

    /// Most searches this run may make [default: 3].
    #[arg(long, value_name = "N")]
    pub max_searches: Option<usize>,

    /// What to do when search fails: `fail` (default, exit 3) or `offline` (answer
    /// from the model alone, labelled not grounded, exit 7).
    #[arg(long, value_name = "MODE", value_enum)]
    pub fallback: Option<FallbackMode>,

    /// Write one JSON line per stage to FILE (`-` for stderr).
    #[arg(long, value_name = "FILE")]
    pub events: Option<PathBuf>,

    /// Continue the most recent conversation (`ground chat` or --session): the question
    /// is a follow-up, rewritten to stand alone, and the pages already read are tried
    /// before any search.
    #[arg(long = "continue", conflicts_with = "session")]
    pub continue_session: bool,

    /// Continue the conversation NAME (letters, digits, - and _), or start it; kept
    /// under the state folder (sessions/NAME.json).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub run: RunArgs,
}

/// `ground chat`.
#[derive(Debug, Args)]
pub struct ChatArgs {
    /// The conversation to continue or start (letters, digits, - and _); kept under
    /// the state folder (sessions/NAME.json) [default: a new one, chat-DATE-TIME].
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,

    /// No progress or warnings on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,

    /// How many pages to read per search [default: 3; env: GROUND_PAGES].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for each answer in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Output style for people.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub run: RunArgs,
}

/// `ground search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query. Use `-` or leave it out to read it from stdin.
    pub query: Vec<String>,

    /// How many results to print (1-100).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub limit: u16,

    /// Print one JSON object on stdout (errors too, as {"error", "query"}).
    #[arg(long)]
    pub json: bool,

    /// Deadline in seconds: the longest the search may wait for a free slot of the
    /// rate limit [default: 600, [run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
}

/// `ground fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The page's address (http or https).
    pub url: String,

    /// Print one JSON object on stdout: status, http_status, content_type, title, text, chars.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub fetch: FetchOpts,
}

/// `ground doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as one JSON object.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub model: ModelOpts,
}

/// `ground mcp`.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// Searches one client session may make in all (web_search counts one,
    /// grounded_answer the queries it runs) [default: 100].
    #[arg(long, value_name = "N")]
    pub session_searches: Option<usize>,

    /// Do not obey robots.txt for the pages web_fetch and grounded_answer read (by
    /// default they do, for the `ground` user agent, else `*`) [[fetch] robots = "never"].
    #[arg(long, conflicts_with = "obey_robots")]
    pub ignore_robots: bool,

    /// Most searches one grounded_answer call may make [default: 3].
    #[arg(long, value_name = "N")]
    pub max_searches: Option<usize>,

    /// Search queries grounded_answer plans from the question (1-3).
    #[arg(long, value_name = "N")]
    pub queries: Option<usize>,

    /// How grounded_answer runs planned queries: `rounds` or `concurrent`
    /// [default: rounds].
    #[arg(long, value_name = "MODE", value_enum)]
    pub plan_mode: Option<PlanModeArg>,

    /// Seconds a grounded_answer's evidence is reused for the same question later in
    /// the session, without searching (0 = never) [default: 600].
    #[arg(long, value_name = "SECS")]
    pub reuse_secs: Option<u64>,

    /// The options every run takes (config, search, fetch, model).
    #[command(flatten)]
    pub run: RunArgs,
}

/// `ground batch`.
#[derive(Debug, Args)]
pub struct BatchArgs {
    /// The questions: JSON Lines ({"id": ..., "question": ..., other keys kept}) or
    /// plain text, one question a line (its line number the id); `-` for stdin.
    pub input: String,

    /// Append the records here, one JSON line per question [default: stdout]. An
    /// existing file resumes the batch: ids it has a record for are not asked again.
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,

    /// Questions answered at once (the model, cache and rate limit are shared).
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: u16,

    /// Answer only shard K of N (K from 0): the ids whose 64-bit FNV-1a hash, mod N,
    /// is K. N machines with K = 0..N-1 split one file with no coordinator.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<ground::batch::shard::Shard>,

    /// Ask again the ids whose record in --out is a failure (their failure records
    /// are removed first).
    #[arg(long, requires = "out")]
    pub retry_failed: bool,

    /// No progress on stderr (the summary and errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,

    /// How many pages to read per search [default: 3; env: GROUND_PAGES].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Deadline for each question in seconds [default: 600].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub run: RunArgs,
}

/// `ground serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to listen, HOST:PORT [default: 127.0.0.1:8088]. An address other than
    /// loopback needs an API key [[serve] listen, GROUND_SERVE_LISTEN].
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,

    /// The key every request must carry (`Authorization: Bearer KEY`, Gemini's
    /// `x-goog-api-key` or `?key=`) [[serve] api_key, GROUND_SERVE_API_KEY].
    #[arg(long, value_name = "KEY")]
    pub api_key: Option<String>,

    /// Requests that may wait for a place; more are refused with 429 and Retry-After
    /// [default: 8] [[serve] queue].
    #[arg(long, value_name = "N")]
    pub queue: Option<usize>,

    /// Runs at once [default: 4]; the embedded model writes one answer at a time
    /// whatever this says [[serve] concurrency].
    #[arg(long, value_name = "N")]
    pub concurrency: Option<usize>,

    /// Allow this browser origin to call the API (CORS); none by default
    /// [[serve] cors].
    #[arg(long, value_name = "ORIGIN")]
    pub cors: Option<String>,

    /// Keep clients from learning about each other through the server's caches: no
    /// answer reused from another request, the embedded model's prompt cache kept
    /// within one conversation [default: true off loopback, false on loopback]
    /// [[serve] isolate_clients, GROUND_SERVE_ISOLATE_CLIENTS].
    #[arg(
        long,
        value_name = "BOOL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true"
    )]
    pub isolate_clients: Option<bool>,

    /// Each request's deadline in seconds, 1-3600 [default: 600] [[run] timeout_secs].
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<u64>,

    /// Pages read per question, 1-20 [default: 3] [[fetch] pages].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Seconds an answer is reused for the same question (asked as a question of its
    /// own, with the same options, by any client; never with --isolate-clients)
    /// without searching; 0 = never [default: 600] [[run] reuse_secs].
    #[arg(long, value_name = "SECS")]
    pub reuse_secs: Option<u64>,

    /// Log each request's question on stderr (by default only method, path, status
    /// and time).
    #[arg(short, long)]
    pub verbose: bool,

    /// The options every run takes (config, search, fetch, model).
    #[command(flatten)]
    pub run: RunArgs,
}

/// `ground cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do.
    #[arg(value_enum)]
    pub action: CacheAction,

    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
}

/// `ground key`.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: KeyAction,
}

/// What `ground key` does.
#[derive(Debug, Subcommand)]
pub enum KeyAction {
    /// Check a key's format and store it in the OS keyring. The key is read from a
    /// prompt without echo, or from stdin when stdin is not a terminal; never from
    /// the command line.
    Set {
        /// Which key.
        #[arg(value_enum)]
        name: KeyNameArg,
    },
    /// Delete a key from the OS keyring.
    Delete {
        /// Which key.
        #[arg(value_enum)]
        name: KeyNameArg,
    },
    /// Which keys are set and where each comes from (flag > env > config > keyring);
    /// never the keys themselves.
    #[command(visible_alias = "list")]
    Status {
        /// Config file [default: $XDG_CONFIG_HOME/ground/config.toml; env: GROUND_CONFIG].
        #[arg(long, value_name = "PATH")]
        config: Option<PathBuf>,
    },
}

/// The keys `ground key` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeyNameArg {
    /// The Brave Search API key.
    Brave,
    /// The Tavily API key.
    Tavily,
    /// The Bearer key of a hosted OpenAI-compatible server (`[llm] api_key`).
    Llm,
}

impl From<KeyNameArg> for ground::keystore::KeyName {
    fn from(name: KeyNameArg) -> Self {
        match name {
            KeyNameArg::Brave => Self::Brave,
            KeyNameArg::Tavily => Self::Tavily,
            KeyNameArg::Llm => Self::Llm,
        }
    }
}

/// `ground usage`.
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Print one JSON object on stdout.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub search: SearchOpts,
}

/// `ground model`.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ModelAction,

    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigOpts,
}

/// What `ground model` does.
#[derive(Debug, Subcommand)]
pub enum ModelAction {
    /// Download a catalogue model (resumable, checked against its SHA-256)
    /// [default: qwen3-1.7b].
    Pull {
        /// The model's name.
        name: Option<String>,
        /// No progress on stderr.
        #[arg(short, long)]
        quiet: bool,
    },
    /// The catalogue and what of it is downloaded.
    #[command(visible_alias = "ls")]
    List {
        /// Print one JSON object on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Delete a downloaded model (and any unfinished download of it).
    Rm {
        /// The model's name.
        name: String,
    },
}

/// `ground cache` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheAction {
    /// Entries, size and age of the cache, and where it is.
    Stats,
    /// Delete every cached search result and page.
    Clear,
}

/// `ground completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// `ground extract`.
#[derive(Debug, Default, Args)]
pub struct ExtractArgs {
    /// HTML files to read; none means stdin.
    pub files: Vec<PathBuf>,
    /// Read every *.html in this folder (with --output-dir).
    #[arg(long, value_name = "DIR", requires = "output_dir")]
    pub input_dir: Option<PathBuf>,
    /// Write one .txt per input page into this folder.
    #[arg(long, value_name = "DIR", requires = "input_dir")]
    pub output_dir: Option<PathBuf>,
    /// The page's address, as a hint for extraction.
    #[arg(long)]
    pub url: Option<String>,
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
