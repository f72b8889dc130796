//! The `outputSchema` each tool declares: the JSON Schema of the `structuredContent`
//! it returns, as the MCP specification asks of tools with structured results, so
//! that clients can validate results and agents know their shape before calling.
//!
//! The schemas are JSON files beside this module (`schemas/*.json`), compiled in:
//! one readable document per tool that the book (docs/src/mcp.md) links to. Each is
//! an `anyOf` of the tool's result (`web_search`: its pages or its images) and its
//! error object, because a failed call (`isError: true`) also
//! carries structured content (the CLI's `--json` error object) and clients such as
//! the official TypeScript SDK validate that against the same schema. Objects are
//! closed (`additionalProperties: false`): a field added to the `--json` output
//! without its schema fails the tests that check every result against these.

use std::sync::Arc;

use rmcp::model::JsonObject;

/// `web_search`'s result: `ground search --json`'s object, or the error object.
pub const WEB_SEARCH: &str = include_str!("schemas/web_search.json");
/// `web_fetch`'s result: `ground fetch --json`'s page object, or the error object.
pub const WEB_FETCH: &str = include_str!("schemas/web_fetch.json");
/// `grounded_answer`'s result: `ground answer --json`'s object, or the error object.
pub const GROUNDED_ANSWER: &str = include_str!("schemas/grounded_answer.json");
/// `document_search`'s result: `ground index search --json`'s object, or the error
/// object.
pub const DOCUMENT_SEARCH: &str = include_str!("schemas/document_search.json");

/// `check_claims`' result: `ground check --json`'s object, or the error object.
pub const CHECK_CLAIMS: &str = include_str!("schemas/check_claims.json");

/// `check_claims`' output schema.
pub fn check_claims() -> Arc<JsonObject> {
    parsed(CHECK_CLAIMS)
}

/// `web_search`'s output schema.
pub fn web_search() -> Arc<JsonObject> {
    parsed(WEB_SEARCH)
}

/// `web_fetch`'s output schema.
pub fn web_fetch() -> Arc<JsonObject> {
    parsed(WEB_FETCH)
}

/// `grounded_answer`'s output schema.
pub fn grounded_answer() -> Arc<JsonObject> {
    parsed(GROUNDED_ANSWER)
}

/// `document_search`'s output schema.
pub fn document_search() -> Arc<JsonObject> {
    parsed(DOCUMENT_SEARCH)
}

/// One compiled-in schema as the JSON object rmcp puts in `tools/list`. The files
/// are constants of the build, checked by the unit test below: an unparsable one is
/// a bug caught before release, never input a user can give.
fn parsed(text: &'static str) -> Arc<JsonObject> {
    match serde_json::from_str(text) {
        Ok(object) => Arc::new(object),
        Err(error) => unreachable!("a compiled-in MCP output schema is not a JSON object: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_schema_of_a_result_or_an_error() {
        // web_search's results are pages or (category "images") images.
        for (schema, shapes) in [
            (web_search(), 3),
            (web_fetch(), 2),
            (grounded_answer(), 2),
            (document_search(), 2),
            (check_claims(), 2),
        ] {
            // MCP requires an object schema at the top.
            assert_eq!(schema["type"], "object");
            let choices = schema["anyOf"].as_array().expect("anyOf");
            assert_eq!(choices.len(), shapes);
            let defs = schema["$defs"].as_object().expect("$defs");
            for choice in choices {
                let name = choice["$ref"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("#/$defs/");
                let def = &defs[name];
                assert_eq!(def["additionalProperties"], false, "{name}");
                assert!(
                    def["required"].as_array().is_some_and(|r| !r.is_empty()),
                    "{name}"
                );
            }
            assert!(
                defs["failure"]["required"]
                    .as_array()
                    .unwrap()
                    .contains(&"error".into())
            );
        }
    }
}
