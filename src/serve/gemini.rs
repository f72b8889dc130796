//! The Gemini face of `ground serve`: `POST /{v1,v1beta}/models/{model}:generateContent`
//! and `:streamGenerateContent?alt=sse`, so an agent written for Gemini's Grounding
//! with Google Search (google-genai, Google's ADK) runs unchanged, pointed here with
//! `GOOGLE_GEMINI_BASE_URL` or `HttpOptions(base_url=...)`.
//!
//! - Any model name is answered by the configured model (a `gemini-*` name included:
//!   ADK's google_search tool refuses other names).
//! - With a `googleSearch` / `google_search` (or `googleSearchRetrieval`) tool: the
//!   grounded pipeline; the candidate's text is the answer and its
//!   `groundingMetadata` is exactly `--json`'s (UTF-8 byte offsets into that text).
//!   The SDK drops fields it does not know, so everything is in Gemini's own fields.
//! - The search tool's `excludeDomains` (Vertex AI's field; `exclude_domains` too)
//!   is added to the server's `--exclude-site`s for the request: it may narrow what
//!   the server searches, never widen it.
//! - The search tool's `searchTypes: {imageSearch: {}}` (google-genai's `SearchTypes`;
//!   `search_types` / `image_search` too): an images search beside the answer, each
//!   image one more `groundingChunks[]` entry `{image: {sourceUri, imageUri, title,
//!   domain}}` (its `GroundingChunkImage`) after the web chunks, so the supports'
//!   indices are unchanged. Images are links; none is downloaded.
//! - With a `fileSearch` / `file_search` tool (google-genai's `FileSearch`): the
//!   grounded pipeline on the local document collections it names,
//!   `fileSearchStoreNames: ["fileSearchStores/NAME"]`, each one the operator
//!   serves (`ground serve --docs=NAME`); with no `googleSearch` beside it nothing
//!   is searched on the web. A file's chunk is `retrievedContext {uri, title, text,
//!   fileSearchStore}` (its `GroundingChunkRetrievedContext`). `topK` is accepted
//!   (ground reads at most its own number of files); `metadataFilter` is refused
//!   (collections have no metadata). A `googleSearch` request alone is answered from
//!   the web and the operator's collections, as every answer of this server is.
//! - Without either: the model answers the conversation alone, with no grounding
//!   metadata, as Gemini does. `systemInstruction` is given to the model as the
//!   application's instruction, beneath ground's own rules (it cannot switch off the
//!   answer's schema or the quote check).
//! - Streaming: `data: {GenerateContentResponse}` events and nothing else: no
//!   `[DONE]` and no SSE comment lines (google-genai parses every non-empty line that
//!   is not `data:` as JSON, so a keep-alive comment would break it).

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::App;
use super::http::{ApiError, Face, admitted, either_spelling, note, reply_id};
use crate::report::Report;
use crate::service::Turn;
use crate::settings::Settings;
use crate::sites::SiteFilter;

/// The alias listed for clients that check a model name starts with `gemini-`.
pub const GEMINI_ALIAS: &str = "gemini-2.5-flash";

/// `GET /{v1,v1beta}/models`: `ground` and its `gemini-` alias.
pub async fn models() -> axum::Json<Value> {
    let model = |name: &str, display: &str| {
        json!({
            "name": format!("models/{name}"),
            "displayName": display,
            "description": "Answers from live web search with verified citations (ground)",
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        })
    };
    axum::Json(json!({"models": [
        model("ground", "ground"),
        model(GEMINI_ALIAS, "ground (as gemini-2.5-flash, for clients that check the name)"),
    ]}))
}

fn bad(message: impl Into<String>, hint: impl Into<String>) -> ApiError {
    ApiError::bad_request(Face::Gemini, None, message, hint)
}

/// A checked `generateContent` request.
#[derive(Debug)]
struct GenerateRequest {
    question: String,
    turns: Vec<Turn>,
    search: bool,
    instruction: Option<String>,
    /// The search tool's `excludeDomains` as sent, then (by [`within_server`]) the
    /// server's own filter narrowed by it; `None` when absent.
    sites: Option<SiteFilter>,
    /// The search tool's `searchTypes.imageSearch`: image chunks beside the answer.
    images: bool,
    /// The file search tool's collections (store names without `fileSearchStores/`);
    /// `None` without one. Checked against the operator's by [`within_server`].
    stores: Option<Vec<String>>,
}

