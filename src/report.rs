//! What a run produced, as one [`Report`] that every face prints (person, Markdown,
//! JSON, MCP), and the one rule, [`verdict`], that decides whether it counts as
//! grounded: the CLI's exit code and MCP's result both come from it.

use serde::{Deserialize, Serialize};

use crate::answer::AskUser;
use crate::context::{Context, SourceKind, SourceText};
use crate::error::{Error, exit};
use crate::grounding::{GroundedAnswer, Statement, Support};
use crate::hits::{SearchExtras, SearchHit};
use crate::language::AnswerLanguage;
use crate::page::PageAttempt;
use crate::plan::{Decision, PlanRun};
use crate::settings::{LlmBackend, SearchBackend};

/// Model call details for the report.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ModelInfo {
    /// "ollama", "openai" or "embedded".
    pub backend: LlmBackend,
    /// Model name.
    pub name: String,
    /// The model file, for the embedded model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Prompt tokens the server counted.
    pub prompt_tokens: Option<u32>,
    /// Of `prompt_tokens`, those the model held from an earlier call in this process
    /// and did not read again (the embedded model only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_prompt_tokens: Option<u32>,
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
    /// Model tokens per estimated token that the source budget assumed: 1.0 (the
    /// estimate as it is) unless earlier runs calibrated it.
    pub token_ratio: f64,
    /// Whether `token_ratio` came from calibration (see [`crate::calibration`]).
    pub token_ratio_calibrated: bool,
}

/// Milliseconds per stage.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Timings {
    /// Search call.
    pub search: u64,
    /// Fetching pages (wall time; extraction runs inside it).
    pub fetch: u64,
    /// Extraction (summed over pages).
    pub extract: u64,
    /// Model call(s).
    pub llm: u64,
    /// Of `llm`, the answer call's reading of the prompt (backends that measure it
    /// apart: the embedded model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_prefill: Option<u64>,
    /// Of `llm`, the answer call's writing of the reply (same backends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_generation: Option<u64>,
    /// Whole run.
    pub total: u64,
}

/// How the answer came about.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub enum AnswerMode {
    /// Searched, read pages, answered from them (the normal case).
    #[default]
    Grounded,
    /// `--auto`: the gate decided no search was needed; the model answered alone.
    NoSearchNeeded,
    /// `--fallback offline`: search failed; the model answered alone.
    Offline {
        /// Why search failed.
        reason: String,
    },
}

impl AnswerMode {
    /// The name used in `--json`: grounded, no_search_needed or offline.
    pub fn name(&self) -> &'static str {
        match self {
            AnswerMode::Grounded => "grounded",
            AnswerMode::NoSearchNeeded => "no_search_needed",
            AnswerMode::Offline { .. } => "offline",
        }
    }
}

/// One search call of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SearchRun {
    /// The query sent.
    pub query: String,
    /// The service.
    pub backend: SearchBackend,
    /// Results it returned (0 when it failed).
    pub results: usize,
    /// Whether the results came from the cache.
    pub cached: bool,
    /// Time taken.
    pub ms: u64,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// Everything one run produced (the default is an empty run, for tests and
/// fixtures to fill in).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// The question.
    pub question: String,
    /// How the answer came about.
    pub mode: AnswerMode,
    /// The gate's verdict (`--auto` only).
    pub decision: Option<Decision>,
    /// Queries that ran, in order.
    pub queries: Vec<String>,
    /// Every search call.
    pub searches: Vec<SearchRun>,
    /// Search results, merged, in rank order.
    pub hits: Vec<SearchHit>,
    /// Every page tried, in rank order.
    pub pages: Vec<PageAttempt>,
    /// The sources the model saw: the pages read, then the short sources the search
    /// gave (infoboxes, instant answers, snippets).
    pub sources: Vec<SourceText>,
    /// The kinds of the short sources at the end of `sources`, in order (see
    /// [`Report::kind`]).
    pub short_kinds: Vec<SourceKind>,
    /// What the searches returned besides results: suggestions, corrections and each
    /// query's results page (its infoboxes and answers are among `sources`).
    pub extras: SearchExtras,
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
    /// Questions the model would ask the user (`--pack` only).
    pub ask_user: Vec<AskUser>,
    /// The language the model was asked to answer in, if any.
    pub answer_language: Option<AnswerLanguage>,
    /// How the planned queries went (null when the question was searched as asked).
    pub plan: Option<PlanRun>,
    /// The grounding pack's bucket items, checked like statements (`--pack` only).
    pub pack_items: Vec<PackEntry>,
    /// What the follow-up step did, for a turn of a conversation (`None` otherwise).
    pub followup: Option<FollowUp>,
    /// The images of the images search beside the run (`--images`), never shown to
    /// the model; `None` when none was asked for (empty when it found none or failed).
    pub images: Option<Vec<crate::image_hits::ImageHit>>,
}

