//! SearXNG as `ground answer` meets it: every way a search fails (unreachable, JSON
//! off, the limiter, HTTP 400 and 500, an HTML page, zero results, failing engines,
//! silence), each with its exit code, an `error:` line naming the cause, a `hint:`
//! line with the fix and one JSON error object that keeps the search; an instance
//! with JSON off, answered through its HTML results page; and several instances,
//! tried in order (also by `ground doctor`). `ground search` itself is in `search`.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

const QUESTION: &str = "do tardigrades survive in space";

/// The content type of SearXNG's HTML pages.
const HTML: &str = "text/html; charset=utf-8";

/// A reply of SearXNG's: `status` with a real captured body.
fn captured(status: u16, capture: &str, content_type: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(fixture(capture), content_type)
}

/// One way a search fails: `ground answer QUESTION`, for a person and with `--json`,
/// against a SearXNG that answers every search for JSON with `reply`, fails as
/// `expected` says ([`SERVER`] in its cause is SearXNG's address).
async fn searxng_reply_fails(reply: ResponseTemplate, expected: Failure<'_>) {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(reply)
        .mount(&world.searx)
        .await;
    fails_both_ways_at(&world, &world.searx.uri(), no_changes, QUESTION, &expected).await;
}

#[tokio::test]
async fn searxng_unreachable() {
    let world = World::new().await;
    let url = closed_port_url();
    fails_both_ways(
        &world,
        |cmd| {
            cmd.env("GROUND_SEARXNG_URL", &url);
        },
        QUESTION,
        &Failure {
            code: 3,
            kind: "search_unreachable",
            cause: &["cannot reach SearXNG at", &url],
            hint: "start SearXNG",
        },
    )
    .await;
}

#[tokio::test]
async fn searxng_json_disabled_403() {
    searxng_reply_fails(
        captured(403, "searxng/searxng/noformat-json.body.html", HTML),
        Failure {
            code: 3,
            kind: "search_json_disabled",
            cause: &["HTTP 403", SERVER],
            hint: "formats: [html, json]",
        },
    )
    .await;
}

#[tokio::test]
async fn searxng_limiter_429() {
    searxng_reply_fails(
        captured(429, "searxng/searxng/limiter-no-headers.body.html", HTML),
        Failure {
            code: 3,
            kind: "search_rate_limited",
            cause: &["HTTP 429", "rate-limited"],
            hint: "pass_ip",
        },
    )
    .await;
}

#[tokio::test]
async fn searxng_bad_request_400_shows_its_message() {
    searxng_reply_fails(
        captured(
            400,
            "searxng/searxng/no-query.body.json",
            "application/json",
        ),
        Failure {
            code: 3,
            kind: "search_bad_request",
            cause: &["HTTP 400", "No query"],
            hint: "--language",
        },
    )
    .await;
}

#[tokio::test]
async fn searxng_server_error_500() {
    searxng_reply_fails(
        ResponseTemplate::new(500).set_body_raw(
            "<!doctype html><title>500 Internal Server Error</title>",
            "text/html",
        ),
        Failure {
            code: 3,
            kind: "search_http",
            cause: &["HTTP 500", SERVER],
            hint: "SearXNG itself failed",
        },
    )
    .await;
}

#[tokio::test]
async fn searxng_html_page_instead_of_json() {
    searxng_reply_fails(
        captured(200, "searxng/searxng/unknown-format.body.html", HTML),
        Failure {
            code: 3,
            kind: "search_invalid_reply",
            cause: &["not JSON"],
            hint: "--searxng-url",
        },
    )
    .await;
}

#[tokio::test]
async fn zero_results_is_no_sources() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/empty-result.body.json")
        .await;
    fails_both_ways(
        &world,
        no_changes,
        "xyzzyplugh qwertyuiop",
        &Failure {
            code: 4,
            kind: "no_results",
            cause: &["returned no results", "xyzzyplugh qwertyuiop"],
            hint: "rephrase",
        },
    )
    .await;
    assert!(world.ollama.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn zero_results_with_failing_engines_is_a_search_failure() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/engine-timeout-again-suspended.body.json")
        .await;
    fails_both_ways(
        &world,
        no_changes,
        "sqlite",
        &Failure {
            code: 3,
            kind: "search_engines_failed",
            cause: &["engines failed", "local slow (Suspended: timeout)"],
            hint: "engines are failing",
        },
    )
    .await;
}

