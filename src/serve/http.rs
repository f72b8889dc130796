//! What the two faces of `ground serve` share: the guard in front of every route
//! (authentication, CORS, the access log), request bodies read with a bound, reply
//! ids, and [`ApiError`], one failure written in either API's error shape.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{App, MAX_BODY_BYTES, RETRY_AFTER};
use crate::error::exit;
use crate::service::Failure;

/// Most messages (OpenAI) or contents (Gemini) a request may carry: 40 turns of
/// question and answer, plus system messages, with room.
pub const MAX_MESSAGES: usize = 256;

/// The earlier turns of a conversation from its messages in order (`true` for the
/// user's, `false` for the assistant's or model's; the question itself already
/// taken off the end): each user message with the answer after it, a user message
/// with none paired with an empty answer, an answer with no question dropped.
pub fn turns_of(said: Vec<(bool, String)>) -> Vec<crate::service::Turn> {
    use crate::service::Turn;
    let mut turns = Vec::new();
    let mut pending: Option<String> = None;
    for (user, text) in said {
        if user {
            if let Some(question) = pending.replace(text) {
                turns.push(Turn {
                    question,
                    answer: String::new(),
                });
            }
        } else if let Some(question) = pending.take() {
            turns.push(Turn {
                question,
                answer: text,
            });
        }
    }
    if let Some(question) = pending {
        turns.push(Turn {
            question,
            answer: String::new(),
        });
    }
    turns
}

/// Which API a request speaks, for the shape of its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// OpenAI's Chat Completions (`/v1/chat/completions`, `/v1/models`).
    OpenAi,
    /// Gemini's `generateContent` (`/v1beta/...`, `/v1/models/...:...`).
    Gemini,
}

impl Face {
    /// The face a request to `path` (with `headers` and `query`) speaks: Gemini's
    /// paths, or any request carrying Gemini's key header or `?key=`.
    pub fn of(path: &str, headers: &HeaderMap, query: Option<&str>) -> Face {
        let gemini_key = headers.contains_key("x-goog-api-key")
            || query.is_some_and(|q| q.split('&').any(|p| p.starts_with("key=")));
        if path.starts_with("/v1beta/")
            || path == "/v1beta"
            || path.starts_with("/v1/models/")
            || gemini_key
        {
            Face::Gemini
        } else {
            Face::OpenAi
        }
    }
}

/// A failed request, written in its face's error shape with the right status.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// Which API's shape to write.
    pub face: Face,
    /// What failed, and what to do.
    pub failure: Failure,
    /// The request field at fault, when one is (OpenAI's `param`).
    pub param: Option<&'static str>,
    /// The openai SDK retries 408/409/429/5xx twice unless told not to: a failure
    /// after a search was made says `x-should-retry: false`, so one question never
    /// costs three runs of searches.
    pub no_retry: bool,
}

impl ApiError {
    /// A bad request (400) of `face`, about `param`.
    pub fn bad_request(
        face: Face,
        param: Option<&'static str>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            face,
            failure: Failure::usage(message, hint),
            param,
            no_retry: false,
        }
    }

    /// A failed run: its status from the failure's class (usage 400, search and
    /// sources 502, model 503, deadline 504, busy or rate-limited 429, else 500).
    pub fn from_run(face: Face, failure: Failure) -> Self {
        let status = if failure.deadline {
            StatusCode::GATEWAY_TIMEOUT
        } else {
            match failure.exit_code {
                exit::USAGE => StatusCode::BAD_REQUEST,
                exit::SEARCH | exit::NO_SOURCES => StatusCode::BAD_GATEWAY,
                exit::MODEL => StatusCode::SERVICE_UNAVAILABLE,
                exit::RATE_LIMITED => StatusCode::TOO_MANY_REQUESTS,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            }
        };
        ApiError {
            status,
            face,
            failure,
            param: None,
            no_retry: status != StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// Every place for a run is taken: 429 with `Retry-After`, retry welcome.
    pub fn busy(face: Face) -> Self {
        ApiError {
            status: StatusCode::TOO_MANY_REQUESTS,
            face,
            failure: crate::service::busy(RETRY_AFTER),
            param: None,
            no_retry: false,
        }
    }

    /// The error object alone (for a stream's error event).
    pub fn body(&self) -> Value {
        let message = match &self.failure.hint {
            Some(hint) => format!("{} (hint: {hint})", self.failure.message),
            None => self.failure.message.clone(),
        };
        match self.face {
            Face::OpenAi => json!({"error": {
                "message": message,
                "type": if self.status.is_client_error() { "invalid_request_error" } else { "server_error" },
                "param": self.param,
                "code": self.failure.kind,
                "ground": self.failure.json(),
            }}),
            Face::Gemini => json!({"error": {
                "code": self.status.as_u16(),
                "message": message,
                "status": gemini_status(self.status),
            }}),
        }
    }
}

/// Gemini's (Google's) status name for an HTTP status.
fn gemini_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 | 413 | 415 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 | 502 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        let headers = response.headers_mut();
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            headers.insert(
                header::RETRY_AFTER,
                HeaderValue::from(RETRY_AFTER.as_secs()),
            );
        }
        if self.no_retry {
            headers.insert("x-should-retry", HeaderValue::from_static("false"));
        }
        response
    }
}

