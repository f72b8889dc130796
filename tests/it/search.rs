//! `ground search` against SearXNG (real captures), Brave and Tavily (replies shaped
//! like their documented ones), including each service's error replies.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const BRAVE_KEY: &str = "BSA-FAKE-brave-key-123";
const TAVILY_KEY: &str = "tvly-FAKE-tavily-key-456";

#[tokio::test]
async fn searxng_results_for_a_person() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "--limit", "2", "tardigrades space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    insta::assert_snapshot!("search_person", world.scrub(&stdout(&out)));
}

#[tokio::test]
async fn searxng_results_as_json_from_both_versions() {
    for capture in ["searxng/normal.body.json", "searx11/normal.body.json"] {
        let world = World::new().await;
        world.search_replies_with_capture(capture).await;
        let mut cmd = world.ground();
        cmd.args(["search", "--json", "tardigrades space"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json_stdout(&out);
        assert_matches_schema(ground::mcp::schemas::WEB_SEARCH, &v);
        assert_eq!(v["query"], "tardigrades space");
        assert_eq!(v["backend"], "searxng");
        let results = v["results"].as_array().unwrap();
        assert_eq!(results.len(), 4, "{capture}");
        assert_eq!(
            results[0]["title"],
            "Tardigrades in space: the FOTON-M3 experiment"
        );
        assert!(
            results[0]["engines"].as_array().unwrap().len() == 2,
            "{capture}"
        );
        // searx 1.1 gives a display date; SearXNG gives publishedDate null but pubdate.
        assert!(
            results[0]["published"].is_string(),
            "{capture}: {}",
            results[0]
        );
    }
}

#[tokio::test]
async fn searxng_errors_are_json_objects_with_the_query() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            fixture("searxng/searxng/noformat-json.body.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    let v = json_stdout(&out);
    assert_eq!(v["query"], "tardigrades");
    assert_eq!(v["error"]["kind"], "search_json_disabled");
    assert!(
        v["error"]["hint"]
            .as_str()
            .unwrap()
            .contains("formats: [html, json]")
    );
}

#[tokio::test]
async fn zero_results_and_failed_engines_are_told_apart() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/engine-timeout-again-suspended.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "sqlite"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    assert!(
        stderr(&out).contains("local slow (Suspended: timeout)"),
        "{}",
        stderr(&out)
    );

    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/empty-result.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "sqlite"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4));
    assert!(
        stderr(&out).starts_with("error: the search for \"sqlite\" returned no results\nhint: "),
        "{}",
        stderr(&out)
    );
}

fn brave_reply() -> serde_json::Value {
    json!({
        "type": "search",
        "query": {"original": "tardigrades space", "show_strict_warning": false, "is_navigational": false, "spellcheck_off": true, "country": "us", "more_results_available": true},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": false}]},
        "web": {"type": "search", "family_friendly": true, "results": [
            {"title": "Tardigrades in space: the FOTON-M3 experiment", "url": "https://example.org/tardigrades-space", "is_source_local": false, "is_source_both": false,
             "description": "In 2007 dried <strong>tardigrades</strong> were exposed to open space.", "page_age": "2024-01-20T00:00:00", "age": "January 20, 2024",
             "profile": {"name": "Example", "url": "https://example.org/tardigrades-space", "long_name": "example.org"}, "language": "en", "family_friendly": true, "type": "search_result",
             "meta_url": {"scheme": "https", "netloc": "example.org", "hostname": "example.org", "path": "› tardigrades-space"}},
            {"title": "Water bears", "url": "https://example.com/water-bears", "description": "Tardigrades are microscopic.", "type": "search_result"},
            {"title": "Not a web page", "url": "ftp://example.net/file", "description": "skipped", "type": "search_result"}
        ]}
    })
}

fn ground_brave(world: &World) -> std::process::Command {
    let dir = world.home.path().join("brave.toml");
    std::fs::write(
        &dir,
        format!(
            "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
            world.searx.uri()
        ),
    )
    .unwrap();
    let mut cmd = world.ground();
    // The config file names the service.
    cmd.env_remove("GROUND_SEARCH")
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .env("GROUND_CONFIG", &dir);
    cmd
}

