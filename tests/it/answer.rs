//! `ground answer` end to end: the real binary against wiremock servers standing in
//! for SearXNG, the web pages and Ollama, with real-shaped payloads. Also the result
//! pages that fail (each with its status, replaced by the next result, or all of them
//! failing), a 1024-token window, and the `--events` stream of a whole run.

use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};
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
    assert_matches_schema(ground::mcp::schemas::GROUNDED_ANSWER, &value);
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
    // The pages are cut and none holds what the first result's snippet says (the
    // FOTON-M3 mission): that result's snippet is sent as well, after the pages.
    let sources = v["sources"].as_array().unwrap();
    let foton = sources
        .iter()
        .find(|s| s["status"] == "SNIPPET" && s["text"].to_string().contains("FOTON-M3"))
        .expect("the read page's snippet");
    assert!(foton["index"].as_u64().unwrap() > 3, "{foton}");
    assert!(
        foton["url"]
            .as_str()
            .unwrap()
            .ends_with("tardigrades-space.html")
    );
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

/// The `sources[]` entries of pages (not of short sources: snippets, titles).
fn pages(v: &serde_json::Value) -> Vec<&serde_json::Value> {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "page")
        .collect()
}

// Result pages that fail --------------------------------------------------------------

const QUESTION: &str = "do tardigrades survive in space";

#[tokio::test]
async fn every_page_failing_is_no_sources_with_counts() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let page = |name: &str| path(format!("/pages/{name}.html"));
    Mock::given(method("GET"))
        .and(page("tardigrades-space"))
        .respond_with(ResponseTemplate::new(404).set_body_string("not here"))
        .mount(&world.pages)
        .await;
    Mock::given(method("GET"))
        .and(page("tardigrades-cryptobiosis"))
        .respond_with(ResponseTemplate::new(500).set_body_string("oops"))
        .mount(&world.pages)
        .await;
    Mock::given(method("GET"))
        .and(page("tardigrades-overview"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("pages/tardigrades-overview.html"), "text/html")
                .set_delay(Duration::from_secs(30)),
        )
        .mount(&world.pages)
        .await;
    // An unsupported type (PDFs are read since issue 13, so a ZIP stands for them).
    Mock::given(method("GET"))
        .and(page("sqlite-vacuum"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(b"PK\x03\x04\x14\x00\x00\x00".to_vec(), "application/zip"),
        )
        .mount(&world.pages)
        .await;
    let config = world.config_file("[fetch]\ntimeout_secs = 1\n");

    let started = Instant::now();
    let value = fails_both_ways(
        &world,
        |cmd| {
            cmd.arg("--config").arg(&config);
        },
        QUESTION,
        &Failure {
            code: 4,
            kind: "no_usable_sources",
            cause: &[
                "none of the 4 result pages could be used",
                "1 ERROR (HTTP 404)",
                "1 ERROR (HTTP 500)",
                "1 TIMEOUT",
                "1 UNSUPPORTED",
            ],
            hint: "--pages",
        },
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "two runs with a 1 s page limit took {:?}: the slow page was waited for",
        started.elapsed()
    );
    assert_eq!(value["error"]["exit_code"], 4);
    assert!(world.ollama.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_binary_page_is_unsupported_and_the_next_result_is_used() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let mut binary = b"<html>\x00\x01\x02\x03".to_vec();
    binary.extend((0..4096u32).map(|i| (i % 256) as u8));
    Mock::given(method("GET"))
        .and(path("/pages/tardigrades-space.html"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(binary, "text/html"))
        .with_priority(1)
        .mount(&world.pages)
        .await;
    world.serve_fixture_pages().await;
    let answer = json!({"answerable": true, "statements": [
        {"text": "Dry tardigrades enter a dormant tun state.",
         "citations": [{"source": 1, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"}]}
    ], "unknowns": []});
    world.model_replies(&answer.to_string()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--strict", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    let statuses: Vec<_> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["url"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                s["status"].as_str().unwrap().to_string(),
                s["index"].clone(),
            )
        })
        .collect();
    let row =
        |name: &str, status: &str, index: Value| (name.to_string(), status.to_string(), index);
    assert_eq!(
        statuses,
        vec![
            row("tardigrades-space.html", "UNSUPPORTED", json!(null)),
            row("tardigrades-cryptobiosis.html", "SUCCESS", json!(1)),
            row("tardigrades-overview.html", "SUCCESS", json!(2)),
            row("sqlite-vacuum.html", "SUCCESS", json!(3)),
            // The unreadable page's search snippet is still evidence, after the pages.
            row("tardigrades-space.html", "SNIPPET", json!(4)),
        ]
    );
    assert!(
        v["sources"][0]["error"]
            .as_str()
            .unwrap()
            .contains("binary"),
        "{}",
        v["sources"][0]
    );
    assert_eq!(v["grounded"], true);
    // The binary bytes never reached the model.
    let requests = world.ollama.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    let body: Value = serde_json::from_slice(&requests[0].body).unwrap();
    assert!(!body.to_string().contains("\\u0000"));
}

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

// A small window and the event stream -------------------------------------------------

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
async fn the_event_stream_of_a_full_run() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let events = world.home.path().join("events.jsonl");
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--events"])
        .arg(&events)
        .arg("do tardigrades survive in space");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v["ms"] = json!(0);
            if let Some(pages) = v.get_mut("pages").and_then(Value::as_array_mut) {
                for p in pages {
                    p["ms"] = json!(0);
                }
            }
            v
        })
        .collect();
    let text = world.scrub(
        &lines
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    insta::assert_snapshot!("event_stream", text);
}