/// Reads a request body of at most [`crate::serve::MAX_BODY_BYTES`] as JSON.
pub async fn read_json(face: Face, body: Body) -> Result<Value, ApiError> {
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            face,
            failure: Failure::usage(
                format!("the request body is over {} KiB", MAX_BODY_BYTES / 1024),
                "send a shorter conversation: ground reads the last 40 turns of it anyway",
            ),
            param: None,
            no_retry: false,
        })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::bad_request(
            face,
            None,
            format!("the request body is not JSON ({e})"),
            "send a JSON object",
        )
    })
}

/// A field of a Gemini request object in either spelling the SDKs send, camelCase
/// (the REST API's) or snake_case (google-genai's own): `None` when absent or null.
pub fn either_spelling<'a>(object: &'a Value, camel: &str, snake: &str) -> Option<&'a Value> {
    object
        .get(camel)
        .or_else(|| object.get(snake))
        .filter(|v| !v.is_null())
}

/// A fresh id for a reply: `prefix`, the time and a counter.
pub fn reply_id(prefix: &str) -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!(
        "{prefix}{:x}{:04x}",
        nanos,
        COUNT.fetch_add(1, Ordering::Relaxed) & 0xffff
    )
}

/// Seconds since the epoch, for `created`.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Whether two keys are equal, in time that does not depend on where they differ
/// (both are hashed first, so their lengths leak nothing either).
fn same_key(given: &str, expected: &str) -> bool {
    let (a, b) = (
        Sha256::digest(given.as_bytes()),
        Sha256::digest(expected.as_bytes()),
    );
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// The key a request carries: `Authorization: Bearer`, `x-goog-api-key` or `?key=`.
/// The scheme's name is case-insensitive (RFC 9110, 11.1: `BEARER` and `bearer` are
/// `Bearer`) and may be followed by more than one space.
fn key_of(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim_start().split_once([' ', '\t']))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, k)| k.trim().to_string());
    let goog = headers
        .get("x-goog-api-key")
        .and_then(|v| v.to_str().ok())
        .map(|k| k.trim().to_string());
    let query_key = query.and_then(|q| {
        url::form_urlencoded::parse(q.as_bytes())
            .find(|(name, _)| name == "key")
            .map(|(_, value)| value.into_owned())
    });
    bearer.or(goog).or(query_key)
}

/// In front of every route: the browser rules of a keyless server, the key check,
/// CORS (only for the configured origin), and the access-log line.
pub async fn guard(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    // Written when the request ends, however it ends (a client that leaves is 499).
    let mut log = AccessLog::start(&method, &path);
    let query = request.uri().query().map(str::to_string);
    let face = Face::of(&path, request.headers(), query.as_deref());
    let origin = request.headers().get(header::ORIGIN).cloned();
    let cors_ok = match (&app.cors, &origin) {
        (Some(allowed), Some(origin)) => origin.as_bytes() == allowed.as_bytes(),
        _ => false,
    };
    let refused = if app.api_key.is_none() {
        browser_refusal(&request, face, app.port, app.cors.as_deref())
    } else {
        None
    };
    let mut response = if let Some(refusal) = refused {
        refusal.into_response()
    } else if method == Method::OPTIONS && cors_ok {
        StatusCode::NO_CONTENT.into_response()
    } else if let Some(expected) = &app.api_key
        && path != "/health"
        && !key_of(request.headers(), query.as_deref()).is_some_and(|k| same_key(&k, expected))
    {
        let failure = Failure {
            kind: "unauthorized",
            message: "missing or wrong API key".into(),
            hint: Some("send the server's key as `Authorization: Bearer KEY` (OpenAI SDKs: api_key=KEY; Gemini SDKs: x-goog-api-key)".into()),
            exit_code: exit::USAGE,
            deadline: false,
        };
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            face,
            failure,
            param: None,
            no_retry: false,
        }
        .into_response()
    } else {
        next.run(request).await
    };
    if cors_ok && let Some(origin) = origin {
        let headers = response.headers_mut();
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_static("authorization, content-type, x-goog-api-key"),
        );
        headers.insert(
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, OPTIONS"),
        );
        headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    }
    log.status = Some(response.status().as_u16());
    response
}

