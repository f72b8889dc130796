//! Gemini's `groundingMetadata`, in its REST shape (camelCase), made from a checked
//! answer: what `--json` carries so that renderers written for Gemini's grounding
//! work on ground's answers unchanged. Segment offsets are UTF-8 byte offsets into the
//! answer, start inclusive, end exclusive (the statements' own offsets).

use serde_json::{Value, json};

use super::GroundedAnswer;
use crate::context::SourceText;

/// Gemini's `groundingMetadata` (REST, camelCase): one chunk per source given to the
/// model (chunk index = source number - 1), one support per supported statement,
/// listing its supporting sources ([`Statement::supporting_sources`]). Each support
/// also says what supports it (`"support": "quote"` or `"match"`), a key of ours that
/// Gemini's renderers ignore; a statement whose quotes it contradicts has none. A
/// short source's chunk says its kind (`short_kinds`, by source order: `None` for a
/// page read).
pub fn grounding_metadata(
    answer: &GroundedAnswer,
    sources: &[SourceText],
    short_kinds: &[Option<&str>],
    queries: &[String],
) -> Value {
    let chunks: Vec<Value> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let web =
                json!({"uri": s.url, "title": s.title, "domain": crate::http::host_of(&s.url)});
            match short_kinds.get(i).copied().flatten() {
                // Not Gemini's: a short source (a search result's snippet or title),
                // not a page read in full.
                Some(kind) => json!({"web": web, "kind": kind}),
                None => json!({"web": web}),
            }
        })
        .collect();
    let supports: Vec<Value> = answer
        .statements
        .iter()
        .filter(|s| s.supported())
        .map(|s| {
            let supporting = s.supporting_sources();
            json!({
                "segment": {"startIndex": s.start, "endIndex": s.end, "text": s.text},
                "groundingChunkIndices": supporting.iter().map(|(n, _)| n - 1).collect::<Vec<_>>(),
                "confidenceScores": supporting.iter().map(|(_, c)| *c).collect::<Vec<_>>(),
                "support": s.support.name(),
            })
        })
        .collect();
    json!({
        "webSearchQueries": queries,
        "groundingChunks": chunks,
        "groundingSupports": supports,
    })
}
