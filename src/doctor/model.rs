//! `ground doctor`'s model checks: the model server answers its model list (Ollama's
//! `/api/tags` or the OpenAI API's `/v1/models`), the configured model is there, and
//! the context window the prompt is fitted to (against the model's trained length
//! when Ollama says it).
//!
//! Apart from the search checks because the two share nothing but the [`Check`] they
//! return; the bounded GET and the hints for a wrong server are the model's alone.

use std::time::Duration;

use serde_json::{Value, json};
use url::Url;

use super::{Area, CHECK_TIMEOUT, Check};
use crate::error::Error;
use crate::settings::{LlmBackend, LlmSettings, Settings};
use crate::text::sanitize_line;

pub(super) async fn model_checks(settings: &Settings) -> Vec<Check> {
    // `--llm auto` is resolved as `ground answer` resolves it, and says how.
    let chosen = crate::llm::choose(&settings.llm).await;
    let mut settings = settings.clone();
    settings.llm = chosen.settings;
    let mut llm = settings.llm.clone();
    llm.timeout = llm.timeout.min(CHECK_TIMEOUT);
    let mut checks: Vec<Check> = chosen
        .note
        .map(|note| Check::ok("model.backend", Area::Model, format!("--llm auto: {note}")))
        .into_iter()
        .collect();
    let (more, trained) = match llm.backend {
        LlmBackend::Ollama | LlmBackend::Auto => ollama_checks(&llm).await,
        LlmBackend::OpenAi => (openai_checks(&llm).await, None),
        LlmBackend::Embedded => super::embedded::embedded_checks(&llm).await,
    };
    checks.extend(more);
    if let Some(time) = super::answer_time(&llm, &settings.cache) {
        checks.push(Check::ok("model.speed", Area::Model, time.describe()));
    }
    checks.push(context_check(&settings, trained));
    checks
}

/// Ollama's checks, and the model's trained context length when the server said.
async fn ollama_checks(llm: &LlmSettings) -> (Vec<Check>, Option<u64>) {
    let url = crate::http::display_url(&llm.url);
    let client = match crate::llm::client::http_client(llm) {
        Ok(c) => c,
        Err(e) => {
            return (
                vec![Check::from_error("model.reachable", Area::Model, &e)],
                None,
            );
        }
    };
    let listed = match get_json(&client, llm, endpoint(&llm.url, "/api/tags")).await {
        Ok(v) => v,
        Err(check) => return (vec![check], None),
    };
    let Some(models) = listed.get("models").and_then(Value::as_array) else {
        return (vec![not_the_api(llm, "/api/tags")], None);
    };
    let names: Vec<String> = models
        .iter()
        .filter_map(|m| m.get("name").or_else(|| m.get("model"))?.as_str())
        .map(sanitize_line)
        .collect();
    let reachable = answers(
        format!("Ollama at {url}"),
        format!("{} installed", count(names.len(), "model")),
    );
    // `llama3.2` is `llama3.2:latest` to Ollama.
    let wanted = with_tag(&llm.model);
    let found = models.iter().find_map(|m| {
        ["name", "model"]
            .iter()
            .filter_map(|k| m.get(*k)?.as_str())
            .find(|n| with_tag(n) == wanted)
    });
    let model = &llm.model;
    let Some(found) = found else {
        let installed = if names.is_empty() {
            "no models are installed".to_string()
        } else {
            format!("installed: {}", names.join(", "))
        };
        let missing = Check::fail(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not installed; {installed}"),
            format!(
                "download it with `ollama pull {model}`, or use an installed one with --model NAME"
            ),
        );
        return (vec![reachable, missing], None);
    };
    let shown = if found == model {
        String::new()
    } else {
        format!(" (as {})", sanitize_line(found))
    };
    let installed = Check::ok(
        "model.installed",
        Area::Model,
        format!("model {model:?} is installed{shown}"),
    );
    let trained = trained_context(&client, llm, found).await;
    (vec![reachable, installed], trained)
}

