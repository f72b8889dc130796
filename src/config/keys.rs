//! API keys: where each one comes from (environment > config file > OS keyring), for
//! the run ([`search_key`], [`llm_key`]) and for `ground key status`
//! ([`key_sources`]).
//!
//! Keys are the one kind of setting with a fourth source, the OS keyring, and the one
//! kind that must never be shown; so they are resolved here, apart from the other
//! settings, and the environment variables that hold each key are named in one place
//! ([`env_vars`]) for both the run and the status. The keyring is a lookup function
//! given by the caller, as the environment is, so that tests need no keyring daemon;
//! it is asked only for a key that is needed and set nowhere else: never for SearXNG,
//! which needs no key, nor for a model server on this machine.

use url::Url;

use super::file::{FileLlm, FileSearch, load_chosen};
use super::overrides::Overrides;
use crate::error::Error;
use crate::keystore::{KeyName, Lookup};
use crate::settings::{LlmBackend, SearchBackend, Secret};

/// Where a key comes from at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// An environment variable, named.
    Env(&'static str),
    /// The config file, with the setting's name.
    File(&'static str),
    /// The OS keyring.
    Keyring,
    /// Nowhere; with the reason when the keyring could not be asked.
    None(Option<String>),
}

/// The environment variables that hold a key, in the order they are read.
fn env_vars(name: KeyName) -> &'static [&'static str] {
    match name {
        KeyName::Brave => &["GROUND_BRAVE_API_KEY", "BRAVE_API_KEY"],
        KeyName::Tavily => &["GROUND_TAVILY_API_KEY", "TAVILY_API_KEY"],
        KeyName::Llm => &["GROUND_LLM_API_KEY"],
        // Redis's password comes in its URL, or from the keyring.
        KeyName::Redis => &[],
    }
}

/// A search service's key in the config file, with the setting it is under: its own
/// `brave_api_key` / `tavily_api_key`, else `api_key` when the section's `backend`
/// names that service (or names none and `running`, the backend this run uses, is
/// that service). A key belongs to one service: `api_key` under `backend = "brave"`
/// is never sent to Tavily.
fn file_key(
    file: &FileSearch,
    name: KeyName,
    running: Option<SearchBackend>,
) -> Option<(&str, &'static str)> {
    fn set(value: &Option<String>) -> Option<&str> {
        value.as_deref().filter(|k| !k.trim().is_empty())
    }
    let own = match name {
        KeyName::Brave => set(&file.brave_api_key).map(|k| (k, "[search] brave_api_key")),
        KeyName::Tavily => set(&file.tavily_api_key).map(|k| (k, "[search] tavily_api_key")),
        KeyName::Llm | KeyName::Redis => None,
    };
    let owner = match file.backend.as_deref() {
        Some(named) => SearchBackend::parse(named),
        None => running,
    }
    // Nothing named is `auto`, the default.
    .unwrap_or(SearchBackend::Auto);
    own.or_else(|| {
        let key = set(&file.api_key)?;
        // With `auto` the key is the service's whose form it has, and no other's.
        let owner = match owner {
            SearchBackend::Auto => form_of(key),
            named => key_name(named),
        };
        (owner == Some(name)).then_some((key, "[search] api_key"))
    })
}

/// The service whose key `key` looks like: Tavily's start with `tvly-`; Brave's are
/// 20 to 64 letters and digits ([`crate::keystore::check_format`]); else none.
fn form_of(key: &str) -> Option<KeyName> {
    if key.trim().starts_with("tvly-") {
        Some(KeyName::Tavily)
    } else {
        crate::keystore::check_format(KeyName::Brave, key)
            .is_ok()
            .then_some(KeyName::Brave)
    }
}

