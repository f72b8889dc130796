//! The planner's rounds (issue 17, part 1): one query per round, stopping once the
//! planner's must-have evidence is in the pages read, `--max-searches` as the hard
//! cap, and `--plan-mode concurrent` for all at once. Wiremock SearXNG, pages and
//! Ollama stand in for the real servers.

mod common;

use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path, query_param};
use wiremock::{Mock, ResponseTemplate};

const PLANNER: &str = "You turn a question into web search queries";
const ANSWER: &str = "You answer a question using only the numbered sources";
const QUESTION: &str = "do tardigrades survive in space";

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
