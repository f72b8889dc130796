//! Search results for a person (a numbered list) and for scripts (`ground search
//! --json`, MCP `web_search`), with what the service returned besides them: instant
//! answers and infoboxes first, "Did you mean" and related searches last.

use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::hits::{SearchOutcome, describe_unresponsive};
use crate::settings::SearchSettings;
use crate::text::{sanitize_line, shorten};

/// The results as a numbered list for a person.
pub fn person(outcome: &SearchOutcome, limit: usize) -> String {
    let mut out = String::new();
    for answer in &outcome.answers {
        let _ = writeln!(out, "Answer: {}", sanitize_line(&answer.answer));
    }
    for infobox in &outcome.infoboxes {
        let _ = writeln!(out, "Infobox: {}", sanitize_line(&infobox.title));
        if !infobox.content.is_empty() {
            let _ = writeln!(
                out,
                "    {}",
                sanitize_line(&shorten(&infobox.content, 300))
            );
        }
        for a in &infobox.attributes {
            let _ = writeln!(
                out,
                "    {}: {}",
                sanitize_line(&a.label),
                sanitize_line(&a.value)
            );
        }
        if let Some(url) = infobox.url() {
            let _ = writeln!(out, "    {}", sanitize_line(url));
        }
    }
    if !(outcome.answers.is_empty() && outcome.infoboxes.is_empty()) {
        out.push('\n');
    }
    if outcome.hits.is_empty() {
        out.push_str("No results.\n");
    }
    for (i, hit) in outcome.hits.iter().take(limit).enumerate() {
        let title = if hit.title.trim().is_empty() {
            "(untitled)".to_string()
        } else {
            sanitize_line(&hit.title)
        };
        let _ = writeln!(out, "{:>2}. {title}", i + 1);
        let _ = writeln!(out, "    {}", sanitize_line(&hit.url));
        if !hit.snippet.trim().is_empty() {
            let _ = writeln!(out, "    {}", sanitize_line(&hit.snippet));
        }
        let mut meta = Vec::new();
        if !hit.engines.is_empty() {
            meta.push(sanitize_line(&hit.engines.join(", ")));
        }
        if let Some(date) = &hit.published {
            meta.push(sanitize_line(date));
        }
        if !meta.is_empty() {
            let _ = writeln!(out, "    [{}]", meta.join(" · "));
        }
    }
    if !outcome.unresponsive_engines.is_empty() {
        let _ = writeln!(
            out,
            "\nEngines that failed: {}",
            sanitize_line(&describe_unresponsive(&outcome.unresponsive_engines))
        );
    }
    // What the service suggests instead, after the results.
    let plain = crate::render::Style::Text { colour: false };
    for line in [
        crate::render::person::did_you_mean(&outcome.corrections, plain),
        crate::render::person::related_searches(&outcome.suggestions, plain),
    ]
    .into_iter()
    .flatten()
    {
        let _ = write!(out, "\n{line}");
    }
    out
}

/// The results as one JSON object for scripts: `backend` is the service that
/// answered (`settings` are the ones the search ran with, never `auto`).
pub fn json(
    outcome: &SearchOutcome,
    query: &str,
    settings: &SearchSettings,
    limit: usize,
) -> Value {
    let results: Vec<Value> = outcome
        .hits
        .iter()
        .take(limit)
        .map(|h| {
            json!({
                "url": h.url,
                "title": h.title,
                "snippet": h.snippet,
                "engines": h.engines,
                "published": h.published,
            })
        })
        .collect();
    let unresponsive: Vec<Value> = outcome
        .unresponsive_engines
        .iter()
        .map(|(engine, reason)| json!({"engine": engine, "reason": reason}))
        .collect();
    let mut value = json!({
        "version": crate::render::json::JSON_VERSION,
        "query": query,
        "backend": settings.backend,
        "results": results,
        "unresponsive_engines": unresponsive,
        "answers": outcome.answers,
        "infoboxes": outcome.infoboxes,
        "suggestions": outcome.suggestions,
        "corrections": outcome.corrections,
        "search": {
            "sites": settings.sites.sites,
            "exclude_sites": settings.sites.exclude_sites,
            "dropped": outcome.dropped,
        },
    });
    // What the user should know about how the results were got (a fallback of
    // `--search auto`, an instance that failed over); absent when there is nothing.
    if !outcome.warnings.is_empty() {
        value["warnings"] = json!(outcome.warnings);
    }
    value
}
