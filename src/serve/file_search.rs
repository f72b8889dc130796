//! Gemini's file search tool on `ground serve`'s Gemini face: `tools: [{fileSearch:
//! {fileSearchStoreNames: ["fileSearchStores/NAME"], topK?, metadataFilter?}}]`
//! (google-genai's `FileSearch`) read as the local document collections it names.
//! Whether each is one the operator serves is the face's check (`within_server`):
//! here only the tool's own shape.

use serde_json::Value;

use super::http::{ApiError, Face, either_spelling};

fn bad(message: impl Into<String>, hint: impl Into<String>) -> ApiError {
    ApiError::bad_request(Face::Gemini, None, message, hint)
}

/// What to send instead of a bad `fileSearch` tool.
const FILE_SEARCH_HINT: &str = "send {\"fileSearch\": {\"fileSearchStoreNames\": [\"fileSearchStores/NAME\"]}}, NAME a collection the server serves (ground serve --docs=NAME)";

/// The collections a `fileSearch` tool's `config` names: its `fileSearchStoreNames`
/// (or `file_search_store_names`), each `fileSearchStores/NAME` or a bare NAME.
/// `topK` is accepted; `metadataFilter` is refused (collections have no metadata).
pub(super) fn stores(config: &Value) -> Result<Vec<String>, ApiError> {
    if !config.is_object() {
        return Err(bad("fileSearch is not an object", FILE_SEARCH_HINT));
    }
    if either_spelling(config, "metadataFilter", "metadata_filter").is_some() {
        return Err(bad(
            "fileSearch.metadataFilter is not supported: ground's collections have no metadata",
            "leave metadataFilter out, or serve the files to filter as a collection of their own",
        ));
    }
    if let Some(top_k) = either_spelling(config, "topK", "top_k")
        && top_k.as_u64().is_none_or(|k| k < 1)
    {
        return Err(bad(
            "fileSearch.topK is not a whole number of at least 1",
            "leave topK out",
        ));
    }
    let names = either_spelling(config, "fileSearchStoreNames", "file_search_store_names")
        .and_then(Value::as_array)
        .filter(|names| !names.is_empty())
        .ok_or_else(|| {
            bad(
                "fileSearch.fileSearchStoreNames is missing or empty",
                FILE_SEARCH_HINT,
            )
        })?;
    if names.len() > MAX_STORES {
        return Err(bad(
            format!(
                "fileSearch names {} stores, more than the {MAX_STORES} accepted",
                names.len()
            ),
            "name the collections to answer from only",
        ));
    }
    names
        .iter()
        .map(|name| {
            let name = name.as_str().ok_or_else(|| {
                bad(
                    "fileSearch.fileSearchStoreNames is not an array of strings",
                    FILE_SEARCH_HINT,
                )
            })?;
            let collection = name
                .strip_prefix(crate::render::json::FILE_SEARCH_STORES)
                .unwrap_or(name);
            crate::docs::check_name(collection).map_err(|_| {
                bad(
                    format!(
                        "{:?} is not a file search store name",
                        crate::text::shorten(name, 80)
                    ),
                    FILE_SEARCH_HINT,
                )
            })?;
            Ok(collection.to_string())
        })
        .collect()
}

/// Most file search stores one request may name.
const MAX_STORES: usize = 16;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn store_names_are_collection_names_with_or_without_the_prefix() {
        let names = stores(
            &json!({"fileSearchStoreNames": ["fileSearchStores/team-docs", "notes"], "topK": 5}),
        );
        assert_eq!(names.unwrap(), ["team-docs", "notes"]);
        let names = stores(&json!({"file_search_store_names": ["a_b"], "top_k": 1}));
        assert_eq!(names.unwrap(), ["a_b"]);
    }
}
