//! The OpenAI face of `ground serve`: `GET /v1/models` and `POST
//! /v1/chat/completions` with model `ground`, answered by the grounded pipeline.
//!
//! The reply is an ordinary `chat.completion`, so every OpenAI client reads it:
//! `message.content` is the answer with `[n]` markers as the person output prints
//! them (unsupported statements stay visible, marked); `message.annotations` has one
//! `url_citation` per supported statement and supporting source (character offsets
//! into the content, OpenAI's rule), which Open WebUI shows as sources; `citations`
//! (the sources' URLs, numbered as the markers) and `search_results` are Perplexity's
//! fields, which the openai SDK keeps in `model_extra`; `ground` is the whole
//! `ground answer --json` object, so nothing `--json` has is lost.
//!
//! Streaming (`stream: true`) sends the statements as the model writes and ground
//! checks them, then a last chunk with `finish_reason` and the verified statements'
//! `delta.annotations` (the check runs after the text), the usage chunk when
//! `stream_options.include_usage` asks for it, and `data: [DONE]`.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::App;
use super::http::{ApiError, Face, MAX_MESSAGES, admitted, now_secs, reply_id};
use crate::grounding::Statement;
use crate::pipeline::Watch;
use crate::render::Style;
use crate::render::live::Shown;
use crate::render::person::{statement_part, statement_parts};
use crate::report::Report;
use crate::service::{Answered, Turn};
use crate::settings::{Settings, TimeRange};
use crate::sites::SiteFilter;

/// The one model this face serves.
pub const MODEL_ID: &str = "ground";

/// The style of the content: plain text, no colour.
const PLAIN: Style = Style::Text { colour: false };

/// `GET /v1/models`: the one model.
pub fn models() -> axum::Json<Value> {
    axum::Json(json!({
        "object": "list",
        "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "ground"}],
    }))
}

/// A chat completion request, checked.
#[derive(Debug)]
struct ChatRequest {
    question: String,
    turns: Vec<Turn>,
    stream: bool,
    include_usage: bool,
    max_tokens: Option<u32>,
    recency: Option<TimeRange>,
    /// Perplexity's `search_domain_filter` as sent, then (by [`within_server`]) the
    /// server's own filter narrowed by it; `None` when absent (the server's own
    /// filter holds).
    sites: Option<SiteFilter>,
    /// Perplexity's `return_images`: an images search beside the answer, its images
    /// in a top-level `images` (Perplexity's shape).
    images: bool,
    /// Perplexity's `return_related_questions`: the search service's suggestions as a
    /// top-level `related_questions`.
    related: bool,
}

fn bad(param: &'static str, message: impl Into<String>, hint: impl Into<String>) -> ApiError {
    ApiError::bad_request(Face::OpenAi, Some(param), message, hint)
}

/// A message's text: a string, or the text parts of an array of parts.
fn message_text(content: &Value) -> Result<String, ApiError> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(text) => Ok(text.clone()),
        Value::Array(parts) => {
            let mut text = Vec::new();
            for part in parts {
                match (
                    part.get("type").and_then(Value::as_str),
                    part.get("text").and_then(Value::as_str),
                ) {
                    (Some("text"), Some(t)) => text.push(t.to_string()),
                    (Some(other), _) => {
                        return Err(bad(
                            "messages",
                            format!(
                                "content parts of type {:?} are not supported",
                                crate::text::shorten(other, 40)
                            ),
                            "send the question as text",
                        ));
                    }
                    _ => {
                        return Err(bad(
                            "messages",
                            "a content part has no type",
                            "send parts as {\"type\": \"text\", \"text\": ...}",
                        ));
                    }
                }
            }
            Ok(text.join("\n"))
        }
        _ => Err(bad(
            "messages",
            "a message's content is not a string or an array of parts",
            "send content as a string",
        )),
    }
}

