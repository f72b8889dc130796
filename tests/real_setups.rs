//! Issue 13: the pages and setups users really have. Errors that keep their sources,
//! small windows, SearXNG with JSON off, several instances, PDFs, the answer's
//! language, and the fresh-machine compose file; each against real-shaped payloads on
//! loopback.

mod common;

use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

// --- errors keep their sources -------------------------------------------------

#[tokio::test]
async fn a_failed_json_run_lists_each_page_with_its_status() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES").args([
        "answer",
        "--json",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "stderr: {}", stderr(&out));
    let v = assert_json_error(&out, "no_usable_sources", "do tardigrades survive in space");
    // The hint says `--json` lists each page's status: it does.
    assert!(
        v["error"]["hint"].as_str().unwrap().contains("--json"),
        "{v}"
    );
    let sources = v["sources"].as_array().expect("sources beside the error");
    assert_eq!(sources.len(), 4, "{v}");
    for s in sources {
        assert_eq!(s["status"], "BLOCKED", "{s}");
        assert!(
            s["url"].as_str().unwrap().starts_with(&world.pages.uri()),
            "{s}"
        );
        assert!(
            s["error"]
                .as_str()
                .unwrap()
                .contains("not a public address"),
            "{s}"
        );
        assert_eq!(s["index"], Value::Null);
    }
    let searches = v["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 1);
    assert_eq!(searches[0]["query"], "do tardigrades survive in space");
    assert_eq!(searches[0]["results"], 4);
    assert_eq!(
        v["webSearchQueries"],
        json!(["do tardigrades survive in space"])
    );
    assert!(v["timings_ms"]["total"].is_u64(), "{v}");
    assert!(v["timings_ms"]["search"].is_u64(), "{v}");
    assert!(v["warnings"].is_array(), "{v}");
}

#[tokio::test]
async fn a_failed_search_keeps_the_search_and_its_error() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(502).set_body_string("Bad Gateway"))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "why is the sky blue"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert!(v["error"]["kind"].is_string(), "{v}");
    let searches = v["searches"].as_array().unwrap();
    assert_eq!(searches.len(), 1, "{v}");
    assert!(
        searches[0]["error"].as_str().unwrap().contains("502"),
        "{v}"
    );
    assert_eq!(v["sources"], json!([]));
}

// --- small windows ---------------------------------------------------------------

#[tokio::test]
async fn a_1024_token_window_alone_answers_with_a_scaled_reserve() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--context-tokens",
        "1024",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["model"]["context_window"], 1024);
    assert_eq!(v["model"]["max_answer_tokens"], 256);
    let requests = world.ollama.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["options"]["num_ctx"], 1024);
    assert_eq!(body["options"]["num_predict"], 256);
}

#[tokio::test]
async fn an_explicit_reserve_over_half_the_window_is_a_config_error() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--context-tokens",
        "1024",
        "--max-answer-tokens",
        "1024",
        "why is the sky blue",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("at most 512") && err.contains("--context-tokens 1024"),
        "{err}"
    );
}

// --- SearXNG with JSON off: the HTML fallback -----------------------------------

/// An instance as SearXNG ships: 403 to format=json (the real reply), and its HTML
/// results page (the real capture) for the same query without `format`. The three
/// result URLs are served with the tardigrade pages, so the usual answer verifies.
async fn json_off_instance(world: &World) {
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            fixture("searxng/searxng/noformat-json.body.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&world.searx)
        .await;
    let html = fixture("searxng/searxng/nojson-instance-html-results.body.html")
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param_is_missing("format"))
        .and(query_param("q", "do tardigrades survive in space"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html; charset=utf-8"))
        .expect(1)
        .mount(&world.searx)
        .await;
    for (name, page) in [
        ("quillfeather-lighthouse-history", "tardigrades-space"),
        ("quillfeather-lighthouse-light", "tardigrades-cryptobiosis"),
        ("quillfeather-lighthouse-visiting", "tardigrades-overview"),
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/pages/{name}.html")))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture(&format!("pages/{page}.html")),
                "text/html; charset=utf-8",
            ))
            .mount(&world.pages)
            .await;
    }
    world.model_replies(&good_answer()).await;
}

#[tokio::test]
async fn json_off_searxng_answers_through_its_html_page_with_one_warning() {
    let world = World::new().await;
    json_off_instance(&world).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let v = json_stdout(&out);
    assert_eq!(v["grounded"], true, "{v}");
    assert_eq!(v["sources"].as_array().unwrap().len(), 3);
    assert_eq!(v["searches"][0]["results"], 3);
    assert_eq!(
        err.matches("JSON format off").count(),
        1,
        "warned once: {err}"
    );
    assert!(
        err.contains("`formats: [html, json]`"),
        "names the setting: {err}"
    );
    assert!(
        err.contains("warning:") && err.contains("JSON format off"),
        "{err}"
    );
    assert_eq!(
        v["warnings"].to_string().matches("JSON format off").count(),
        1,
        "{}",
        v["warnings"]
    );
}

