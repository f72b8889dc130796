//! What the hosted, keyed search APIs (Brave, Tavily) share: the endpoint under the
//! configured base URL, the key, one call whose reply is counted against the month's
//! quota and read redacted of the key ([`super::client::send`]), the error of a
//! refused call by what the API's status means ([`Refusal`]), and the reply's JSON.
//! Each API keeps its own request (query pairs or a JSON body, how the key is sent),
//! its status table and its reply's shape in its own file.

use serde::de::DeserializeOwned;
use url::Url;

use super::client::{display_url, provider_message, send};
use crate::error::Error;
use crate::hits::SearchOutcome;
use crate::settings::{SearchBackend, SearchSettings};

/// What a hosted API's refusal means, as its status table says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The key is missing, wrong or revoked.
    Auth,
    /// The plan's credits are spent.
    Quota,
    /// Too many calls in a short time.
    RateLimited,
}

/// An API's reply parser: status, body, base URL for messages, query and most
/// results in; hits or the matching error out (`brave::parse_reply`,
/// `tavily::parse_reply`).
pub type ParseReply = fn(u16, &[u8], &str, &str, usize) -> Result<SearchOutcome, Error>;

/// The API's endpoint: `path` (starting with `/`) under the configured base URL.
pub fn endpoint(settings: &SearchSettings, path: &str) -> Url {
    let mut url = settings.url.clone();
    let joined = format!("{}{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    url
}

/// The API key; empty when none is set (the service's own refusal then says so).
pub fn key(settings: &SearchSettings) -> &str {
    settings.api_key.as_ref().map(|k| k.expose()).unwrap_or("")
}

/// Sends `request` and turns its reply into hits with the API's `parse_reply`, with
/// the warning of a reply that could not be counted; every error is redacted of the
/// key.
pub async fn call(
    settings: &SearchSettings,
    query: &str,
    request: reqwest::RequestBuilder,
    parse_reply: ParseReply,
) -> Result<SearchOutcome, Error> {
    let reply = send(settings, request).await?;
    reply
        .noted(parse_reply(
            reply.status,
            &reply.body,
            &display_url(settings),
            query,
            settings.max_results,
        ))
        // The service may quote our key back in its error text.
        .map_err(|e| e.redact(settings.api_key.as_ref()))
}

/// The error of a call that was not answered with 200: `meaning` reads the API's
/// status (and its message) as a [`Refusal`]; anything else is an HTTP error.
pub fn refused(
    backend: SearchBackend,
    url: &str,
    status: u16,
    body: &[u8],
    meaning: impl FnOnce(u16, &str) -> Option<Refusal>,
) -> Error {
    let message = provider_message(body);
    match meaning(status, &message) {
        Some(Refusal::Auth) => Error::SearchAuth {
            backend,
            status,
            message,
        },
        Some(Refusal::Quota) => Error::SearchQuota {
            backend,
            status,
            message,
        },
        Some(Refusal::RateLimited) => Error::SearchApiRateLimited { backend, message },
        None => Error::SearchHttp {
            backend,
            url: url.into(),
            status,
            detail: Some(message),
        },
    }
}

/// The reply's JSON as the API's shape `T`, or the error saying it is not.
pub fn json<T: DeserializeOwned>(
    backend: SearchBackend,
    url: &str,
    body: &[u8],
) -> Result<T, Error> {
    serde_json::from_slice(body).map_err(|e| Error::SearchInvalidReply {
        backend,
        url: url.into(),
        detail: e.to_string(),
    })
}
