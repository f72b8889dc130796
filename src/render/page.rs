//! One fetched page for a person (title, address, main text), for scripts (`ground
//! fetch --json`, MCP `web_fetch`), and the one-line error of a page that could not
//! be used.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::fetch::RetrievalStatus;
use crate::page::PageAttempt;
use crate::text::{sanitize_line, sanitize_text};

/// Whether the page was usable.
pub fn succeeded(attempt: &PageAttempt) -> bool {
    attempt.status == RetrievalStatus::Success
}

/// Title, final URL and main text for a person (sanitised for the terminal).
pub fn person(attempt: &PageAttempt) -> String {
    let a = attempt;
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
    out.push_str(&sanitize_text(&attempt.text));
    out.push('\n');
    out
}

/// The one-line error for a failed fetch, with a hint.
pub fn failure_report(attempt: &PageAttempt) -> String {
    let a = attempt;
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
    let message = format!(
        "cannot use {} ({status}: {})",
        sanitize_line(&a.url),
        sanitize_line(reason)
    );
    crate::error::report(&message, Some(hint))
}

/// The page as one JSON object for scripts.
pub fn json(attempt: &PageAttempt) -> Value {
    let a = attempt;
    json!({
        "version": crate::render::json::JSON_VERSION,
        "url": a.url,
        "final_url": a.final_url,
        "status": a.status,
        "http_status": a.http_status,
        "content_type": a.content_type,
        "title": a.title,
        "text": attempt.text,
        "chars": a.chars,
        "chars_fetched": a.chars_fetched,
        "body_truncated": a.body_truncated,
        "cached": a.cached,
        "error": a.error,
        "ms": a.ms,
    })
}
