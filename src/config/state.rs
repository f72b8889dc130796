//! `[state]`: the Redis whose state the replicas of a deployment share, resolved from
//! `--redis-url`, `GROUND_REDIS_URL` and the config file (kept apart from the
//! pipeline's sections: one setting that several stages read).
//!
//! Only the URL's form is checked here (`redis://` or `rediss://`, a host or a
//! socket path); whether the server answers is the business of `ground doctor` and
//! of each request, which falls back to local state while it does not. The password
//! is the URL's, else the OS keyring's (`ground key set redis`); either is remembered
//! as a secret, so the one redactor keeps it out of every line.

use url::Url;

use super::file::FileConfig;
use super::overrides::Overrides;
use crate::error::Error;
use crate::keystore::{KeyName, Lookup};
use crate::settings::{DEFAULT_REDIS_PREFIX, SharedState};

/// Longest key prefix accepted (it goes before every key).
const MAX_PREFIX_CHARS: usize = 64;

/// `[state]`: flag > `GROUND_REDIS_URL` > file; `None` when none names a Redis. A
/// URL without a password gets the keyring's (`keyring`), when it holds one; a
/// keyring that cannot be asked is no error (most Redis servers on loopback need no
/// password, and one that does says so to `ground doctor`).
pub(super) fn shared(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Option<SharedState>, Error> {
    let (text, from) = match (&flags.redis_url, env("GROUND_REDIS_URL")) {
        (Some(flag), _) => (flag.clone(), "--redis-url"),
        (None, Some(env)) => (env, "GROUND_REDIS_URL"),
        (None, None) => match &file.state.redis_url {
            Some(text) if !text.trim().is_empty() => (text.clone(), "[state] redis_url"),
            _ => return Ok(None),
        },
    };
    let mut redis_url = parse_redis_url(text.trim()).map_err(|why| Error::Config {
        // The text is not shown: a URL that failed to parse may still hold a password.
        message: format!("{from} is not a Redis URL: {why}"),
        hint: "give redis://[:PASSWORD@]HOST[:PORT][/DB] or rediss://... for TLS, e.g. redis://127.0.0.1:6379/0".into(),
    })?;
    if redis_url.password().is_none()
        && let Lookup::Found(password) = keyring(KeyName::Redis)
    {
        crate::text::remember_secret(&password);
        // A URL with a host (checked above) always takes a password.
        let _ = redis_url.set_password(Some(&password));
    }
    if let Some(password) = redis_url.password() {
        // As written in the URL: percent-encoded where the password has such
        // characters (the client decodes it).
        crate::text::remember_secret(password);
    }
    let prefix = file
        .state
        .redis_prefix
        .clone()
        .unwrap_or_else(|| DEFAULT_REDIS_PREFIX.to_string());
    if prefix.chars().count() > MAX_PREFIX_CHARS
        || prefix.chars().any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(Error::Config {
            message: format!("[state] redis_prefix {prefix:?} is not a key prefix"),
            hint: format!(
                "use up to {MAX_PREFIX_CHARS} characters without spaces, e.g. \"ground:\" or \"ground-prod:\""
            ),
        });
    }
    let timeout = redis_timeout(env, file)?;
    Ok(Some(SharedState {
        redis_url,
        prefix,
        timeout,
    }))
}

/// Shortest and longest command timeout taken, in milliseconds.
const REDIS_TIMEOUT_MS: (u64, u64) = (10, 60_000);

/// `GROUND_REDIS_TIMEOUT_MS` > `[state] redis_timeout_ms` > the default (250 ms): how
/// long one Redis command may take before the caller goes on with local state. A
/// Redis across a slow link may need more; a busy machine's tests too.
fn redis_timeout(
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileConfig,
) -> Result<std::time::Duration, Error> {
    const VAR: &str = "GROUND_REDIS_TIMEOUT_MS";
    let Some(ms) = super::serve::number(None, env, VAR, file.state.redis_timeout_ms)? else {
        return Ok(crate::settings::DEFAULT_REDIS_TIMEOUT);
    };
    let name = if env(VAR).is_some() {
        VAR
    } else {
        "[state] redis_timeout_ms"
    };
    let (min, max) = REDIS_TIMEOUT_MS;
    super::resolve::check_range(name, ms, min, max)?;
    Ok(std::time::Duration::from_millis(ms))
}

