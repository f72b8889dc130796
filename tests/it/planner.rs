//! The planner: the gate that decides whether a question needs a live search (and the
//! offline answer when it does not, or with `--fallback offline` when search fails),
//! the planned queries run at once and merged by URL, and the rounds: one query per
//! round, stopping once the planner's must-have evidence is in the pages read,
//! `--max-searches` as the hard cap, and `--plan-mode concurrent` for all at once.
//! Wiremock SearXNG, pages and Ollama stand in for the real servers.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const GATE: &str = "You decide whether a question needs a live web search";
const PLANNER: &str = "You turn a question into web search queries";
const OFFLINE: &str = "Answer the question briefly from your own knowledge";
const ANSWER: &str = "You answer a question using only the numbered sources";
const QUESTION: &str = "do tardigrades survive in space";

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
    world.search_and_pages().await;
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

// Rounds ------------------------------------------------------------------------------

/// The planner's reply, the answer, the pages, and a search mock per query with
/// the number of requests it must see.
async fn world_with(plan: Value, searches: &[(&str, u64)]) -> World {
    let world = World::new().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(PLANNER))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&plan.to_string(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(ANSWER))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    let capture =
        fixture("searxng/searxng/normal.body.json").replace(CAPTURED_PAGES_URL, &world.pages.uri());
    for (query, expect) in searches {
        Mock::given(method("GET"))
            .and(path("/search"))
            .and(query_param("q", *query))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(capture.clone(), "application/json"),
            )
            .expect(*expect)
            .mount(&world.searx)
            .await;
    }
    world.serve_fixture_pages().await;
    world
}

fn events_of(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test]
async fn evidence_in_the_first_rounds_pages_stops_after_one_search() {
    let plan = json!({"queries": ["tardigrades space survival", "FOTON-M3 tardigrades"],
        "must_have_evidence": ["FOTON-M3 mission"], "stop_conditions": ["one source states it"]});
    let world = world_with(
        plan,
        &[
            ("tardigrades space survival", 1),
            ("FOTON-M3 tardigrades", 0),
        ],
    )
    .await;
    let events = world.home.path().join("events.jsonl");
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--queries", "2", "--events"])
        .arg(&events)
        .arg(QUESTION);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["plan"]["mode"], "rounds");
    assert_eq!(v["plan"]["stopped_because"], "evidence_found");
    assert_eq!(
        v["plan"]["queries_not_run"],
        json!(["FOTON-M3 tardigrades"])
    );
    assert_eq!(v["plan"]["must_have_evidence"], json!(["FOTON-M3 mission"]));
    assert_eq!(
        v["plan"]["stop_conditions"],
        json!(["one source states it"])
    );
    assert_eq!(v["plan"]["evidence"][0]["found"], true);
    assert_eq!(v["plan"]["evidence"][0]["hosts"], json!(["127.0.0.1"]));
    assert_eq!(v["plan"]["rounds"], 1);
    assert_eq!(
        v["groundingMetadata"]["webSearchQueries"],
        json!(["tardigrades space survival"])
    );
    assert_eq!(v["searches"].as_array().unwrap().len(), 1);
    assert_eq!(v["grounded"], true);

    let lines = events_of(&events);
    let names: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "query_planned",
            "search_called",
            "pages_fetched",
            "evidence_checked",
            "context_built",
            "answer_shown"
        ]
    );
    assert_eq!(lines[0]["must_have_evidence"], json!(["FOTON-M3 mission"]));
    assert_eq!(lines[0]["stop_conditions"], json!(["one source states it"]));
    assert_eq!(lines[3]["stopped_because"], "evidence_found");
    assert_eq!(lines[3]["queries_not_run"], json!(["FOTON-M3 tardigrades"]));
}