/// Checks the request and turns its messages into the question and its conversation.
fn parse(body: &Value) -> Result<ChatRequest, ApiError> {
    let Some(body) = body.as_object() else {
        return Err(bad(
            "messages",
            "the request body is not a JSON object",
            "send {\"model\": \"ground\", \"messages\": [...]}",
        ));
    };
    match body.get("model") {
        Some(Value::String(model)) if model == MODEL_ID => {}
        Some(Value::String(model)) => {
            return Err(bad(
                "model",
                format!(
                    "unknown model {:?}: this server answers only \"{MODEL_ID}\"",
                    crate::text::shorten(model, 60)
                ),
                "set model to \"ground\" (GET /v1/models lists it)",
            ));
        }
        Some(_) => {
            return Err(bad(
                "model",
                "model is not a string",
                "set model to \"ground\"",
            ));
        }
        None => return Err(bad("model", "model is missing", "set model to \"ground\"")),
    }
    for field in ["tools", "functions", "tool_choice", "function_call"] {
        if body
            .get(field)
            .is_some_and(|v| !v.is_null() && v != &json!([]) && v != "none")
        {
            return Err(bad(
                match field {
                    "tools" => "tools",
                    "functions" => "functions",
                    "tool_choice" => "tool_choice",
                    _ => "function_call",
                },
                format!(
                    "{field}: function calling is not supported: ground searches the web and answers itself"
                ),
                "leave tools out; ask the question as a user message",
            ));
        }
    }
    let flag = |name: &'static str| -> Result<bool, ApiError> {
        match body.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad(
                name,
                format!("{name} is not true or false"),
                format!("send {name} as a boolean"),
            )),
        }
    };
    let stream = flag("stream")?;
    let (images, related) = (flag("return_images")?, flag("return_related_questions")?);
    let include_usage = match body.get("stream_options") {
        None | Some(Value::Null) => false,
        Some(Value::Object(options)) => options
            .get("include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        Some(_) => {
            return Err(bad(
                "stream_options",
                "stream_options is not an object",
                "send {\"include_usage\": true}",
            ));
        }
    };
    let mut max_tokens = None;
    for name in ["max_completion_tokens", "max_tokens"] {
        match body.get(name) {
            None | Some(Value::Null) => {}
            Some(value) => match value.as_u64() {
                Some(n) if n > 0 => {
                    max_tokens = max_tokens.or(Some(u32::try_from(n).unwrap_or(u32::MAX)));
                }
                _ => {
                    return Err(bad(
                        if name == "max_tokens" {
                            "max_tokens"
                        } else {
                            "max_completion_tokens"
                        },
                        format!("{name} is not a positive whole number"),
                        format!("send {name} as a number such as 512, or leave it out"),
                    ));
                }
            },
        }
    }
    let recency = match body.get("search_recency_filter") {
        None | Some(Value::Null) => None,
        Some(Value::String(r)) => Some(match r.as_str() {
            "hour" | "day" => TimeRange::Day,
            "week" => TimeRange::Week,
            "month" => TimeRange::Month,
            "year" => TimeRange::Year,
            other => {
                return Err(bad(
                    "search_recency_filter",
                    format!(
                        "search_recency_filter {:?} is not one of hour, day, week, month, year",
                        crate::text::shorten(other, 40)
                    ),
                    "use day, week, month or year",
                ));
            }
        }),
        Some(_) => {
            return Err(bad(
                "search_recency_filter",
                "search_recency_filter is not a string",
                "use day, week, month or year",
            ));
        }
    };
    let sites = domain_filter(body.get("search_domain_filter"))?;
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return Err(bad(
            "messages",
            "messages is missing or not an array",
            "send messages: [{\"role\": \"user\", \"content\": \"your question\"}]",
        ));
    };
    if messages.is_empty() {
        return Err(bad(
            "messages",
            "messages is empty",
            "send at least one user message: the question",
        ));
    }
    if messages.len() > MAX_MESSAGES {
        return Err(bad(
            "messages",
            format!(
                "{} messages is more than the {MAX_MESSAGES} accepted",
                messages.len()
            ),
            "send the last turns of the conversation only",
        ));
    }
    // The conversation: user and assistant messages in order; system and developer
    // messages are the application's and are not part of the question.
    let mut said: Vec<(bool, String)> = Vec::new();
    for message in messages {
        let role = message.get("role").and_then(Value::as_str);
        let text = message_text(message.get("content").unwrap_or(&Value::Null))?;
        match role {
            Some("user") => said.push((true, text)),
            Some("assistant") => said.push((false, text)),
            Some("system" | "developer") => {}
            Some(other) => {
                return Err(bad(
                    "messages",
                    format!(
                        "messages of role {:?} are not supported",
                        crate::text::shorten(other, 40)
                    ),
                    "send user and assistant messages only (function calling is not supported)",
                ));
            }
            None => {
                return Err(bad(
                    "messages",
                    "a message has no role",
                    "give each message a role: user or assistant",
                ));
            }
        }
    }
    let Some((true, question)) = said.pop() else {
        return Err(bad(
            "messages",
            "there is no user message at the end: nothing to answer",
            "end messages with the user's question",
        ));
    };
    if question.trim().is_empty() {
        return Err(bad(
            "messages",
            "the last user message is empty",
            "put the question in the last user message",
        ));
    }
    let turns = super::http::turns_of(said);
    Ok(ChatRequest {
        question,
        turns,
        stream,
        include_usage,
        max_tokens,
        recency,
        sites,
        images,
        related,
    })
}