#[tokio::test]
async fn json_off_searxng_in_ground_search_and_doctor() {
    let world = World::new().await;
    json_off_instance(&world).await;
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(json_stdout(&out)["results"].as_array().unwrap().len(), 3);
    assert!(stderr(&out).contains("formats"), "{}", stderr(&out));
    // doctor still fails the JSON check: the fallback is a stopgap, not a setup.
    let mut cmd = world.ground();
    cmd.args(["doctor", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let checks = json_stdout(&out)["checks"].clone();
    let json_check = checks
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "search.json")
        .unwrap()
        .clone();
    assert_eq!(json_check["status"], "fail", "{checks}");
    assert!(json_check["hint"].as_str().unwrap().contains("json"));
}

#[tokio::test]
async fn json_off_and_html_blocked_keeps_the_json_error() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            fixture("searxng/searxng/noformat-json.body.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    assert_json_error(
        &out,
        "search_json_disabled",
        "do tardigrades survive in space",
    );
}

// --- several SearXNG instances -----------------------------------------------------

/// A healthy instance: the normal capture for format=json.
async fn healthy_instance(world: &World) {
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
}

#[tokio::test]
async fn a_down_first_instance_falls_over_to_the_second() {
    let world = World::new().await;
    healthy_instance(&world).await;
    let down = closed_port_url();
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--searxng-url",
        &down,
        "--searxng-url",
        &world.searx.uri(),
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    assert!(err.contains(&format!("SearXNG at {down} failed")), "{err}");
    assert!(err.contains(&world.searx.uri()), "names the next: {err}");
    assert_eq!(json_stdout(&out)["grounded"], true);
}

#[tokio::test]
async fn http_5xx_429_and_failing_engines_fall_over_in_order_from_the_config_file() {
    let world = World::new().await;
    healthy_instance(&world).await;
    let (broken, limited, engines_down) = (
        MockServer::start().await,
        MockServer::start().await,
        MockServer::start().await,
    );
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(502).set_body_string("Bad Gateway"))
        .expect(1)
        .mount(&broken)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(429).set_body_raw(
            fixture("searxng/searxng/limiter-no-headers.body.html"),
            "text/html",
        ))
        .expect(1)
        .mount(&limited)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("searxng/searxng/backend-down.body.json"),
            "application/json",
        ))
        .expect(1)
        .mount(&engines_down)
        .await;
    let config = world.config_file(&format!(
        "[search]\nurls = [\"{}\", \"{}\", \"{}\", \"{}\"]\n",
        broken.uri(),
        limited.uri(),
        engines_down.uri(),
        world.searx.uri()
    ));
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_SEARXNG_URL").args([
        "answer",
        "--config",
        config.to_str().unwrap(),
        "--json",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "stderr: {err}");
    let warnings = json_stdout(&out)["warnings"].to_string();
    for (server, why) in [
        (&broken, "502"),
        (&limited, "429"),
        (&engines_down, "every engine failed"),
    ] {
        assert!(
            warnings.contains(&format!("SearXNG at {} failed", server.uri())),
            "{warnings}"
        );
        assert!(warnings.contains(why), "{why}: {warnings}");
    }
}

#[tokio::test]
async fn every_instance_down_fails_with_the_first_ones_error() {
    let world = World::new().await;
    let (a, b) = (closed_port_url(), closed_port_url());
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", format!("{a}, {b}")).args([
        "answer",
        "--json",
        "why is the sky blue",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    let v = assert_json_error(&out, "search_unreachable", "why is the sky blue");
    assert!(v["error"]["message"].as_str().unwrap().contains(&a), "{v}");
}

#[tokio::test]
async fn doctor_checks_each_instance() {
    let world = World::new().await;
    healthy_instance(&world).await;
    Mock::given(method("GET"))
        .and(path("/api/tags"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            json!({"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest", "size": 1, "digest": "x", "details": {}}]}),
        ))
        .mount(&world.ollama)
        .await;
    let down = closed_port_url();
    let mut cmd = world.ground();
    cmd.args([
        "doctor",
        "--json",
        "--searxng-url",
        &world.searx.uri(),
        "--searxng-url",
        &down,
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let checks = json_stdout(&out)["checks"].clone();
    let reachable: Vec<&Value> = checks
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"] == "search.reachable")
        .collect();
    assert_eq!(reachable.len(), 2, "{checks}");
    assert_eq!(reachable[0]["status"], "ok");
    assert_eq!(reachable[1]["status"], "fail");
    assert!(reachable[1]["detail"].as_str().unwrap().contains(&down));
}

// --- the answer's language ---------------------------------------------------------

/// The system message of the model call(s) the run made.
async fn system_prompts(world: &World) -> Vec<String> {
    world
        .ollama
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_german_question_asks_the_model_for_german() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "Überleben Bärtierchen im Weltraum?"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(
        v["answer_language"],
        json!({"code": "de", "name": "German", "source": "detected"})
    );
    let system = system_prompts(&world).await;
    assert!(
        system[0].contains("in German (language code de)"),
        "{}",
        system[0]
    );
    assert!(system[0].contains("never translate a quote"));
}

#[tokio::test]
async fn answer_language_flag_and_config_set_it() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--answer-language",
        "fr",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["answer_language"],
        json!({"code": "fr", "name": "French", "source": "set"})
    );
    assert!(system_prompts(&world).await[0].contains("in French (language code fr)"));

    let config = world.config_file("[llm]\nanswer_language = \"es\"\n");
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--config",
        config.to_str().unwrap(),
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(json_stdout(&out)["answer_language"]["code"], "es");

    let mut cmd = world.ground();
    cmd.args(["answer", "--answer-language", "français", "why"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("hint: give --answer-language a code such as de"),
        "{}",
        stderr(&out)
    );
}