#[tokio::test]
async fn missing_evidence_runs_the_next_query() {
    let plan = json!({"queries": ["tardigrades space survival", "water bear lichen"],
        "must_have_evidence": ["lichen photobiont"], "stop_conditions": []});
    let world = world_with(
        plan,
        &[("tardigrades space survival", 1), ("water bear lichen", 1)],
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--queries", "2", QUESTION]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["plan"]["stopped_because"], "queries_exhausted");
    assert_eq!(v["plan"]["queries_not_run"], json!([]));
    assert_eq!(v["plan"]["rounds"], 2);
    assert_eq!(v["plan"]["evidence"][0]["found"], false);
    assert_eq!(
        v["groundingMetadata"]["webSearchQueries"],
        json!(["tardigrades space survival", "water bear lichen"])
    );
}

#[tokio::test]
async fn max_searches_is_the_hard_cap_in_rounds() {
    let plan = json!({"queries": ["q one", "q two", "q three"],
        "must_have_evidence": ["lichen photobiont"], "stop_conditions": ["2 sources agree"]});
    let world = world_with(plan, &[("q one", 1), ("q two", 1), ("q three", 0)]).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--queries",
        "3",
        "--max-searches",
        "2",
        QUESTION,
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["plan"]["agree"], 2);
    assert_eq!(v["plan"]["stopped_because"], "search_budget");
    assert_eq!(v["plan"]["queries_not_run"], json!(["q three"]));
    assert_eq!(v["searches"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn concurrent_mode_runs_every_query_at_once() {
    let plan = json!({"queries": ["tardigrades space survival", "FOTON-M3 tardigrades"],
        "must_have_evidence": ["FOTON-M3 mission"], "stop_conditions": []});
    let world = world_with(
        plan,
        &[
            ("tardigrades space survival", 1),
            ("FOTON-M3 tardigrades", 1),
        ],
    )
    .await;
    let events = world.home.path().join("events.jsonl");
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--queries",
        "2",
        "--plan-mode",
        "concurrent",
        "--events",
    ])
    .arg(&events)
    .arg(QUESTION);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["plan"]["mode"], "concurrent");
    assert_eq!(v["plan"]["stopped_because"], Value::Null);
    assert_eq!(v["plan"]["must_have_evidence"], json!(["FOTON-M3 mission"]));
    let names: Vec<String> = events_of(&events)
        .iter()
        .map(|l| l["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names[..4],
        [
            "query_planned",
            "search_called",
            "search_called",
            "pages_fetched"
        ]
    );
}

// --- finding 16: independent sources ---------------------------------------------------

#[tokio::test]
async fn one_server_under_two_names_is_not_two_sources_that_agree() {
    use wiremock::matchers::body_string_contains;
    let world = World::new().await;
    let plan = json!({"queries": ["tardigrades space survival", "FOTON-M3 tardigrades"],
        "must_have_evidence": ["FOTON-M3 mission"], "stop_conditions": ["2 independent sources agree"]});
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(
            "You turn a question into web search queries",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&plan.to_string(), "stop")),
        )
        .mount(&world.ollama)
        .await;
    world.model_replies(&good_answer()).await;
    world.serve_fixture_pages().await;
    // The same page of the same server, once as 127.0.0.1 and once as localhost.
    let by_ip = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    let by_name = by_ip.replace("127.0.0.1", "localhost");
    let reply = json!({"query": "q", "results": [
        {"url": by_ip, "title": "Tardigrades in space", "content": "Tardigrades on the FOTON-M3 mission.", "engine": "x", "engines": ["x"]},
        {"url": by_name, "title": "Tardigrades in space (mirror)", "content": "Tardigrades on the FOTON-M3 mission.", "engine": "x", "engines": ["x"]}
    ], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []});
    for (query, expect) in [
        ("tardigrades space survival", 1),
        ("FOTON-M3 tardigrades", 1),
    ] {
        Mock::given(method("GET"))
            .and(path("/search"))
            .and(query_param("q", query))
            .respond_with(ResponseTemplate::new(200).set_body_json(reply.clone()))
            .expect(expect)
            .mount(&world.searx)
            .await;
    }
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--queries",
        "2",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    // Before: "sources_agree" after one search, with 127.0.0.1 and localhost as the
    // two sources.
    assert_eq!(
        v["plan"]["evidence"][0]["hosts"],
        json!(["127.0.0.1"]),
        "{v}"
    );
    assert_eq!(v["plan"]["stopped_because"], "queries_exhausted", "{v}");
    assert_eq!(v["plan"]["rounds"], 2, "{v}");
}