/// Perplexity's `search_domain_filter`: an array of domains to keep to, a leading
/// "-" excluding one instead (`["docs.python.org", "-pinterest.com"]`).
fn domain_filter(value: Option<&Value>) -> Result<Option<SiteFilter>, ApiError> {
    let hint = "send an array of domains, e.g. [\"docs.python.org\", \"-pinterest.com\"]";
    let entries = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return Err(bad(
                "search_domain_filter",
                "search_domain_filter is not an array",
                hint,
            ));
        }
    };
    let (mut sites, mut exclude) = (Vec::new(), Vec::new());
    for entry in entries {
        let Some(text) = entry.as_str() else {
            return Err(bad(
                "search_domain_filter",
                "search_domain_filter holds something that is not a string",
                hint,
            ));
        };
        match text.trim().strip_prefix('-') {
            Some(excluded) => exclude.push(excluded.to_string()),
            None => sites.push(text.to_string()),
        }
    }
    SiteFilter::parse(&sites, &exclude, "search_domain_filter")
        .map(Some)
        .map_err(|e| bad("search_domain_filter", e.to_string(), hint))
}

/// `request` with its `search_domain_filter` kept within the server's own filter
/// (`--site`, `--exclude-site`): a client may narrow what the server searches and
/// reads, never widen it. Refused (400) when no site of the request's is within the
/// server's, or every one left is excluded.
fn within_server(mut request: ChatRequest, server: &SiteFilter) -> Result<ChatRequest, ApiError> {
    if let Some(asked) = &request.sites {
        let narrowed = server
            .narrowed_by(asked, "search_domain_filter")
            .map_err(|e| bad("search_domain_filter", e.message, e.hint))?;
        request.sites = Some(narrowed);
    }
    Ok(request)
}

/// One url_citation: a statement's span of the content (character offsets) and a
/// source supporting it.
#[derive(Debug, Clone, PartialEq)]
pub struct Citation {
    /// First character of the statement in the content.
    pub start: usize,
    /// One past its last character.
    pub end: usize,
    /// The supporting source's URL.
    pub url: String,
    /// Its title.
    pub title: String,
}

/// The content of `report`'s answer (as the person output's first line, or the
/// answer's own text when it is not statements).
pub fn content_of(report: &Report) -> String {
    match statement_parts(report, PLAIN) {
        Some(parts) => parts.join(" "),
        None => crate::text::sanitize_line(report.answer.answer.trim()),
    }
}

/// The url_citations of `report`'s supported statements, located in `content` (the
/// first place after the statement before it where the statement's part starts).
pub fn citations_in(report: &Report, content: &str) -> Vec<Citation> {
    let mut out = Vec::new();
    let mut from = 0;
    for statement in &report.answer.statements {
        let text = crate::text::sanitize_line(&statement.text);
        let part = statement_part(statement, PLAIN);
        let Some(at) = content[from..].find(&part).map(|i| i + from) else {
            continue;
        };
        from = at + part.len();
        if !statement.supported() || text.is_empty() {
            continue;
        }
        let start = content[..at].chars().count();
        let end = start + text.chars().count();
        for (number, _) in statement.supporting_sources() {
            if let Some(source) = report.sources.get(number - 1) {
                out.push(Citation {
                    start,
                    end,
                    url: source.url.clone(),
                    title: source.title.clone(),
                });
            }
        }
    }
    out
}

fn annotations(citations: &[Citation]) -> Vec<Value> {
    citations
        .iter()
        .map(|c| {
            json!({"type": "url_citation", "url_citation": {
                "url": c.url, "title": c.title, "start_index": c.start, "end_index": c.end,
            }})
        })
        .collect()
}

/// OpenAI's `usage` from the report's token counts (zero where the server did not
/// say), with `prompt_tokens_details.cached_tokens` where the model said it.
fn usage(report: &Report) -> Value {
    let prompt = report.model.prompt_tokens.unwrap_or(0);
    let completion = report.model.completion_tokens.unwrap_or(0);
    let mut usage = json!({
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    });
    // The embedded model says how much of the prompt it held from an earlier call.
    if let Some(cached) = report.model.cached_prompt_tokens {
        usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
    }
    usage
}

fn finish_reason(report: &Report) -> &'static str {
    match report.model.done_reason.as_deref() {
        Some("length") => "length",
        _ => "stop",
    }
}