/// The text of a `Content`'s parts.
fn parts_text(content: &Value) -> Result<String, ApiError> {
    let Some(parts) = content.get("parts").and_then(Value::as_array) else {
        return Err(bad(
            "a content has no parts",
            "send contents: [{\"role\": \"user\", \"parts\": [{\"text\": ...}]}]",
        ));
    };
    let mut text = Vec::new();
    for part in parts {
        match part.get("text") {
            Some(Value::String(t)) => text.push(t.clone()),
            _ if part.get("thought").is_some() => {}
            _ => {
                return Err(bad(
                    "only text parts are supported (no inline data, files or function calls)",
                    "send the question as a text part",
                ));
            }
        }
    }
    Ok(text.join("\n"))
}

fn parse(body: &Value) -> Result<GenerateRequest, ApiError> {
    let body_value = body;
    let Some(body) = body.as_object() else {
        return Err(bad(
            "the request body is not a JSON object",
            "send {\"contents\": [...]}",
        ));
    };
    let mut search = false;
    let mut images = false;
    let mut exclude: Option<Vec<String>> = None;
    let mut stores: Option<Vec<String>> = None;
    if let Some(tools) = body.get("tools") {
        let Some(tools) = tools.as_array() else {
            return Err(bad(
                "tools is not an array",
                "send tools: [{\"googleSearch\": {}}]",
            ));
        };
        for tool in tools {
            let Some(tool) = tool.as_object() else {
                return Err(bad(
                    "a tool is not an object",
                    "send tools: [{\"googleSearch\": {}}]",
                ));
            };
            for (name, config) in tool {
                match name.as_str() {
                    "googleSearch" | "google_search" => {
                        search = true;
                        images |= image_search(config)?;
                        if let Some(domains) = exclude_domains(config)? {
                            exclude.get_or_insert_default().extend(domains);
                        }
                    }
                    "googleSearchRetrieval" | "google_search_retrieval" => search = true,
                    "fileSearch" | "file_search" => {
                        stores
                            .get_or_insert_default()
                            .extend(super::file_search::stores(config)?);
                    }
                    "functionDeclarations" | "function_declarations" => {
                        return Err(bad(
                            "function declarations are not supported: ground searches the web and answers itself",
                            "use the googleSearch or fileSearch tool only",
                        ));
                    }
                    other => {
                        return Err(bad(
                            format!(
                                "the tool {:?} is not supported",
                                crate::text::shorten(other, 40)
                            ),
                            "use the googleSearch or fileSearch tool only",
                        ));
                    }
                }
            }
        }
    }
    let instruction = match either_spelling(body_value, "systemInstruction", "system_instruction") {
        None => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(content) => Some(parts_text(content)?),
    };
    let Some(contents) = body.get("contents").and_then(Value::as_array) else {
        return Err(bad(
            "contents is missing or not an array",
            "send contents: [{\"role\": \"user\", \"parts\": [{\"text\": \"your question\"}]}]",
        ));
    };
    if contents.len() > super::http::MAX_MESSAGES {
        return Err(bad(
            format!(
                "{} contents is more than the {} accepted",
                contents.len(),
                super::http::MAX_MESSAGES
            ),
            "send the last turns of the conversation only",
        ));
    }
    let mut said: Vec<(bool, String)> = Vec::new();
    for content in contents {
        let role = content
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let text = parts_text(content)?;
        match role {
            "user" => said.push((true, text)),
            "model" => said.push((false, text)),
            other => {
                return Err(bad(
                    format!(
                        "contents of role {:?} are not supported",
                        crate::text::shorten(other, 40)
                    ),
                    "use the roles user and model",
                ));
            }
        }
    }
    let Some((true, question)) = said.pop() else {
        return Err(bad(
            "the last content is not the user's: nothing to answer",
            "end contents with the user's question",
        ));
    };
    if question.trim().is_empty() {
        return Err(bad(
            "the last user content is empty",
            "put the question in the last user content",
        ));
    }
    let turns = super::http::turns_of(said);
    if let Some(stores) = stores.as_mut() {
        stores.sort();
        stores.dedup();
    }
    let sites = match exclude {
        None => None,
        Some(domains) => Some(
            SiteFilter::parse(&[], &domains, "googleSearch.excludeDomains")
                .map_err(|e| bad(e.message, EXCLUDE_HINT))?,
        ),
    };
    Ok(GenerateRequest {
        question,
        turns,
        search,
        instruction,
        sites,
        images,
        stores,
    })
}

