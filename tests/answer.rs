//! `ground answer` end to end: the real binary against wiremock servers standing in
//! for SearXNG, the web pages and Ollama, with real-shaped payloads.

mod common;

use common::*;
use serde_json::json;
use wiremock::matchers::{header_regex, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

#[tokio::test]
async fn answers_with_verified_citations() {
    let world = World::new().await;
    // The search request must carry what SearXNG's limiter wants and ask for JSON.
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("q", "do tardigrades survive in space"))
        .and(query_param("format", "json"))
        .and(header_regex("user-agent", r"^ground/\d+\.\d+\.\d+$"))
        .and(limiter_friendly_headers())
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                fixture("searxng/searxng/normal.body.json")
                    .replace(CAPTURED_PAGES_URL, &world.pages.uri()),
                "application/json",
            ),
        )
        .expect(1)
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    // The model request must bound the output and set the window.
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(wiremock::matchers::body_partial_json(json!({
            "model": "llama3.2",
            "stream": true,
            "think": false,
            "options": {"num_ctx": 4096, "num_predict": 1024, "temperature": 0},
            "format": {"type": "object"}
        })))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;

    let mut cmd = world.ground();
    cmd.args(["answer", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    insta::assert_snapshot!("person_output", world.scrub(&stdout(&out)));
    assert_eq!(
        stderr(&out),
        "",
        "no progress or warnings when stderr is not a terminal"
    );
}

#[tokio::test]
async fn json_output_has_the_documented_shape() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let value = json_stdout(&out);
    // Segment offsets are exact UTF-8 byte offsets into the answer.
    let answer = value["answer"].as_str().unwrap();
    for support in value["groundingMetadata"]["groundingSupports"]
        .as_array()
        .unwrap()
    {
        let (s, e) = (
            support["segment"]["startIndex"].as_u64().unwrap() as usize,
            support["segment"]["endIndex"].as_u64().unwrap() as usize,
        );
        assert_eq!(&answer[s..e], support["segment"]["text"].as_str().unwrap());
    }
    let scrubbed: serde_json::Value =
        serde_json::from_str(&world.scrub(&value.to_string())).unwrap();
    insta::assert_snapshot!(
        "json_output",
        serde_json::to_string_pretty(&stable_json(scrubbed)).unwrap()
    );
}

#[tokio::test]
async fn markdown_format_uses_footnotes() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--format",
        "markdown",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    insta::assert_snapshot!("markdown_output", world.scrub(&stdout(&out)));
}

#[tokio::test]
async fn question_can_come_on_stdin() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "-"])
        .stdin(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"  do tardigrades survive in space\n")
            .unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["question"],
        "do tardigrades survive in space"
    );
}

#[tokio::test]
async fn searx11_replies_work_too() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searx11/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["grounded"], true);
    assert_eq!(pages(&v).len(), 3);
}

#[tokio::test]
async fn a_failed_page_is_replaced_by_the_next_result() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    // Result 2 is gone; results 1, 3 and 4 must be used.
    Mock::given(method("GET"))
        .and(path("/pages/tardigrades-cryptobiosis.html"))
        .respond_with(ResponseTemplate::new(404).set_body_string("not here"))
        .with_priority(1)
        .mount(&world.pages)
        .await;
    world.serve_fixture_pages().await;
    let answer = json!({"answerable": true, "statements": [
        {"text": "Tardigrades survived open space in 2007.", "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space"}]}
    ], "unknowns": []});
    world.model_replies(&answer.to_string()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    let statuses: Vec<_> = pages(&v)
        .into_iter()
        .map(|s| {
            (
                s["status"].as_str().unwrap(),
                s["index"].clone(),
                s["http_status"].clone(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("SUCCESS", json!(1), json!(200)),
            ("ERROR", json!(null), json!(404)),
            ("SUCCESS", json!(2), json!(200)),
            ("SUCCESS", json!(3), json!(200))
        ]
    );
}

#[tokio::test]
async fn private_addresses_are_blocked_by_default() {
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
    assert!(stderr(&out).contains("4 BLOCKED"), "{}", stderr(&out));
    assert!(stderr(&out).contains("hint:"), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["error"]["kind"], "no_usable_sources");
    assert!(
        world.pages.received_requests().await.unwrap().is_empty(),
        "no request may reach a private address"
    );
}

#[tokio::test]
async fn long_pages_are_cut_to_the_window_and_reported() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let long = format!(
        "<html><head><title>Long page</title></head><body><article>{}</article></body></html>",
        "<p>Tardigrades are tough animals that live in moss and survive many hardships in the wild.</p>".repeat(400)
    );
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(long, "text/html"))
        .mount(&world.pages)
        .await;
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--context-tokens",
        "2048",
        "--max-answer-tokens",
        "256",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    let v = json_stdout(&out);
    let sent: Vec<u64> = pages(&v)
        .iter()
        .map(|s| s["chars_sent"].as_u64().unwrap())
        .collect();
    assert!(pages(&v).iter().all(|s| s["truncated"] == true));
    assert!(sent.iter().all(|&c| c > 1000 && c < 3000), "{sent:?}");
    assert!(
        v["context"]["estimated_tokens"].as_u64().unwrap()
            <= v["context"]["budget_tokens"].as_u64().unwrap()
    );
    assert!(
        v["warnings"].to_string().contains("shortened to fit"),
        "{}",
        v["warnings"]
    );
    // The request carried the window we budgeted for.
    let requests = world.ollama.received_requests().await.unwrap();
    let body: serde_json::Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert_eq!(body["options"]["num_ctx"], 2048);
}

/// The `sources[]` entries of pages (not of search-result snippets).
fn pages(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] != "snippet")
        .collect()
}