/// The keyring name of a search backend's key; `None` for the services that need
/// none (SearXNG, Wikipedia, DuckDuckGo) and for `auto`, which is none of them.
fn key_name(backend: SearchBackend) -> Option<KeyName> {
    match backend {
        SearchBackend::Brave => Some(KeyName::Brave),
        SearchBackend::Tavily => Some(KeyName::Tavily),
        _ => None,
    }
}

/// `--search auto`'s hosted fallbacks, in order (Brave, then Tavily), each with its
/// key from the environment or the config file when set there. The keyring is not
/// asked here: only when the fallback is needed (`search::auto`), so that a run
/// whose SearXNG answers never touches it.
pub(super) fn hosted_keys(
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileSearch,
) -> Vec<(SearchBackend, Option<Secret>)> {
    [SearchBackend::Brave, SearchBackend::Tavily]
        .into_iter()
        .filter_map(|backend| {
            let name = key_name(backend)?;
            let key = env_vars(name)
                .iter()
                .find_map(|var| env(var))
                .or_else(|| {
                    file_key(file, name, Some(SearchBackend::Auto)).map(|(k, _)| k.to_string())
                })
                .filter(|k| !k.trim().is_empty());
            Some((backend, key.map(|k| Secret::new(&k))))
        })
        .collect()
}

