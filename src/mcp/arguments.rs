//! The MCP tools' own argument checks, beyond their JSON schemas: `limit`'s range,
//! `web_search`'s `category`, the `sites` / `exclude_sites` filter and the local
//! document collections a call names (`docs`, `collection`). A bad argument is a usage [`Failure`], which
//! `failure.rs` turns into a tool error naming the input.

use serde_json::Value;

use super::MAX_SEARCH_RESULTS;
use crate::service::Failure;

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

/// `category`: absent, null or "web" searches pages; "images" searches images.
pub(super) fn parse_category(category: Option<&Value>) -> Result<bool, Failure> {
    match category {
        None | Some(Value::Null) => Ok(false),
        Some(Value::String(c)) if c == "web" => Ok(false),
        Some(Value::String(c)) if c == "images" => Ok(true),
        Some(other) => Err(Failure::usage(
            format!(
                "category must be \"web\" or \"images\", not {}",
                crate::text::shorten(&other.to_string(), 40)
            ),
            "leave category out to search web pages",
        )),
    }
}

/// The collections a call names, each one the server serves (`ground mcp
/// --docs=NAME`, `[docs] collections`): absent means all of them.
pub(super) fn parse_collections(
    named: Option<Vec<String>>,
    served: &[String],
) -> Result<Vec<String>, Failure> {
    let Some(mut named) = named else {
        return Ok(served.to_vec());
    };
    if let Some(other) = named.iter().find(|c| !served.iter().any(|s| s == *c)) {
        return Err(crate::service::not_served(other, served));
    }
    named.sort();
    named.dedup();
    Ok(named)
}

/// `n`: absent means [`DEFAULT_PASSAGES`]; otherwise a whole number from 1 to
/// [`MAX_PASSAGES`].
pub(super) fn parse_passages(n: Option<&Value>) -> Result<usize, Failure> {
    match n {
        None | Some(Value::Null) => Ok(DEFAULT_PASSAGES),
        Some(value) => value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| (1..=MAX_PASSAGES).contains(n))
            .ok_or_else(|| {
                Failure::usage(
                    format!(
                        "n must be a whole number from 1 to {MAX_PASSAGES}, not {}",
                        crate::text::shorten(&value.to_string(), 40)
                    ),
                    format!("leave n out for {DEFAULT_PASSAGES} passages"),
                )
            }),
    }
}

/// Passages `document_search` returns when `n` is absent.
pub(super) const DEFAULT_PASSAGES: usize = 5;
/// Most passages `document_search` returns.
pub(super) const MAX_PASSAGES: usize = 20;

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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn collections_are_the_served_ones_or_some_of_them() {
        let served = vec!["notes".to_string(), "team".to_string()];
        assert_eq!(parse_collections(None, &served).unwrap(), served);
        let some = parse_collections(Some(vec!["team".into(), "team".into()]), &served);
        assert_eq!(some.unwrap(), vec!["team".to_string()]);
        assert!(parse_collections(Some(vec![]), &served).unwrap().is_empty());
        let problem = parse_collections(Some(vec!["private".into()]), &served).unwrap_err();
        assert_eq!(problem.kind, "invalid_arguments");
        assert!(problem.message.contains("\"private\" is not served here"));
        assert_eq!(problem.hint.as_deref(), Some("name one of: notes, team"));
        let problem = parse_collections(Some(vec!["notes".into()]), &[]).unwrap_err();
        assert!(problem.hint.unwrap().contains("--docs=NAME"));
        assert_eq!(parse_passages(None).unwrap(), 5);
        assert!(parse_passages(Some(&json!(21))).is_err());
        assert_eq!(parse_passages(Some(&json!(20))).unwrap(), 20);
    }

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
}
