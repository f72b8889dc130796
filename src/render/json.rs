//! The report as one JSON object for scripts (`--json`), the grounding pack
//! (`--pack`), and the error object of a failed run. The shape is versioned
//! ([`JSON_VERSION`]) and documented in the book (docs/src/json-output.md); serde
//! escapes control characters.

use serde_json::{Value, json};

use crate::answer::PACK_BUCKETS;
use crate::context::SourceKind;
use crate::error::Error;
use crate::grounding::{self, CheckedCitation, Statement, Support};
use crate::page::PageAttempt;
use crate::report::{AnswerMode, Failed, Report, Verdict};
use crate::session::Session;

/// Version of the `--json` shape; bumped on any incompatible change.
pub const JSON_VERSION: u32 = 1;

/// The `--json` object (shape documented in docs/src/json-output.md, version [`JSON_VERSION`]).
///
/// `verdict` is the run's judgement ([`crate::report::verdict`]), the same rule the
/// CLI's exit code follows: `"verdict": {"name", "exit_code"}` tells scripts and agents
/// (which have no exit code) how the run counts.
pub fn json(report: &Report, verdict: &Verdict) -> Value {
    let answer = &report.answer;
    let source_of = |n: usize| &report.sources[n - 1];
    // The model's citations, each with what its quote does for its statement, then
    // ground's own matches with the window as the text and its offsets in the source.
    let citations: Vec<Value> = answer
        .statements
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            let quoted = s.citations.iter().map(move |c| {
                json!({
                    "statement": si,
                    "source": c.source,
                    "source_url": source_of(c.source).url,
                    "title": source_of(c.source).title,
                    "text": c.quote,
                    "verified": c.verified,
                    "confidence": c.confidence,
                    "match": c.matched,
                    "support": citation_support(s, c),
                })
            });
            let matched = s.matches.iter().map(move |m| {
                json!({
                    "statement": si,
                    "source": m.source,
                    "source_url": source_of(m.source).url,
                    "title": source_of(m.source).title,
                    "text": m.text,
                    "verified": true,
                    "confidence": m.confidence,
                    "match": "window",
                    "support": "match",
                    "source_start_index": m.start,
                    "source_end_index": m.end,
                })
            });
            quoted.chain(matched)
        })
        .collect();
    let statements: Vec<Value> = answer
        .statements
        .iter()
        .map(|s| {
            json!({
                "text": s.text,
                "start_index": s.start,
                "end_index": s.end,
                "supported": s.supported(),
                "support": s.support.name(),
                "mismatch": s.mismatch,
                "sources": markers(s),
                "corroborated_by": s.corroborated_by,
                "contradicted_by": s.contradicted_by,
            })
        })
        .collect();
    let searches_cached = !report.searches.is_empty() && report.searches.iter().all(|s| s.cached);
    let kinds: Vec<SourceKind> = (1..=report.sources.len()).map(|n| report.kind(n)).collect();
    let sources: Vec<Value> = report
        .pages
        .iter()
        .map(|p| {
            let cut = p
                .index
                .and_then(|i| report.context.sources.iter().find(|c| c.number == i));
            let mut value = source_json(p, cut.map(|c| (c.chars_sent, c.truncated, c.used())));
            if let Some(file) = p.index.and_then(|n| report.file_location(n)) {
                file_fields(&mut value, &file);
            }
            value
        })
        .chain(
            report
                .sources
                .iter()
                .filter(|s| report.is_short(s.number))
                .map(|s| {
                    let sent = report.context.sources.iter().find(|c| c.number == s.number);
                    let kind = report.kind(s.number).name();
                    // The keys of a page's entry, so scripts read both alike; a short
                    // source (infobox, answer, snippet) is never fetched, and is
                    // cached when its search was.
                    json!({
                        "index": s.number,
                        "kind": kind,
                        "url": s.url,
                        "final_url": null,
                        "title": s.title,
                        "status": kind.to_ascii_uppercase(),
                        "http_status": null,
                        "content_type": null,
                        "text": s.text,
                        "chars": s.text.chars().count(),
                        "chars_fetched": 0,
                        "chars_sent": sent.map(|c| c.chars_sent).unwrap_or(0),
                        "truncated": sent.is_some_and(|c| c.truncated),
                        "used": sent.is_some_and(|c| c.used()),
                        "body_truncated": false,
                        "cached": searches_cached,
                        "error": null,
                        "ms": 0,
                    })
                }),
        )
        .collect();
    let mut value = json!({
        "version": JSON_VERSION,
        "question": report.question,
        "answer": answer.answer,
        "grounded": report.mode == AnswerMode::Grounded && answer.grounded(),
        "mode": report.mode.name(),
        "offline_reason": match &report.mode {
            AnswerMode::Offline { reason } => Some(reason.as_str()),
            _ => None,
        },
        "decision": report.decision,
        "searches": report.searches,
        "plan": report.plan,
        "answerable": answer.answerable,
        "statements": statements,
        "citations": citations,
        "rejected_citations": answer.rejected,
        "unknowns": answer.unknowns,
        "sources": sources,
        "search": search_json(&report.extras),
        "groundingMetadata": file_chunks(grounding::grounding_metadata(answer, &report.sources, &kinds, &report.queries, &report.extras.search_pages), report),
        "model": report.model,
        "context": {
            "budget_tokens": report.context.budget_tokens,
            "estimated_tokens": report.context.estimated_tokens,
        },
        "answer_language": report.answer_language,
        "timings_ms": report.timings,
        "warnings": report.warnings,
        "verdict": {"name": verdict.name(), "exit_code": verdict.exit_code()},
    });
    // The images beside the answer (the shape of `render::images`), only when they
    // were asked for (`--images`).
    if let Some(images) = &report.images {
        value["images"] = json!(images);
    }
    value
}