/// A turn of a conversation: the question it answered and where its evidence came
/// from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FollowUp {
    /// The question as answered: a follow-up rewritten to stand alone, else as asked.
    pub standalone: String,
    /// What a text answering it must hold (from the rewrite; empty for a first turn).
    pub must_have_evidence: Vec<String>,
    /// Sources from earlier turns shown to the model again.
    pub reused_sources: usize,
    /// Whether a search was made (false when the evidence already read held the
    /// answer).
    pub searched: bool,
}

/// One checked item of a grounding pack's bucket.
#[derive(Debug, Clone, Serialize)]
pub struct PackEntry {
    /// Its bucket: `norms_and_expectations` or `constraints_and_rules`.
    pub bucket: &'static str,
    /// The item with its citations, verified against the sources.
    pub statement: crate::grounding::Statement,
    /// A law, regulation or policy (the model said so, or the text reads like one):
    /// it wants two sources.
    pub policy_or_legal: bool,
}

/// A [`PackEntry`] as stored (a report kept in shared state), its bucket read back
/// as the name it is among [`crate::answer::PACK_BUCKETS`].
#[derive(Deserialize)]
struct StoredPackEntry {
    bucket: String,
    statement: Statement,
    policy_or_legal: bool,
}

impl<'de> Deserialize<'de> for PackEntry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = StoredPackEntry::deserialize(d)?;
        const BUCKETS: [&str; 2] = crate::answer::PACK_BUCKETS;
        let bucket = BUCKETS
            .into_iter()
            .find(|bucket| *bucket == stored.bucket)
            .ok_or_else(|| serde::de::Error::unknown_variant(&stored.bucket, &BUCKETS))?;
        Ok(PackEntry {
            bucket,
            statement: stored.statement,
            policy_or_legal: stored.policy_or_legal,
        })
    }
}

/// What a report's serde form leaves out because `--json` does not show it, kept
/// beside that form when a report is stored outside the process (answers reused by
/// replicas through Redis), so that the report read back renders as the one kept:
/// the prompt's sources block, the ranges of each source the prompt held (the
/// grounding of local documents' lines reads them) and each page's rank and
/// collection. A page's text is not kept twice: its source holds it, and nothing
/// reads a finished report's page texts.
#[derive(Serialize)]
struct StoredOut<'a> {
    report: &'a Report,
    context_text: &'a str,
    sent: Vec<&'a [std::ops::Range<usize>]>,
    pages: Vec<(usize, Option<&'a str>)>,
}

/// [`StoredOut`] read back.
#[derive(Deserialize)]
struct StoredIn {
    report: Report,
    context_text: String,
    sent: Vec<Vec<std::ops::Range<usize>>>,
    pages: Vec<(usize, Option<String>)>,
}

/// `report` as JSON to keep outside the process: its serde form and what that form
/// leaves out ([`Report::from_stored_json`] reads it back).
pub fn stored_json(report: &Report) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(&StoredOut {
        report,
        context_text: &report.context.text,
        sent: report
            .context
            .sources
            .iter()
            .map(|c| c.sent.as_slice())
            .collect(),
        pages: report
            .pages
            .iter()
            .map(|p| (p.rank, p.collection.as_deref()))
            .collect(),
    })
}

impl Report {
    /// A report kept by [`stored_json`], read back whole; an error for JSON of
    /// another shape (another version of ground wrote it).
    pub fn from_stored_json(bytes: &[u8]) -> serde_json::Result<Report> {
        let stored: StoredIn = serde_json::from_slice(bytes)?;
        let mut report = stored.report;
        report.context.text = stored.context_text;
        for (cut, sent) in report.context.sources.iter_mut().zip(stored.sent) {
            cut.sent = sent;
        }
        for (page, (rank, collection)) in report.pages.iter_mut().zip(stored.pages) {
            page.rank = rank;
            page.collection = collection;
        }
        Ok(report)
    }
}

