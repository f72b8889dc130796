//! Deciding, planning, budgets, caching, events, deadlines and fallback: the "smart"
//! parts of `ground answer`, against wiremock SearXNG, pages and Ollama.

mod common;

use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const GATE: &str = "You decide whether a question needs a live web search";
const PLANNER: &str = "You turn a question into web search queries";
const OFFLINE: &str = "Answer the question briefly from your own knowledge";
const ANSWER: &str = "You answer a question using only the numbered sources";

async fn model_call(world: &World, marker: &str, content: Value, expect: u64) {
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(marker))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&content.to_string(), "stop")),
        )
        .expect(expect)
        .mount(&world.ollama)
        .await;
}

async fn answer_call(world: &World, expect: u64) {
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(ANSWER))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .expect(expect)
        .mount(&world.ollama)
        .await;
}

#[tokio::test]
async fn auto_skips_search_for_general_knowledge_and_says_so() {
    let world = World::new().await;
    model_call(
        &world,
        GATE,
        json!({"need_search": false, "reason_codes": ["GENERAL_KNOWLEDGE"], "max_queries": 1}),
        2,
    )
    .await;
    model_call(
        &world,
        OFFLINE,
        json!({"answer": "Water boils at 100 degrees Celsius at sea level."}),
        2,
    )
    .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&world.searx)
        .await;

    let mut cmd = world.ground();
    cmd.args(["answer", "--auto", "at what temperature does water boil"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Not grounded: answered from the model's own knowledge, no search needed (GENERAL_KNOWLEDGE).\n\n\
         Water boils at 100 degrees Celsius at sea level.\n"
    );

    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--auto",
        "--json",
        "--strict",
        "at what temperature does water boil",
    ]);
    let out = run(cmd).await;
    assert_eq!(
        out.status.code(),
        Some(6),
        "--strict refuses an ungrounded answer"
    );
    let v = json_stdout(&out);
    assert_eq!(v["grounded"], false);
    assert_eq!(v["mode"], "no_search_needed");
    assert_eq!(v["decision"]["need_search"], false);
    assert_eq!(v["groundingMetadata"]["webSearchQueries"], json!([]));
    assert_eq!(v["groundingMetadata"]["groundingSupports"], json!([]));
    assert_eq!(v["sources"], json!([]));
    assert!(
        stderr(&out).contains("no search was made"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn auto_searches_when_the_gate_says_so() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    model_call(
        &world,
        GATE,
        json!({"need_search": true, "reason_codes": ["NICHE_ENTITY"], "max_queries": 1}),
        1,
    )
    .await;
    answer_call(&world, 1).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--auto",
        "--json",
        "--queries",
        "3",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["mode"], "grounded");
    assert_eq!(v["grounded"], true);
    assert_eq!(v["decision"]["reason_codes"], json!(["NICHE_ENTITY"]));
    // The gate's max_queries (1) caps --queries 3: no planner call, one search.
    assert_eq!(
        v["groundingMetadata"]["webSearchQueries"],
        json!(["do tardigrades survive in space"])
    );
}

