//! `ground answer`, top to bottom:
//! search -> fetch + extract -> context -> llm -> grounding, returning a [`Report`]
//! that the render stage prints. Each stage is its own module and they exchange plain
//! data, so each can be tested alone; this file only sequences them.

use std::time::Instant;

use serde::Serialize;
use tokio::task::JoinSet;

use crate::config::Settings;
use crate::context::{self, Context, SourceText};
use crate::error::Error;
use crate::extract;
use crate::fetch::{BodyKind, FetchFailure, FetchedPage, Fetcher, RetrievalStatus, elapsed_ms};
use crate::grounding::{self, GroundedAnswer};
use crate::llm::{self, Backend, ChatBackend, ModelRequest};
use crate::search::{self, SearchHit};

/// What happened to one result page.
#[derive(Debug, Clone, Serialize)]
pub struct PageAttempt {
    /// Search rank (0-based) of the result.
    #[serde(skip)]
    pub rank: usize,
    /// The number the model saw it under, when it was used.
    pub index: Option<usize>,
    /// The result's URL.
    pub url: String,
    /// The URL after redirects.
    pub final_url: Option<String>,
    /// The page's title (extracted, else the search result's).
    pub title: String,
    /// Retrieval status.
    pub status: RetrievalStatus,
    /// HTTP status, when a response arrived.
    pub http_status: Option<u16>,
    /// Content-Type header.
    pub content_type: Option<String>,
    /// Characters of decoded page body.
    pub chars_fetched: usize,
    /// Characters of extracted main text.
    pub chars: usize,
    /// Whether the body was cut at the size limit.
    pub body_truncated: bool,
    /// What went wrong, when it did.
    pub error: Option<String>,
    /// Time spent on this page.
    pub ms: u64,
    /// The extracted text (not serialised; sources carry it).
    #[serde(skip)]
    pub text: String,
}