/// The settings a request changes: its answer length, search recency and sites.
fn adjust(request: &ChatRequest) -> impl Fn(&mut Settings) + Sync + use<> {
    let (max_tokens, recency) = (request.max_tokens, request.recency);
    let sites = request.sites.clone();
    let images = request.images;
    move |settings: &mut Settings| {
        if images {
            settings.search.images = true;
        }
        if let Some(n) = max_tokens {
            // Within the configured cap: a client may ask for less, never more.
            settings.llm.max_answer_tokens = settings.llm.max_answer_tokens.min(n.max(64));
        }
        if let Some(range) = recency {
            settings.search.time_range = Some(range);
        }
        if let Some(sites) = &sites {
            settings.search.sites = sites.clone();
        }
    }
}

/// `POST /v1/chat/completions`.
pub(crate) async fn chat_completions(State(app): State<Arc<App>>, body: Body) -> Response {
    let server_sites = &app.service.settings().search.sites;
    let checked = |body: &Value| parse(body).and_then(|r| within_server(r, server_sites));
    let (request, admission) =
        match admitted(&app, Face::OpenAi, body, checked, |r: &ChatRequest| {
            &r.question
        })
        .await
        {
            Ok(admitted) => admitted,
            Err(e) => return e.into_response(),
        };
    if request.stream {
        return stream(app, request, admission).into_response();
    }
    let adjust = adjust(&request);
    let answered = app
        .answer(
            &request.question,
            &request.turns,
            crate::service::unwatched(),
            &content_of,
            &adjust,
        )
        .await;
    drop(admission);
    match answered {
        Ok(answered) => axum::Json(completion(&answered, &request)).into_response(),
        Err(failure) => ApiError::from_run(Face::OpenAi, failure).into_response(),
    }
}

/// The `chat.completion` object for an answer to `request`.
fn completion(answered: &Answered, request: &ChatRequest) -> Value {
    let report = &answered.report;
    let content = content_of(report);
    let cited = citations_in(report, &content);
    let (citations, search_results) = super::perplexity::fields(report);
    let mut reply = json!({
        "id": reply_id("chatcmpl-"),
        "object": "chat.completion",
        "created": now_secs(),
        "model": MODEL_ID,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content, "refusal": null, "annotations": annotations(&cited)},
            "logprobs": null,
            "finish_reason": finish_reason(report),
        }],
        "usage": usage(report),
        "citations": citations,
        "search_results": search_results,
        "ground": crate::render::json::answered(answered),
    });
    super::perplexity::extras(request.images, request.related, report, &mut reply);
    reply
}

/// Passes the statements of the first answer attempt, as ground checks them, to the
/// stream as content pieces.
struct Streamer {
    shown: Mutex<Shown>,
    pieces: mpsc::UnboundedSender<String>,
}

impl Watch for Streamer {
    fn statement(&self, _attempt: u32, index: usize, statement: &Statement) {
        let Ok(mut shown) = self.shown.lock() else {
            return;
        };
        if let Some(next) = shown.next(index, statement, PLAIN) {
            let _ = self.pieces.send(next.text.clone());
            shown.printed(next);
        }
    }
}

/// One `chat.completion.chunk`.
fn chunk(id: &str, created: u64, delta: Value, finish: Option<&str>, include_usage: bool) -> Value {
    let mut chunk = json!({
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
    });
    if include_usage {
        chunk["usage"] = Value::Null;
    }
    chunk
}

fn event(value: &Value) -> Event {
    Event::default().data(value.to_string())
}

