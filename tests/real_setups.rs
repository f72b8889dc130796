//! Issue 13: the pages and setups users really have. Errors that keep their sources,
//! small windows, SearXNG with JSON off, several instances, PDFs, the answer's
//! language, and the fresh-machine compose file; each against real-shaped payloads on
//! loopback.

mod common;

use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

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
