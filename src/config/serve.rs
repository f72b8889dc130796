//! `[serve]`: `ground serve`'s address, key and limits, resolved from flags, the
//! `GROUND_SERVE_*` environment and the config file (kept apart from the pipeline's
//! sections in `resolve.rs`: only the server reads them).

use std::str::FromStr;
use std::time::Duration;

use super::file::FileConfig;
use super::overrides::Overrides;
use crate::error::Error;

/// `[serve]`: flags > `GROUND_SERVE_*` > file > defaults (127.0.0.1:8088, queue 8,
/// concurrency 4, no key, no CORS, 512 connections, headers within 10 s, kept-alive
/// connections idle for 30 s, 10 s to finish on shutdown, clients isolated only off
/// loopback).
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
    // A whole number from the flag, `GROUND_SERVE_*`, the file or the default, within
    // [min, max]; an error names the setting after its variable ("serve queue").
    let bounded =
        |flag: Option<u64>, var: &str, file: Option<u64>, default: u64, (min, max): (u64, u64)| {
            let value = number(flag, env, var, file)?.unwrap_or(default);
            let name = format!("serve {}", var["GROUND_SERVE_".len()..].to_lowercase());
            super::resolve::check_range(&name, value, min, max).map(|()| value)
        };
    let count = |flag: Option<usize>, var, file: Option<usize>, default: usize, range| {
        let wide = |n: usize| n as u64;
        bounded(flag.map(wide), var, file.map(wide), wide(default), range).map(|n| n as usize)
    };
    // Time limits in whole seconds, at most an hour; only the grace may be 0 (stop at
    // once, cutting the requests under way).
    let secs = |flag, var, file, default: Duration, min| {
        bounded(flag, var, file, default.as_secs(), (min, 3600)).map(Duration::from_secs)
    };
    let queue = count(
        flags.serve_queue,
        "GROUND_SERVE_QUEUE",
        file.serve.queue,
        defaults.queue,
        (0, 1024),
    )?;
    let concurrency = count(
        flags.serve_concurrency,
        "GROUND_SERVE_CONCURRENCY",
        file.serve.concurrency,
        defaults.concurrency,
        (1, 256),
    )?;
    let max_connections = count(
        flags.serve_max_connections,
        "GROUND_SERVE_MAX_CONNECTIONS",
        file.serve.max_connections,
        defaults.max_connections,
        (1, 65536),
    )?;
    let header_timeout = secs(
        flags.serve_header_timeout_secs,
        "GROUND_SERVE_HEADER_TIMEOUT_SECS",
        file.serve.header_timeout_secs,
        defaults.header_timeout,
        1,
    )?;
    let idle_timeout = secs(
        flags.serve_idle_timeout_secs,
        "GROUND_SERVE_IDLE_TIMEOUT_SECS",
        file.serve.idle_timeout_secs,
        defaults.idle_timeout,
        1,
    )?;
    let shutdown_grace = secs(
        flags.serve_shutdown_grace_secs,
        "GROUND_SERVE_SHUTDOWN_GRACE_SECS",
        file.serve.shutdown_grace_secs,
        defaults.shutdown_grace,
        0,
    )?;
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
        max_connections,
        header_timeout,
        idle_timeout,
        shutdown_grace,
        isolate_clients,
    })
}

/// A whole number from the flag, else the environment variable `var`, else the file.
pub(super) fn number<T: FromStr>(
    flag: Option<T>,
    env: &dyn Fn(&str) -> Option<String>,
    var: &str,
    file: Option<T>,
) -> Result<Option<T>, Error> {
    match (flag, env(var)) {
        (Some(n), _) => Ok(Some(n)),
        (None, Some(text)) => text.trim().parse().map(Some).map_err(|_| Error::Config {
            message: format!("{var} {:?} is not a whole number", text.trim()),
            hint: format!("set {var} to a whole number (digits only), or unset it"),
        }),
        (None, None) => Ok(file),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::config::Overrides;
    use crate::config::tests::{env_of, resolve};
    use crate::error::Error;

    #[test]
    fn connection_limits_come_from_flags_env_and_file() {
        let s = resolve(&Overrides::default(), &env_of(&[])).unwrap().serve;
        assert_eq!(s.max_connections, 512);
        assert_eq!(s.header_timeout, Duration::from_secs(10));
        assert_eq!(s.idle_timeout, Duration::from_secs(30));
        assert_eq!(s.shutdown_grace, Duration::from_secs(10));

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            "[serve]\nmax_connections = 64\nheader_timeout_secs = 5\nidle_timeout_secs = 75\nshutdown_grace_secs = 0\n",
        )
        .unwrap();
        let flags = Overrides {
            config_path: Some(path),
            ..Default::default()
        };
        let s = resolve(&flags, &env_of(&[])).unwrap().serve;
        assert_eq!(s.max_connections, 64);
        assert_eq!(s.header_timeout, Duration::from_secs(5));
        assert_eq!(s.idle_timeout, Duration::from_secs(75));
        assert_eq!(s.shutdown_grace, Duration::ZERO);

        let env = env_of(&[
            ("GROUND_SERVE_MAX_CONNECTIONS", "32"),
            ("GROUND_SERVE_HEADER_TIMEOUT_SECS", "2"),
        ]);
        let s = resolve(&flags, &env).unwrap().serve;
        assert_eq!(s.max_connections, 32);
        assert_eq!(s.header_timeout, Duration::from_secs(2));
        let flags = Overrides {
            serve_max_connections: Some(8),
            serve_header_timeout_secs: Some(1),
            serve_idle_timeout_secs: Some(3),
            serve_shutdown_grace_secs: Some(4),
            ..flags
        };
        let s = resolve(&flags, &env).unwrap().serve;
        assert_eq!(s.max_connections, 8);
        assert_eq!(s.header_timeout, Duration::from_secs(1));
        assert_eq!(s.idle_timeout, Duration::from_secs(3));
        assert_eq!(s.shutdown_grace, Duration::from_secs(4));
    }

    #[test]
    fn connection_limits_out_of_range_are_config_errors() {
        for (var, value) in [
            ("GROUND_SERVE_MAX_CONNECTIONS", "0"),
            ("GROUND_SERVE_HEADER_TIMEOUT_SECS", "0"),
            ("GROUND_SERVE_IDLE_TIMEOUT_SECS", "0"),
            ("GROUND_SERVE_IDLE_TIMEOUT_SECS", "3601"),
            ("GROUND_SERVE_SHUTDOWN_GRACE_SECS", "soon"),
        ] {
            let err = resolve(&Overrides::default(), &env_of(&[(var, value)])).unwrap_err();
            assert!(matches!(err, Error::Config { .. }), "{var}={value}: {err}");
        }
        let err = resolve(
            &Overrides::default(),
            &env_of(&[("GROUND_SERVE_HEADER_TIMEOUT_SECS", "0")]),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("serve header_timeout_secs is 0"),
            "{err}"
        );
    }
}
