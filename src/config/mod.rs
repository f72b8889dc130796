//! Settings: command-line flags over environment variables over the config file over
//! the OS keyring (API keys only) over defaults, resolved once into a [`Settings`]
//! value that the pipeline reads.
//!
//! All precedence logic lives here, so that no stage ever looks at a flag, a variable
//! or the file itself, and a setting means the same in `ground answer`, `ground mcp`
//! and `ground doctor`. The environment and the keyring are given as lookup functions,
//! so that tests never depend on (or change) the real process environment and need no
//! keyring daemon.
//!
//! The entry points are [`resolve()`] (and [`resolve_with_keyring`], with the keyring
//! given) for a run, and [`key_sources`] for `ground key status`. Beneath them, each
//! concern is a file of its own:
//! - `overrides.rs`: [`Overrides`], the command line's values as data;
//! - `file.rs`: the config file's TOML format, where it is looked for, and reading it
//!   (bounded at 1 MiB);
//! - `resolve.rs`: one resolver per section of the settings (search, llm, fetch, run,
//!   cache), each with its checks;
//! - `keys.rs`: where each API key comes from, and [`KeySource`].
//!
//! Errors are [`Error::Config`] (or [`Error::MissingKey`] for a hosted search backend
//! without a key), naming where the wrong value came from and how to fix it.

mod file;
mod keys;
mod overrides;
mod resolve;
mod serve;
mod state;

pub(crate) use file::{default_config_path, load_file};
pub use keys::{KeySource, key_sources};
pub use overrides::Overrides;

use crate::error::Error;
use crate::keystore::{self, KeyName, Lookup};
use crate::settings::Settings;

