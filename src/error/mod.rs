//! Every failure a user can see, with the exit code it maps to and a hint saying what
//! to do next.
//!
//! Exit codes are a contract for CI smoke checks (README, "Exit codes"); they are
//! defined once, in [`exit`], with the table `--help` and the README are written
//! from; this file maps each error to one of them, and `redact.rs` takes an API key
//! out of every message an error carries.

use std::path::PathBuf;

use crate::events::Stage;
use crate::settings::{LlmBackend, SearchBackend};

pub mod exit;
mod index;
mod log;
mod redact;
mod render;

pub use exit::{EXIT_CODE_TABLE, exit_codes_help};
pub use index::IndexError;
pub use log::log_line;
pub use render::{report, report_about, report_line, warning};

/// Why a model reply was unusable; each has its own hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyProblem {
    /// Not the JSON the schema asks for (invalid, or missing fields).
    Invalid,
    /// Cut off by the output-token cap.
    CutOff,
    /// Far larger than any answer: probably not a model server at all.
    TooLarge,
}

/// Errors of the whole pipeline. Each variant's message says what failed; [`Error::hint`]
/// says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The question was empty or only whitespace.
    #[error("the question is empty")]
    EmptyQuestion,

    /// A configuration value (flag, environment variable or config file) is invalid.
    #[error("invalid configuration: {message}")]
    Config {
        /// What is wrong, naming the setting.
        message: String,
        /// How to fix it.
        hint: String,
    },

    /// The command line or its input is wrong: a bad URL for `ground fetch`, stdin that
    /// cannot be read, an events file that cannot be opened.
    #[error("{message}")]
    Usage {
        /// What is wrong, naming the argument or input.
        message: String,
        /// How to fix it.
        hint: String,
    },

    /// A conversation's session file cannot be used: damaged, too large, of another
    /// format, or not a regular file; or the session name is not a plain name.
    #[error("{message}")]
    Session {
        /// What is wrong, naming the session and its file.
        message: String,
        /// How to go on (start it anew, pick another name).
        hint: String,
    },

    /// A hosted search service was chosen but no API key is set for it: not by a
    /// variable, not in the config file, not in the OS keyring.
    #[error("invalid configuration: {backend} needs an API key and none is set{}", keyring.as_ref().map(|r| format!(" (the OS keyring could not be asked: {r})")).unwrap_or_default())]
    MissingKey {
        /// The service that needs the key.
        backend: SearchBackend,
        /// Why the OS keyring could not be asked (none running, locked, too slow);
        /// `None` when it was asked and holds no key.
        keyring: Option<String>,
    },

    /// Something that should not fail did: the async runtime or an HTTP client could
    /// not be built. A bug, or a machine out of threads or memory.
    #[error("internal error: {message}")]
    Internal {
        /// What failed.
        message: String,
    },

    /// The search backend could not be reached at all.
    #[error("cannot reach {backend} at {url}: {reason}")]
    SearchUnreachable {
        /// Which search service.
        backend: SearchBackend,
        /// The search URL tried (never contains secrets).
        url: String,
        /// The transport error, one line.
        reason: String,
    },

    /// An images search was asked of a service that has none (only SearXNG's images
    /// category and Brave's Image Search API do).
    #[error("images need SearXNG or Brave: {backend} has no images search")]
    ImagesUnsupported {
        /// The service that would have searched.
        backend: SearchBackend,
    },

    /// SearXNG answered 403: the JSON output format is not enabled.
    #[error("SearXNG at {url} refused the JSON format (HTTP 403)")]
    SearchJsonDisabled {
        /// The search URL tried.
        url: String,
    },

    /// SearXNG's limiter (bot detection) answered 429.
    #[error("SearXNG at {url} rate-limited the request (HTTP 429 Too Many Requests)")]
    SearchRateLimited {
        /// The search URL tried.
        url: String,
    },

    /// SearXNG rejected a parameter (HTTP 400).
    #[error("SearXNG rejected the request (HTTP 400): {message}")]
    SearchBadRequest {
        /// SearXNG's own `error` message.
        message: String,
    },

    /// Any other non-success HTTP status from the search backend.
    #[error("{backend} at {url} answered HTTP {status}{}", detail.as_deref().map(|d| format!(": {d}")).unwrap_or_default())]
    SearchHttp {
        /// Which search service.
        backend: SearchBackend,
        /// The service's own message, when it gave one.
        detail: Option<String>,
        /// The search URL tried.
        url: String,
        /// The HTTP status code.
        status: u16,
    },

    /// The search backend's reply was not the JSON we expect.
    #[error("{backend} at {url} sent a reply that is not search JSON: {detail}")]
    SearchInvalidReply {
        /// Which search service.
        backend: SearchBackend,
        /// The search URL tried.
        url: String,
        /// What was wrong with it.
        detail: String,
    },

    /// A search API refused our key (missing, wrong or revoked).
    #[error("{backend} refused the API key (HTTP {status}): {message}")]
    SearchAuth {
        /// Which search service.
        backend: SearchBackend,
        /// The HTTP status.
        status: u16,
        /// The service's message.
        message: String,
    },

    /// A search API's quota or plan limit is used up.
    #[error("{backend} says the plan's usage limit is reached (HTTP {status}): {message}")]
    SearchQuota {
        /// Which search service.
        backend: SearchBackend,
        /// The HTTP status.
        status: u16,
        /// The service's message.
        message: String,
    },

    /// This machine's own search rate limit is reached, and its next free slot is
    /// past the run's deadline (a search waits for a slot that comes within it);
    /// nothing was sent.
    #[error(
        "the search rate limit ({}) is reached and its next free slot, in {retry_after_secs} s, is past this run's deadline ({left_secs} s left)",
        crate::settings::describe_rate(*limit, std::time::Duration::from_millis(*window_ms))
    )]
    SearchRateLimitedLocally {
        /// Searches per rolling window allowed.
        limit: u32,
        /// The window, in milliseconds (a minute but in tests).
        window_ms: u64,
        /// Seconds until the oldest search of the window ages out.
        retry_after_secs: u64,
        /// Seconds the run had left before its deadline.
        left_secs: u64,
    },

    /// DuckDuckGo answered with its challenge page ("bots use DuckDuckGo too") or an
    /// HTTP 202 instead of results: it takes the client for a bot.
    #[error(
        "{backend} answered the search for {query:?} with a challenge page instead of results: it takes ground for a bot"
    )]
    SearchChallenged {
        /// Which search service.
        backend: SearchBackend,
        /// The query sent.
        query: String,
    },

    /// The service refused the search with an error of its own (MediaWiki's
    /// `{"error": {"code", "info"}}`, which comes with HTTP 200).
    #[error("{backend} refused the search for {query:?}: {message}")]
    SearchRefused {
        /// Which search service.
        backend: SearchBackend,
        /// The query sent.
        query: String,
        /// The service's code and message, one line.
        message: String,
    },

    /// The monthly quota set for a hosted search API is used up; nothing was sent.
    #[error("this month's {backend} quota is spent: {used} of {quota} {unit} used in {month}")]
    SearchQuotaSpent {
        /// Which search service.
        backend: SearchBackend,
        /// Queries or credits counted this month.
        used: u64,
        /// The monthly quota.
        quota: u64,
        /// `queries` or `credits`.
        unit: &'static str,
        /// The calendar month, `YYYY-MM` (UTC).
        month: String,
    },

    /// A search API is rate-limiting us.
    #[error("{backend} is rate-limiting requests (HTTP 429): {message}")]
    SearchApiRateLimited {
        /// Which search service.
        backend: SearchBackend,
        /// The service's message.
        message: String,
    },

    /// Zero results, and SearXNG said some engines failed: the search itself failed.
    #[error("SearXNG found nothing because its engines failed: {engines}")]
    SearchEnginesFailed {
        /// "engine (reason), ..." as SearXNG reported them.
        engines: String,
    },

    /// Zero results with every engine healthy.
    #[error("the search for {query:?} returned no results")]
    NoResults {
        /// The query that was sent.
        query: String,
    },

    /// Every candidate page failed to fetch or had no readable text.
    #[error("none of the {tried} result pages could be used ({summary})")]
    NoUsableSources {
        /// How many pages were tried.
        tried: usize,
        /// Per-status counts, e.g. "2 TIMEOUT, 1 ERROR 404".
        summary: String,
    },

    /// The model server could not be reached.
    #[error("cannot reach the {backend} model server at {url}: {reason}")]
    ModelUnreachable {
        /// Which API the server speaks.
        backend: LlmBackend,
        /// The model server URL tried.
        url: String,
        /// The transport error, one line.
        reason: String,
    },

    /// The configured model is not installed on (or not served by) the server.
    #[error("model {model:?} is not available on the {backend} server at {url}")]
    ModelNotFound {
        /// Which API the server speaks.
        backend: LlmBackend,
        /// The model name.
        model: String,
        /// The server URL.
        url: String,
    },

    /// The prompt did not fit the server's context window (llama.cpp's
    /// `exceed_context_size_error`).
    #[error("the prompt does not fit the model server's context window: {message}")]
    ModelContextExceeded {
        /// The server's message.
        message: String,
        /// The server's window, when it said.
        server_window: Option<u64>,
    },

    /// The server refused our credentials (HTTP 401/403).
    #[error("the model server refused the request (HTTP {status}): {message}")]
    ModelAuth {
        /// 401 or 403.
        status: u16,
        /// The server's message.
        message: String,
    },

    /// The model server answered with an error status.
    #[error("the model server answered HTTP {status}: {message}")]
    ModelHttp {
        /// The HTTP status code.
        status: u16,
        /// The server's error message, one line, shortened.
        message: String,
    },

    /// The model server reported a failure in the middle of a streamed reply (an
    /// `{"error": ...}` line or event with status 200).
    #[error("the model server failed while writing its reply: {message}")]
    ModelStreamFailed {
        /// The server's message, one line, shortened.
        message: String,
    },

    /// A streamed reply ended before the server said it was complete: the connection
    /// dropped (or broke) in the middle of the reply.
    #[error("the model server's reply broke off after {received} bytes: {reason}")]
    ModelStreamCut {
        /// Body bytes received before the cut.
        received: usize,
        /// What happened, one line.
        reason: String,
    },

    /// The model did not answer within the time limit.
    #[error("the model did not answer within {seconds} s")]
    ModelTimeout {
        /// The limit that was exceeded.
        seconds: u64,
    },

    /// `--llm embedded` in a `ground` built without the `embedded` feature.
    #[error("this ground was built without the embedded model (cargo feature `embedded`)")]
    EmbeddedNotBuilt,

    /// A model file is not a usable GGUF file: not GGUF, truncated, corrupt, or
    /// refused by llama.cpp's loader.
    #[error("the model file {} cannot be used: {reason}", path.display())]
    ModelFileInvalid {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// Too little free memory to load the embedded model.
    #[error("{model} needs about {} of memory and {} is available", gb(*needed), gb(*available))]
    ModelMemory {
        /// The model's name (or file name).
        model: String,
        /// Bytes it needs: weights, cache for the window, working memory.
        needed: u64,
        /// `MemAvailable` from /proc/meminfo.
        available: u64,
        /// A smaller catalogue model to suggest.
        smaller: Option<String>,
    },

    /// The embedded model is not on disk and downloads are off (`--no-download`).
    #[error("the embedded model {name} is not downloaded ({} is missing) and downloads are off", path.display())]
    ModelNotDownloaded {
        /// The catalogue name.
        name: String,
        /// Where its file would be.
        path: std::path::PathBuf,
    },

    /// Downloading a model failed: the hub could not be reached, said 404, stalled,
    /// or the file could not be written.
    #[error("downloading the model {name} failed: {reason}")]
    ModelDownload {
        /// The catalogue name.
        name: String,
        /// What went wrong, one line (it says when the part is kept for a resume).
        reason: String,
    },

    /// A downloaded model file does not have the SHA-256 pinned in the catalogue.
    #[error("the downloaded model {name} is not the expected file: SHA-256 {actual}, expected {expected}; the download ({}) was deleted", deleted.display())]
    ModelChecksum {
        /// The catalogue name.
        name: String,
        /// The pinned SHA-256.
        expected: String,
        /// What the received bytes hash to.
        actual: String,
        /// The part that was deleted.
        deleted: std::path::PathBuf,
    },

    /// Not enough free disk space for a model download.
    #[error("not enough disk space in {} for the model: {} needed, {} free", dir.display(), gb(*needed), gb(*available))]
    ModelDiskSpace {
        /// The models folder.
        dir: std::path::PathBuf,
        /// Bytes still to write, with a margin.
        needed: u64,
        /// Bytes free there.
        available: u64,
    },

    /// The prompt does not fit the embedded model's window.
    #[error("the prompt is {prompt_tokens} tokens and the model's window is {window}")]
    ModelPromptTooLong {
        /// The prompt's exact token count.
        prompt_tokens: u32,
        /// The window used: the smaller of --context-tokens and the trained context.
        window: u32,
        /// The context the model was trained for.
        trained: u32,
    },

    /// The embedded engine failed while preparing or writing a reply.
    #[error("the embedded model failed: {message}")]
    ModelEngine {
        /// What failed, one line.
        message: String,
    },

    /// The model's reply could not be used, even after one retry.
    #[error(
        "the model's reply is unusable after {attempts} attempts: {detail}; reply began: {raw_start:?}"
    )]
    ModelBadReply {
        /// How many calls were made.
        attempts: u32,
        /// What was wrong (invalid JSON, cut off at the token cap, ...).
        detail: String,
        /// The first characters of the last raw reply, for diagnosis.
        raw_start: String,
        /// Why the reply could not be used, for the hint.
        problem: ReplyProblem,
    },

    /// The model answered but cited none of the sources, even after one retry.
    #[error("the model answered without citing any of the {sources} sources")]
    Uncited {
        /// How many sources the model was given.
        sources: usize,
    },

    /// With `--strict`: the answer is not fully supported by verified citations.
    #[error("the answer is not fully grounded: {reason}")]
    NotGrounded {
        /// Which statements lack support, or that the sources did not answer.
        reason: String,
    },

    /// `ground mcp` could not speak MCP at all: stdin closed before `initialize`,
    /// or what came was not MCP.
    #[error("the MCP session over stdio failed: {detail}")]
    McpTransport {
        /// What the protocol layer said.
        detail: String,
    },

    /// A local file (`ground extract FILE`, or a page of `--input-dir`) could not be
    /// read.
    #[error("cannot read {}: {reason}", path.display())]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The I/O error, as the system said it.
        reason: String,
    },

    /// The folder of `ground extract --input-dir` could not be listed.
    #[error("cannot list {}: {reason}", path.display())]
    ReadDir {
        /// The folder.
        path: PathBuf,
        /// The I/O error, as the system said it.
        reason: String,
    },

    /// A file (or the folder itself) of `ground extract --output-dir` could not be
    /// written.
    #[error("cannot write {}: {reason}", path.display())]
    WriteFile {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error, as the system said it.
        reason: String,
    },

    /// A local PDF could not be read: larger than the most read, broken, or too slow
    /// to decode.
    #[error("cannot read {} as a PDF: {reason}", path.display())]
    ReadPdf {
        /// The file (`-` for stdin).
        path: PathBuf,
        /// Why, one line.
        reason: String,
        /// What to do, when the PDF reader knows better than "check the file".
        hint: Option<&'static str>,
    },

    /// The local document index could not be used (`ground index`, `--docs`).
    #[error(transparent)]
    Index(#[from] IndexError),

    /// Standard output could not be written (closed, or a full disk behind it).
    #[error("cannot write to stdout: {reason}")]
    WriteStdout {
        /// The I/O error, as the system said it.
        reason: String,
    },

    /// The whole run took longer than `--timeout`.
    #[error("ground did not finish within {seconds} s (stopped while {})", stage.describe())]
    Deadline {
        /// The deadline.
        seconds: u64,
        /// Where the run was.
        stage: Stage,
    },

    /// Interrupted by the user.
    #[error("interrupted")]
    Interrupted,
}