/// One request's access-log line on stderr: method, path (never the query, which may
/// hold a key), status and milliseconds. Written when it is dropped, so a request
/// whose client left before the reply (its future dropped mid-run) still leaves a
/// line, with nginx's 499 ("client closed request") as its status.
struct AccessLog {
    method: Method,
    path: String,
    started: Instant,
    /// The reply's status, once there is one.
    status: Option<u16>,
}

/// The status logged for a request whose client left before the reply.
pub const CLIENT_LEFT: u16 = 499;

impl AccessLog {
    fn start(method: &Method, path: &str) -> Self {
        AccessLog {
            method: method.clone(),
            path: path.to_string(),
            started: Instant::now(),
            status: None,
        }
    }
}

impl Drop for AccessLog {
    fn drop(&mut self) {
        crate::error::log_line(&format!(
            "ground serve: {} {} {} {} ms",
            self.method,
            crate::text::sanitize_line(&crate::text::shorten(&self.path, 200)),
            self.status.unwrap_or(CLIENT_LEFT),
            self.started.elapsed().as_millis()
        ));
    }
}

/// What a keyless server (loopback only: any other address needs a key) refuses
/// because a web page in the user's browser could have sent it:
///
/// - a `Host` other than `localhost`, `127.0.0.1` or `[::1]` (with the server's
///   `port` when it names one): a page that rebinds its own name to 127.0.0.1 (DNS
///   rebinding, as in Ollama's CVE-2024-28224) sends its own name, and would
///   otherwise read replies;
/// - an `Origin` other than `cors`: a page's request, allowed only for the origin the
///   operator named with `--cors`;
/// - a POST whose body is not `application/json`: a page's form or `text/plain`
///   POST needs no CORS preflight, and would run searches and the model unasked.
fn browser_refusal(
    request: &Request,
    face: Face,
    port: u16,
    cors: Option<&str>,
) -> Option<ApiError> {
    let refuse = |status, kind, message: String, hint: String| ApiError {
        status,
        face,
        failure: Failure {
            kind,
            message,
            hint: Some(hint),
            exit_code: exit::USAGE,
            deadline: false,
        },
        param: None,
        no_retry: true,
    };
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    if !host.is_some_and(|h| local_host(h, port)) {
        let shown = host.map_or_else(
            || "none".to_string(),
            |h| crate::text::sanitize_line(&crate::text::shorten(h, 100)),
        );
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            format!(
                "the request's Host ({shown}) is not this server's name: without an API key only localhost, 127.0.0.1 and [::1] on port {port} are answered"
            ),
            format!(
                "address the server as http://127.0.0.1:{port}, or set an API key ([serve] api_key, --api-key) to serve it under other names"
            ),
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && cors.is_none_or(|allowed| origin.as_bytes() != allowed.as_bytes())
    {
        let shown = crate::text::sanitize_line(&crate::text::shorten(
            &String::from_utf8_lossy(origin.as_bytes()),
            100,
        ));
        return Some(refuse(
            StatusCode::FORBIDDEN,
            "forbidden_origin",
            format!("requests from web pages are refused (Origin: {shown})"),
            "to let one page call the server, name its origin with --cors ORIGIN ([serve] cors), or set an API key".into(),
        ));
    }
    if request.method() == Method::POST && !json_body(headers) {
        return Some(refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "the request body is not declared as JSON".into(),
            "send the header `Content-Type: application/json` (curl: -H 'Content-Type: application/json')".into(),
        ));
    }
    None
}

/// Whether a `Host` header names this machine's loopback on `port`: `localhost`,
/// `127.0.0.1` or `[::1]`, and the port, when it gives one, is `port`. (What a
/// rebinding page cannot change is the name: a browser sends the page's own.)
fn local_host(host: &str, port: u16) -> bool {
    let (name, port_ok) = match host.rsplit_once(':') {
        Some((name, p)) if !p.contains(']') => (name, p.parse::<u16>() == Ok(port)),
        _ => (host, true),
    };
    let loopback = name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "[::1]";
    loopback && port_ok
}