/// The `--json` object of an answer a face got from the service, the one shape every
/// face gives (MCP's structured output, serve's `ground` object, batch's records):
/// [`json`], with a reused answer's `reused {question, age_secs, ttl_secs}` or, for a
/// follow-up, the `conversation {standalone_question, reused_sources, searched}`.
pub fn answered(answered: &crate::service::Answered) -> Value {
    let mut value = json(&answered.report, &answered.verdict);
    if let Some((age, ttl)) = answered.reused {
        value["reused"] = json!({
            "question": answered.report.question,
            "age_secs": age.as_secs(),
            "ttl_secs": ttl.as_secs(),
        });
    } else if let Some(followup) = &answered.report.followup {
        value["conversation"] = follow_up(Some(followup));
    }
    value
}

/// What the follow-up step did for a turn of a conversation, as `--json`'s `session`
/// and MCP's `conversation` say it: the question as answered, the earlier sources
/// shown again, and whether a search was made (a turn that was not a follow-up
/// searched and reused nothing).
pub fn follow_up(followup: Option<&crate::report::FollowUp>) -> Value {
    json!({
        "standalone_question": followup.map(|f| f.standalone.as_str()),
        "reused_sources": followup.map_or(0, |f| f.reused_sources),
        "searched": followup.is_none_or(|f| f.searched),
    })
}

/// `--json`'s `session` object for the turn `report` answered in `session`, before
/// the turn is recorded: [`follow_up`] with the conversation's name and the turn's
/// number.
pub fn session_json(session: &Session, report: &Report) -> Value {
    let mut value = follow_up(report.followup.as_ref());
    value["name"] = json!(session.name);
    value["turn"] = json!(session.turn_number());
    value
}

