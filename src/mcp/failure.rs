//! How a tool call fails without ending the session: a [`Failure`] from the service
//! (a stage's error, a spent budget, a panic inside a call) or from this face's own
//! argument checks becomes a tool result with `isError: true`, a text naming the
//! input with the CLI's hint, and the CLI's `--json` error object as structured
//! content.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use super::MAX_SEARCH_RESULTS;
use crate::service::Failure;
use crate::text::sanitize_line;

/// `sites` / `exclude_sites`: absent (both) means the server's own filter; given,
/// they replace it. A name that is no domain, host or IP address is a usage error.
pub(super) fn parse_sites(
    sites: Option<&[String]>,
    exclude_sites: Option<&[String]>,
) -> Result<Option<crate::sites::SiteFilter>, Failure> {
    if sites.is_none() && exclude_sites.is_none() {
        return Ok(None);
    }
    crate::sites::SiteFilter::parse(
        sites.unwrap_or_default(),
        exclude_sites.unwrap_or_default(),
        "sites / exclude_sites",
    )
    .map(Some)
    // A bad argument, like a bad `limit`.
    .map_err(|error| Failure::usage(error.message, error.hint))
}

/// `limit`: absent means 10; otherwise a whole number from 1 to 10.
pub(super) fn parse_limit(limit: Option<&Value>) -> Result<usize, Failure> {
    match limit {
        None | Some(Value::Null) => Ok(MAX_SEARCH_RESULTS),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=MAX_SEARCH_RESULTS).contains(n))
            .ok_or_else(|| {
                Failure::usage(
                    format!(
                        "limit must be a whole number from 1 to {MAX_SEARCH_RESULTS}, not {}",
                        crate::text::shorten(&value.to_string(), 40)
                    ),
                    format!("leave limit out for {MAX_SEARCH_RESULTS} results"),
                )
            }),
    }
}

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
    fn limit_defaults_to_ten_and_stays_in_range() {
        assert_eq!(parse_limit(None).unwrap(), 10);
        assert_eq!(parse_limit(Some(&Value::Null)).unwrap(), 10);
        assert_eq!(parse_limit(Some(&json!(3))).unwrap(), 3);
        for bad in [json!(0), json!(11), json!(-1), json!(2.5), json!("5")] {
            let problem = parse_limit(Some(&bad)).unwrap_err();
            assert_eq!(problem.kind, "invalid_arguments");
            assert!(problem.message.contains("1 to 10"), "{}", problem.message);
        }
    }

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
