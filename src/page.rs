//! One result page through fetch, extract and the cache: the unit of work the
//! pipeline runs concurrently, and all that `ground fetch` and MCP's `web_fetch` do.
//!
//! A page attempt never fails as a whole: every outcome (timeout, blocked address,
//! no readable text) is a status on the [`PageAttempt`], so the pipeline can go on
//! with the other pages and report each one.

use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use serde::Serialize;

use crate::cache::{Cache, CachedPage, PageTurn};
use crate::error::Error;
use crate::extract::{self, Extracted};
use crate::fetch::{BodyKind, FetchFailure, FetchedPage, Fetcher, RetrievalStatus, elapsed_ms};
use crate::hits::SearchHit;
use crate::pdf;
use crate::settings::Settings;

/// What happened to one result page.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
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
    /// Whether it came from the page cache.
    pub cached: bool,
    /// The extracted text (not serialised; sources carry it).
    #[serde(skip)]
    pub text: String,
    /// The local document collection a file source was found in (`--docs`); `None`
    /// for a web page, and for a file read in an earlier turn of a conversation.
    #[serde(skip)]
    pub collection: Option<String>,
}

/// Fetches one result page and extracts its main text. Returns the attempt (status,
/// sizes, the text on success) and the extraction time in ms.
pub async fn fetch_and_extract(
    fetcher: &Fetcher,
    cache: &Cache,
    rank: usize,
    hit: &SearchHit,
) -> (PageAttempt, u64) {
    let start = Instant::now();
    let mut attempt = PageAttempt::of(rank, hit);
    // robots.txt first, so that the cache is no way around it either.
    if let Err(refused) = fetcher.robots_check(&hit.url).await {
        attempt.status = refused.status;
        attempt.error = Some(refused.reason);
        attempt.ms = elapsed_ms(start);
        return (attempt, 0);
    }
    // An entry fetched with private addresses allowed is only for runs that allow
    // them too, and one whose page ended up off this run's site filter (a redirect
    // read by a run without it) is fetched again, to be refused: the cache must not
    // be a way around the address rule or the site filter.
    // Missing everywhere: replicas sharing a Redis fetch it once (one claims it, the
    // others wait briefly for its entry).
    let mut claimed = false;
    let found = match cache.find_page(&hit.url).await {
        Some(page) => Some(page),
        None => match cache.claim_page(&hit.url).await {
            PageTurn::Found(page) => Some(page),
            PageTurn::Fetch { claimed: ours } => {
                claimed = ours;
                None
            }
        },
    };
    let cached = found
        .filter(|page| fetcher.allows_private() || !page.private_allowed)
        .filter(|page| fetcher.allows_site(&page.final_url));
    if let Some(page) = cached {
        attempt.status = RetrievalStatus::Success;
        attempt.final_url = Some(page.final_url);
        attempt.http_status = Some(page.http_status);
        attempt.content_type = page.content_type;
        attempt.chars_fetched = page.chars_fetched;
        attempt.chars = page.text.chars().count();
        attempt.body_truncated = page.body_truncated;
        if !page.title.is_empty() {
            attempt.title = page.title;
        }
        attempt.text = page.text;
        attempt.cached = true;
        attempt.ms = elapsed_ms(start);
        return (attempt, 0);
    }
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
            attempt.final_url = Some(final_url.clone());
            attempt.http_status = Some(http_status);
            attempt.content_type = content_type.clone();
            attempt.body_truncated = truncated;
            if kind == BodyKind::Pdf {
                attempt.chars_fetched = body.len();
                read_pdf(&mut attempt, body).await;
                extract_ms = elapsed_ms(t);
            } else {
                let extracted = extract_bounded(kind, body, content_type, final_url).await;
                extract_ms = elapsed_ms(t);
                match extracted {
                    None => {
                        attempt.status = RetrievalStatus::Timeout;
                        attempt.error = Some(format!(
                            "extracting the page's text took longer than {} s",
                            EXTRACT_BUDGET.as_secs()
                        ));
                    }
                    Some((chars_fetched, extracted)) => {
                        attempt.chars_fetched = chars_fetched;
                        attempt.chars = extracted.text.chars().count();
                        if let Some(title) = extracted.title.filter(|t| !t.is_empty()) {
                            attempt.title = title;
                        }
                        if extracted.text.trim().is_empty() {
                            attempt.status = RetrievalStatus::Empty;
                            attempt.error = Some(match extracted.truncated {
                                // A hostile or machine-made page cut by the parser's work caps.
                                Some(cut) => format!("no readable text on the page ({cut})"),
                                None => "no readable text on the page".into(),
                            });
                        } else {
                            attempt.status = RetrievalStatus::Success;
                            attempt.text = extracted.text;
                        }
                    }
                }
            }
        }
    }
    attempt.ms = elapsed_ms(start);
    if let Some(page) = cached_page(&attempt, fetcher.allows_private()) {
        cache.keep_page(&[&hit.url, &page.final_url], &page).await;
    }
    // However the fetch ended, and whether or not the page went to Redis (a page TTL
    // of 0, an entry too large, a failed write), the replicas waiting on the claim
    // look once more and fetch it themselves, instead of waiting the claim out.
    if claimed {
        cache.release_page(&hit.url).await;
    }
    (attempt, extract_ms)
}