/// Whether a `googleSearch` tool's `searchTypes` (or `search_types`) asks for images:
/// its `imageSearch` (or `image_search`) is an object.
fn image_search(config: &Value) -> Result<bool, ApiError> {
    let Some(types) = either_spelling(config, "searchTypes", "search_types") else {
        return Ok(false);
    };
    let hint =
        "send {\"googleSearch\": {\"searchTypes\": {\"webSearch\": {}, \"imageSearch\": {}}}}";
    if !types.is_object() {
        return Err(bad("googleSearch.searchTypes is not an object", hint));
    }
    match either_spelling(types, "imageSearch", "image_search") {
        None => Ok(false),
        Some(Value::Object(_)) => Ok(true),
        Some(_) => Err(bad(
            "googleSearch.searchTypes.imageSearch is not an object",
            hint,
        )),
    }
}

/// Gemini's image chunks (`groundingChunks[].image`, google-genai's
/// `GroundingChunkImage`) of `report`'s images, added after the web chunks of
/// `metadata` so that the supports' chunk indices stay as they are.
fn add_image_chunks(metadata: &mut Value, report: &Report) {
    let Some(images) = report.images.as_deref() else {
        return;
    };
    let chunks = images.iter().map(|image| {
        json!({"image": {
            "sourceUri": image.origin_url,
            "imageUri": image.image_url,
            "title": image.title,
            "domain": image.domain(),
        }})
    });
    match metadata
        .get_mut("groundingChunks")
        .and_then(Value::as_array_mut)
    {
        Some(list) => list.extend(chunks),
        None => metadata["groundingChunks"] = json!(chunks.collect::<Vec<_>>()),
    }
}

/// What to send instead of a bad `excludeDomains`.
const EXCLUDE_HINT: &str = "send excludeDomains as an array of domains, e.g. {\"googleSearch\": {\"excludeDomains\": [\"pinterest.com\"]}}";