#[tokio::test]
async fn planned_queries_run_concurrently_and_merge_by_url() {
    let world = World::new().await;
    model_call(&world, PLANNER, json!({"queries": ["tardigrades space survival", "FOTON-M3 tardigrades", "water bears vacuum"]}), 1).await;
    answer_call(&world, 1).await;
    let capture =
        fixture("searxng/searxng/normal.body.json").replace(CAPTURED_PAGES_URL, &world.pages.uri());
    // The second query finds the same pages with tracking parameters and a fragment.
    let tracked = capture.replace(".html\"", ".html?utm_source=feed#top\"");
    for (query, body) in [
        ("tardigrades space survival", capture.clone()),
        ("FOTON-M3 tardigrades", tracked),
    ] {
        Mock::given(method("GET"))
            .and(path("/search"))
            .and(query_param("q", query))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
            .expect(1)
            .mount(&world.searx)
            .await;
    }
    world.serve_fixture_pages().await;
    let events = world.home.path().join("events.jsonl");
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--queries",
        "3",
        "--max-searches",
        "2",
        "--events",
    ])
    .arg(&events)
    .arg("do tardigrades survive in space");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(
        v["groundingMetadata"]["webSearchQueries"],
        json!(["tardigrades space survival", "FOTON-M3 tardigrades"]),
        "--max-searches 2 caps the planner's 3 queries"
    );
    let urls: Vec<&str> = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] != "snippet")
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls.len(),
        3,
        "duplicates across queries are merged: {urls:?}"
    );
    assert!(
        urls.iter().all(|u| !u.contains("utm_source")),
        "the first-ranked form is kept: {urls:?}"
    );

    let lines: Vec<Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "query_planned",
            "search_called",
            "search_called",
            "pages_fetched",
            "context_built",
            "answer_shown"
        ]
    );
    assert_eq!(lines[1]["cached"], false);
    assert_eq!(lines[1]["results"], 4);
    assert_eq!(lines[5]["grounded"], true);
    assert!(lines.iter().all(|l| l["ms"].is_u64()));
}

#[tokio::test]
async fn a_second_run_answers_from_the_cache() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                fixture("searxng/searxng/normal.body.json")
                    .replace(CAPTURED_PAGES_URL, &world.pages.uri()),
                "application/json",
            ),
        )
        .expect(3) // runs 1, 3 (--refresh) and 4 (--no-cache); run 2 is cached
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    let ask = |extra: &[&str]| {
        let mut cmd = world.ground();
        cmd.env("GROUND_CACHE_DIR", &cache)
            .args(["answer", "--json"])
            .args(extra)
            .arg("do tardigrades survive in space");
        cmd
    };
    let first = json_stdout(&run(ask(&[])).await);
    assert_eq!(first["searches"][0]["cached"], false);
    assert!(
        first["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cached"] == false)
    );
    let page_requests = world.pages.received_requests().await.unwrap().len();

    let second = json_stdout(&run(ask(&[])).await);
    assert_eq!(second["searches"][0]["cached"], true);
    assert!(
        second["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cached"] == true)
    );
    assert_eq!(
        world.pages.received_requests().await.unwrap().len(),
        page_requests,
        "no page fetched again"
    );
    assert_eq!(second["answer"], first["answer"]);

    let third = json_stdout(&run(ask(&["--refresh"])).await);
    assert_eq!(third["searches"][0]["cached"], false);
    let fourth = json_stdout(&run(ask(&["--no-cache"])).await);
    assert_eq!(fourth["searches"][0]["cached"], false);
}

#[tokio::test]
async fn offline_fallback_answers_without_sources_and_exits_7() {
    let world = World::new().await;
    model_call(
        &world,
        OFFLINE,
        json!({"answer": "Tardigrades have survived exposure to open space."}),
        1,
    )
    .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", closed_port_url()).args([
        "answer",
        "--json",
        "--fallback",
        "offline",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["mode"], "offline");
    assert_eq!(v["grounded"], false);
    assert!(
        v["offline_reason"]
            .as_str()
            .unwrap()
            .starts_with("cannot reach SearXNG"),
        "{v}"
    );
    assert_eq!(
        v["answer"],
        "Tardigrades have survived exposure to open space."
    );
    assert!(stderr(&out).contains("not grounded"), "{}", stderr(&out));

    // Without the flag the same failure is a search failure.
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", closed_port_url())
        .args(["answer", "do tardigrades survive in space"]);
    assert_eq!(run(cmd).await.status.code(), Some(3));
}

#[tokio::test]
async fn the_whole_run_deadline_names_the_stage_and_its_exit_code() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--timeout",
        "1",
        "do tardigrades survive in space",
    ]);
    let started = std::time::Instant::now();
    let out = run(cmd).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: ground did not finish within 1 s (stopped while searching)\n\
         hint: raise --timeout (or [run] timeout_secs), or make the run smaller with fewer --pages\n"
    );

    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--timeout",
        "1",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("stopped while asking the model"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json_stdout(&out)["error"]["kind"], "deadline");
}

