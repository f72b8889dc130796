//! `ground fetch`: one page through the fetch and extract stages, with the same
//! limits, address policy and statuses as `ground answer`.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::cache::Cache;
use crate::config::Settings;
use crate::error::Error;
use crate::fetch::{Fetcher, RetrievalStatus};
use crate::pipeline::{PageAttempt, fetch_and_extract};
use crate::render::{sanitize_line, sanitize_text};
use crate::search::SearchHit;

/// One fetched page and its text.
pub struct Fetched {
    /// What happened, with sizes.
    pub attempt: PageAttempt,
    /// The extracted main text (empty unless SUCCESS).
    pub text: String,
}

/// Fetches `url` (or takes it from the page cache) and extracts its main text. A
/// bad URL is a usage error; every other failure is reported in the result's status.
pub async fn fetch(settings: &Settings, url: &str) -> Result<Fetched, Error> {
    let parsed = url::Url::parse(url.trim()).map_err(|e| Error::Config {
        message: format!("{url:?} is not a valid URL ({e})"),
        hint: "give a full address such as https://example.org/page".into(),
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(Error::Config {
            message: format!("{url:?} is not an http or https URL"),
            hint: "give a full address such as https://example.org/page".into(),
        });
    }
    let fetcher = Fetcher::new(&settings.fetch)?;
    let cache = Cache::open(&settings.cache);
    let hit = SearchHit {
        url: parsed.to_string(),
        title: String::new(),
        snippet: String::new(),
        engines: Vec::new(),
        published: None,
    };
    let (mut attempt, _) = fetch_and_extract(&fetcher, &cache, 0, &hit).await;
    let text = std::mem::take(&mut attempt.text);
    Ok(Fetched { attempt, text })
}

/// Whether the page was usable.
pub fn succeeded(fetched: &Fetched) -> bool {
    fetched.attempt.status == RetrievalStatus::Success
}

/// Title, final URL and main text for a person (sanitised for the terminal).
pub fn person(fetched: &Fetched) -> String {
    let a = &fetched.attempt;
    let mut out = String::new();
    if !a.title.is_empty() {
        let _ = writeln!(out, "{}", sanitize_line(&a.title));
    }
    let _ = writeln!(
        out,
        "{}",
        sanitize_line(a.final_url.as_deref().unwrap_or(&a.url))
    );
    out.push('\n');
    out.push_str(&sanitize_text(&fetched.text));
    out.push('\n');
    out
}

/// The one-line error for a failed fetch, with a hint.
pub fn failure_report(fetched: &Fetched) -> String {
    let a = &fetched.attempt;
    let status = a.status.as_str();
    let reason = a.error.as_deref().unwrap_or("no usable text");
    let hint = match a.status {
        RetrievalStatus::Blocked => {
            "the address is not public; pass --allow-private-addresses if you trust it"
        }
        RetrievalStatus::Timeout => {
            "the server is slow: raise [fetch] timeout_secs or try again later"
        }
        RetrievalStatus::Unsupported => "only HTML and plain-text pages can be read",
        RetrievalStatus::Empty => "the page has no readable text (it may need JavaScript)",
        _ => "check the address, or try again later",
    };
    format!(
        "error: cannot use {} ({status}: {})\nhint: {hint}",
        sanitize_line(&a.url),
        sanitize_line(reason)
    )
}

/// The page as one JSON object for scripts.
pub fn json(fetched: &Fetched) -> Value {
    let a = &fetched.attempt;
    json!({
        "version": crate::render::JSON_VERSION,
        "url": a.url,
        "final_url": a.final_url,
        "status": a.status,
        "http_status": a.http_status,
        "content_type": a.content_type,
        "title": a.title,
        "text": fetched.text,
        "chars": a.chars,
        "chars_fetched": a.chars_fetched,
        "body_truncated": a.body_truncated,
        "cached": a.cached,
        "error": a.error,
        "ms": a.ms,
    })
}