impl Error {
    /// The process exit code for this error (see [`exit`]).
    pub fn exit_code(&self) -> i32 {
        use Error::*;
        match self {
            EmptyQuestion
            | Config { .. }
            | Usage { .. }
            | Session { .. }
            | MissingKey { .. }
            | ImagesUnsupported { .. } => exit::USAGE,
            Internal { .. } => exit::INTERNAL,
            SearchUnreachable { .. }
            | SearchJsonDisabled { .. }
            | SearchRateLimited { .. }
            | SearchBadRequest { .. }
            | SearchHttp { .. }
            | SearchInvalidReply { .. }
            | SearchAuth { .. }
            | SearchQuota { .. }
            | SearchQuotaSpent { .. }
            | SearchApiRateLimited { .. }
            | SearchChallenged { .. }
            | SearchRefused { .. }
            | SearchEnginesFailed { .. } => exit::SEARCH,
            SearchRateLimitedLocally { .. } => exit::RATE_LIMITED,
            NoResults { .. } | NoUsableSources { .. } => exit::NO_SOURCES,
            ModelUnreachable { .. }
            | ModelNotFound { .. }
            | ModelContextExceeded { .. }
            | ModelAuth { .. }
            | ModelHttp { .. }
            | ModelStreamFailed { .. }
            | ModelStreamCut { .. }
            | ModelTimeout { .. }
            | ModelBadReply { .. }
            | ModelFileInvalid { .. }
            | ModelMemory { .. }
            | ModelNotDownloaded { .. }
            | ModelDownload { .. }
            | ModelChecksum { .. }
            | ModelDiskSpace { .. }
            | ModelPromptTooLong { .. }
            | ModelEngine { .. } => exit::MODEL,
            EmbeddedNotBuilt => exit::USAGE,
            Uncited { .. } | NotGrounded { .. } => exit::NOT_GROUNDED,
            McpTransport { .. } => exit::USAGE,
            ReadFile { .. }
            | ReadDir { .. }
            | WriteFile { .. }
            | ReadPdf { .. }
            | Index(_)
            | WriteStdout { .. } => exit::USAGE,
            Deadline { stage, .. } => match stage {
                Stage::Searching => exit::SEARCH,
                Stage::Fetching | Stage::Building => exit::NO_SOURCES,
                Stage::Deciding | Stage::Planning | Stage::Asking => exit::MODEL,
                Stage::Starting | Stage::Checking => exit::INTERNAL,
            },
            Interrupted => exit::INTERRUPTED,
        }
    }