/// Where a local document source is (`--docs`): its file and the lines of it the
/// model was shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileLocation {
    /// The file, absolute.
    pub path: std::path::PathBuf,
    /// First line sent (1-based).
    pub line_start: u64,
    /// Last line sent.
    pub line_end: u64,
    /// The collection it was found in, when this run searched it (a file read in an
    /// earlier turn of a conversation has none).
    pub collection: Option<String>,
}

/// The location of `source` when it is a local document (its URL a `file://` URI;
/// a web page never has one), with the lines `cut` says were sent (all of it when
/// nothing says).
pub fn file_location(
    source: &SourceText,
    cut: Option<&crate::context::SourceCut>,
) -> Option<FileLocation> {
    let url = url::Url::parse(&source.url).ok()?;
    if url.scheme() != "file" {
        return None;
    }
    let path = url.to_file_path().ok()?;
    let text = &source.text;
    let sent = cut.map(|c| c.sent.as_slice()).unwrap_or_default();
    let (line_start, line_end) = match (
        sent.iter().map(|r| r.start).min(),
        sent.iter().map(|r| r.end).max(),
    ) {
        (Some(start), Some(end)) => (
            crate::docs::line_of(text, start),
            crate::docs::line_of(text, end.saturating_sub(1).max(start)),
        ),
        _ => (1, text.lines().count().max(1) as u64),
    };
    Some(FileLocation {
        path,
        line_start,
        line_end,
        collection: None,
    })
}

impl Report {
    /// Where source `number` is when it is a local document, else `None`.
    pub fn file_location(&self, number: usize) -> Option<FileLocation> {
        let source = self.sources.get(number.checked_sub(1)?)?;
        let cut = self.context.sources.iter().find(|c| c.number == number);
        let mut location = file_location(source, cut)?;
        location.collection = self
            .pages
            .iter()
            .find(|p| p.index == Some(number) || p.url == source.url)
            .and_then(|p| p.collection.clone());
        Some(location)
    }

    /// The kind `--json` and the faces name source `number` by: `"file"` for a local
    /// document, else its [`SourceKind`]'s name.
    pub fn kind_name(&self, number: usize) -> &'static str {
        if self.file_location(number).is_some() {
            "file"
        } else {
            self.kind(number).name()
        }
    }

    /// What source `number` is: a page read, or a short source the search gave.
    pub fn kind(&self, number: usize) -> SourceKind {
        let first_short = self.sources.len() - self.short_kinds.len().min(self.sources.len());
        match number.checked_sub(first_short + 1) {
            Some(i) => self.short_kinds.get(i).copied().unwrap_or(SourceKind::Page),
            None => SourceKind::Page,
        }
    }

    /// Whether source `number` is a short source the search gave (an infobox, an
    /// instant answer or a snippet), not a page read in full.
    pub fn is_short(&self, number: usize) -> bool {
        self.kind(number) != SourceKind::Page
    }

    /// Whether any of source `number` reached the prompt: a page read whose passages
    /// all lost to better-matching ones was read but not used (it has no block).
    pub fn used(&self, number: usize) -> bool {
        self.context
            .sources
            .iter()
            .any(|c| c.number == number && c.used())
    }
}

/// How a finished run is judged.
#[derive(Debug)]
pub enum Verdict {
    /// Grounded as asked: exit 0.
    Accepted,
    /// Search failed and `--fallback offline` answered from the model alone: exit 7.
    Offline,
    /// Not grounded: no citation at all, or with `strict` any unsupported statement
    /// or a "the sources do not answer" reply. The error says which (exit 6).
    Rejected(Error),
}

impl Verdict {
    /// The process exit code for this verdict (see [`exit`]).
    pub fn exit_code(&self) -> i32 {
        match self {
            Verdict::Accepted => exit::SUCCESS,
            Verdict::Offline => exit::OFFLINE,
            Verdict::Rejected(error) => error.exit_code(),
        }
    }

    /// A short name for JSON: `accepted` (exit 0; whether every statement is backed
    /// is `grounded`'s business), `offline` or `not_grounded`.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Accepted => "accepted",
            Verdict::Offline => "offline",
            Verdict::Rejected(_) => "not_grounded",
        }
    }
}

