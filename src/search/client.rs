//! What the search backends share: one HTTP client with the configured limits, one
//! bounded reply read, transport failures as errors, and providers' error text.

use serde_json::Value;

use crate::error::Error;
use crate::hits::SearchOutcome;
use crate::settings::SearchSettings;
use crate::text::{sanitize_line, shorten};

/// The service's base URL for messages: no trailing slash, no password.
pub fn display_url(settings: &SearchSettings) -> String {
    crate::http::display_url(&settings.url)
}

/// The HTTP client for search calls: our User-Agent and the configured time limits.
pub fn http_client(settings: &SearchSettings) -> Result<reqwest::Client, Error> {
    crate::http::client_builder(
        settings.timeout.min(std::time::Duration::from_secs(10)),
        Some(settings.timeout),
    )
    .build()
    .map_err(|e| Error::Internal {
        message: format!(
            "cannot build the HTTP client for search: {}",
            crate::http::describe_error(&e)
        ),
    })
}

/// A transport failure as the matching error.
pub fn unreachable_error(settings: &SearchSettings, err: &reqwest::Error) -> Error {
    Error::SearchUnreachable {
        backend: settings.backend,
        url: display_url(settings),
        reason: crate::http::describe_error(err),
    }
}

/// A search service's reply, read whole.
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body, redacted of the key.
    pub body: Vec<u8>,
    /// A warning when the reply could not be counted against the month's quota
    /// (the usage file could not be used).
    pub note: Option<String>,
}

impl Reply {
    /// Adds the reply's warning to a search outcome built from it.
    pub fn noted(&self, outcome: Result<SearchOutcome, Error>) -> Result<SearchOutcome, Error> {
        outcome.map(|mut found| {
            found.warnings.extend(self.note.clone());
            found
        })
    }
}

/// Sends a request and reads the whole reply (bounded by the client's timeout and
/// by [`MAX_REPLY_BYTES`]).
pub async fn send(
    settings: &SearchSettings,
    request: reqwest::RequestBuilder,
) -> Result<Reply, Error> {
    let response = request
        .send()
        .await
        .map_err(|e| unreachable_error(settings, &e))?;
    let status = response.status().as_u16();
    // Hosted APIs: count the query or credit, and read the plan's own count, under
    // the state lock, off the async runtime (see `super::state`).
    let counted = {
        let (settings, headers) = (settings.clone(), response.headers().clone());
        super::state::off_runtime(move || super::usage::record(&settings, status, &headers)).await
    };
    super::usage::record_shared(settings, status, response.headers()).await;
    let note = counted.err().map(|problem| {
        super::state::warning("this search was not counted in the month's usage", &problem)
    });
    let body = crate::http::read_bounded(response, MAX_REPLY_BYTES)
        .await
        .map_err(|e| unreachable_error(settings, &e))?;
    if body.truncated {
        return Err(Error::SearchInvalidReply {
            backend: settings.backend,
            url: display_url(settings),
            detail: format!(
                "the reply is larger than {} MiB",
                MAX_REPLY_BYTES / 1024 / 1024
            ),
        });
    }
    // The one redaction point for search replies: a service may quote our key back.
    let secrets: Vec<&str> = settings.api_key.iter().map(|k| k.expose()).collect();
    Ok(Reply {
        status,
        body: crate::text::redact_bytes(body.bytes, &secrets),
        note,
    })
}

/// Largest search reply read.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// A provider's error text: the first string found under the usual keys
/// (`error.detail`, `detail.error`, `error.message`, `message`, `error`, `detail`),
/// sanitised to one short line.
pub fn provider_message(body: &[u8]) -> String {
    let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let candidates = [
        &value["error"]["detail"],
        &value["detail"]["error"],
        &value["error"]["message"],
        &value["message"],
        &value["error"],
        &value["detail"],
    ];
    let text = candidates
        .iter()
        .find_map(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    sanitize_line(&shorten(&text, 200))
}