/// The search backend's key: its environment variables, else the config file's
/// ([`file_key`]), else the keyring. A hosted backend without one is an error
/// ([`Error::MissingKey`], with the keyring's reason when it could not be asked); the
/// other services have none. `env` counts blank values as unset.
pub(super) fn search_key(
    backend: SearchBackend,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileSearch,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Option<Secret>, Error> {
    let Some(name) = key_name(backend) else {
        return Ok(None);
    };
    let key = env_vars(name)
        .iter()
        .find_map(|var| env(var))
        .or_else(|| file_key(file, name, Some(backend)).map(|(key, _)| key.to_string()))
        .filter(|k| !k.trim().is_empty());
    if let Some(key) = key {
        return Ok(Some(Secret::new(&key)));
    }
    match keyring(name) {
        Lookup::Found(key) => Ok(Some(Secret::new(&key))),
        Lookup::Absent => Err(Error::MissingKey {
            backend,
            keyring: None,
        }),
        Lookup::Unavailable(reason) => Err(Error::MissingKey {
            backend,
            keyring: Some(reason),
        }),
    }
}

/// The model server's key: `GROUND_LLM_API_KEY`, else `[llm] api_key`, else, for an
/// OpenAI-compatible server not on this machine (`url`), the keyring. None is no
/// error: most servers need no key, and a hosted one says so itself. `env` counts
/// blank values as unset.
pub(super) fn llm_key(
    backend: LlmBackend,
    url: &Url,
    env: &dyn Fn(&str) -> Option<String>,
    file: &FileLlm,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Option<Secret> {
    env_vars(KeyName::Llm)
        .iter()
        .find_map(|var| env(var))
        .or_else(|| file.api_key.clone())
        .filter(|k| !k.trim().is_empty())
        .or_else(|| {
            // Only a hosted server needs a key: a local one is never worth a keyring
            // lookup (nor its warning when there is no keyring).
            if backend != LlmBackend::OpenAi || is_local(url) {
                return None;
            }
            match keyring(KeyName::Llm) {
                Lookup::Found(key) => Some(key),
                Lookup::Absent | Lookup::Unavailable(_) => None,
            }
        })
        .map(|k| Secret::new(&k))
}

/// Whether a server runs on this machine (loopback or `localhost`).
fn is_local(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => true,
    }
}

/// Where each key would come from, in the order flag > env > config > keyring,
/// without the key itself. The config file's `[search] api_key` belongs to the
/// backend its `[search] backend` names, or when it names none to the one chosen by
/// `--search` or `GROUND_SEARCH` ([`file_key`]; with `auto`, the default, to the one
/// whose form it has); `brave_api_key` and `tavily_api_key` to their services.
pub fn key_sources(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Vec<(KeyName, KeySource)>, Error> {
    let file = load_chosen(flags.config_path.as_deref(), env)?;
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let set = |v: &Option<String>| v.as_deref().is_some_and(|k| !k.trim().is_empty());
    let running = flags
        .search_backend
        .or_else(|| env("GROUND_SEARCH").and_then(|b| SearchBackend::parse(&b)));
    // Redis's password is the one in the URL that is used (the environment's, else
    // the file's), else the keyring's.
    let redis_url = env("GROUND_REDIS_URL");
    let with_password = |url: &str| Url::parse(url.trim()).is_ok_and(|u| u.password().is_some());
    let mut out = Vec::new();
    for name in KeyName::ALL {
        let in_env = match name {
            KeyName::Redis => redis_url
                .as_deref()
                .filter(|url| with_password(url))
                .map(|_| "GROUND_REDIS_URL"),
            _ => env_vars(name).iter().copied().find(|v| env(v).is_some()),
        };
        let in_file = match name {
            KeyName::Llm => set(&file.llm.api_key).then_some("[llm] api_key"),
            KeyName::Redis => (redis_url.is_none()
                && file.state.redis_url.as_deref().is_some_and(with_password))
            .then_some("[state] redis_url"),
            _ => file_key(&file.search, name, running).map(|(_, setting)| setting),
        };
        let source = if let Some(var) = in_env {
            KeySource::Env(var)
        } else if let Some(setting) = in_file {
            KeySource::File(setting)
        } else {
            match keyring(name) {
                Lookup::Found(_) => KeySource::Keyring,
                Lookup::Absent => KeySource::None(None),
                Lookup::Unavailable(reason) => KeySource::None(Some(reason)),
            }
        };
        out.push((name, source));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::resolve_with_keyring;
    use crate::config::tests::{env_of, resolve};
    use std::path::Path;

    #[test]
    fn hosted_search_needs_a_key() {
        let flags = Overrides {
            search_backend: Some(SearchBackend::Tavily),
            ..Default::default()
        };
        let err = resolve(&flags, &env_of(&[])).unwrap_err();
        assert!(
            err.hint().unwrap().contains("GROUND_TAVILY_API_KEY"),
            "{err:?}"
        );
        let s = resolve(&flags, &env_of(&[("TAVILY_API_KEY", "tvly-secret")])).unwrap();
        assert_eq!(s.search.url.as_str(), "https://api.tavily.com/");
        assert!(!format!("{s:?}").contains("tvly-secret"));
    }

    /// A keyring holding `pairs`, recording which names were asked for.
    fn keyring_of(
        pairs: &[(KeyName, &str)],
        asked: &std::cell::RefCell<Vec<KeyName>>,
    ) -> impl Fn(KeyName) -> Lookup {
        let map: Vec<(KeyName, String)> = pairs.iter().map(|(n, k)| (*n, k.to_string())).collect();
        move |name| {
            asked.borrow_mut().push(name);
            map.iter()
                .find(|(n, _)| *n == name)
                .map_or(Lookup::Absent, |(_, k)| Lookup::Found(k.clone()))
        }
    }

    #[test]
    fn with_auto_the_hosted_keys_come_from_env_or_file_and_the_keyring_waits() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("auto.toml");
        std::fs::write(&config, "[search]\napi_key = \"tvly-fromTHEfile0123456\"\n").unwrap();
        let flags = Overrides {
            config_path: Some(config),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Brave, "BSAfromTHEkeyring")], &asked);
        let env = [("GROUND_BRAVE_API_KEY", "BSAfromTHEenvironment01")];
        let s = resolve_with_keyring(&flags, &env_of(&env), &keyring).unwrap();
        assert_eq!(s.search.backend, SearchBackend::Auto);
        let hosted: Vec<(SearchBackend, Option<&str>)> = s
            .search
            .hosted
            .iter()
            .map(|h| (h.backend, h.api_key.as_ref().map(|k| k.expose())))
            .collect();
        assert_eq!(
            hosted,
            [
                (SearchBackend::Brave, Some("BSAfromTHEenvironment01")),
                // `api_key` is Tavily's by its form, never Brave's.
                (SearchBackend::Tavily, Some("tvly-fromTHEfile0123456")),
            ]
        );
        assert!(s.search.api_key.is_none());
        // Asked only when SearXNG does not answer (search::auto), never here.
        assert!(asked.borrow().is_empty(), "{:?}", asked.borrow());
        // `ground key status` says where they come from.
        let flags = Overrides {
            config_path: Some(dir.path().join("auto.toml")),
            ..Default::default()
        };
        let sources = key_sources(&flags, &env_of(&[]), &|_| Lookup::Absent).unwrap();
        assert_eq!(
            sources[1],
            (KeyName::Tavily, KeySource::File("[search] api_key"))
        );
        assert_eq!(sources[0], (KeyName::Brave, KeySource::None(None)));
    }

    #[test]
    fn keys_come_from_env_then_config_then_keyring() {
        let dir = tempfile::tempdir().unwrap();
        let with_key = dir.path().join("with-key.toml");
        std::fs::write(&with_key, "[search]\napi_key = \"BSAfromTHEfile\"\n").unwrap();
        let brave = |config: Option<&Path>| Overrides {
            search_backend: Some(SearchBackend::Brave),
            config_path: config.map(Path::to_path_buf),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Brave, "BSAfromTHEkeyring")], &asked);
        let key = |flags: &Overrides, env: &[(&str, &str)]| {
            resolve_with_keyring(flags, &env_of(env), &keyring)
                .unwrap()
                .search
                .api_key
                .unwrap()
                .expose()
                .to_string()
        };
        // env > config > keyring, and the keyring is asked only when nothing else has it.
        let env = [("GROUND_BRAVE_API_KEY", "BSAfromTHEenv")];
        assert_eq!(key(&brave(Some(&with_key)), &env), "BSAfromTHEenv");
        assert_eq!(key(&brave(Some(&with_key)), &[]), "BSAfromTHEfile");
        assert!(asked.borrow().is_empty(), "asked: {:?}", asked.borrow());
        assert_eq!(key(&brave(None), &[]), "BSAfromTHEkeyring");
        assert_eq!(*asked.borrow(), [KeyName::Brave]);
        // SearXNG needs no key and never asks.
        asked.borrow_mut().clear();
        resolve_with_keyring(&Overrides::default(), &env_of(&[]), &keyring).unwrap();
        assert!(asked.borrow().is_empty());
    }

    #[test]
    fn a_keyring_without_the_key_or_unreachable_is_an_error_only_when_needed() {
        let tavily = Overrides {
            search_backend: Some(SearchBackend::Tavily),
            ..Default::default()
        };
        let absent = |_| Lookup::Absent;
        let err = resolve_with_keyring(&tavily, &env_of(&[]), &absent).unwrap_err();
        assert!(matches!(err, Error::MissingKey { keyring: None, .. }));
        assert!(
            err.hint().unwrap().contains("ground key set tavily"),
            "{err:?}"
        );

        let locked = |_| Lookup::Unavailable("the collection is locked".into());
        let err = resolve_with_keyring(&tavily, &env_of(&[]), &locked).unwrap_err();
        assert!(
            err.to_string().contains("the collection is locked"),
            "{err}"
        );
        assert!(err.hint().unwrap().contains("ground key set tavily"));
        // Not needed: no error, whatever the keyring says.
        assert!(resolve_with_keyring(&Overrides::default(), &env_of(&[]), &locked).is_ok());
        let hosted = Overrides {
            llm_backend: Some(LlmBackend::OpenAi),
            llm_url: Some("https://api.example.com/v1".into()),
            ..Default::default()
        };
        let s = resolve_with_keyring(&hosted, &env_of(&[]), &locked).unwrap();
        assert!(s.llm.api_key.is_none());
    }

    #[test]
    fn the_model_key_comes_from_the_keyring_only_for_a_hosted_server() {
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Llm, "sk-from-keyring")], &asked);
        let openai = |url: &str| Overrides {
            llm_backend: Some(LlmBackend::OpenAi),
            llm_url: Some(url.into()),
            ..Default::default()
        };
        let s = resolve_with_keyring(
            &openai("https://api.example.com/v1"),
            &env_of(&[]),
            &keyring,
        )
        .unwrap();
        assert_eq!(s.llm.api_key.unwrap().expose(), "sk-from-keyring");
        let env = [("GROUND_LLM_API_KEY", "sk-from-env")];
        let s = resolve_with_keyring(
            &openai("https://api.example.com/v1"),
            &env_of(&env),
            &keyring,
        )
        .unwrap();
        assert_eq!(s.llm.api_key.unwrap().expose(), "sk-from-env");
        asked.borrow_mut().clear();
        for local in [
            "http://127.0.0.1:8080/v1",
            "http://localhost:8080/v1",
            "http://[::1]:1/",
        ] {
            let s = resolve_with_keyring(&openai(local), &env_of(&[]), &keyring).unwrap();
            assert!(s.llm.api_key.is_none(), "{local}");
        }
        assert!(
            asked.borrow().is_empty(),
            "a local server never asks the keyring"
        );
    }

    #[test]
    fn key_sources_name_where_each_key_comes_from() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("c.toml");
        std::fs::write(
            &config,
            "[search]\nbackend = \"tavily\"\napi_key = \"tvly-file\"\n[llm]\napi_key = \"sk-file\"\n",
        )
        .unwrap();
        let flags = Overrides {
            config_path: Some(config),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Brave, "BSAfromTHEkeyring")], &asked);
        let sources = key_sources(
            &flags,
            &env_of(&[("GROUND_LLM_API_KEY", "sk-env")]),
            &keyring,
        )
        .unwrap();
        assert_eq!(
            sources,
            [
                (KeyName::Brave, KeySource::Keyring),
                (KeyName::Tavily, KeySource::File("[search] api_key")),
                (KeyName::Llm, KeySource::Env("GROUND_LLM_API_KEY")),
                (KeyName::Redis, KeySource::None(None)),
            ]
        );
        let locked = |_| Lookup::Unavailable("locked".into());
        let sources = key_sources(&Overrides::default(), &env_of(&[]), &locked).unwrap();
        assert_eq!(
            sources[0],
            (KeyName::Brave, KeySource::None(Some("locked".into())))
        );
    }

    #[test]
    fn the_redis_password_is_the_used_url_s_else_the_keyring_s() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("c.toml");
        std::fs::write(
            &config,
            "[state]\nredis_url = \"redis://:fromTHEfile@h:6379/0\"\n",
        )
        .unwrap();
        let flags = Overrides {
            config_path: Some(config),
            ..Default::default()
        };
        let asked = std::cell::RefCell::new(Vec::new());
        let keyring = keyring_of(&[(KeyName::Redis, "fromTHEkeyring")], &asked);
        let redis =
            |env: &[(&str, &str)]| key_sources(&flags, &env_of(env), &keyring).unwrap()[3].clone();
        assert_eq!(
            redis(&[]),
            (KeyName::Redis, KeySource::File("[state] redis_url"))
        );
        assert_eq!(
            redis(&[("GROUND_REDIS_URL", "redis://:fromTHEenv@h/0")]),
            (KeyName::Redis, KeySource::Env("GROUND_REDIS_URL"))
        );
        // The environment's URL is the one used: without a password, the keyring's.
        assert_eq!(
            redis(&[("GROUND_REDIS_URL", "redis://h/0")]),
            (KeyName::Redis, KeySource::Keyring)
        );
    }
}