/// Reads a fetched PDF into `attempt` in a sandboxed worker ([`pdf::read`], within
/// [`pdf::EXTRACT_TIMEOUT`]): SUCCESS with its text (title from its metadata, else the
/// result's), EMPTY when it has no text (a scan), TIMEOUT when the worker was killed
/// at the deadline, ERROR when it cannot be read (the reason says why, down to the
/// limit a hostile file hit). `chars_fetched` counts the PDF's bytes.
async fn read_pdf(attempt: &mut PageAttempt, body: Vec<u8>) {
    match pdf::read(body).await {
        Err(e) => {
            attempt.status = if e.is_timeout() {
                RetrievalStatus::Timeout
            } else {
                RetrievalStatus::Error
            };
            attempt.error = Some(e.to_string());
        }
        Ok(doc) => {
            if let Some(title) = doc.title {
                attempt.title = title;
            }
            attempt.chars = doc.text.chars().count();
            if doc.text.trim().is_empty() {
                attempt.status = RetrievalStatus::Empty;
                attempt.error = Some(format!(
                    "the PDF has no text layer ({} pages, no text: a scan or images only)",
                    doc.pages
                ));
            } else {
                attempt.status = RetrievalStatus::Success;
                attempt.text = doc.text;
            }
        }
    }
}

/// "2 TIMEOUT, 1 ERROR (HTTP 404)"-style counts for the no-sources error.
pub fn status_summary(pages: &[PageAttempt]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for page in pages {
        let status = page.status.as_str().to_string();
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

/// Time one page's extraction may take (decoding, parsing, main text). A page over it
/// is TIMEOUT and the run goes on without it.
pub const EXTRACT_BUDGET: Duration = Duration::from_secs(5);

/// Extractions running at once, at most: one per core. Extraction is CPU work, so it
/// runs on blocking threads, never on the async runtime, whose timers (deadlines,
/// Ctrl-C) and other requests (MCP) must keep running beside it.
static EXTRACTORS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Arc::new(Semaphore::new(cores))
});

/// Decodes and extracts a fetched body on a blocking thread within
/// [`EXTRACT_BUDGET`] (waiting for a free extractor included). Returns the decoded
/// body's length in characters and the extraction, or `None` when over budget; an
/// extraction still running then finishes on its thread and is dropped.
async fn extract_bounded(
    kind: BodyKind,
    body: Vec<u8>,
    content_type: Option<String>,
    final_url: String,
) -> Option<(usize, Extracted)> {
    let work = async move {
        let permit = EXTRACTORS.clone().acquire_owned().await.ok()?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            let decoded = extract::decode_body(&body, content_type.as_deref());
            let base = url::Url::parse(&final_url).ok();
            let extracted = match kind {
                BodyKind::PlainText => extract::extract_plain_text(&decoded),
                // PDFs are read by `read_pdf`; anything else here is HTML.
                _ => extract::extract_html(&decoded, base.as_ref()),
            };
            (decoded.chars().count(), extracted)
        })
        .await
        .ok()
    };
    tokio::time::timeout(EXTRACT_BUDGET, work)
        .await
        .ok()
        .flatten()
}

impl PageAttempt {
    /// The attempt at `hit`, ranked `rank`, before anything happened (status ERROR
    /// until something else is known).
    pub fn of(rank: usize, hit: &SearchHit) -> Self {
        PageAttempt {
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
            cached: false,
            text: String::new(),
            collection: None,
        }
    }
}

/// The cacheable part of a page attempt; `None` unless it succeeded.
pub fn cached_page(attempt: &PageAttempt, private_allowed: bool) -> Option<CachedPage> {
    (attempt.status == RetrievalStatus::Success).then(|| CachedPage {
        final_url: attempt
            .final_url
            .clone()
            .unwrap_or_else(|| attempt.url.clone()),
        http_status: attempt.http_status.unwrap_or(200),
        content_type: attempt.content_type.clone(),
        title: attempt.title.clone(),
        text: attempt.text.clone(),
        chars_fetched: attempt.chars_fetched,
        body_truncated: attempt.body_truncated,
        private_allowed,
    })
}

/// Fetches one page given by the user (`ground fetch`, MCP `web_fetch`), or takes it
/// from the page cache, and extracts its main text. A bad URL is a usage error; every
/// other failure is the attempt's status.
pub async fn fetch_one(settings: &Settings, url: &str) -> Result<PageAttempt, Error> {
    let parsed = url::Url::parse(url.trim()).map_err(|e| Error::Usage {
        message: format!("{url:?} is not a valid URL ({e})"),
        hint: "give a full address such as https://example.org/page".into(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Usage {
            message: format!("{url:?} is not an http or https URL"),
            hint: "give a full address such as https://example.org/page".into(),
        });
    }
    let fetcher = Fetcher::new(&settings.fetch)?;
    let cache = Cache::open_shared(&settings.cache, settings.state.as_ref());
    let hit = SearchHit::of_url(parsed.as_str());
    let (attempt, _) = fetch_and_extract(&fetcher, &cache, 0, &hit).await;
    Ok(attempt)
}