/// The grounding pack (`--pack`): evidence for apps instead of prose. Every key point,
/// norm (`norms_and_expectations`) and rule (`constraints_and_rules`) is supported
/// like an answer's statement (a verified quote, or ground's match: `"support"` says
/// which, and `quotes` holds the quotes or the matched windows); one without is moved to
/// `disputed_or_uncertain` with the reason (a bucket item also names its `bucket`),
/// next to what the model itself called unsettled. A policy- or legal-like item with
/// one verified source stays, marked `"single_source": true`.
pub fn pack(report: &Report) -> Value {
    let answer = &report.answer;
    let grounded_run = report.mode == AnswerMode::Grounded;
    let source_ref = |n: usize| {
        let s = &report.sources[n - 1];
        json!({"index": n, "url": s.url, "title": s.title, "kind": report.kind_name(n)})
    };
    // A supported statement or bucket item as a key point, or why it is uncertain.
    let checked = |statement: &Statement| -> Result<Value, String> {
        let supporting = statement.supporting_sources();
        if grounded_run && !supporting.is_empty() {
            let confidence = supporting.iter().map(|(_, c)| *c).fold(0.0, f64::max);
            let quotes: Vec<Value> = if statement.support == Support::Match {
                statement
                    .matches
                    .iter()
                    .map(|m| json!({"source": m.source, "text": m.text, "confidence": m.confidence, "support": "match"}))
                    .collect()
            } else {
                statement
                    .citations
                    .iter()
                    .filter(|c| c.verified)
                    .map(|c| json!({"source": c.source, "text": c.quote, "confidence": c.confidence, "support": "quote"}))
                    .collect()
            };
            Ok(json!({
                "text": statement.text,
                "sources": supporting.iter().map(|(n, _)| source_ref(*n)).collect::<Vec<_>>(),
                "quotes": quotes,
                "confidence": confidence,
                "support": statement.support.name(),
            }))
        } else if !grounded_run {
            Err("answered without sources".to_string())
        } else if let Some(why) = &statement.mismatch {
            Err(format!(
                "the quoted text does not say what the statement says: {why}"
            ))
        } else if statement.citations.is_empty() {
            Err("no citation".to_string())
        } else {
            let cited: Vec<String> = statement
                .citations
                .iter()
                .map(|c| c.source.to_string())
                .collect();
            Err(format!(
                "the quoted text was not found in source {}",
                cited.join(", ")
            ))
        }
    };
    let mut key_points = Vec::new();
    let mut uncertain = Vec::new();
    for statement in &answer.statements {
        match checked(statement) {
            Ok(point) => key_points.push(point),
            Err(reason) => uncertain.push(json!({"text": statement.text, "reason": reason})),
        }
    }
    let mut buckets = serde_json::Map::new();
    for bucket in PACK_BUCKETS {
        let mut items = Vec::new();
        for entry in report.pack_items.iter().filter(|e| e.bucket == bucket) {
            match checked(&entry.statement) {
                Ok(mut item) => {
                    // Policies and laws want two sources; with one the item stays,
                    // labelled.
                    let sources = entry.statement.supporting_sources().len();
                    item["policy_or_legal"] = json!(entry.policy_or_legal);
                    item["single_source"] = json!(entry.policy_or_legal && sources < 2);
                    items.push(item);
                }
                Err(reason) => uncertain.push(json!({
                    "text": entry.statement.text,
                    "reason": reason,
                    "bucket": bucket,
                })),
            }
        }
        buckets.insert(bucket.to_string(), Value::Array(items));
    }
    for unknown in &answer.unknowns {
        uncertain.push(json!({"text": unknown, "reason": "the sources do not settle this"}));
    }
    json!({
        "version": JSON_VERSION,
        "question": report.question,
        "mode": report.mode.name(),
        "grounded": grounded_run && answer.grounded(),
        "key_points": key_points,
        "norms_and_expectations": buckets["norms_and_expectations"],
        "constraints_and_rules": buckets["constraints_and_rules"],
        "disputed_or_uncertain": uncertain,
        "what_to_ask_user": report.ask_user,
        "sources": report.sources.iter().map(|s| json!({"index": s.number, "url": s.url, "title": s.title})).collect::<Vec<_>>(),
        "webSearchQueries": report.queries,
        "plan": report.plan,
        "model": report.model,
        "timings_ms": report.timings,
        "warnings": report.warnings,
    })
}

/// The `--json` object for a failed run: the error and what was asked, under
/// `input_name` ("question" for answer, "query" for search, "url" for fetch).
pub fn json_error(input_name: &str, input: &str, error: &Error) -> Value {
    json!({
        "version": JSON_VERSION,
        input_name: input,
        "error": {
            "kind": error.kind(),
            "message": error.to_string(),
            "hint": error.hint(),
            "exit_code": error.exit_code(),
        }
    })
}

/// A local document's entry in `sources`: kind `file`, its path and the lines sent
/// (its `url` is the file's `file://` URI already).
fn file_fields(value: &mut Value, file: &crate::report::FileLocation) {
    value["kind"] = json!("file");
    value["path"] = json!(file.path);
    value["line_start"] = json!(file.line_start);
    value["line_end"] = json!(file.line_end);
    if let Some(collection) = &file.collection {
        value["collection"] = json!(collection);
    }
}

/// The prefix of a Gemini file search store's name; ground's store of a collection is
/// `fileSearchStores/NAME`.
pub const FILE_SEARCH_STORES: &str = "fileSearchStores/";

