//! API keys never leak: with known fake keys in GROUND_LLM_API_KEY,
//! GROUND_BRAVE_API_KEY and GROUND_TAVILY_API_KEY, every command (`answer` with `-v`
//! and `--events`, `search`, `fetch`, `doctor`, each with and without `--json`) on
//! success and failure paths prints none of them on stdout, stderr or the events
//! stream -- even when a server echoes the key back in its error message, as some
//! hosted APIs do. Each key also goes only to its own server: never to the pages, and
//! never to the other service.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const LLM_KEY: &str = "sk-llm-FAKE-7c1f9e2a4b3d";
const BRAVE_KEY: &str = "BSA-brave-FAKE-55d0e1f2a3";
const TAVILY_KEY: &str = "tvly-FAKE-a8b9c0d1e2f3";
const KEYS: [&str; 3] = [LLM_KEY, BRAVE_KEY, TAVILY_KEY];

/// Asserts that no key (nor a long piece of one) appears in `text`.
fn assert_no_key(what: &str, text: &str) {
    for key in KEYS {
        // The whole key, and its distinctive tail, which a server might echo alone.
        let tail = &key[key.len() - 12..];
        assert!(
            !text.contains(key) && !text.contains(tail),
            "{what} leaks the key {key}:\n{text}"
        );
    }
}

/// Every byte a run wrote, checked for keys; `label` says which run.
fn check_output(label: &str, out: &std::process::Output) {
    assert_no_key(&format!("{label}: stdout"), &stdout(out));
    assert_no_key(&format!("{label}: stderr"), &stderr(out));
}

/// `ground` with all three keys set, the given search backend (its API at
/// `world.searx`) and the OpenAI-compatible model API at `world.ollama`.
fn ground_with_keys(world: &World, search: &str) -> std::process::Command {
    let config = world.home.path().join(format!("keys-{search}.toml"));
    std::fs::write(
        &config,
        format!(
            "[search]\nbackend = \"{search}\"\nurl = \"{}\"\n",
            world.searx.uri()
        ),
    )
    .unwrap();
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_SEARCH") // the config file names the service
        .env("GROUND_CONFIG", &config)
        .env("GROUND_LLM_API_KEY", LLM_KEY)
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .env("GROUND_TAVILY_API_KEY", TAVILY_KEY)
        .env("GROUND_LLM", "openai")
        .env("GROUND_LLM_URL", format!("{}/v1", world.ollama.uri()))
        .env("GROUND_MODEL", "smollm2");
    cmd
}

fn completion(content: &str) -> serde_json::Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1763768412, "model": "smollm2",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        "usage": {"completion_tokens": 88, "prompt_tokens": 734, "total_tokens": 822}
    })
}

fn brave_results(pages: &MockServer) -> serde_json::Value {
    let page = |name: &str| format!("{}/pages/{name}.html", pages.uri());
    json!({"type": "search", "query": {"original": "q"}, "web": {"type": "search", "results": [
        {"title": "Tardigrades in space", "url": page("tardigrades-space"), "description": "FOTON-M3"},
        {"title": "Cryptobiosis", "url": page("tardigrades-cryptobiosis"), "description": "tun state"},
        {"title": "Overview", "url": page("tardigrades-overview"), "description": "water bears"}
    ]}})
}