/// How strictly [`verdict`] asks for support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strictness {
    /// Only an answer that cites nothing at all is rejected.
    #[default]
    Lenient,
    /// `--strict`: every statement must be supported, by a verified quote of the
    /// model's or by ground's own match of a sentence it was shown, and contradicted
    /// by no source read (the cross-check); "not answerable" is rejected too.
    Supported,
    /// `--strict-quotes`: like `--strict`, but only verified quotes count: a statement
    /// that ground's match alone supports is not enough.
    Quoted,
}

/// Judges `report`. Leniently, an answer is rejected only when the model said the
/// sources answer the question but cited none of them; strictly, every statement
/// needs support (see [`Strictness`]: a statement whose verified quote it
/// contradicts has none) and "not answerable" is rejected too.
pub fn verdict(report: &Report, strictness: Strictness) -> Verdict {
    let answer = &report.answer;
    let grounded_run = report.mode == AnswerMode::Grounded;
    if let AnswerMode::Offline { .. } = report.mode {
        return Verdict::Offline;
    }
    if grounded_run && answer.answerable && !answer.cites_anything() {
        return Verdict::Rejected(Error::Uncited {
            sources: report.sources.len(),
        });
    }
    let accepted = match strictness {
        Strictness::Lenient => true,
        Strictness::Supported => answer.grounded() && answer.contradicted() == 0,
        Strictness::Quoted => answer.grounded_by_quotes() && answer.contradicted() == 0,
    };
    if !accepted {
        let reason = if !grounded_run {
            "no search was made (--auto decided the question needs none)".to_string()
        } else if !answer.answerable {
            "the model reported that the sources do not answer the question".to_string()
        } else {
            unsupported_reason(answer, strictness)
        };
        return Verdict::Rejected(Error::NotGrounded { reason });
    }
    Verdict::Accepted
}

/// How many statements lack the support `strictness` asks for, and why.
fn unsupported_reason(answer: &GroundedAnswer, strictness: Strictness) -> String {
    let total = answer.statements.len();
    let count = |f: fn(&Statement) -> bool| answer.statements.iter().filter(|s| f(s)).count();
    let mismatched = count(|s| s.support == Support::Mismatch);
    let mut reason = if strictness == Strictness::Quoted {
        let matched = count(|s| s.support == Support::Match);
        let unquoted = count(|s| !s.quoted());
        let mut reason = format!("{unquoted} of {total} statements have no verified quote");
        if matched > 0 {
            reason.push_str(&format!(
                " ({matched} only matched by ground, which --strict-quotes does not accept)"
            ));
        }
        reason
    } else {
        let unsupported = count(|s| !s.supported());
        format!(
            "{unsupported} of {total} statements have no verified citation and no sentence of the sources saying the same"
        )
    };
    if mismatched > 0 {
        reason.push_str(&format!(
            "; {mismatched} say something their quoted text does not"
        ));
    }
    let contradicted = answer.contradicted();
    let lacking = if strictness == Strictness::Quoted {
        count(|s| !s.quoted())
    } else {
        count(|s| !s.supported())
    };
    if contradicted > 0 && lacking == 0 {
        reason = format!(
            "{contradicted} of {total} statements are contradicted by another source read (another number, date or name, or the negation)"
        );
    } else if contradicted > 0 {
        reason.push_str(&format!(
            "; {contradicted} contradicted by another source read"
        ));
    }
    reason
}

/// What a run had got to when it failed: kept beside the error so `--json` can still
/// list the searches made and each page's status (errors keep their sources).
#[derive(Debug, Clone, Default)]
pub struct Partial {
    /// Queries planned so far, in order.
    pub queries: Vec<String>,
    /// Every search call made.
    pub searches: Vec<SearchRun>,
    /// Every page tried, in rank order, with its status (text left out).
    pub pages: Vec<PageAttempt>,
    /// Stage timings so far (`total` is the time to the failure).
    pub timings: Timings,
    /// Warnings gathered before the failure.
    pub warnings: Vec<String>,
    /// What the searches returned besides results (a search that found nothing may
    /// still offer a correction).
    pub extras: SearchExtras,
}

/// A failed run: the error, and everything the run got to before it.
#[derive(Debug)]
pub struct Failed {
    /// Why the run failed.
    pub error: Error,
    /// What it had done by then.
    pub partial: Partial,
}

impl From<Failed> for Error {
    fn from(failed: Failed) -> Error {
        failed.error
    }
}
