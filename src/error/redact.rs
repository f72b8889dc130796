//! The redactor's side of errors: [`Error::redact`], the same error with an API key
//! taken out of every message it carries.
//!
//! Apart from the taxonomy in `mod.rs` because it is one long match that only the
//! clients that send a key need, and it grows with every variant that carries text.

use super::Error;
use crate::text::redact;

impl Error {
    /// The same error with the API key `secret` replaced by `<redacted>` in every
    /// message it carries. Some hosted APIs quote the key back in their error text
    /// ("Incorrect API key provided: sk-..."); errors from a client that sent a key
    /// pass through here before anyone prints them.
    pub fn redact(self, secret: Option<&crate::settings::Secret>) -> Self {
        let Some(key) = secret.map(|s| s.expose()) else {
            return self;
        };
        let r = |s: String| redact(&s, &[key]);
        use Error::*;
        match self {
            Config { message, hint } => Config {
                message: r(message),
                hint: r(hint),
            },
            Usage { message, hint } => Usage {
                message: r(message),
                hint: r(hint),
            },
            Session { message, hint } => Session {
                message: r(message),
                hint: r(hint),
            },
            Internal { message } => Internal {
                message: r(message),
            },
            SearchUnreachable {
                backend,
                url,
                reason,
            } => SearchUnreachable {
                backend,
                url: r(url),
                reason: r(reason),
            },
            SearchJsonDisabled { url } => SearchJsonDisabled { url: r(url) },
            SearchRateLimited { url } => SearchRateLimited { url: r(url) },
            SearchBadRequest { message } => SearchBadRequest {
                message: r(message),
            },
            SearchHttp {
                backend,
                detail,
                url,
                status,
            } => SearchHttp {
                backend,
                detail: detail.map(r),
                url: r(url),
                status,
            },
            SearchInvalidReply {
                backend,
                url,
                detail,
            } => SearchInvalidReply {
                backend,
                url: r(url),
                detail: r(detail),
            },
            SearchAuth {
                backend,
                status,
                message,
            } => SearchAuth {
                backend,
                status,
                message: r(message),
            },
            SearchQuota {
                backend,
                status,
                message,
            } => SearchQuota {
                backend,
                status,
                message: r(message),
            },
            SearchApiRateLimited { backend, message } => SearchApiRateLimited {
                backend,
                message: r(message),
            },
            SearchEnginesFailed { engines } => SearchEnginesFailed {
                engines: r(engines),
            },
            SearchChallenged { backend, query } => SearchChallenged {
                backend,
                query: r(query),
            },
            SearchRefused {
                backend,
                query,
                message,
            } => SearchRefused {
                backend,
                query: r(query),
                message: r(message),
            },
            NoResults { query } => NoResults { query: r(query) },
            NoUsableSources { tried, summary } => NoUsableSources {
                tried,
                summary: r(summary),
            },
            ModelUnreachable {
                backend,
                url,
                reason,
            } => ModelUnreachable {
                backend,
                url: r(url),
                reason: r(reason),
            },
            ModelNotFound {
                backend,
                model,
                url,
            } => ModelNotFound {
                backend,
                model: r(model),
                url: r(url),
            },
            ModelContextExceeded {
                message,
                server_window,
            } => ModelContextExceeded {
                message: r(message),
                server_window,
            },
            ModelAuth { status, message } => ModelAuth {
                status,
                message: r(message),
            },
            ModelHttp { status, message } => ModelHttp {
                status,
                message: r(message),
            },
            ModelStreamFailed { message } => ModelStreamFailed {
                message: r(message),
            },
            ModelStreamCut { received, reason } => ModelStreamCut {
                received,
                reason: r(reason),
            },
            ModelBadReply {
                attempts,
                detail,
                raw_start,
                problem,
            } => ModelBadReply {
                attempts,
                detail: r(detail),
                raw_start: r(raw_start),
                problem,
            },
            NotGrounded { reason } => NotGrounded { reason: r(reason) },
            McpTransport { detail } => McpTransport { detail: r(detail) },
            other @ (EmptyQuestion
            | ImagesUnsupported { .. }
            | ReadFile { .. }
            | ReadDir { .. }
            | WriteFile { .. }
            | ReadPdf { .. }
            | WriteStdout { .. }
            | Index(_)
            | SearchRateLimitedLocally { .. }
            | SearchQuotaSpent { .. }
            | MissingKey { .. }
            | ModelTimeout { .. }
            | EmbeddedNotBuilt
            | ModelFileInvalid { .. }
            | ModelMemory { .. }
            | ModelNotDownloaded { .. }
            | ModelDownload { .. }
            | ModelChecksum { .. }
            | ModelDiskSpace { .. }
            | ModelPromptTooLong { .. }
            | ModelEngine { .. }
            | Uncited { .. }
            | Deadline { .. }
            | Interrupted) => other,
        }
    }
}