/// Runs `ground answer` four ways (person with -v and --events -, --json with an
/// events file) plus `search` and `search --json`, and checks every output.
async fn run_everything(world: &World, search: &str, label: &str) {
    let events = world.home.path().join(format!("events-{label}.jsonl"));
    let runs: Vec<Vec<String>> = vec![
        vec![
            "answer",
            "-v",
            "--events",
            "-",
            "do tardigrades survive in space",
        ],
        vec!["answer", "--json", "-v", "--events"],
        vec!["search", "do tardigrades survive in space"],
        vec!["search", "--json", "do tardigrades survive in space"],
        vec!["doctor"],
        vec!["doctor", "--json"],
    ]
    .into_iter()
    .map(|args| args.into_iter().map(str::to_string).collect())
    .collect();
    for mut args in runs {
        if args.last().map(String::as_str) == Some("--events") {
            args.push(events.display().to_string());
            args.push("do tardigrades survive in space".into());
        }
        let mut cmd = ground_with_keys(world, search);
        cmd.args(&args);
        let out = run_within(cmd, RUN_DEADLINE).await;
        check_output(&format!("{label}: ground {}", args.join(" ")), &out);
    }
    // The events file is checked, never skipped: the runs above must have written it.
    let text = std::fs::read_to_string(&events)
        .unwrap_or_else(|e| panic!("{label}: the events file {}: {e}", events.display()));
    assert!(!text.trim().is_empty(), "{label}: the events file is empty");
    assert_no_key(&format!("{label}: events file"), &text);
}

/// What `server` recorded: at least one request, or the check that reads them would
/// pass having looked at nothing.
async fn recorded(server: &MockServer, what: &str) -> Vec<wiremock::Request> {
    let requests = server
        .received_requests()
        .await
        .expect("wiremock records requests");
    assert!(
        !requests.is_empty(),
        "{what} received no request: nothing to check"
    );
    requests
}

/// No request to the page server carries any key, in any header or the URL.
async fn pages_saw_no_key(world: &World) {
    for request in recorded(&world.pages, "the page server").await {
        let mut seen = request.url.to_string();
        for (name, value) in &request.headers {
            seen.push_str(&format!("\n{name}: {}", value.to_str().unwrap_or("")));
        }
        assert_no_key("a page request", &seen);
    }
}

/// The search server never sees the model's key and vice versa.
async fn keys_stay_with_their_servers(world: &World, search_key: &str) {
    for (server, own, what) in [
        (&world.searx, search_key, "the search server"),
        (&world.ollama, LLM_KEY, "the model server"),
    ] {
        for request in recorded(server, what).await {
            let mut seen = format!(
                "{}\n{}",
                request.url,
                String::from_utf8_lossy(&request.body)
            );
            for (name, value) in &request.headers {
                seen.push_str(&format!("\n{name}: {}", value.to_str().unwrap_or("")));
            }
            for key in KEYS.iter().filter(|k| **k != own) {
                assert!(
                    !seen.contains(key),
                    "{key} sent to the wrong server:\n{seen}"
                );
            }
        }
    }
}

#[tokio::test]
async fn keys_never_leak_on_success() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .and(header("x-subscription-token", BRAVE_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_results(&world.pages)))
        .mount(&world.searx)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header(
            "authorization",
            format!("Bearer {LLM_KEY}").as_str(),
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(&good_answer())))
        .mount(&world.ollama)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"object": "list", "data": [{"id": "smollm2", "object": "model"}]}),
        ))
        .mount(&world.ollama)
        .await;

    // The answer really works, so the success path is what is checked.
    let mut cmd = ground_with_keys(&world, "brave");
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    run_everything(&world, "brave", "success").await;

    // fetch reads a page; the keys are set but nothing uses them.
    let url = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    for args in [vec!["fetch", &url], vec!["fetch", "--json", &url]] {
        let mut cmd = ground_with_keys(&world, "brave");
        cmd.args(&args);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        check_output(&format!("ground {}", args.join(" ")), &out);
    }
    pages_saw_no_key(&world).await;
    keys_stay_with_their_servers(&world, BRAVE_KEY).await;
}