#[tokio::test]
async fn a_silent_searxng_times_out() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(
                    fixture("searxng/searxng/normal.body.json"),
                    "application/json",
                )
                .set_delay(Duration::from_secs(30)),
        )
        .mount(&world.searx)
        .await;
    let config = world.config_file("[search]\ntimeout_secs = 1\n");
    let started = Instant::now();
    fails_both_ways(
        &world,
        |cmd| {
            cmd.arg("--config").arg(&config);
        },
        QUESTION,
        &Failure {
            code: 3,
            kind: "search_unreachable",
            cause: &[&world.searx.uri(), "timed out"],
            hint: "SearXNG",
        },
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
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

// JSON off: the HTML fallback ---------------------------------------------------------

/// An instance as SearXNG ships: 403 to format=json (the real reply), and its HTML
/// results page (the real capture) for the same query without `format`. The three
/// result URLs are served with the tardigrade pages, so the usual answer verifies.
async fn json_off_instance(world: &World) {
    json_off_search(world).await;
    world.model_replies(&good_answer()).await;
}

/// [`json_off_instance`] without the model.
async fn json_off_search(world: &World) {
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

/// On a terminal the JSON-off warning, which names the fix, is shown as soon as the
/// search knows it: before the model's first token (the model here takes 3 s), not
/// after the answer; and once, not again at the end (`--json` still lists it:
/// `json_off_searxng_answers_through_its_html_page_with_one_warning`).
#[tokio::test]
async fn json_off_warning_shows_on_a_terminal_before_the_model_writes() {
    use crate::common::pty::{collect, open_pty, wait_for};
    use wiremock::matchers::body_partial_json;

    let world = World::new().await;
    json_off_search(&world).await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_partial_json(json!({"stream": false})))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .mount(&world.ollama)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_partial_json(json!({"stream": true})))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(
                    ollama_stream(&good_answer(), Some("stop"), 7),
                    "application/x-ndjson",
                )
                .set_delay(Duration::from_secs(3)),
        )
        .mount(&world.ollama)
        .await;

    let (main, child) = open_pty();
    let seen = collect(main);
    let mut cmd = world.ground();
    cmd.args(["answer", "do tardigrades survive in space"])
        .env("TERM", "xterm");
    cmd.stdout(child.try_clone().unwrap()).stderr(child);
    let mut process = cmd.spawn().unwrap();
    drop(cmd); // the child's ends of the pty now belong to it alone
    let warned = wait_for(&seen, "JSON format off", 0).await;
    let first_token = wait_for(&seen, "Dried tardigrades survived", 0).await;
    let status = tokio::task::spawn_blocking(move || process.wait())
        .await
        .unwrap()
        .unwrap();
    wait_for(&seen, "Sources:", first_token).await;
    let screen = seen.lock().unwrap().clone();
    assert_eq!(status.code(), Some(0), "{screen}");
    assert!(
        warned < first_token,
        "the warning comes before the model's first token:\n{screen}"
    );
    assert!(screen.contains("warning: "), "{screen}");
    assert!(screen.contains("`formats: [html, json]`"), "{screen}");
    assert_eq!(
        screen.matches("JSON format off").count(),
        1,
        "printed once:\n{screen}"
    );
    // Ollama's model needs no download: no empty download bar before the stages.
    assert!(!screen.contains("downloading"), "{screen}");
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

// Several instances -------------------------------------------------------------------

/// A healthy instance: the normal capture for format=json.
async fn healthy_instance(world: &World) {
    world.search_and_pages().await;
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

// --- finding 6 and 11: SearXNG's HTML results page ------------------------------------

/// `depth` `div.result`s nested in each other, each with a link and a snippet.
fn nested_results_page(depth: usize) -> String {
    let mut page = String::from("<html><body><div id=urls>");
    for i in 0..depth {
        page.push_str(&format!(
            "<div class=\"result\"><h3><a href=\"https://example.org/{i}\">Result {i}</a></h3><p class=\"content\">snippet {i}</p>"
        ));
    }
    page.push_str(&"</div>".repeat(depth));
    page.push_str("</div></body></html>");
    page
}

/// Makes `server` answer like a SearXNG with JSON off whose HTML results page is
/// `html`.
async fn json_off_with_page(server: &MockServer, html: String) {
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            fixture("searxng/searxng/noformat-json.body.html"),
            "text/html; charset=utf-8",
        ))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param_is_missing("format"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html; charset=utf-8"))
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_results_page_nested_thousands_deep_is_read_in_linear_time() {
    let world = World::new().await;
    let page = nested_results_page(13_000);
    assert!(page.len() > 1_500_000);
    json_off_with_page(&world.searx, page).await;
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run_within(cmd, Duration::from_secs(60)).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Before: 68.8 s for this page, on the async runtime.
    assert!(took < Duration::from_secs(5), "{took:?}");
    let v = json_stdout(&out);
    assert_eq!(v["results"][0]["url"], "https://example.org/0", "{v}");
    assert!(stderr(&out).contains("formats: [html, json]"));
}

#[tokio::test]
async fn an_unreadable_html_page_tries_the_next_instance_and_keeps_the_advice() {
    let world = World::new().await;
    let first = MockServer::start().await;
    json_off_with_page(
        &first,
        "<html><head><title>Sign in</title></head><body><form action=/login><input name=user></form></body></html>".into(),
    )
    .await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "search",
        "--json",
        "--searxng-url",
        &first.uri(),
        "--searxng-url",
        &world.searx.uri(),
        "tardigrades",
    ]);
    let out = run(cmd).await;
    let err = stderr(&out);
    // Before: exit 4, "no results", "rephrase", and the second instance never asked.
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!json_stdout(&out)["results"].as_array().unwrap().is_empty());
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 1);
    assert!(
        err.contains(&format!("SearXNG at {} failed", first.uri()))
            && err.contains("its HTML results page could not be read")
            && err.contains("`formats: [html, json]`")
            && err.contains("trying the next instance"),
        "{err}"
    );

    // Alone, such an instance is a search failure that names the fix, not "no results".
    let mut cmd = world.ground();
    cmd.args(["search", "--searxng-url", &first.uri(), "tardigrades"]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        3,
        &["refused the JSON format"],
        "formats: [html, json]",
    );
}