/// `NAME` as Ollama stores it: with `:latest` when no tag is given.
fn with_tag(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    if last.contains(':') {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// The model's trained context length from `POST /api/show` (`model_info.
/// <arch>.context_length`), when the server says; any failure means "unknown".
async fn trained_context(client: &reqwest::Client, llm: &LlmSettings, model: &str) -> Option<u64> {
    let reply = client
        .post(endpoint(&llm.url, "/api/show"))
        .json(&json!({"model": model}))
        .send()
        .await
        .ok()?;
    if !reply.status().is_success() {
        return None;
    }
    let body = crate::http::read_bounded(reply, crate::llm::MAX_REPLY_BYTES)
        .await
        .ok()?;
    let value: Value = serde_json::from_slice(&body.bytes).ok()?;
    value
        .get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

async fn openai_checks(llm: &LlmSettings) -> Vec<Check> {
    let url = crate::http::display_url(&llm.url);
    let client = match crate::llm::client::http_client(llm) {
        Ok(c) => c,
        Err(e) => return vec![Check::from_error("model.reachable", Area::Model, &e)],
    };
    let base = llm.url.path().trim_end_matches('/');
    let path = if base.ends_with("/v1") {
        "/models"
    } else {
        "/v1/models"
    };
    let listed = match get_json(&client, llm, endpoint(&llm.url, path)).await {
        Ok(v) => v,
        Err(check) => return vec![check],
    };
    let Some(data) = listed.get("data").and_then(Value::as_array) else {
        return vec![not_the_api(llm, "/v1/models")];
    };
    let ids: Vec<String> = data
        .iter()
        .filter_map(|m| m.get("id")?.as_str())
        .map(sanitize_line)
        .collect();
    let reachable = answers(
        format!("OpenAI-compatible server at {url}"),
        format!("{} served", count(ids.len(), "model")),
    );
    let model = &llm.model;
    let check = if ids.iter().any(|id| id == model) {
        Check::ok(
            "model.installed",
            Area::Model,
            format!("model {model:?} is served"),
        )
    } else if let [only] = ids.as_slice() {
        Check::warn(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not listed; the server serves only {only:?}"),
            format!(
                "use --model {only:?} (llama.cpp's llama-server answers with its one model whatever the name; vLLM and LM Studio refuse other names)"
            ),
        )
    } else {
        let served = if ids.is_empty() {
            "the server lists no models".to_string()
        } else {
            format!("served: {}", ids.join(", "))
        };
        Check::fail(
            "model.installed",
            Area::Model,
            format!("model {model:?} is not served; {served}"),
            "use one of the served names with --model NAME, or load the model on the server".into(),
        )
    };
    vec![reachable, check]
}

/// GETs a JSON document from the model server (with the bearer key when one is
/// configured), turning every failure into a failed `model.reachable` check.
async fn get_json(client: &reqwest::Client, llm: &LlmSettings, url: Url) -> Result<Value, Check> {
    let api_path = url.path().to_string();
    let mut request = client.get(url);
    if let Some(key) = &llm.api_key {
        request = request.bearer_auth(key.expose());
    }
    let seconds = llm.timeout.as_secs();
    let reply = tokio::time::timeout(llm.timeout + Duration::from_secs(1), async {
        let reply = request.send().await?;
        let status = reply.status().as_u16();
        // Bounded like every reply; a cut body then fails to parse as JSON.
        let body = crate::http::read_bounded(reply, crate::llm::MAX_REPLY_BYTES).await?;
        Ok::<_, reqwest::Error>((status, body.bytes))
    })
    .await;
    let unreachable = |reason: String| {
        Check::from_error(
            "model.reachable",
            Area::Model,
            &Error::ModelUnreachable {
                backend: llm.backend,
                url: crate::http::display_url(&llm.url),
                reason,
            },
        )
    };
    let (status, bytes) = match reply {
        Err(_) => return Err(unreachable(format!("no answer within {seconds} s"))),
        Ok(Err(e)) if e.is_timeout() => {
            return Err(unreachable(format!("no answer within {seconds} s")));
        }
        Ok(Err(e)) => return Err(unreachable(crate::http::describe_error(&e))),
        Ok(Ok(r)) => r,
    };
    if status == 401 || status == 403 {
        let e = Error::ModelAuth {
            status,
            message: crate::llm::client::error_message(&bytes),
        };
        return Err(Check::from_error("model.reachable", Area::Model, &e));
    }
    if status != 200 {
        return Err(Check::fail(
            "model.reachable",
            Area::Model,
            format!(
                "{} server at {} answered HTTP {status} to GET {api_path}: {}",
                llm.backend,
                crate::http::display_url(&llm.url),
                crate::llm::client::error_message(&bytes)
            ),
            wrong_server_hint(llm.backend),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|_| not_the_api(llm, &api_path))
}

/// The model server `server` answered its model list, which holds `listed`.
fn answers(server: String, listed: String) -> Check {
    Check::ok(
        "model.reachable",
        Area::Model,
        format!("{server} answers ({listed})"),
    )
}

fn not_the_api(llm: &LlmSettings, api_path: &str) -> Check {
    Check::fail(
        "model.reachable",
        Area::Model,
        format!(
            "the server at {} answered GET {api_path}, but not with the {} API's model list",
            crate::http::display_url(&llm.url),
            llm.backend
        ),
        wrong_server_hint(llm.backend),
    )
}

fn wrong_server_hint(backend: LlmBackend) -> String {
    match backend {
        LlmBackend::Ollama => format!(
            "point --llm-url (or OLLAMA_HOST) at Ollama, by default {}; for llama-server, vLLM or LM Studio use --llm openai",
            crate::settings::DEFAULT_OLLAMA_URL
        ),
        LlmBackend::OpenAi => format!(
            "point --llm-url at the server's OpenAI API, e.g. {}; for Ollama's own API use --llm ollama",
            crate::settings::DEFAULT_OPENAI_URL
        ),
        LlmBackend::Embedded => "the embedded model needs no server".into(),
        LlmBackend::Auto => {
            "point --llm-url (or OLLAMA_HOST) at Ollama, or use --llm embedded".into()
        }
    }
}

/// The window the prompt is fitted to, split the way `ground answer` splits it.
fn context_check(settings: &Settings, trained: Option<u64>) -> Check {
    let llm = &settings.llm;
    let pages = settings.fetch.pages;
    let overhead = crate::llm::prompt_overhead_tokens("");
    let sources = llm
        .context_tokens
        .saturating_sub(llm.max_answer_tokens)
        .saturating_sub(overhead)
        .saturating_mul(97)
        / 100;
    let detail = format!(
        "context window {} tokens: {} for the answer, about {overhead} for instructions, about {sources} for {}",
        llm.context_tokens,
        llm.max_answer_tokens,
        count(pages, "source")
    );
    match trained {
        Some(trained) if u64::from(llm.context_tokens) > trained => Check::warn(
            "model.context",
            Area::Model,
            format!("{detail}; the model was trained for {trained} tokens only"),
            format!(
                "use --context-tokens {trained} (or [llm] context_tokens = {trained} in the config file)"
            ),
        ),
        Some(trained) => Check::ok(
            "model.context",
            Area::Model,
            format!("{detail} (the model was trained for {trained})"),
        ),
        None if llm.backend == LlmBackend::OpenAi => Check::ok(
            "model.context",
            Area::Model,
            format!(
                "{detail}; the server's own window must be at least this (llama-server -c {})",
                llm.context_tokens
            ),
        ),
        None => Check::ok("model.context", Area::Model, detail),
    }
}

/// `{base}{path}`, keeping a base path (e.g. behind a reverse proxy).
fn endpoint(base: &Url, path: &str) -> Url {
    let mut url = base.clone();
    let joined = format!("{}{path}", url.path().trim_end_matches('/'));
    url.set_path(&joined);
    url.set_query(None);
    url
}

/// "1 model", "3 models".
fn count(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untagged_names_match_latest() {
        assert_eq!(with_tag("llama3.2"), "llama3.2:latest");
        assert_eq!(with_tag("llama3.2:latest"), "llama3.2:latest");
        assert_eq!(with_tag("qwen2.5:7b"), "qwen2.5:7b");
        assert_eq!(
            with_tag("registry.local:5000/me/model"),
            "registry.local:5000/me/model:latest"
        );
    }
}