#[tokio::test]
async fn keys_echoed_by_failing_servers_are_not_shown() {
    // Brave answers 401 quoting the key; the model server answers 401 quoting its key.
    let world = World::new().await;
    world.serve_fixture_pages().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "type": "ErrorResponse",
            "error": {"id": "c1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                      "detail": format!("The provided subscription token {BRAVE_KEY} is invalid.")}
        })))
        .mount(&world.searx)
        .await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "detail": {"error": format!("Unauthorized: invalid API key {TAVILY_KEY}")}
        })))
        .mount(&world.searx)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {"message": format!("Incorrect API key provided: {LLM_KEY}. You can find your API key at https://example.test/keys."),
                      "type": "invalid_request_error", "code": "invalid_api_key"}
        })))
        .mount(&world.ollama)
        .await;
    Mock::given(method("GET"))
        .and(path("/v1/models"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(format!("Unauthorized: Bearer {LLM_KEY}")),
        )
        .mount(&world.ollama)
        .await;

    for search in ["brave", "tavily"] {
        // The search fails first...
        let mut cmd = ground_with_keys(&world, search);
        cmd.args(["answer", "do tardigrades survive in space"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("refused the API key"),
            "{}",
            stderr(&out)
        );
        run_everything(&world, search, &format!("{search} 401")).await;
    }

    // ... and with a working search, the model's 401 is the failure.
    let searx = World::new().await;
    searx
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    for args in [
        vec![
            "answer",
            "-v",
            "--events",
            "-",
            "do tardigrades survive in space",
        ],
        vec!["answer", "--json", "do tardigrades survive in space"],
        vec!["doctor"],
        vec!["doctor", "--json"],
    ] {
        let mut cmd = ground_with_keys(&world, "searxng");
        cmd.env("GROUND_SEARXNG_URL", searx.searx.uri())
            .env("GROUND_CONFIG", "/dev/null")
            .args(&args);
        let out = run(cmd).await;
        let code = out.status.code();
        check_output(&format!("model 401: ground {}", args.join(" ")), &out);
        assert!(
            matches!(code, Some(5) | Some(4)),
            "{code:?}: {}",
            stderr(&out)
        );
    }

    // A server error (500) that dumps the request headers, on the model side.
    let world = World::new().await;
    world.search_and_pages().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string(format!(
            "internal error handling request with headers {{\"authorization\": \"Bearer {LLM_KEY}\"}}"
        )))
        .mount(&world.ollama)
        .await;
    for args in [
        vec!["answer", "-v", "--events", "-", "q"],
        vec!["answer", "--json", "q"],
    ] {
        let mut cmd = ground_with_keys(&world, "searxng");
        cmd.env("GROUND_SEARXNG_URL", world.searx.uri())
            .env("GROUND_CONFIG", "/dev/null")
            .args(&args);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        check_output(&format!("model 500: ground {}", args.join(" ")), &out);
    }
}

/// A key belongs to one service: `[search] api_key` under `backend = "brave"` is
/// Brave's, so `--search tavily` sends it nowhere and says Tavily has no key, and
/// `ground key status` names the setting each key comes from.
#[tokio::test]
async fn a_key_configured_for_brave_is_never_sent_to_tavily() {
    let world = World::new().await;
    let tavily = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"results": []})))
        .mount(&tavily)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\napi_key = \"BSAbraveOnlyKey123\"\nurl = \"{}\"\n",
        tavily.uri()
    ));
    let mut cmd = world.ground();
    cmd.args(["search", "--search", "tavily", "--config"])
        .arg(&config)
        .arg("tardigrades");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("Tavily"), "{}", stderr(&out));
    assert!(
        tavily.received_requests().await.unwrap().is_empty(),
        "the Brave key went to Tavily"
    );

    let mut status = world.ground();
    status.args(["key", "status", "--config"]).arg(&config);
    let out = run(status).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("brave   set by [search] api_key in the config file"),
        "{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("tavily  not set")),
        "{text}"
    );

    // Its own setting gives Tavily a key of its own.
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\napi_key = \"BSAbraveOnlyKey123\"\ntavily_api_key = \"tvly-own-key\"\nurl = \"{}\"\n",
        tavily.uri()
    ));
    let mut status = world.ground();
    status.args(["key", "status", "--config"]).arg(&config);
    let text = stdout(&run(status).await);
    assert!(
        text.contains("tavily  set by [search] tavily_api_key in the config file"),
        "{text}"
    );
}
