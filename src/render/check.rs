//! `ground check`'s output: each claim's verdict with the quotes for and against it,
//! and the numbered sources, for a person ([`person`]) or as one JSON object
//! ([`json`], also MCP's `check_claims` structured content).
//!
//! Every text from the web (quotes, titles, URLs, error reasons) and from the input
//! (the claims) is made safe for a terminal before it is printed.

use std::fmt::Write;

use serde_json::{Value, json};

use super::JSON_VERSION;
use super::person::{Style, paint_of};
use crate::grounding::ClaimVerdict;
use crate::service::Checked;
use crate::service::check::{CheckedClaim, CheckedSource};
use crate::text::{sanitize_line, shorten};

/// Longest quote shown to a person (characters); `--json` has them whole.
const QUOTE_CHARS: usize = 240;

/// The check as one JSON object: `{version, mode, all_supported, claims: [{text,
/// verdict, corroborated, cited?, supported_elsewhere?, supports: [{source, url,
/// quote, support}], contradictions: [{source, url, quote, kind, value}]}], sources:
/// [{number, url, final_url, title, status, http_status, error}], warnings}`.
pub fn json(checked: &Checked) -> Value {
    let url_of = |n: usize| url_of(checked, n);
    let claims: Vec<Value> = checked
        .claims
        .iter()
        .map(|c| {
            let mut claim = json!({
                "text": c.text,
                "verdict": c.judged.verdict.name(),
                "corroborated": c.judged.corroborated,
                "supports": c.findings.supports.iter().map(|s| json!({
                    "source": s.source,
                    "url": url_of(s.source),
                    "quote": s.quote,
                    "support": s.support,
                })).collect::<Vec<_>>(),
                "contradictions": c.findings.contradictions.iter().map(|x| json!({
                    "source": x.source,
                    "url": url_of(x.source),
                    "quote": x.quote,
                    "kind": x.kind,
                    "value": x.value,
                })).collect::<Vec<_>>(),
            });
            if let Some(cited) = &c.cited {
                claim["cited"] = json!(cited);
                claim["supported_elsewhere"] = json!(c.judged.supported_elsewhere);
            }
            claim
        })
        .collect();
    json!({
        "version": JSON_VERSION,
        "mode": if checked.cited { "cited" } else { "claims" },
        "all_supported": checked.all_supported(),
        "claims": claims,
        "sources": checked.sources.iter().map(source_json).collect::<Vec<_>>(),
        "warnings": checked.warnings,
    })
}

fn source_json(source: &CheckedSource) -> Value {
    let p = &source.page;
    json!({
        "number": source.number,
        "url": p.url,
        "final_url": p.final_url,
        "title": p.title,
        "status": p.status.as_str(),
        "http_status": p.http_status,
        "error": p.error,
    })
}

/// The URL a source was read at (after redirects).
fn url_of(checked: &Checked, number: usize) -> String {
    checked
        .sources
        .iter()
        .find(|s| s.number == number)
        .map(|s| {
            s.page
                .final_url
                .clone()
                .unwrap_or_else(|| s.page.url.clone())
        })
        .unwrap_or_default()
}

/// How a verdict reads for a person.
fn verdict_words(claim: &CheckedClaim) -> String {
    let words = match claim.judged.verdict {
        ClaimVerdict::Supported if claim.judged.corroborated => "supported, corroborated",
        ClaimVerdict::Supported => "supported",
        ClaimVerdict::Contradicted => "contradicted",
        ClaimVerdict::Disputed => "disputed (as many sites say otherwise as support it)",
        ClaimVerdict::NotFound => "not found (no source read speaks to it)",
        ClaimVerdict::NotSupportedByCited => "not supported by the sources it cites",
    };
    words.to_string()
}

fn markers(numbers: &[usize]) -> String {
    numbers.iter().map(|n| format!("[{n}]")).collect()
}

/// The check for a person: per claim its verdict, what supports it and what says
/// otherwise (quotes shortened), then the sources numbered, then a count.
pub fn person(checked: &Checked, style: Style) -> String {
    let paint = paint_of(style);
    let mut out = String::new();
    for (i, claim) in checked.claims.iter().enumerate() {
        let verdict = verdict_words(claim);
        let verdict = match claim.judged.verdict {
            ClaimVerdict::Supported => paint.bold(&verdict),
            _ => paint.yellow(&verdict),
        };
        let _ = write!(out, "{} {verdict}", paint.bold(&format!("{}.", i + 1)));
        if let Some(cited) = &claim.cited {
            let _ = write!(
                out,
                " {}",
                paint.dim(&format!("(cites {})", markers(cited)))
            );
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "   \"{}\"", sanitize_line(&claim.text));
        for s in &claim.findings.supports {
            let _ = writeln!(
                out,
                "   {} supports it ({}): \"{}\"",
                paint.cyan(&format!("[{}]", s.source)),
                s.support,
                sanitize_line(&shorten(&s.quote, QUOTE_CHARS))
            );
        }
        for c in &claim.findings.contradictions {
            let _ = writeln!(
                out,
                "   {} says {}: \"{}\"",
                paint.cyan(&format!("[{}]", c.source)),
                sanitize_line(&c.value),
                sanitize_line(&shorten(&c.quote, QUOTE_CHARS))
            );
        }
        if claim.cited.is_some() && !claim.judged.supported_elsewhere.is_empty() {
            let _ = writeln!(
                out,
                "   supported elsewhere: {}",
                markers(&claim.judged.supported_elsewhere)
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(out, "{}", paint.bold("Sources:"));
    for source in &checked.sources {
        let p = &source.page;
        let title = if p.title.trim().is_empty() {
            "(untitled)".to_string()
        } else {
            sanitize_line(&p.title)
        };
        let status = match &p.error {
            Some(reason) => format!(" ({}: {})", p.status.as_str(), sanitize_line(reason)),
            None if p.status.as_str() != "SUCCESS" => format!(" ({})", p.status.as_str()),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "  {} {title}{}",
            paint.cyan(&format!("[{}]", source.number)),
            paint.dim(&status)
        );
        let _ = writeln!(out, "      {}", sanitize_line(&p.url));
    }
    if checked.sources.is_empty() {
        let _ = writeln!(out, "  (none: the searches found no page)");
    }
    let supported = checked
        .claims
        .iter()
        .filter(|c| c.judged.verdict == ClaimVerdict::Supported)
        .count();
    let _ = writeln!(
        out,
        "\n{supported} of {} claims supported.",
        checked.claims.len()
    );
    out
}