/// `text` as a Redis URL, or why it is not one.
fn parse_redis_url(text: &str) -> Result<Url, &'static str> {
    let url = Url::parse(text).map_err(|_| "it does not parse as a URL")?;
    match url.scheme() {
        "redis" | "rediss" if url.host_str().is_some_and(|h| !h.is_empty()) => Ok(url),
        "redis" | "rediss" => Err("it names no host"),
        _ => Err("its scheme is not redis:// or rediss://"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(
        flag: Option<&str>,
        env: &[(&str, &str)],
        toml: &str,
    ) -> Result<Option<SharedState>, Error> {
        let file: FileConfig = toml::from_str(toml).unwrap();
        let flags = Overrides {
            redis_url: flag.map(str::to_string),
            ..Default::default()
        };
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        shared(
            &flags,
            &move |k| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()),
            &file,
            &|_| Lookup::Absent,
        )
    }

    #[test]
    fn a_url_without_a_password_gets_the_keyring_s() {
        let file: FileConfig = toml::from_str("").unwrap();
        let asked = std::cell::Cell::new(0);
        let keyring = |name: KeyName| {
            assert_eq!(name, KeyName::Redis);
            asked.set(asked.get() + 1);
            Lookup::Found("hunter2@ground:redis".into())
        };
        let with = |url: &str| {
            let flags = Overrides {
                redis_url: Some(url.to_string()),
                ..Default::default()
            };
            shared(&flags, &|_| None, &file, &keyring).unwrap().unwrap()
        };
        let state = with("rediss://redis.example:6380/0");
        assert_eq!(asked.get(), 1);
        // Percent-encoded in the URL, as the client decodes it; never shown.
        assert_eq!(state.redis_url.password(), Some("hunter2%40ground%3Aredis"));
        assert_eq!(state.redis_url.host_str(), Some("redis.example"));
        let shown = format!("{state:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        // The URL's own password wins, and the keyring is not asked.
        let state = with("redis://:fromTHEurl@h:6379/0");
        assert_eq!(state.redis_url.password(), Some("fromTHEurl"));
        assert_eq!(asked.get(), 1);
        // No keyring, or none stored: the URL as given.
        for lookup in [Lookup::Absent, Lookup::Unavailable("no bus".into())] {
            let flags = Overrides {
                redis_url: Some("redis://127.0.0.1:6379/0".into()),
                ..Default::default()
            };
            let state = shared(&flags, &|_| None, &file, &|_| lookup.clone())
                .unwrap()
                .unwrap();
            assert_eq!(state.redis_url.password(), None);
        }
    }

    #[test]
    fn nothing_named_means_no_shared_state() {
        assert_eq!(resolve(None, &[], "").unwrap(), None);
        assert_eq!(
            resolve(None, &[], "[state]\nredis_prefix = \"x:\"\n").unwrap(),
            None
        );
    }

    #[test]
    fn the_flag_beats_the_environment_beats_the_file() {
        let file = "[state]\nredis_url = \"redis://file.example:6379\"\nredis_prefix = \"prod:\"\n";
        let env = [("GROUND_REDIS_URL", "redis://env.example:6379/2")];
        let host = |s: Option<SharedState>| s.unwrap().redis_url.host_str().unwrap().to_string();
        assert_eq!(
            host(resolve(Some("rediss://flag.example"), &env, file).unwrap()),
            "flag.example"
        );
        assert_eq!(host(resolve(None, &env, file).unwrap()), "env.example");
        let from_file = resolve(None, &[], file).unwrap().unwrap();
        assert_eq!(from_file.redis_url.host_str(), Some("file.example"));
        assert_eq!(from_file.prefix, "prod:");
        assert_eq!(
            resolve(Some("redis://h"), &[], "").unwrap().unwrap().prefix,
            DEFAULT_REDIS_PREFIX
        );
    }

    #[test]
    fn bad_urls_are_config_errors_that_do_not_show_the_password() {
        for bad in ["http://h:6379", "redis://", "localhost:6379 x", "nonsense"] {
            let error = resolve(Some(bad), &[], "").unwrap_err();
            assert!(matches!(error, Error::Config { .. }), "{bad}: {error:?}");
        }
        let error = resolve(Some("http://user:hunter2@h/"), &[], "").unwrap_err();
        assert!(!error.to_string().contains("hunter2"), "{error}");
        let bad_prefix = resolve(Some("redis://h"), &[], "[state]\nredis_prefix = \"a b\"\n");
        assert!(matches!(bad_prefix, Err(Error::Config { .. })));
    }

    #[test]
    fn the_debug_form_redacts_the_password() {
        let state = resolve(Some("redis://:hunter2@h:6379/0"), &[], "")
            .unwrap()
            .unwrap();
        let shown = format!("{state:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.contains("redis://:redacted@h:6379/0"), "{shown}");
    }

    #[test]
    fn the_command_timeout_comes_from_the_environment_or_the_file() {
        use std::time::Duration;
        let with = |env_ms: Option<&str>, file: &str| {
            let url = ("GROUND_REDIS_URL", "redis://127.0.0.1:6379/0");
            let env = match env_ms {
                Some(ms) => vec![url, ("GROUND_REDIS_TIMEOUT_MS", ms)],
                None => vec![url],
            };
            resolve(None, &env, file).map(|s| s.map(|s| s.timeout))
        };
        assert_eq!(with(None, "").unwrap(), Some(Duration::from_millis(250)));
        let file = "[state]\nredis_timeout_ms = 900\n";
        assert_eq!(with(None, file).unwrap(), Some(Duration::from_millis(900)));
        assert_eq!(
            with(Some("40"), file).unwrap(),
            Some(Duration::from_millis(40))
        );
        for bad in ["0", "soon", "60001"] {
            let error = with(Some(bad), "").unwrap_err().to_string();
            assert!(error.contains("GROUND_REDIS_TIMEOUT_MS"), "{error}");
        }
        let error = with(None, "[state]\nredis_timeout_ms = 5\n").unwrap_err();
        assert!(error.to_string().contains("redis_timeout_ms"), "{error}");
    }
}
