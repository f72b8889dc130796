//! Command-line types only. Their doc comments are the `--help` text, so help and
//! behaviour cannot drift apart.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes, shown under `ground answer --help` (and in README).
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0  success (with --strict: every statement has a verified citation)
  1  internal error (a bug)
  2  usage or configuration error
  3  search backend failure (SearXNG unreachable, 403, 429, 400, 5xx, engines failing)
  4  no usable sources (no results, or every page failed)
  5  model failure (unreachable, model missing, invalid or cut-off reply)
  6  not grounded (no citation at all; with --strict also any unsupported statement
     or a reply that the sources do not answer)
  130 interrupted (Ctrl-C)";

/// Answer questions from live web search, with citations you can check.
///
/// Uses your own SearXNG for search and your own Ollama model for the answer.
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
    #[command(after_help = EXIT_CODES_HELP)]
    Answer(AnswerArgs),
    /// Print the main text of local HTML files (or stdin).
    Extract(ExtractArgs),
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

/// `ground answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// The question. Use `-` or leave it out to read it from stdin.
    pub question: Vec<String>,

    /// Print one JSON object on stdout instead of text (shape in README).
    #[arg(long)]
    pub json: bool,

    /// Exit with code 6 unless every statement has a verified citation.
    #[arg(long)]
    pub strict: bool,

    /// Output style for people.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// No progress or warnings on stderr (errors are still printed).
    #[arg(short, long)]
    pub quiet: bool,

    /// Details on stderr: every page tried with its status, token estimates.
    #[arg(short, long)]
    pub verbose: bool,

    /// Config file [default: $XDG_CONFIG_HOME/ground/config.toml; env: GROUND_CONFIG].
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// SearXNG base URL [default: http://localhost:8080; env: GROUND_SEARXNG_URL].
    #[arg(long, value_name = "URL")]
    pub searxng_url: Option<String>,

    /// Search language passed to SearXNG, e.g. `en` or `de-CH`.
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

    /// Safe search: 0 off, 1 moderate, 2 strict.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    pub safesearch: Option<u8>,

    /// How many pages to read [default: 3; env: GROUND_PAGES].
    #[arg(long, value_name = "N")]
    pub pages: Option<usize>,

    /// Allow fetching pages on loopback, private and link-local addresses
    /// [env: GROUND_ALLOW_PRIVATE_ADDRESSES].
    #[arg(long)]
    pub allow_private_addresses: bool,

    /// Model server API: `ollama` (Ollama's own API) or `openai` (llama.cpp's
    /// llama-server, vLLM, LM Studio, hosted) [default: ollama; env: GROUND_LLM].
    #[arg(long, value_name = "API", value_parser = ["ollama", "openai"])]
    pub llm: Option<String>,

    /// Model server base URL [default: http://localhost:11434 for ollama,
    /// http://localhost:8080/v1 for openai; env: GROUND_LLM_URL, then OLLAMA_HOST].
    #[arg(long, value_name = "URL")]
    pub llm_url: Option<String>,

    /// Model name [default: llama3.2; env: GROUND_MODEL].
    #[arg(long)]
    pub model: Option<String>,

    /// The model's context window in tokens; the prompt is fitted to it
    /// [default: 4096; env: GROUND_CONTEXT_TOKENS].
    #[arg(long, value_name = "N")]
    pub context_tokens: Option<u32>,

    /// Cap on the answer's tokens, reserved in the window [default: 1024; env: GROUND_MAX_ANSWER_TOKENS].
    #[arg(long, value_name = "N")]
    pub max_answer_tokens: Option<u32>,
}

/// `ground extract`.
#[derive(Debug, Args)]
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
