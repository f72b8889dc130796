//! `ground doctor`: checks the configured search service and model server (and the
//! Redis of shared state, when one is named: `state`) and says exactly what to fix.
//!
//! The checks run in the order a request travels: the config file and settings, then
//! the search service (reachable, SearXNG's limiter, SearXNG's JSON format, a test
//! query's results) and the model server (reachable, model installed, context window).
//! The search and model checks run concurrently, each under its own time limit (the
//! configured one, capped at [`CHECK_TIMEOUT`]), so doctor never hangs.
//!
//! The search checks send one real search through [`crate::search::search`], the very
//! code `ground answer` uses, so a passing doctor means the same headers, parameters
//! and reply parsing work; each failure that search maps to an [`Error`] becomes the
//! check it diagnoses. A check that depends on an earlier failed one is left out
//! rather than guessed: a SearXNG that cannot be reached says nothing about its
//! limiter.
//!
//! Exit code: [`exit::SEARCH`] when a search check fails, else [`exit::MODEL`] when a
//! model check fails, else [`exit::USAGE`] when the configuration is invalid, else 0
//! (warnings allowed).
//!
//! The checks come back as plain [`Check`]s, and [`exit_code`] says what they mean for
//! the process; printing them (for a person or as JSON) is
//! [`crate::render::doctor`]'s, and running them on a runtime is the binary's. This
//! module holds the checks' data, the order they run in and the configuration checks;
//! `search` and `model` hold the probes of the two services, `embedded` the embedded
//! model's checks (engine built in, model file and its checksum, memory), run when
//! `--llm embedded` is set or `--llm auto` picks it; `answer_time` how long an answer
//! takes with the embedded model, which doctor says and so does the binary's line
//! naming the model `--llm auto` chose.

mod answer_time;
mod embedded;
mod model;
mod search;
mod state;

use std::time::Duration;

use serde::Serialize;

pub use self::answer_time::{AnswerTime, answer_time};
use self::model::model_checks;
use self::search::search_checks;
use crate::config::{self, Overrides};
use crate::error::{Error, exit};
use crate::settings::{SearchBackend, Settings};
use crate::text::{sanitize_line, shorten};

/// The longest any one check may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// The test query: a word every general-purpose engine has results for.
pub const TEST_QUERY: &str = "wikipedia";

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Works.
    Ok,
    /// Works, but something deserves attention.
    Warn,
    /// Broken: `ground answer` will fail until it is fixed.
    Fail,
}

/// Which part of the setup a check is about; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// The config file and settings.
    Config,
    /// The search service.
    Search,
    /// The model server.
    Model,
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Stable machine name, e.g. `search.json`.
    pub name: &'static str,
    /// ok, warn or fail.
    pub status: Status,
    /// What was checked and what was found, one line.
    pub detail: String,
    /// The exact fix (may span lines); present on fail and warn.
    pub hint: Option<String>,
    #[serde(skip)]
    area: Area,
}

impl Check {
    /// A check named `name` about `area`, without a hint.
    pub(crate) fn new(
        name: &'static str,
        area: Area,
        status: Status,
        detail: impl Into<String>,
    ) -> Self {
        Check {
            name,
            status,
            detail: detail.into(),
            hint: None,
            area,
        }
    }

    /// A check that passed.
    pub(crate) fn ok(name: &'static str, area: Area, detail: impl Into<String>) -> Self {
        Self::new(name, area, Status::Ok, detail)
    }

    /// A check that passed with something to look at, and what to do about it.
    pub(crate) fn warn(
        name: &'static str,
        area: Area,
        detail: impl Into<String>,
        hint: String,
    ) -> Self {
        Self::new(name, area, Status::Warn, detail).with_hint(hint)
    }

    /// A check that failed, with the fix.
    pub(crate) fn fail(
        name: &'static str,
        area: Area,
        detail: impl Into<String>,
        hint: String,
    ) -> Self {
        Self::new(name, area, Status::Fail, detail).with_hint(hint)
    }

    /// The same check with `hint` as its fix.
    fn with_hint(mut self, hint: String) -> Self {
        self.hint = Some(hint);
        self
    }

    /// A failed check from an error: its message (without the "invalid
    /// configuration" prefix of config errors) and its hint.
    pub(crate) fn from_error(name: &'static str, area: Area, error: &Error) -> Self {
        let message = match error {
            Error::Config { message, .. } => message.clone(),
            Error::MissingKey { backend, keyring } => match keyring {
                None => format!("{backend} needs an API key and none is set"),
                Some(why) => format!(
                    "{backend} needs an API key and none is set (the OS keyring could not be asked: {why})"
                ),
            },
            other => other.to_string(),
        };
        Self::fail(
            name,
            area,
            sanitize_line(&message),
            error.hint().unwrap_or_default(),
        )
    }

    /// Which part of the setup this check is about.
    pub fn area(&self) -> Area {
        self.area
    }
}

