//! `[serve]`: `ground serve`'s address, key and limits, resolved from flags, the
//! `GROUND_SERVE_*` environment and the config file (kept apart from the pipeline's
//! sections in `resolve.rs`: only the server reads them).

use super::file::FileConfig;
use super::overrides::Overrides;
use crate::error::Error;

/// `[serve]`: flags > `GROUND_SERVE_*` > file > defaults (127.0.0.1:8088, queue 8,
/// concurrency 4, no key, no CORS, clients isolated only off loopback).
pub(super) fn serve(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<crate::settings::ServeSettings, Error> {
    let defaults = crate::settings::ServeSettings::default();
    let (listen_text, from) = match (&flags.serve_listen, env("GROUND_SERVE_LISTEN")) {
        (Some(flag), _) => (Some(flag.clone()), "--listen"),
        (None, Some(env)) => (Some(env), "GROUND_SERVE_LISTEN"),
        (None, None) => (file.serve.listen.clone(), "[serve] listen"),
    };
    let listen = match listen_text {
        None => defaults.listen,
        Some(text) => text.trim().parse().map_err(|_| Error::Config {
            message: format!("{from} {:?} is not an address to listen on", text.trim()),
            hint: "give HOST:PORT with an IP address, e.g. 127.0.0.1:8088 (or 0.0.0.0:8088 with an API key)".into(),
        })?,
    };
    let number =
        |flag: Option<usize>, var: &str, file: Option<usize>| -> Result<Option<usize>, Error> {
            match (flag, env(var)) {
                (Some(n), _) => Ok(Some(n)),
                (None, Some(text)) => text.trim().parse().map(Some).map_err(|_| Error::Config {
                    message: format!("{var} {:?} is not a whole number", text.trim()),
                    hint: format!("set {var} to a number such as 4"),
                }),
                (None, None) => Ok(file),
            }
        };
    let queue = number(flags.serve_queue, "GROUND_SERVE_QUEUE", file.serve.queue)?
        .unwrap_or(defaults.queue);
    super::resolve::check_range("serve queue", queue as u64, 0, 1024)?;
    let concurrency = number(
        flags.serve_concurrency,
        "GROUND_SERVE_CONCURRENCY",
        file.serve.concurrency,
    )?
    .unwrap_or(defaults.concurrency);
    super::resolve::check_range("serve concurrency", concurrency as u64, 1, 256)?;
    let api_key = flags
        .serve_api_key
        .clone()
        .or_else(|| env("GROUND_SERVE_API_KEY"))
        .or_else(|| file.serve.api_key.clone())
        .filter(|k| !k.trim().is_empty())
        .map(|k| crate::settings::Secret::new(&k));
    let cors = flags
        .serve_cors
        .clone()
        .or_else(|| env("GROUND_SERVE_CORS"))
        .or_else(|| file.serve.cors.clone());
    // Loopback is one person's machine: its clients (their tools and front-ends)
    // share answers and the model's prompt cache. Any other address serves people who
    // need not know each other: isolated unless told otherwise.
    let isolate_clients = match (
        flags.serve_isolate_clients,
        env("GROUND_SERVE_ISOLATE_CLIENTS"),
    ) {
        (Some(flag), _) => flag,
        (None, Some(text)) => super::resolve::parse_bool(&text, "GROUND_SERVE_ISOLATE_CLIENTS")?,
        (None, None) => file
            .serve
            .isolate_clients
            .unwrap_or(!listen.ip().is_loopback()),
    };
    Ok(crate::settings::ServeSettings {
        listen,
        api_key,
        queue,
        concurrency,
        cors,
        isolate_clients,
    })
}
