//! The opt-in search log (`[privacy] log_searches = true` or `--log-searches`): one
//! JSON line per search appended to `searches.jsonl` in the state dir, for the user's
//! own review. Off by default.
//!
//! A line holds the time (UTC), the service, the query, the number of results (or
//! the error's kind) and whether it came from the cache. Never an API key, a
//! password or the service's address: the line passes the one redactor
//! ([`crate::text::redact_known`]) with every secret the settings hold (the search
//! key, the model key, passwords in the configured URLs), since a question can carry
//! any of them pasted in. Deleting the file deletes the log.
//!
//! The file is the user's alone: created with mode 0600 (an older one is narrowed to
//! it), opened with `O_NOFOLLOW` so a symbolic link planted at its name is not
//! followed to append to some other file, and never opened when it is not a regular
//! file (a FIFO would hold the run; see [`crate::files::open_regular`]).

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::json;

use super::state::{StateFileError, now_ms, rfc3339};
use crate::settings::SearchSettings;

/// The file's name in the state dir.
pub const FILE: &str = "searches.jsonl";

/// Where the log is written when on: `None` without a state dir.
pub fn path(settings: &SearchSettings) -> Option<PathBuf> {
    Some(settings.state_dir.as_ref()?.join(FILE))
}

/// Appends one line for a search of `query` (when the log is on): `results` is the
/// hit count, or the error kind when it failed. `Err`: the line could not be written
/// (the search goes on; the caller may warn).
pub fn record(
    settings: &SearchSettings,
    query: &str,
    results: Result<usize, &str>,
    cached: bool,
) -> Result<(), StateFileError> {
    if !settings.log_searches {
        return Ok(());
    }
    let Some(path) = path(settings) else {
        return Ok(());
    };
    let mut line = json!({
        "time": rfc3339(now_ms()),
        "backend": settings.backend.id(),
        "query": query,
        "cached": cached,
    });
    match results {
        Ok(count) => line["results"] = json!(count),
        Err(kind) => line["error"] = json!(kind),
    }
    // The one redaction point: a query pasted with a key or password in it stays out
    // of the log, whichever of the settings' secrets it is.
    let search_secrets: Vec<&str> = settings
        .api_key
        .iter()
        .map(|k| k.expose())
        .chain(settings.searxng_urls().filter_map(|u| u.password()))
        .collect();
    let mut text = crate::text::redact_known(&line.to_string(), &search_secrets);
    text.push('\n');
    let io = |source| StateFileError::Io {
        path: path.clone(),
        source,
    };
    if let Some(dir) = path.parent() {
        crate::files::create_private_dir(dir).map_err(io)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = crate::files::open_regular(&path, &mut options, crate::files::Links::Refuse)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file.metadata().map_err(io)?.permissions().mode();
        if mode & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))
                .map_err(io)?;
        }
    }
    // One write of a short line in append mode: lines of concurrent runs do not mix.
    (&file).write_all(text.as_bytes()).map_err(io)
}