#[tokio::test]
async fn brave_results_and_request_shape() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .and(query_param("q", "tardigrades space"))
        .and(query_param("count", "20"))
        .and(query_param("freshness", "py"))
        .and(header("x-subscription-token", BRAVE_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(brave_reply()))
        .expect(1)
        .mount(&world.searx)
        .await;
    let mut cmd = ground_brave(&world);
    cmd.args([
        "search",
        "--json",
        "--time-range",
        "year",
        "tardigrades space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "brave");
    let urls: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            "https://example.org/tardigrades-space",
            "https://example.com/water-bears"
        ]
    );
    assert_eq!(v["results"][0]["published"], "2024-01-20T00:00:00");
    assert_eq!(
        v["results"][0]["snippet"],
        "In 2007 dried tardigrades were exposed to open space."
    );
    assert!(!stdout(&out).contains(BRAVE_KEY) && !stderr(&out).contains(BRAVE_KEY));
}

#[tokio::test]
async fn brave_error_replies_map_to_search_failures_with_hints() {
    let cases = [
        (
            401,
            json!({"type": "ErrorResponse", "error": {"id": "c1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid."}, "time": 1763768412}),
            "refused the API key",
            "GROUND_BRAVE_API_KEY",
        ),
        (
            422,
            json!({"type": "ErrorResponse", "error": {"id": "c2", "status": 422, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is invalid."}, "time": 1763768412}),
            "refused the API key",
            "GROUND_BRAVE_API_KEY",
        ),
        (
            429,
            json!({"type": "ErrorResponse", "error": {"id": "c3", "status": 429, "code": "RATE_LIMITED", "detail": "Request rate limit exceeded for plan.", "meta": {"plan": "Free", "rate_limit": 1, "rate_current": 2}}, "time": 1763768412}),
            "rate-limiting",
            "wait a moment",
        ),
        (
            402,
            json!({"type": "ErrorResponse", "error": {"id": "c4", "status": 402, "code": "QUOTA_LIMITED", "detail": "Monthly quota exceeded."}, "time": 1763768412}),
            "usage limit",
            "plan's usage",
        ),
        (
            500,
            json!({"type": "ErrorResponse", "error": {"id": "c5", "status": 500, "code": "INTERNAL", "detail": "Unexpected error."}, "time": 1763768412}),
            "answered HTTP 500: Unexpected error.",
            "try again later",
        ),
    ];
    for (status, body, message, hint) in cases {
        let world = World::new().await;
        Mock::given(method("GET"))
            .respond_with(ResponseTemplate::new(status).set_body_json(body))
            .mount(&world.searx)
            .await;
        let mut cmd = ground_brave(&world);
        cmd.args(["search", "tardigrades"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(3), "{status}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: Brave Search ") && err.contains(message),
            "{status}: {err}"
        );
        assert!(
            err.contains("hint: ") && err.contains(hint),
            "{status}: {err}"
        );
        assert!(!err.contains(BRAVE_KEY));
    }
}

fn tavily_reply() -> serde_json::Value {
    json!({
        "query": "tardigrades space",
        "follow_up_questions": null,
        "answer": null,
        "images": [],
        "results": [
            {"url": "https://example.org/tardigrades-space", "title": "Tardigrades in space", "content": "In 2007 dried tardigrades were exposed to open space on FOTON-M3.", "score": 0.91, "raw_content": null},
            {"url": "https://example.com/news/tardigrades", "title": "Tardigrade news", "content": "New results on water bears.", "score": 0.72, "raw_content": null, "published_date": "Mon, 20 Jan 2025 10:00:00 GMT"}
        ],
        "response_time": 1.12
    })
}

fn ground_tavily(world: &World) -> std::process::Command {
    let dir = world.home.path().join("tavily.toml");
    std::fs::write(
        &dir,
        format!(
            "[search]\nbackend = \"tavily\"\nurl = \"{}\"\n",
            world.searx.uri()
        ),
    )
    .unwrap();
    let mut cmd = world.ground();
    // The config file names the service.
    cmd.env_remove("GROUND_SEARCH")
        .env("TAVILY_API_KEY", TAVILY_KEY)
        .env("GROUND_CONFIG", &dir);
    cmd
}

#[tokio::test]
async fn tavily_results_and_request_shape() {
    let world = World::new().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(header("authorization", format!("Bearer {TAVILY_KEY}").as_str()))
        .and(body_partial_json(json!({"query": "tardigrades space", "search_depth": "basic", "max_results": 20, "topic": "news"})))
        .respond_with(ResponseTemplate::new(200).set_body_json(tavily_reply()))
        .expect(1)
        .mount(&world.searx)
        .await;
    let mut cmd = ground_tavily(&world);
    cmd.args([
        "search",
        "--json",
        "--categories",
        "news",
        "tardigrades space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "tavily");
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        v["results"][1]["published"],
        "Mon, 20 Jan 2025 10:00:00 GMT"
    );
    assert!(!stdout(&out).contains(TAVILY_KEY) && !stderr(&out).contains(TAVILY_KEY));
}

#[tokio::test]
async fn tavily_error_replies_map_to_search_failures_with_hints() {
    let cases = [
        (
            401,
            json!({"detail": {"error": "Unauthorized: missing or invalid API key."}}),
            "refused the API key",
            "GROUND_TAVILY_API_KEY",
        ),
        (
            429,
            json!({"detail": {"error": "Rate limit exceeded. Please try again later."}}),
            "rate-limiting",
            "wait a moment",
        ),
        (
            432,
            json!({"detail": {"error": "This request exceeds your plan's set usage limit. Please upgrade your plan or contact support@tavily.com"}}),
            "usage limit",
            "plan's usage",
        ),
        (
            400,
            json!({"detail": {"error": "Invalid topic. Must be 'general', 'news' or 'finance'."}}),
            "answered HTTP 400: Invalid topic",
            "check the [search] settings",
        ),
    ];
    for (status, body, message, hint) in cases {
        let world = World::new().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(status).set_body_json(body))
            .mount(&world.searx)
            .await;
        let mut cmd = ground_tavily(&world);
        cmd.args(["search", "--json", "tardigrades"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(3), "{status}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: Tavily ") && err.contains(message),
            "{status}: {err}"
        );
        assert!(err.contains(hint), "{status}: {err}");
        assert_eq!(json_stdout(&out)["query"], "tardigrades");
        assert!(!err.contains(TAVILY_KEY) && !stdout(&out).contains(TAVILY_KEY));
    }
}

#[tokio::test]
async fn a_hosted_service_without_a_key_is_a_config_error() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARCH", "brave")
        .args(["search", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: invalid configuration: Brave Search needs an API key and none is set \
         (the OS keyring could not be asked: Platform secure storage failure: no secret service provider or dbus session found)\n\
         hint: store it with `ground key set brave` (OS keyring), or set GROUND_BRAVE_API_KEY \
         (or [search] api_key in the config file), or use your SearXNG with --search searxng\n"
    );
    assert!(world.searx.received_requests().await.unwrap().is_empty());
}

// --- finding 13: Brave's rate-limit windows -------------------------------------------

#[tokio::test]
async fn a_paid_brave_plan_is_judged_on_its_monthly_window() {
    let world = World::new().await;
    let reply = json!({"type": "search", "web": {"type": "search", "results": [
        {"title": "Water bears", "url": "https://example.com/water-bears", "description": "Tardigrades are microscopic."}
    ]}});
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply)
                .insert_header("X-RateLimit-Limit", "20, 20000")
                .insert_header("X-RateLimit-Remaining", "19, 15000")
                .insert_header("X-RateLimit-Reset", "1, 1419704"),
        )
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    for round in 0..2 {
        let mut cmd = world.ground();
        cmd.env_remove("GROUND_SEARCH") // the config file names the service
            .env("GROUND_BRAVE_API_KEY", "BSA-test-key")
            .args(["search", "tardigrades", "--config"])
            .arg(&config);
        let out = run(cmd).await;
        // Before: the second search was refused, "quota spent: 5000 of 2000".
        assert_eq!(
            out.status.code(),
            Some(0),
            "round {round}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("of 2000"), "{}", stderr(&out));
    }
    let mut cmd = world.ground();
    cmd.env("GROUND_BRAVE_API_KEY", "BSA-test-key")
        .args(["usage", "--json", "--config"])
        .arg(&config);
    let usage = json_stdout(&run(cmd).await);
    let brave = &usage["usage"]["services"][0];
    assert_eq!(brave["service"], "brave", "{usage}");
    assert_eq!(
        (brave["used"].as_u64(), brave["quota"].as_u64()),
        (Some(5000), Some(20000)),
        "{usage}"
    );
}