/// Resolves every setting: flags > environment > config file > OS keyring (API keys
/// only) > defaults. The keyring is asked only for a key that is needed and set
/// nowhere else, with [`keystore::get`] (bounded by [`keystore::TIMEOUT`]).
pub fn resolve(flags: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Result<Settings, Error> {
    resolve_with_keyring(flags, env, &keystore::get)
}

/// [`resolve()`] with the keyring given as a lookup function, as the environment is,
/// so that tests need no keyring daemon.
///
/// The sections are resolved in the order search, llm, fetch, run, cache; the first
/// value that is wrong is the error.
pub fn resolve_with_keyring(
    flags: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
    keyring: &dyn Fn(KeyName) -> Lookup,
) -> Result<Settings, Error> {
    let file = file::load_chosen(flags.config_path.as_deref(), env)?;
    // A variable set to nothing (or only spaces) is not given.
    let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let search = resolve::search(flags, &env, &file, keyring)?;
    let llm = resolve::llm(flags, &env, &file, keyring)?;
    let fetch = resolve::fetch(flags, &env, &file)?;
    let run = resolve::run(flags, &file)?;
    let cache = resolve::cache(flags, &env, &file);
    let serve = serve::serve(flags, &env, &file)?;
    let docs = resolve::docs(flags, &env, &file)?;
    let state = state::shared(flags, &env, &file, keyring)?;
    // One place says where the shared state is; the search stage, which keeps its
    // rate limit there, gets its copy of it here (the cache is opened with it:
    // `Cache::open_shared`).
    let mut search = search;
    search.shared = state.clone();
    Ok(Settings {
        search,
        fetch,
        llm,
        run,
        cache,
        serve,
        docs,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::path::Path;

    /// The resolution under test, with no keyring at all.
    pub(super) fn resolve(
        flags: &Overrides,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, Error> {
        resolve_with_keyring(flags, env, &|_| Lookup::Absent)
    }

    pub(super) fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn defaults_apply_without_anything() {
        let s = resolve(&Overrides::default(), &env_of(&[])).unwrap();
        assert_eq!(s.search.url.as_str(), "http://localhost:8080/");
        assert_eq!(s.llm.url.as_str(), "http://localhost:11434/");
        assert_eq!(s.fetch.pages, 3);
        assert_eq!(s.llm.context_tokens, 4096);
        assert!(!s.fetch.allow_private_addresses);
    }

    #[test]
    fn flags_beat_env_beat_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm]\nmodel = \"from-file\"\n[fetch]\npages = 5\n").unwrap();
        let flags = Overrides {
            config_path: Some(path.clone()),
            ..Default::default()
        };
        let s = resolve(&flags, &env_of(&[("GROUND_MODEL", "from-env")])).unwrap();
        assert_eq!(s.llm.model, "from-env");
        assert_eq!(s.fetch.pages, 5);
        let flags = Overrides {
            model: Some("from-flag".into()),
            ..flags
        };
        let s = resolve(&flags, &env_of(&[("GROUND_MODEL", "from-env")])).unwrap();
        assert_eq!(s.llm.model, "from-flag");
    }

    #[test]
    fn example_config_parses_and_states_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
        let flags = Overrides {
            config_path: Some(path),
            ..Default::default()
        };
        let from_example = resolve(&flags, &env_of(&[])).unwrap();
        let defaults = resolve(&Overrides::default(), &env_of(&[])).unwrap();
        assert_eq!(format!("{from_example:?}"), format!("{defaults:?}"));
    }

    #[test]
    fn clients_are_isolated_by_default_only_off_loopback() {
        // R5 findings 11-12: one person's loopback server shares its caches; a server
        // others reach does not, unless told to.
        let isolated = |flags: &Overrides, env: &[(&str, &str)]| {
            resolve(flags, &env_of(env)).unwrap().serve.isolate_clients
        };
        let plain = Overrides::default();
        assert!(!isolated(&plain, &[]));
        let beyond = Overrides {
            serve_listen: Some("0.0.0.0:8088".into()),
            ..Default::default()
        };
        assert!(isolated(&beyond, &[]));
        assert!(isolated(
            &Overrides {
                serve_listen: Some("[::1]:8088".into()),
                serve_isolate_clients: Some(true),
                ..Default::default()
            },
            &[]
        ));
        assert!(isolated(&plain, &[("GROUND_SERVE_ISOLATE_CLIENTS", "yes")]));
        assert!(!isolated(&beyond, &[("GROUND_SERVE_ISOLATE_CLIENTS", "0")]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[serve]\nisolate_clients = false\n").unwrap();
        let from_file = Overrides {
            config_path: Some(path),
            ..beyond.clone()
        };
        assert!(!isolated(&from_file, &[]));
        // The flag beats the environment, which beats the file.
        let flag = Overrides {
            serve_isolate_clients: Some(true),
            ..from_file.clone()
        };
        assert!(isolated(
            &flag,
            &[("GROUND_SERVE_ISOLATE_CLIENTS", "false")]
        ));
        assert!(isolated(
            &from_file,
            &[("GROUND_SERVE_ISOLATE_CLIENTS", "true")]
        ));
        assert!(matches!(
            resolve(
                &plain,
                &env_of(&[("GROUND_SERVE_ISOLATE_CLIENTS", "maybe")])
            ),
            Err(Error::Config { .. })
        ));
    }

    #[test]
    fn bad_values_are_config_errors() {
        let bad_url = Overrides {
            searxng_urls: vec!["localhost:8080".into()],
            ..Default::default()
        };
        assert!(matches!(
            resolve(&bad_url, &env_of(&[])),
            Err(Error::Config { .. })
        ));
        assert!(matches!(
            resolve(&Overrides::default(), &env_of(&[("GROUND_PAGES", "many")])),
            Err(Error::Config { .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "[llm]\nmodle = \"x\"\n").unwrap();
        let flags = Overrides {
            config_path: Some(path),
            ..Default::default()
        };
        let err = resolve(&flags, &env_of(&[])).unwrap_err();
        assert!(err.to_string().contains("modle"), "{err}");
        let missing = Overrides {
            config_path: Some("/nonexistent/ground.toml".into()),
            ..Default::default()
        };
        assert!(matches!(
            resolve(&missing, &env_of(&[])),
            Err(Error::Config { .. })
        ));
    }
}