/// Runs every check and returns them in order. API keys never appear in the result.
pub async fn diagnose(overrides: &Overrides, env: &dyn Fn(&str) -> Option<String>) -> Vec<Check> {
    let (mut checks, settings) = config_checks(overrides, env);
    let Some((settings, search_ok)) = settings else {
        return checks;
    };
    // Concurrent, each bounded by its own time limit inside.
    let search = async {
        if search_ok {
            search_checks(&settings.search).await
        } else {
            Vec::new()
        }
    };
    let (search, model, state) = tokio::join!(
        search,
        model_checks(&settings),
        state::state_check(&settings)
    );
    checks.extend(search);
    checks.extend(model);
    checks.extend(state);
    redact(&mut checks, &settings);
    checks
}

/// The process exit code for these checks: search failures first, then model
/// failures, then configuration.
pub fn exit_code(checks: &[Check]) -> i32 {
    let failed = |area| {
        checks
            .iter()
            .any(|c| c.status == Status::Fail && c.area == area)
    };
    if failed(Area::Search) {
        exit::SEARCH
    } else if failed(Area::Model) {
        exit::MODEL
    } else if failed(Area::Config) {
        exit::USAGE
    } else {
        exit::SUCCESS
    }
}

// ---------------------------------------------------------------------------
// Configuration

/// The config file check and the resolved settings. The settings are `None` when the
/// configuration is unusable (nothing else can be checked); the flag says whether
/// the search service can be checked (false when its API key is missing, which is
/// reported as a failed search check while the model is still checked).
fn config_checks(
    overrides: &Overrides,
    env: &dyn Fn(&str) -> Option<String>,
) -> (Vec<Check>, Option<(Settings, bool)>) {
    let (path, explicit) = match &overrides.config_path {
        Some(p) => (Some(p.clone()), true),
        None => (
            config::default_config_path(env),
            env("GROUND_CONFIG").is_some(),
        ),
    };
    let file_detail = match &path {
        None => "no config file (HOME is not set), using defaults".to_string(),
        Some(p) => match config::load_file(p, explicit) {
            Ok(None) => format!(
                "no config file ({} does not exist), using defaults",
                p.display()
            ),
            Ok(Some(_)) => format!("{} is valid", p.display()),
            Err(e) => return (vec![config_fail(&e)], None),
        },
    };
    match config::resolve(overrides, env) {
        Ok(settings) => (
            vec![Check::ok("config", Area::Config, file_detail)],
            Some((settings, true)),
        ),
        Err(e @ Error::MissingKey { .. }) => {
            // A hosted search API without a key: a search failure, and the model can
            // still be checked with the rest of the settings.
            let on_searxng = Overrides {
                search_backend: Some(SearchBackend::Searxng),
                ..overrides.clone()
            };
            match config::resolve(&on_searxng, env) {
                Ok(settings) => (
                    vec![
                        Check::ok("config", Area::Config, file_detail),
                        Check::from_error("search.api_key", Area::Search, &e),
                    ],
                    Some((settings, false)),
                ),
                Err(_) => (vec![config_fail(&e)], None),
            }
        }
        Err(e) => (vec![config_fail(&e)], None),
    }
}

fn config_fail(error: &Error) -> Check {
    let mut check = Check::from_error("config", Area::Config, error);
    check.detail.push_str("; nothing else was checked");
    check
}

/// Removes any API key that slipped into a message (a server echoing it back), with
/// the one redactor, before shortening.
fn redact(checks: &mut [Check], settings: &Settings) {
    let keys: Vec<&str> = [&settings.search.api_key, &settings.llm.api_key]
        .into_iter()
        .flatten()
        .map(|k| k.expose())
        .collect();
    for check in checks {
        check.detail = shorten(&crate::text::redact(&check.detail, &keys), 600);
        if let Some(hint) = &mut check.hint {
            *hint = crate::text::redact(hint, &keys);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use url::Url;

    #[test]
    fn exit_code_prefers_search_then_model_then_config() {
        let fail = |area| Check::fail("x", area, "d", "h".into());
        let ok = Check::ok("y", Area::Search, "d");
        assert_eq!(exit_code(std::slice::from_ref(&ok)), exit::SUCCESS);
        assert_eq!(
            exit_code(&[fail(Area::Config), fail(Area::Model)]),
            exit::MODEL
        );
        assert_eq!(
            exit_code(&[fail(Area::Model), fail(Area::Search)]),
            exit::SEARCH
        );
        assert_eq!(exit_code(&[ok, fail(Area::Config)]), exit::USAGE);
    }

    #[test]
    fn passwords_stay_out_of_urls() {
        let url = Url::parse("http://me:hunter2@searx.example/").unwrap();
        assert_eq!(
            crate::http::display_url(&url),
            "http://me:redacted@searx.example"
        );
    }
}