#[tokio::test]
async fn ctrl_c_during_fetch_ends_promptly_with_130_and_no_partial_json() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.pages)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let child = cmd.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(800));
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let started = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "must stop promptly"
        );
        out
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        !world.pages.received_requests().await.unwrap().is_empty(),
        "it was fetching"
    );
    let v = json_stdout(&out);
    assert_eq!(
        v["error"]["kind"], "interrupted",
        "only the error object, never a partial answer"
    );
}

#[tokio::test]
async fn bad_run_settings_are_usage_errors() {
    let world = World::new().await;
    for (args, message) in [
        (vec!["--queries", "5"], "queries is 5, outside 1..=3"),
        (
            vec!["--max-searches", "0"],
            "max searches is 0, outside 1..=100",
        ),
        (
            vec!["--timeout", "0"],
            "--timeout / [run] timeout_secs is 0, outside 1..=3600",
        ),
    ] {
        let mut cmd = world.ground();
        cmd.arg("answer").args(&args).arg("q");
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

#[tokio::test]
async fn a_grounding_pack_moves_unverifiable_points_to_uncertain() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    let reply = json!({
        "answerable": true,
        "statements": [
            {"text": "Dried tardigrades survived open space on FOTON-M3 in 2007.",
             "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days"}]},
            {"text": "Tardigrades can live on the Moon for a century.",
             "citations": [{"source": 2, "quote": "tardigrades have lived on the Moon for a hundred years"}]}
        ],
        "unknowns": ["How long they survive unshielded"],
        "what_to_ask_user": [{"q": "Do you mean low Earth orbit or deep space?", "why": "survival differs with radiation"}]
    });
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("what_to_ask_user"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&reply.to_string(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--pack", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pack = world.scrub(&stdout(&out));
    let pack: Value = serde_json::from_str(&pack).unwrap();
    assert_eq!(pack["grounded"], false, "one statement is not verified");
    assert_eq!(pack["key_points"].as_array().unwrap().len(), 1);
    assert_eq!(
        pack["key_points"][0]["sources"],
        json!([{"index": 1, "url": "http://pages.test/pages/tardigrades-space.html", "title": "Tardigrades in space: the FOTON-M3 experiment"}])
    );
    assert_eq!(pack["key_points"][0]["confidence"], 1.0);
    assert_eq!(
        pack["disputed_or_uncertain"],
        json!([
            {"text": "Tardigrades can live on the Moon for a century.", "reason": "the quoted text was not found in source 2"},
            {"text": "How long they survive unshielded", "reason": "the sources do not settle this"}
        ])
    );
    assert_eq!(
        pack["what_to_ask_user"],
        json!([{"q": "Do you mean low Earth orbit or deep space?", "why": "survival differs with radiation"}])
    );
    // The request asked for the questions in its schema.
    let body: Value =
        serde_json::from_slice(&world.ollama.received_requests().await.unwrap()[0].body).unwrap();
    assert_eq!(
        body["format"]["properties"]["what_to_ask_user"]["maxItems"],
        2
    );
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

#[tokio::test]
async fn twenty_parallel_runs_share_one_cache_without_errors() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    // Twenty processes at once, all reading and writing the same cache folder.
    let children: Vec<std::process::Child> = (0..20)
        .map(|_| {
            let mut cmd = world.ground();
            cmd.env("GROUND_CACHE_DIR", &cache)
                .args(["answer", "--json", "do tardigrades survive in space"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let outs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        assert_eq!(json_stdout(out)["grounded"], true);
    }
    // Every entry left behind is a complete, readable JSON file.
    for kind in ["search", "pages"] {
        for entry in std::fs::read_dir(cache.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                serde_json::from_str::<Value>(&text).is_ok(),
                "{} is torn",
                path.display()
            );
        }
    }
}