/// Whether the request declares a JSON body (`application/json`, parameters aside).
fn json_body(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// A request of `face` read, checked by `parse`, logged and given a place to run:
/// what both faces do before their own work (each step's failure in the face's
/// shape: 413, 400, 429 with `Retry-After`).
pub async fn admitted<R>(
    app: &App,
    face: Face,
    body: Body,
    parse: impl FnOnce(&Value) -> Result<R, ApiError>,
    question: impl FnOnce(&R) -> &str,
) -> Result<(R, crate::service::Admission), ApiError> {
    let request = parse(&read_json(face, body).await?)?;
    log_question(app, question(&request));
    let admission = app.service.admit().await.ok_or(ApiError::busy(face))?;
    Ok((request, admission))
}

/// Says on stderr which model the first answer chose, and why.
pub fn note(why: &str) {
    crate::error::log_line(&format!(
        "ground serve: {}",
        crate::text::sanitize_line(why)
    ));
}

/// Logs a request's question when `--verbose` asked for it.
pub fn log_question(app: &App, question: &str) {
    if app.verbose {
        crate::error::log_line(&format!(
            "ground serve: question: {}",
            crate::text::sanitize_line(&crate::text::shorten(question, 300))
        ));
    }
}

/// `GET /health`: the server is up (no model needed, no key needed).
pub async fn health() -> axum::Json<Value> {
    axum::Json(json!({"status": "ok"}))
}

/// Any other path: 404 in the shape of the API its path looks like.
pub async fn not_found(request: Request) -> ApiError {
    let path = request.uri().path().to_string();
    let face = Face::of(&path, request.headers(), request.uri().query());
    ApiError {
        status: StatusCode::NOT_FOUND,
        face,
        failure: Failure {
            kind: "not_found",
            message: format!("no such endpoint: {} {}", request.method(), crate::text::sanitize_line(&crate::text::shorten(&path, 200))),
            hint: Some("OpenAI: POST /v1/chat/completions, GET /v1/models; Gemini: POST /v1beta/models/MODEL:generateContent".into()),
            exit_code: exit::USAGE,
            deadline: false,
        },
        param: None,
        no_retry: false,
    }
}

/// A Gemini path whose method is not `generateContent` or `streamGenerateContent`.
pub fn not_found_gemini(call: &str) -> ApiError {
    ApiError {
        status: StatusCode::NOT_FOUND,
        face: Face::Gemini,
        failure: Failure {
            kind: "not_found",
            message: format!(
                "no such method: {}",
                crate::text::sanitize_line(&crate::text::shorten(call, 200))
            ),
            hint: Some(
                "use models/MODEL:generateContent or models/MODEL:streamGenerateContent".into(),
            ),
            exit_code: exit::USAGE,
            deadline: false,
        },
        param: None,
        no_retry: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bearer_scheme_is_case_insensitive() {
        // Issue R5, finding 17: `BEARER key` was refused.
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
            key_of(&headers, None)
        };
        for value in [
            "Bearer k1",
            "bearer k1",
            "BEARER k1",
            "bEaReR   k1 ",
            "Bearer\tk1",
        ] {
            assert_eq!(with(value).as_deref(), Some("k1"), "{value:?}");
        }
        for value in ["Basic azE6", "Bearerk1", "Bearer", "Token k1"] {
            assert_eq!(with(value), None, "{value:?}");
        }
        let mut headers = HeaderMap::new();
        headers.insert("x-goog-api-key", HeaderValue::from_static("g1"));
        assert_eq!(key_of(&headers, Some("a=1")).as_deref(), Some("g1"));
        assert_eq!(
            key_of(&HeaderMap::new(), Some("a=1&key=q%201")).as_deref(),
            Some("q 1")
        );
    }

    #[test]
    fn only_loopback_names_on_this_port_are_local() {
        for host in [
            "127.0.0.1:8088",
            "localhost:8088",
            "LocalHost:8088",
            "[::1]:8088",
            "127.0.0.1",
            "localhost",
            "[::1]",
        ] {
            assert!(local_host(host, 8088), "{host}");
        }
        for host in [
            "rebind.example:8088",
            "rebind.example",
            "localhost:8089",
            "127.0.0.1:",
            "127.0.0.2:8088",
            "localhost.rebind.example:8088",
            "0.0.0.0:8088",
            "[::2]:8088",
            "",
        ] {
            assert!(!local_host(host, 8088), "{host}");
        }
    }

    #[test]
    fn a_json_body_is_application_json_with_any_parameters() {
        let with = |value: &'static str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(value));
            json_body(&headers)
        };
        assert!(with("application/json"));
        assert!(with("Application/JSON; charset=utf-8"));
        assert!(!with("text/plain"));
        assert!(!with("application/x-www-form-urlencoded"));
        assert!(!with("multipart/form-data; boundary=x"));
        assert!(!json_body(&HeaderMap::new()));
    }
}
