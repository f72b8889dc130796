//! How a tool call fails without ending the session: a [`Failure`] from the service
//! (a stage's error, a spent budget, a panic inside a call) or from this face's own
//! argument checks (`arguments.rs`) becomes a tool result with `isError: true`, a text naming the
//! input with the CLI's hint, and the CLI's `--json` error object as structured
//! content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use crate::service::Failure;
use crate::text::sanitize_line;

/// The tool error result for `problem`: a text naming the input, with the hint, and
/// the CLI's `--json` error object as structured content.
pub(super) fn failure(
    tool: &str,
    input_name: &str,
    input: &str,
    problem: Failure,
) -> CallToolResult {
    log_failure(tool, input_name, input, &problem.message);
    let mut result =
        CallToolResult::error(vec![ContentBlock::text(problem.text(input_name, input))]);
    result.structured_content = Some(json!({
        "version": crate::render::JSON_VERSION,
        input_name: input,
        "error": problem.json(),
    }));
    result
}

/// One line on stderr per failed call, for the client's server log.
pub(super) fn log_failure(tool: &str, input_name: &str, input: &str, message: &str) {
    crate::error::log_line(&format!(
        "ground mcp: {tool} failed ({input_name} {:?}): {}",
        crate::text::shorten(input, 120),
        sanitize_line(message).replace('\n', " ")
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn errors_name_the_input_and_carry_the_hint() {
        let result = failure(
            "web_search",
            "query",
            "tardigrades",
            Error::NoResults {
                query: "tardigrades".into(),
            }
            .into(),
        );
        assert_eq!(result.is_error, Some(true));
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.starts_with("error: the search for \"tardigrades\" returned no results"));
        assert!(text.contains("\nquery: tardigrades\nhint: "), "{text}");
        let structured = result.structured_content.unwrap();
        assert_eq!(structured["query"], "tardigrades");
        assert_eq!(structured["error"]["kind"], "no_results");
    }
}
