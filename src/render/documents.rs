//! Passages found in the local document index (`ground index search --json`, MCP's
//! `document_search`): one JSON shape for both.

use serde_json::{Value, json};

use crate::docs::Hit;

/// `{version, query, results: [{collection, path, title, line_start, line_end,
/// snippet, score}]}`, best first; a hit whose file cannot be read now also has
/// `unreadable` (why, and the command that updates the collection).
pub fn json(query: &str, hits: &[Hit]) -> Value {
    json!({"version": super::JSON_VERSION, "query": query, "results": hits})
}