/// Model call details for the report.
#[derive(Debug, Clone, Serialize)]
pub struct ModelInfo {
    /// "ollama" or "openai".
    pub backend: crate::config::LlmBackend,
    /// Model name.
    pub name: String,
    /// Prompt tokens the server counted.
    pub prompt_tokens: Option<u32>,
    /// Tokens generated.
    pub completion_tokens: Option<u32>,
    /// Our estimate of the prompt's tokens.
    pub estimated_prompt_tokens: u32,
    /// The window requested.
    pub context_window: u32,
    /// Output-token cap.
    pub max_answer_tokens: u32,
    /// Calls made (a bad first reply is retried once).
    pub attempts: u32,
    /// Why generation stopped.
    pub done_reason: Option<String>,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timings {
    /// Search call.
    pub search: u64,
    /// Fetching pages (wall time; extraction runs inside it).
    pub fetch: u64,
    /// Extraction (summed over pages).
    pub extract: u64,
    /// Model call(s).
    pub llm: u64,
    /// Whole run.
    pub total: u64,
}

/// Everything one run produced.
#[derive(Debug, Clone)]
pub struct Report {
    /// The question.
    pub question: String,
    /// Queries that ran.
    pub queries: Vec<String>,
    /// Search results, in rank order.
    pub hits: Vec<SearchHit>,
    /// Every page tried, in rank order.
    pub pages: Vec<PageAttempt>,
    /// The sources the model saw.
    pub sources: Vec<SourceText>,
    /// How the sources were fitted.
    pub context: Context,
    /// The checked answer.
    pub answer: GroundedAnswer,
    /// Model details.
    pub model: ModelInfo,
    /// Stage timings.
    pub timings: Timings,
    /// Things the user should know (prompt cut, engines down, ...).
    pub warnings: Vec<String>,
}

/// Runs the whole pipeline for `question`. `progress` receives one short line per
/// stage for the terminal.
pub async fn answer(
    question: &str,
    settings: &Settings,
    progress: &dyn Fn(&str),
) -> Result<Report, Error> {
    let started = Instant::now();
    let question = question.trim();
    if question.is_empty() {
        return Err(Error::EmptyQuestion);
    }
    let mut warnings = Vec::new();
    let mut timings = Timings::default();

    // 1. Search.
    progress(&format!(
        "searching {}",
        settings.search.url.as_str().trim_end_matches('/')
    ));
    let t = Instant::now();
    let found = search::searxng::search(&settings.search, question).await?;
    timings.search = elapsed_ms(t);
    if !found.unresponsive_engines.is_empty() {
        let engines = search::searxng::describe_unresponsive(&found.unresponsive_engines);
        if found.hits.is_empty() {
            return Err(Error::SearchEnginesFailed { engines });
        }
        warnings.push(format!("some search engines failed: {engines}"));
    }
    if found.hits.is_empty() {
        return Err(Error::NoResults {
            query: question.to_string(),
        });
    }

    // 2 + 3. Fetch and extract, replacing failed pages with the next results.
    progress(&format!(
        "fetching {} of {} results",
        settings.fetch.pages.min(found.hits.len()),
        found.hits.len()
    ));
    let t = Instant::now();
    let fetcher = Fetcher::new(&settings.fetch)?;
    let pages = gather(&fetcher, &found.hits, settings.fetch.pages).await;
    timings.fetch = elapsed_ms(t);
    timings.extract = pages.iter().map(|p| p.1).sum();
    let mut pages: Vec<PageAttempt> = pages.into_iter().map(|p| p.0).collect();
    let mut sources = Vec::new();
    for page in pages
        .iter_mut()
        .filter(|p| p.status == RetrievalStatus::Success)
    {
        let number = sources.len() + 1;
        page.index = Some(number);
        sources.push(SourceText {
            number,
            url: page.final_url.clone().unwrap_or_else(|| page.url.clone()),
            title: page.title.clone(),
            text: std::mem::take(&mut page.text),
        });
    }
    if sources.is_empty() {
        return Err(Error::NoUsableSources {
            tried: pages.len(),
            summary: status_summary(&pages),
        });
    }
    if sources.len() < settings.fetch.pages {
        warnings.push(format!(
            "only {} of the {} pages asked for could be used",
            sources.len(),
            settings.fetch.pages
        ));
    }

    // 4. Context, fitted to the window.
    let llm_settings = &settings.llm;
    let overhead = llm::prompt_overhead_tokens(question, sources.len());
    let budget = llm_settings
        .context_tokens
        .saturating_sub(llm_settings.max_answer_tokens)
        .saturating_sub(overhead)
        .saturating_mul(97)
        / 100;
    let context = context::build(&sources, budget);
    let cut = context.sources.iter().filter(|s| s.truncated).count();
    if cut > 0 {
        warnings.push(format!(
            "{cut} of {} sources were shortened to fit the {}-token context window (raise --context-tokens to send more)",
            sources.len(),
            llm_settings.context_tokens
        ));
    }

    // 5. Model.
    progress(&format!(
        "asking {} ({} sources, ~{} tokens)",
        llm_settings.model,
        sources.len(),
        context.estimated_tokens + overhead
    ));
    let t = Instant::now();
    let client = Backend::new(llm_settings)?;
    let request = ModelRequest {
        system: llm::SYSTEM_PROMPT.to_string(),
        user: llm::user_message(&context.text, question),
        schema: llm::answer_schema(sources.len()),
        context_tokens: llm_settings.context_tokens,
        max_answer_tokens: llm_settings.max_answer_tokens,
    };
    let asked = llm::ask(&client, &request).await?;
    timings.llm = elapsed_ms(t);
    let estimated_prompt_tokens = overhead + context.estimated_tokens;
    if let Some(counted) = asked.reply.prompt_tokens {
        // Ollama keeps the end of an over-long prompt; a count at the window's edge
        // (less the output reserve) means the front, where sources start, was lost.
        let usable = llm_settings
            .context_tokens
            .saturating_sub(llm_settings.max_answer_tokens);
        if counted >= usable && estimated_prompt_tokens > counted {
            warnings.push(format!(
                "the model server counted {counted} prompt tokens against an estimate of {estimated_prompt_tokens}: the prompt was probably cut; lower --pages or raise --context-tokens"
            ));
        }
    }

    // 6. Grounding.
    let answer = grounding::verify(&asked.answer, &sources);
    progress("checking citations");

    timings.total = elapsed_ms(started);
    Ok(Report {
        question: question.to_string(),
        queries: vec![question.to_string()],
        hits: found.hits,
        pages,
        sources,
        model: ModelInfo {
            backend: client.backend(),
            name: client.model().to_string(),
            prompt_tokens: asked.reply.prompt_tokens,
            completion_tokens: asked.reply.completion_tokens,
            estimated_prompt_tokens,
            context_window: llm_settings.context_tokens,
            max_answer_tokens: llm_settings.max_answer_tokens,
            attempts: asked.attempts,
            done_reason: asked.reply.done_reason.clone(),
        },
        context,
        answer,
        timings,
        warnings,
    })
}

/// Fetches results until `wanted` pages are usable or the results run out, with at
/// most `wanted` fetches in flight: each failure starts the next result. Returns the
/// attempts in rank order, each with its extraction time in ms.
async fn gather(fetcher: &Fetcher, hits: &[SearchHit], wanted: usize) -> Vec<(PageAttempt, u64)> {
    let mut in_flight: JoinSet<(PageAttempt, u64)> = JoinSet::new();
    let mut next = 0usize;
    let mut done: Vec<(PageAttempt, u64)> = Vec::new();
    let mut successes = 0usize;
    let spawn_next = |set: &mut JoinSet<(PageAttempt, u64)>, next: &mut usize| {
        let rank = *next;
        let hit = hits[rank].clone();
        let fetcher = fetcher.clone();
        *next += 1;
        set.spawn(async move { fetch_and_extract(&fetcher, rank, &hit).await });
    };
    while next < hits.len() && in_flight.len() < wanted {
        spawn_next(&mut in_flight, &mut next);
    }
    while let Some(joined) = in_flight.join_next().await {
        let Ok(result) = joined else { continue }; // a panicked task is a lost page, not a crash
        if result.0.status == RetrievalStatus::Success {
            successes += 1;
        }
        done.push(result);
        if successes + in_flight.len() < wanted && next < hits.len() {
            spawn_next(&mut in_flight, &mut next);
        }
    }
    done.sort_by_key(|(p, _)| p.rank);
    done
}

/// Fetches one result page and extracts its main text. Returns the attempt (status,
/// sizes, the text on success) and the extraction time in ms.
pub async fn fetch_and_extract(
    fetcher: &Fetcher,
    rank: usize,
    hit: &SearchHit,
) -> (PageAttempt, u64) {
    let start = Instant::now();
    let mut attempt = PageAttempt {
        rank,
        index: None,
        url: hit.url.clone(),
        final_url: None,
        title: hit.title.clone(),
        status: RetrievalStatus::Error,
        http_status: None,
        content_type: None,
        chars_fetched: 0,
        chars: 0,
        body_truncated: false,
        error: None,
        ms: 0,
        text: String::new(),
    };
    let mut extract_ms = 0;
    match fetcher.fetch(&hit.url).await {
        Err(FetchFailure {
            status,
            http_status,
            final_url,
            reason,
        }) => {
            attempt.status = status;
            attempt.http_status = http_status;
            attempt.final_url = final_url;
            attempt.error = Some(reason);
        }
        Ok(page) => {
            let t = Instant::now();
            let FetchedPage {
                final_url,
                http_status,
                content_type,
                kind,
                body,
                truncated,
            } = page;
            let decoded = extract::decode_body(&body, content_type.as_deref());
            let base = url::Url::parse(&final_url).ok();
            let extracted = match kind {
                BodyKind::Html => extract::extract_html(&decoded, base.as_ref()),
                BodyKind::PlainText => extract::extract_plain_text(&decoded),
            };
            extract_ms = elapsed_ms(t);
            attempt.final_url = Some(final_url);
            attempt.http_status = Some(http_status);
            attempt.content_type = content_type;
            attempt.body_truncated = truncated;
            attempt.chars_fetched = decoded.chars().count();
            attempt.chars = extracted.text.chars().count();
            if let Some(title) = extracted.title.filter(|t| !t.is_empty()) {
                attempt.title = title;
            }
            if extracted.text.trim().is_empty() {
                attempt.status = RetrievalStatus::Empty;
                attempt.error = Some("no readable text on the page".into());
            } else {
                attempt.status = RetrievalStatus::Success;
                attempt.text = extracted.text;
            }
        }
    }
    attempt.ms = elapsed_ms(start);
    (attempt, extract_ms)
}

/// "2 TIMEOUT, 1 ERROR (HTTP 404)"-style counts for the no-sources error.
fn status_summary(pages: &[PageAttempt]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for page in pages {
        let status = serde_json::to_value(page.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let label = match page.http_status {
            Some(code) if page.status == RetrievalStatus::Error => {
                format!("{status} (HTTP {code})")
            }
            _ => status,
        };
        match counts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => counts.push((label, 1)),
        }
    }
    counts
        .iter()
        .map(|(l, n)| format!("{n} {l}"))
        .collect::<Vec<_>>()
        .join(", ")
}
