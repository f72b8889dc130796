//! The command line's values as plain data: what the user gave for this run.
//!
//! The library never parses the command line (only the binary does): the binary fills
//! an [`Overrides`] from the flags of whichever command runs, `ground mcp`'s included,
//! and hands it to the resolver. `None` (or `false`, or an empty list) means "not
//! given", so that the resolver can tell an absent flag from a flag set to the default
//! and let the environment and the config file speak in its place.

use std::path::PathBuf;

use crate::settings::{Fallback, LlmBackend, PlanMode, RobotsPolicy, SearchBackend, TimeRange};

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
    /// `--site`, in the order given (empty: not given).
    pub sites: Vec<String>,
    /// `--exclude-site`, in the order given (empty: not given).
    pub exclude_sites: Vec<String>,
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
    /// `--model-file`: a local GGUF file for the embedded model.
    pub model_file: Option<PathBuf>,
    /// `--no-download`: never download an embedded model.
    pub no_download: bool,
    /// `--verbose`: llama.cpp's own log on stderr.
    pub verbose: bool,
    /// `--gpu-layers`: the embedded model's layers on the GPU.
    pub gpu_layers: Option<u32>,
    /// `--context-tokens`.
    pub context_tokens: Option<u32>,
    /// `--max-answer-tokens`.
    pub max_answer_tokens: Option<u32>,
    /// `--answer-language`.
    pub answer_language: Option<String>,
    /// `ground serve --listen`.
    pub serve_listen: Option<String>,
    /// `ground serve --api-key`.
    pub serve_api_key: Option<String>,
    /// `ground serve --queue`.
    pub serve_queue: Option<usize>,
    /// `ground serve --concurrency`.
    pub serve_concurrency: Option<usize>,
    /// `ground serve --cors`.
    pub serve_cors: Option<String>,
    /// `ground serve --max-connections`.
    pub serve_max_connections: Option<usize>,
    /// `ground serve --header-timeout` in seconds.
    pub serve_header_timeout_secs: Option<u64>,
    /// `ground serve --idle-timeout` in seconds.
    pub serve_idle_timeout_secs: Option<u64>,
    /// `ground serve --shutdown-grace` in seconds.
    pub serve_shutdown_grace_secs: Option<u64>,
    /// `ground serve --isolate-clients[=BOOL]`.
    pub serve_isolate_clients: Option<bool>,
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
    /// `--images` (`answer`, `chat`, `batch`): an images search beside the web search.
    pub images: bool,
    /// `--obey-robots` (Always) or `ground mcp --ignore-robots` (Never).
    pub robots: Option<RobotsPolicy>,
    /// The fetches are an agent's (`ground mcp`): obeys robots.txt under the default
    /// policy.
    pub agent: bool,
    /// `--docs [NAME]`, repeatable: local collections searched beside the web.
    pub docs: Vec<String>,
    /// `--no-web`: the local collections alone, no search request.
    pub no_web: bool,
    /// `--redis-url` (`ground serve`): the Redis whose state replicas share.
    pub redis_url: Option<String>,
}