/// The streamed reply: the run goes on in a task that ends (and aborts the run)
/// when the client leaves and the stream is dropped.
fn stream(
    app: Arc<App>,
    request: ChatRequest,
    admission: crate::service::Admission,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let (events_out, events_in) = mpsc::channel::<Event>(64);
    tokio::spawn(async move {
        let _admission = admission;
        let (id, created, usage_chunk) = (reply_id("chatcmpl-"), now_secs(), request.include_usage);
        let (pieces_out, mut pieces) = mpsc::unbounded_channel::<String>();
        let streamer = Arc::new(Streamer {
            shown: Mutex::new(Shown::new()),
            pieces: pieces_out,
        });
        let shown = Arc::clone(&streamer);
        let first = chunk(
            &id,
            created,
            json!({"role": "assistant", "content": ""}),
            None,
            usage_chunk,
        );
        if events_out.send(event(&first)).await.is_err() {
            return;
        }
        let adjust = adjust(&request);
        let run = app.answer(
            &request.question,
            &request.turns,
            streamer,
            &content_of,
            &adjust,
        );
        tokio::pin!(run);
        let mut streamed = String::new();
        let answered = loop {
            tokio::select! {
                answered = &mut run => break answered,
                Some(piece) = pieces.recv() => {
                    streamed.push_str(&piece);
                    let delta = chunk(&id, created, json!({"content": piece}), None, usage_chunk);
                    if events_out.send(event(&delta)).await.is_err() {
                        return; // the client left: dropping `run` aborts it
                    }
                }
                _ = events_out.closed() => return,
            }
        };
        while let Ok(piece) = pieces.try_recv() {
            streamed.push_str(&piece);
            let delta = chunk(&id, created, json!({"content": piece}), None, usage_chunk);
            let _ = events_out.send(event(&delta)).await;
        }
        let answered = match answered {
            Ok(answered) => answered,
            Err(failure) => {
                let error = ApiError::from_run(Face::OpenAi, failure);
                let _ = events_out.send(event(&error.body())).await;
                let _ = events_out.send(Event::default().data("[DONE]")).await;
                return;
            }
        };
        let report = &answered.report;
        // What the stream still needs for the final answer (all of it when no
        // statement streamed; a note and the corrected statements when a retry
        // changed them).
        let content = content_of(report);
        let rest = shown
            .shown
            .lock()
            .map(|s| crate::render::live::rest_of_line(&s, report, PLAIN, &content))
            .unwrap_or_default();
        if !rest.is_empty() {
            streamed.push_str(&rest);
            let delta = chunk(&id, created, json!({"content": rest}), None, usage_chunk);
            let _ = events_out.send(event(&delta)).await;
        }
        let cited = citations_in(report, &streamed);
        let (citations, search_results) = super::perplexity::fields(report);
        let mut last = chunk(
            &id,
            created,
            json!({"annotations": annotations(&cited)}),
            Some(finish_reason(report)),
            usage_chunk,
        );
        last["citations"] = citations;
        last["search_results"] = search_results;
        last["ground"] = crate::render::json::answered(&answered);
        super::perplexity::extras(request.images, request.related, report, &mut last);
        let _ = events_out.send(event(&last)).await;
        if usage_chunk {
            let mut usage_only = json!({
                "id": id, "object": "chat.completion.chunk", "created": created, "model": MODEL_ID,
                "choices": [],
            });
            usage_only["usage"] = usage(report);
            let _ = events_out.send(event(&usage_only)).await;
        }
        let _ = events_out.send(Event::default().data("[DONE]")).await;
    });
    // The events until the run's task ends and drops its sender; no keep-alive
    // comments.
    Sse::new(futures_util::stream::unfold(
        events_in,
        |mut events| async move { events.recv().await.map(|event| (Ok(event), events)) },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(body: Value) -> Result<ChatRequest, ApiError> {
        parse(&body)
    }

    #[test]
    fn messages_become_the_question_and_its_conversation() {
        let request = parsed(json!({"model": "ground", "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "a1 [1]"},
            {"role": "user", "content": [{"type": "text", "text": "q2"}]},
        ]}))
        .unwrap();
        assert_eq!(request.question, "q2");
        assert_eq!(
            request.turns,
            vec![Turn {
                question: "q1".into(),
                answer: "a1 [1]".into()
            }]
        );
        assert!(!request.stream);
    }

    #[test]
    fn bad_requests_name_their_field() {
        for (body, param) in [
            (
                json!({"messages": [{"role": "user", "content": "q"}]}),
                "model",
            ),
            (
                json!({"model": "gpt-4o", "messages": [{"role": "user", "content": "q"}]}),
                "model",
            ),
            (json!({"model": "ground", "messages": []}), "messages"),
            (
                json!({"model": "ground", "messages": [{"role": "assistant", "content": "a"}]}),
                "messages",
            ),
            (json!({"model": "ground", "messages": "q"}), "messages"),
            (
                json!({"model": "ground", "stream": "yes", "messages": [{"role": "user", "content": "q"}]}),
                "stream",
            ),
            (
                json!({"model": "ground", "tools": [{"type": "function"}], "messages": [{"role": "user", "content": "q"}]}),
                "tools",
            ),
            (
                json!({"model": "ground", "max_tokens": -5, "messages": [{"role": "user", "content": "q"}]}),
                "max_tokens",
            ),
        ] {
            let error = parsed(body.clone()).unwrap_err();
            assert_eq!(error.param, Some(param), "{body}");
            assert_eq!(error.status, axum::http::StatusCode::BAD_REQUEST);
        }
    }
}