    /// A short machine-readable name for `--json` error objects.
    pub fn kind(&self) -> &'static str {
        use Error::*;
        match self {
            EmptyQuestion => "empty_question",
            Config { .. } => "config",
            Usage { .. } => "usage",
            Session { .. } => "session",
            MissingKey { .. } => "missing_key",
            Internal { .. } => "internal",
            SearchUnreachable { .. } => "search_unreachable",
            ImagesUnsupported { .. } => "images_unsupported",
            SearchJsonDisabled { .. } => "search_json_disabled",
            SearchRateLimited { .. } => "search_rate_limited",
            SearchBadRequest { .. } => "search_bad_request",
            SearchHttp { .. } => "search_http",
            SearchInvalidReply { .. } => "search_invalid_reply",
            SearchAuth { .. } => "search_auth",
            SearchQuota { .. } => "search_quota",
            SearchQuotaSpent { .. } => "search_quota_spent",
            SearchRateLimitedLocally { .. } => "search_rate_limit_local",
            SearchApiRateLimited { .. } => "search_rate_limited",
            SearchChallenged { .. } => "search_challenged",
            SearchRefused { .. } => "search_refused",
            SearchEnginesFailed { .. } => "search_engines_failed",
            NoResults { .. } => "no_results",
            NoUsableSources { .. } => "no_usable_sources",
            ModelUnreachable { .. } => "model_unreachable",
            ModelNotFound { .. } => "model_not_found",
            ModelContextExceeded { .. } => "model_context_exceeded",
            ModelAuth { .. } => "model_auth",
            ModelHttp { .. } => "model_http",
            ModelStreamFailed { .. } => "model_stream_failed",
            ModelStreamCut { .. } => "model_stream_cut",
            ModelTimeout { .. } => "model_timeout",
            ModelBadReply { .. } => "model_bad_reply",
            EmbeddedNotBuilt => "embedded_not_built",
            ModelFileInvalid { .. } => "model_file_invalid",
            ModelMemory { .. } => "model_memory",
            ModelNotDownloaded { .. } => "model_not_downloaded",
            ModelDownload { .. } => "model_download",
            ModelChecksum { .. } => "model_checksum",
            ModelDiskSpace { .. } => "model_disk_space",
            ModelPromptTooLong { .. } => "model_prompt_too_long",
            ModelEngine { .. } => "model_engine",
            Uncited { .. } => "uncited",
            NotGrounded { .. } => "not_grounded",
            McpTransport { .. } => "mcp_transport",
            ReadFile { .. } => "read_file",
            ReadDir { .. } => "read_dir",
            WriteFile { .. } => "write_file",
            ReadPdf { .. } => "read_pdf",
            Index(IndexError::Corrupt { .. }) => "index_corrupt",
            Index(_) => "index",
            WriteStdout { .. } => "write_stdout",
            Deadline { .. } => "deadline",
            Interrupted => "interrupted",
        }
    }

    /// What the user should do next, one line.
    pub fn hint(&self) -> Option<String> {
        use Error::*;
        Some(match self {
            EmptyQuestion => "pass a question: ground answer \"what is ...?\" (or pipe it on stdin)".into(),
            Config { hint, .. } | Usage { hint, .. } | Session { hint, .. } => hint.clone(),
            MissingKey { backend, .. } => format!("store it with `ground key set {}` (OS keyring), or set {} (or [search] api_key in the config file), or use your SearXNG with --search searxng", if *backend == SearchBackend::Tavily { "tavily" } else { "brave" }, backend.key_env()),
            Internal { .. } => "this is a bug, or the machine is out of threads or memory: close something and retry, and report it if it stays".into(),
            SearchUnreachable { backend: SearchBackend::Searxng, .. } => "start SearXNG, or point ground at it with --searxng-url / GROUND_SEARXNG_URL / [search] url in the config file".into(),
            SearchUnreachable { backend: SearchBackend::Wikipedia, .. } => "check this machine's network connection to Wikipedia, or [search] wikipedia_url in the config file".into(),
            SearchUnreachable { backend: SearchBackend::DuckDuckGo, .. } => "check this machine's network connection to DuckDuckGo, or [search] duckduckgo_url in the config file".into(),
            SearchUnreachable { backend, .. } => format!("check this machine's network connection to {backend}, or the [search] url in the config file"),
            ImagesUnsupported { .. } => "search with your SearXNG (--search searxng --searxng-url URL) or with a Brave key (--search brave); its images category or image search answers --images".into(),
            SearchJsonDisabled { .. } => "enable JSON in SearXNG's settings.yml: under `search:` set `formats: [html, json]`, then restart SearXNG".into(),
            SearchRateLimited { .. } => "SearXNG's limiter blocked ground: in limiter.toml add this machine's address to `[botdetection.ip_lists] pass_ip`, or set `server.limiter: false` in settings.yml".into(),
            SearchBadRequest { .. } => "check --language, --categories, --engines, --time-range and --safesearch against what your SearXNG offers".into(),
            SearchHttp { backend: SearchBackend::Searxng, status, .. } if *status >= 500 => "SearXNG itself failed: look at its logs, then try again".into(),
            SearchHttp { backend: SearchBackend::Searxng, .. } => "check that --searxng-url points at SearXNG's base URL (the page with the search box)".into(),
            SearchHttp { backend: SearchBackend::Wikipedia, status: 403, .. } => "Wikimedia refuses clients it cannot identify: set [search] contact (or GROUND_CONTACT) to your e-mail address or web page, which ground sends in its User-Agent as Wikimedia's policy asks".into(),
            SearchHttp { backend: SearchBackend::DuckDuckGo, .. } => "DuckDuckGo's HTML page is made for people and changes or blocks clients without notice: try again later, or use --search wikipedia, a Brave key or your own SearXNG (README, \"Search backends\")".into(),
            SearchHttp { backend, status, .. } if *status >= 500 => format!("{backend} is having trouble: try again later"),
            SearchHttp { .. } => "check the [search] settings (url, language, time range) against the service's documentation".into(),
            SearchInvalidReply { backend: SearchBackend::Searxng, .. } => "check that --searxng-url points at SearXNG itself, not a proxy or login page".into(),
            SearchInvalidReply { backend: SearchBackend::Wikipedia, .. } => "check [search] wikipedia_url: it must be a MediaWiki's base URL (the one before /w/api.php), with {lang} for the language".into(),
            SearchInvalidReply { backend: SearchBackend::DuckDuckGo, .. } => "DuckDuckGo's HTML page is made for people and may have changed: use --search wikipedia, a Brave key or your own SearXNG (README, \"Search backends\")".into(),
            SearchInvalidReply { .. } => "check the [search] url in the config file: it must be the service's API address".into(),
            SearchAuth { backend, .. } => format!("set a valid key in {} (or [search] api_key in the config file)", backend.key_env()),
            SearchQuota { backend, .. } => format!("check your {backend} plan's usage, wait for it to reset, or switch to SearXNG with --search searxng"),
            SearchQuotaSpent { backend, .. } => format!("wait for next month, raise [search] monthly_quota in the config file if your {backend} plan allows more (0 = no quota), or use your SearXNG with --search searxng; `ground usage` shows the counts"),
            SearchRateLimitedLocally { retry_after_secs, .. } => format!("give the run a longer --timeout (or [run] timeout_secs) so it can wait for the slot, retry in {retry_after_secs} s, or raise the limit with --max-per-minute / [search] max_per_minute (0 = none); cached searches do not count"),
            SearchChallenged { .. } => "DuckDuckGo's HTML page is made for people and blocks clients it takes for bots, sometimes for an hour: search less often, or use --search wikipedia, a Brave key or your own SearXNG (README, \"Search backends\")".into(),
            SearchRefused { backend: SearchBackend::Wikipedia, .. } => "check --language (it picks the wiki: de searches de.wikipedia.org) and [search] wikipedia_url".into(),
            SearchRefused { backend, .. } => format!("check the [search] settings against what {backend} accepts"),
            SearchApiRateLimited { .. } => "wait a moment and try again; lower --pages or run fewer searches at once".into(),
            SearchEnginesFailed { .. } => "SearXNG's engines are failing (timeouts, blocks or suspensions): check its logs and engine settings, or try again later".into(),
            NoResults { .. } => "rephrase the question, or widen the search (--language, --time-range, --categories)".into(),
            NoUsableSources { .. } => "try again, ask for more pages with --pages, or rephrase the question; `--json` lists each page's status".into(),
            ModelUnreachable { backend: LlmBackend::Ollama, .. } => "start Ollama with `ollama serve`, or point ground at it with --llm-url / OLLAMA_HOST / [llm] url in the config file".into(),
            ModelUnreachable { .. } => "start the OpenAI-compatible server (llama-server, vLLM, LM Studio), or point ground at it with --llm-url / GROUND_LLM_URL / [llm] url".into(),
            ModelNotFound { backend: LlmBackend::Ollama, model, .. } => format!("download it with `ollama pull {model}`, or choose an installed model with --model (see `ollama list`)"),
            ModelNotFound { .. } => "choose a model the server serves with --model (its /v1/models lists them)".into(),
            ModelContextExceeded { server_window: Some(n), .. } => format!("the server's window is {n} tokens: run ground with --context-tokens {n} (or lower), or start the server with a larger context (llama-server -c)"),
            ModelContextExceeded { .. } => "lower --context-tokens to the server's context size, or start the server with a larger context".into(),
            ModelAuth { .. } => "set the API key with GROUND_LLM_API_KEY or [llm] api_key in the config file".into(),
            ModelHttp { status: 404, .. } => "check --llm-url: it must be the model server's base URL (Ollama: http://host:11434 with no path; OpenAI-compatible: ending in /v1 or nothing)".into(),
            ModelHttp { status: 429, .. } => "the model server is rate-limiting: wait and try again, or check your plan's limits".into(),
            ModelHttp { .. } => "check the model server's logs; a smaller --context-tokens may help if it ran out of memory".into(),
            ModelStreamFailed { .. } => "the server gave up mid-answer (often out of memory, or the model crashed): check its log, then run again, perhaps with fewer --pages".into(),
            ModelStreamCut { .. } => "the connection to the model server broke mid-answer: check that the server is still running (`ground doctor`), then run again".into(),
            ModelTimeout { .. } => "use a smaller or faster model, fewer --pages, or raise [llm] timeout_secs".into(),
            ModelBadReply { problem: ReplyProblem::CutOff, .. } => "the reply hit the output-token cap: raise --max-answer-tokens, or use a model that follows JSON schemas better".into(),
            ModelBadReply { problem: ReplyProblem::TooLarge, .. } => "the server sent far more than an answer: check that --llm-url points at a model server".into(),
            ModelBadReply { .. } => "use a model that follows JSON schemas better (a larger one usually does), via --model".into(),
            EmbeddedNotBuilt => "build ground with its default features (`cargo install --locked --path .`, which needs cmake, clang and libclang), or use a model server with --llm ollama or --llm openai".into(),
            ModelFileInvalid { .. } => "use a complete GGUF model file: download it again, or use a catalogue model with --model (`ground model list`)".into(),
            ModelMemory { smaller: Some(smaller), .. } => format!("use the smaller model with --model {smaller}, or close programs to free memory"),
            ModelMemory { .. } => "close programs to free memory, or use a smaller model (--model qwen3-0.6b, or a smaller --model-file)".into(),
            ModelNotDownloaded { name, .. } => format!("download it once with `ground model pull {name}` (or allow downloads: drop --no-download / GROUND_NO_DOWNLOAD)"),
            ModelDownload { name, .. } => format!("check the network connection (or [llm] hub_url / GROUND_MODEL_HUB), then run again: `ground model pull {name}` resumes what arrived"),
            ModelChecksum { name, .. } => format!("run `ground model pull {name}` again; if it fails the same way, the hub (or a proxy in between) serves another file: check [llm] hub_url"),
            ModelDiskSpace { dir, .. } => format!("free disk space in {}, or set XDG_DATA_HOME to a file system with room", dir.display()),
            ModelPromptTooLong { trained, window, .. } if window < trained => format!("use fewer --pages, or raise --context-tokens (up to {trained} for this model)"),
            ModelPromptTooLong { .. } => "use fewer --pages or a shorter question: the window is already the model's whole trained context".into(),
            ModelEngine { .. } => "run again with --verbose to see llama.cpp's messages; a smaller --context-tokens helps when memory is short".into(),
            Uncited { .. } => "use a model that follows instructions better (--model), or give it more of each page with a larger --context-tokens".into(),
            NotGrounded { .. } => "the answer above is not fully backed by the pages: read what is marked unsupported or unknown, try a narrower question or more --pages, or drop --strict to accept it".into(),
            McpTransport { .. } => "run `ground mcp` from an MCP client (it speaks JSON-RPC on stdin/stdout), not from a terminal".into(),
            ReadFile { .. } => "check the path and its permissions".into(),
            ReadDir { .. } => "give an existing folder to --input-dir".into(),
            WriteFile { .. } => "check that --output-dir is writable".into(),
            ReadPdf { hint, .. } => hint.unwrap_or("check that the file is complete").into(),
            Index(e) => e.hint(),
            WriteStdout { .. } => return None,
            Deadline { .. } => "raise --timeout (or [run] timeout_secs), or make the run smaller with fewer --pages".into(),
            Interrupted => return None,
        })
    }

    /// The full message for a terminal: `error: ...` and, when there is one, `hint: ...`
    /// ([`report`]).
    pub fn report(&self) -> String {
        report(&self.to_string(), self.hint().as_deref())
    }
}

/// Bytes as gigabytes with one decimal (`1.1 GB`), for memory and disk messages.
fn gb(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

impl From<crate::sites::SiteError> for Error {
    fn from(error: crate::sites::SiteError) -> Self {
        Error::Usage {
            message: error.message,
            hint: error.hint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_a_person_reads_is_one_sanitised_line() {
        assert_eq!(warning("keyring\n  gone"), "warning: keyring gone");
        assert_eq!(
            report_about("no\nresults", Some(("query", "x\ny")), Some("try\nagain")),
            "error: no results\nquery: x y\nhint: try again"
        );
        assert_eq!(
            report_line("bad\nfile", Some("fix it")),
            "error: bad file; fix it"
        );
        assert_eq!(report("bad", None), "error: bad");
        // A hint may quote what a client sent: it is one line too.
        assert_eq!(report("bad", Some("use\nx")), "error: bad\nhint: use x");
    }
}