/// The `excludeDomains` (or `exclude_domains`) of a `googleSearch` tool's `config`:
/// `None` when it has none.
fn exclude_domains(config: &Value) -> Result<Option<Vec<String>>, ApiError> {
    let Some(value) = either_spelling(config, "excludeDomains", "exclude_domains") else {
        return Ok(None);
    };
    let not_domains = || {
        bad(
            "googleSearch.excludeDomains is not an array of strings",
            EXCLUDE_HINT,
        )
    };
    let entries = value.as_array().ok_or_else(not_domains)?;
    entries
        .iter()
        .map(|e| e.as_str().map(str::to_string).ok_or_else(not_domains))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `request` within what the server serves: its `excludeDomains` added to the
/// server's own filter (a client may narrow what the server searches and reads, never
/// widen it; refused (400) when every site the server keeps to would be excluded),
/// and its file search stores each one of the operator's collections (a request can
/// never name another collection, let alone a folder).
fn within_server(
    mut request: GenerateRequest,
    server: &SiteFilter,
    served: &[String],
) -> Result<GenerateRequest, ApiError> {
    if let Some(asked) = &request.sites {
        let narrowed = server
            .narrowed_by(asked, "googleSearch.excludeDomains")
            .map_err(|e| bad(e.message, e.hint))?;
        request.sites = Some(narrowed);
    }
    if let Some(stores) = &request.stores
        && let Some(other) = stores.iter().find(|s| !served.contains(s))
    {
        let store = |name: &String| format!("{}{name}", crate::render::json::FILE_SEARCH_STORES);
        let hint = if served.is_empty() {
            "this server serves no collections: its operator starts it with --docs=NAME".to_string()
        } else {
            format!(
                "name one of {}",
                served.iter().map(store).collect::<Vec<_>>().join(", ")
            )
        };
        return Err(bad(
            format!(
                "the file search store {:?} is not served here",
                store(other)
            ),
            hint,
        ));
    }
    Ok(request)
}

/// The answer text a Gemini client holds (what a follow-up's `model` content sends
/// back): the answer without markers, which the supports' offsets index.
fn shown_answer(report: &Report) -> String {
    report.answer.answer.clone()
}

/// A `GenerateContentResponse`.
fn response(
    model: &str,
    text: &str,
    metadata: Option<Value>,
    finish: Option<&str>,
    usage: Option<Value>,
    id: &str,
) -> Value {
    let mut candidate = json!({
        "content": {"role": "model", "parts": [{"text": text}]},
        "index": 0,
    });
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    if let Some(metadata) = metadata {
        candidate["groundingMetadata"] = metadata;
    }
    let mut reply = json!({"candidates": [candidate], "modelVersion": model, "responseId": id});
    if let Some(usage) = usage {
        reply["usageMetadata"] = usage;
    }
    reply
}

fn usage_metadata(prompt: Option<u32>, completion: Option<u32>) -> Value {
    let (p, c) = (prompt.unwrap_or(0), completion.unwrap_or(0));
    json!({"promptTokenCount": p, "candidatesTokenCount": c, "totalTokenCount": p + c})
}

/// `POST /{v1,v1beta}/models/{model}:generateContent` (or
/// `:streamGenerateContent`).
pub(crate) async fn generate(
    State(app): State<Arc<App>>,
    Path(call): Path<String>,
    body: Body,
) -> Response {
    let Some((model, method)) = call.rsplit_once(':') else {
        return super::http::not_found_gemini(&call).into_response();
    };
    let streaming = match method {
        "generateContent" => false,
        "streamGenerateContent" => true,
        _ => return super::http::not_found_gemini(&call).into_response(),
    };
    let model = crate::text::shorten(&crate::text::sanitize_line(model), 100);
    let server_sites = &app.service.settings().search.sites;
    let served = &app.service.settings().docs.collections;
    let checked = |body: &Value| parse(body).and_then(|r| within_server(r, server_sites, served));
    let (request, admission) =
        match admitted(&app, Face::Gemini, body, checked, |r: &GenerateRequest| {
            &r.question
        })
        .await
        {
            Ok(admitted) => admitted,
            Err(e) => return e.into_response(),
        };
    let id = reply_id("");
    let reply = if request.search || request.stores.is_some() {
        let (sites, images) = (request.sites.clone(), request.images);
        let (stores, web) = (request.stores.clone(), request.search);
        let adjust = move |settings: &mut Settings| {
            if let Some(sites) = &sites {
                settings.search.sites = sites.clone();
            }
            if images {
                settings.search.images = true;
            }
            // A file search names the collections; without a web search beside it,
            // nothing is searched on the web (the operator's --no-web always holds).
            if let Some(stores) = &stores {
                settings.docs.collections = stores.clone();
                settings.docs.no_web |= !web;
            }
        };
        let answered = app
            .answer(
                &request.question,
                &request.turns,
                crate::service::unwatched(),
                &shown_answer,
                &adjust,
            )
            .await;
        match answered {
            Ok(answered) => {
                let report = &answered.report;
                // The one answered shape every face gives, of which Gemini's reply
                // carries the grounding metadata (with the image chunks when asked)
                // and (outside Gemini's fields: the SDK drops it, raw HTTP sees it) a
                // reused answer's mark.
                let json = crate::render::json::answered(&answered);
                let mut metadata = json.get("groundingMetadata").cloned();
                if let Some(metadata) = metadata.as_mut() {
                    add_image_chunks(metadata, report);
                }
                let reused = json.get("reused").map(|r| json!({"reused": r}));
                let finish = if report.model.done_reason.as_deref() == Some("length") {
                    "MAX_TOKENS"
                } else {
                    "STOP"
                };
                let usage =
                    usage_metadata(report.model.prompt_tokens, report.model.completion_tokens);
                (shown_answer(report), metadata, finish, usage, reused)
            }
            Err(failure) => return ApiError::from_run(Face::Gemini, failure).into_response(),
        }
    } else {
        match app
            .service
            .answer_directly(
                &request.question,
                &request.turns,
                request.instruction.as_deref(),
                &note,
            )
            .await
        {
            Ok(direct) => {
                let usage = usage_metadata(direct.prompt_tokens, direct.completion_tokens);
                (direct.text, None, "STOP", usage, None)
            }
            Err(failure) => return ApiError::from_run(Face::Gemini, failure).into_response(),
        }
    };
    drop(admission);
    let (text, metadata, finish, usage, ground) = reply;
    if !streaming {
        let mut whole = response(&model, &text, metadata, Some(finish), Some(usage), &id);
        if let Some(ground) = ground {
            whole["ground"] = ground;
        }
        return axum::Json(whole).into_response();
    }
    // The text first, then the metadata with the finish reason on the last event
    // (Gemini's own order); data lines only.
    let first = response(&model, &text, None, None, None, &id);
    let mut last = response(&model, "", metadata, Some(finish), Some(usage), &id);
    if let Some(parts) = last["candidates"][0]["content"]["parts"].as_array_mut() {
        parts.clear();
        parts.push(json!({"text": ""}));
    }
    if let Some(ground) = ground {
        last["ground"] = ground;
    }
    let events = [first, last]
        .into_iter()
        .map(|v| Ok::<_, Infallible>(Event::default().data(v.to_string())));
    Sse::new(futures_util::stream::iter(events)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_google_search_tool_in_either_spelling_asks_for_grounding() {
        for tool in ["googleSearch", "google_search", "googleSearchRetrieval"] {
            let body = json!({"contents": [{"role": "user", "parts": [{"text": "q"}]}], "tools": [{tool: {}}]});
            assert!(parse(&body).unwrap().search, "{tool}");
        }
        let plain = json!({"contents": [{"parts": [{"text": "q"}]}]});
        assert!(!parse(&plain).unwrap().search);
    }

    #[test]
    fn exclude_domains_of_the_search_tool_only_add_to_the_servers_exclusions() {
        let ask = |tool: Value| json!({"contents": [{"parts": [{"text": "q"}]}], "tools": [tool]});
        let request = parse(&ask(
            json!({"googleSearch": {"excludeDomains": ["Pinterest.com", "bücher.de"]}}),
        ))
        .unwrap();
        let asked = request.sites.clone().unwrap();
        assert_eq!(asked.exclude_sites, ["pinterest.com", "xn--bcher-kva.de"]);
        let server = SiteFilter::parse(
            &["example.org".into()],
            &["spam.example.org".into()],
            "--site",
        )
        .unwrap();
        let narrowed = within_server(request, &server, &[]).unwrap().sites.unwrap();
        assert_eq!(narrowed.sites, ["example.org"]);
        assert_eq!(
            narrowed.exclude_sites,
            ["spam.example.org", "pinterest.com", "xn--bcher-kva.de"]
        );
        // None given: the server's filter holds.
        assert!(
            parse(&ask(json!({"google_search": {}})))
                .unwrap()
                .sites
                .is_none()
        );
        let snake = parse(&ask(
            json!({"google_search": {"exclude_domains": ["a.com"]}}),
        ))
        .unwrap();
        assert_eq!(snake.sites.unwrap().exclude_sites, ["a.com"]);
        for bad in [
            json!({"googleSearch": {"excludeDomains": "a.com"}}),
            json!({"googleSearch": {"excludeDomains": ["co.uk"]}}),
        ] {
            let error = parse(&ask(bad.clone())).unwrap_err();
            assert_eq!(error.status, axum::http::StatusCode::BAD_REQUEST, "{bad}");
        }
        // Excluding every site the server keeps to: refused.
        let all = parse(&ask(
            json!({"googleSearch": {"excludeDomains": ["example.org"]}}),
        ))
        .unwrap();
        let error = within_server(all, &server, &[]).unwrap_err();
        assert!(
            error.failure.message.contains("is excluded"),
            "{}",
            error.failure.message
        );
    }

    #[test]
    fn several_contents_are_a_conversation() {
        let body = json!({"contents": [
            {"role": "user", "parts": [{"text": "q1"}]},
            {"role": "model", "parts": [{"text": "a1"}]},
            {"role": "user", "parts": [{"text": "q2"}]},
        ], "systemInstruction": {"parts": [{"text": "be brief"}]}});
        let request = parse(&body).unwrap();
        assert_eq!(request.question, "q2");
        assert_eq!(
            request.turns,
            vec![Turn {
                question: "q1".into(),
                answer: "a1".into()
            }]
        );
        assert_eq!(request.instruction.as_deref(), Some("be brief"));
    }

    #[test]
    fn function_declarations_and_other_parts_are_refused() {
        let body = json!({"contents": [{"parts": [{"text": "q"}]}], "tools": [{"functionDeclarations": []}]});
        assert!(
            parse(&body)
                .unwrap_err()
                .failure
                .message
                .contains("function declarations")
        );
        let body = json!({"contents": [{"parts": [{"inlineData": {}}]}]});
        assert!(parse(&body).is_err());
        let body = json!({"contents": [{"role": "model", "parts": [{"text": "a"}]}]});
        assert!(parse(&body).is_err());
    }

    #[test]
    fn a_file_search_tool_names_collections_the_server_serves() {
        let ask = |tool: Value| json!({"contents": [{"parts": [{"text": "q"}]}], "tools": [tool]});
        let served = vec!["notes".to_string(), "team-docs".to_string()];
        let request = parse(&ask(json!({"fileSearch": {
            "fileSearchStoreNames": ["fileSearchStores/team-docs", "notes", "notes"],
            "topK": 5
        }})))
        .unwrap();
        assert!(!request.search);
        assert_eq!(
            request.stores.as_deref(),
            Some(&["notes".to_string(), "team-docs".to_string()][..])
        );
        let request = within_server(request, &SiteFilter::default(), &served).unwrap();
        assert_eq!(request.stores.unwrap().len(), 2);

        // A store the operator does not serve, and a server serving none.
        let other = parse(&ask(
            json!({"file_search": {"file_search_store_names": ["fileSearchStores/private"]}}),
        ))
        .unwrap();
        let error = within_server(other, &SiteFilter::default(), &served).unwrap_err();
        assert!(
            error
                .failure
                .message
                .contains("\"fileSearchStores/private\" is not served here"),
            "{}",
            error.failure.message
        );
        assert!(
            error
                .failure
                .hint
                .as_deref()
                .unwrap()
                .contains("fileSearchStores/notes, fileSearchStores/team-docs"),
            "{:?}",
            error.failure.hint
        );
        let other = parse(&ask(
            json!({"fileSearch": {"fileSearchStoreNames": ["notes"]}}),
        ))
        .unwrap();
        let error = within_server(other, &SiteFilter::default(), &[]).unwrap_err();
        assert!(
            error
                .failure
                .hint
                .as_deref()
                .unwrap()
                .contains("--docs=NAME"),
            "{:?}",
            error.failure.hint
        );

        // What is refused before the server's list is looked at.
        for (tool, says) in [
            (json!({"fileSearch": {}}), "missing or empty"),
            (
                json!({"fileSearch": {"fileSearchStoreNames": []}}),
                "missing or empty",
            ),
            (
                json!({"fileSearch": {"fileSearchStoreNames": ["../etc"]}}),
                "not a file search store name",
            ),
            (
                json!({"fileSearch": {"fileSearchStoreNames": ["fileSearchStores/a/b"]}}),
                "not a file search store name",
            ),
            (
                json!({"fileSearch": {"fileSearchStoreNames": [3]}}),
                "not an array of strings",
            ),
            (
                json!({"fileSearch": {"fileSearchStoreNames": ["a"], "metadataFilter": "year=1934"}}),
                "metadataFilter is not supported",
            ),
            (
                json!({"fileSearch": {"fileSearchStoreNames": ["a"], "topK": 0}}),
                "topK",
            ),
            (json!({"fileSearch": "notes"}), "not an object"),
        ] {
            let error = parse(&ask(tool.clone())).unwrap_err();
            assert!(
                error.failure.message.contains(says),
                "{tool}: {}",
                error.failure.message
            );
        }
        let many: Vec<String> = (0..17).map(|i| format!("c{i}")).collect();
        let error = parse(&ask(json!({"fileSearch": {"fileSearchStoreNames": many}}))).unwrap_err();
        assert!(
            error.failure.message.contains("more than the 16"),
            "{}",
            error.failure.message
        );
    }
}