/// `groundingMetadata` with each local document's chunk in Gemini's own shape for
/// retrieved files, `retrievedContext {uri, title, text, fileSearchStore}` (the text:
/// the lines sent; the store: `fileSearchStores/COLLECTION`, when known), in place of
/// `web`.
pub fn file_chunks(mut metadata: Value, report: &Report) -> Value {
    let Some(chunks) = metadata["groundingChunks"].as_array_mut() else {
        return metadata;
    };
    for (i, chunk) in chunks.iter_mut().enumerate() {
        let number = i + 1;
        let Some(location) = report.file_location(number) else {
            continue;
        };
        let source = &report.sources[i];
        let text: Vec<&str> = report
            .context
            .sources
            .iter()
            .find(|c| c.number == number)
            .map(|c| {
                c.sent
                    .iter()
                    .filter_map(|r| source.text.get(r.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let mut context = json!({
            "uri": source.url,
            "title": source.title,
            "text": text.join("\n"),
        });
        if let Some(collection) = location.collection {
            context["fileSearchStore"] = json!(format!("{FILE_SEARCH_STORES}{collection}"));
        }
        *chunk = json!({ "retrievedContext": context });
    }
    metadata
}

/// One page tried, for `--json`'s `sources`: `sent` is what of it the prompt holds
/// (characters sent, cut, used); `used: false` with status `SUCCESS` is a page read
/// whose passages all lost to better-matching ones (it had no block in the prompt).
fn source_json(p: &PageAttempt, sent: Option<(usize, bool, bool)>) -> Value {
    json!({
        "index": p.index,
        "kind": "page",
        "url": p.url,
        "final_url": p.final_url,
        "title": p.title,
        "status": p.status,
        "http_status": p.http_status,
        "content_type": p.content_type,
        "chars": p.chars,
        "chars_fetched": p.chars_fetched,
        "chars_sent": sent.map(|s| s.0).unwrap_or(0),
        "truncated": sent.is_some_and(|s| s.1),
        "used": sent.is_some_and(|s| s.2),
        "body_truncated": p.body_truncated,
        "cached": p.cached,
        "error": p.error,
        "ms": p.ms,
    })
}

/// The `--json` object for a failed `ground answer`: the error beside every field the
/// run got to (`searches`, `sources` with each page's status, `webSearchQueries`,
/// `timings_ms`, `warnings`), so scripts learn why each page failed.
pub fn json_failed(question: &str, failed: &Failed) -> Value {
    let mut value = json_error("question", question, &failed.error);
    let partial = &failed.partial;
    let sources: Vec<Value> = partial.pages.iter().map(|p| source_json(p, None)).collect();
    if let Value::Object(map) = &mut value {
        map.insert("searches".into(), json!(partial.searches));
        map.insert("search".into(), search_json(&partial.extras));
        map.insert("sources".into(), Value::Array(sources));
        map.insert("webSearchQueries".into(), json!(partial.queries));
        map.insert("timings_ms".into(), json!(partial.timings));
        map.insert("warnings".into(), json!(partial.warnings));
    }
    value
}

/// `--json`'s `search`: what the searches said besides their results, the site
/// filter they ran under and how many results it dropped.
fn search_json(extras: &crate::hits::SearchExtras) -> Value {
    json!({
        "suggestions": extras.suggestions,
        "corrections": extras.corrections,
        "sites": extras.sites.sites,
        "exclude_sites": extras.sites.exclude_sites,
        "dropped": extras.dropped,
    })
}

/// What a model's citation does for its statement: `"quote"` (its verified quote
/// supports it), `"mismatch"` (the quote is real, but the statement says something it
/// does not) or null (the quote was not found).
fn citation_support(statement: &Statement, citation: &CheckedCitation) -> Value {
    match (citation.verified, &statement.mismatch) {
        (false, _) => Value::Null,
        (true, None) => json!("quote"),
        (true, Some(_)) => json!("mismatch"),
    }
}

/// The numbers of the sources that support `statement` (by a verified quote or by
/// ground's match), for `[n]` markers.
pub fn markers(statement: &Statement) -> Vec<usize> {
    statement
        .supporting_sources()
        .into_iter()
        .map(|(n, _)| n)
        .collect()
}
