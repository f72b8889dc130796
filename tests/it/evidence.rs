//! Evidence that reaches the model (issue 15): hedged page fetching, against
//! stand-in servers on loopback.

use crate::common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

#[tokio::test]
async fn a_page_that_lags_far_behind_is_not_waited_for() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    // The third result answers only after 15 s (the page timeout); mounted first, so
    // it wins over the fixture route for the same path.
    Mock::given(method("GET"))
        .and(path("/pages/tardigrades-overview.html"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(fixture("pages/tardigrades-overview.html"), "text/html")
                .set_delay(std::time::Duration::from_secs(15)),
        )
        .mount(&world.pages)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;

    let started = std::time::Instant::now();
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "Can tardigrades survive in space?"]);
    let out = run(cmd).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Well before the 15 s the slow page would have held the run.
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    let json = json_stdout(&out);
    let sources = json["sources"].as_array().unwrap();
    let slow = sources
        .iter()
        .find(|s| {
            s["url"]
                .as_str()
                .unwrap()
                .ends_with("tardigrades-overview.html")
        })
        .expect("the slow page is listed");
    assert_eq!(slow["status"], "NOT_WAITED", "{slow}");
    assert_eq!(
        slow["index"],
        serde_json::Value::Null,
        "never counted as read"
    );
    assert!(
        slow["error"]
            .as_str()
            .unwrap()
            .starts_with("still loading after "),
        "{slow}"
    );
    // The two fast pages were read and cited; a spare may have filled the third place.
    let read: Vec<&str> = sources
        .iter()
        .filter(|s| s["status"] == "SUCCESS")
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert!(read.len() >= 2, "{read:?}");
    assert!(read[0].ends_with("tardigrades-space.html"));
    assert!(read[1].ends_with("tardigrades-cryptobiosis.html"));
    assert_eq!(json["grounded"], true);
}

#[tokio::test]
async fn fast_pages_are_all_waited_for_in_rank_order() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "Can tardigrades survive in space?"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = json_stdout(&out);
    let statuses: Vec<&str> = json["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    // The fourth result, not read, is sent as its snippet.
    assert_eq!(statuses, ["SUCCESS", "SUCCESS", "SUCCESS", "SNIPPET"]);
}

#[tokio::test]
async fn a_snippet_is_a_source_and_its_quotes_are_checked_like_a_pages() {
    let world = World::new().await;
    // Three pages are read; the fourth result (SQLite VACUUM) is sent as its snippet.
    let answer = serde_json::json!({
        "answerable": true,
        "statements": [
            {"text": "VACUUM returns free pages to the operating system.",
             "citations": [{"source": 4, "quote": "rebuilds the database file and returns free pages to the operating system"}]},
            {"text": "VACUUM also encrypts the database.",
             "citations": [{"source": 4, "quote": "VACUUM encrypts the whole database file"}]}
        ],
        "unknowns": []
    })
    .to_string();
    world.healthy(&answer).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "What does SQLite VACUUM do?"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = json_stdout(&out);
    let snippet = &json["sources"][3];
    assert_eq!(snippet["kind"], "snippet", "{json}");
    assert_eq!(snippet["index"], 4);
    assert_eq!(snippet["status"], "SNIPPET");
    let citations = json["citations"].as_array().unwrap();
    assert_eq!(citations[0]["source"], 4);
    assert_eq!(
        citations[0]["verified"], true,
        "a quote of the snippet verifies"
    );
    assert_eq!(
        citations[1]["verified"], false,
        "a quote not in the snippet does not"
    );
    assert_eq!(
        json["groundingMetadata"]["groundingChunks"][3]["kind"],
        "snippet"
    );
    // The model saw it as a source of its own kind, after the pages.
    let requests = world.ollama.received_requests().await.unwrap();
    let prompt = String::from_utf8_lossy(&requests.last().unwrap().body).to_string();
    assert!(
        prompt.contains(r#"<source id=\"4\" kind=\"snippet\">"#),
        "{prompt}"
    );

    // For a person, the source list says so.
    let mut cmd = world.ground();
    cmd.args(["answer", "What does SQLite VACUUM do?"]);
    let out = run(cmd).await;
    assert!(
        stdout(&out).contains(
            "[4] Reclaiming space in SQLite with VACUUM (search snippet, 1 verified, 1 not found)"
        ),
        "{}",
        stdout(&out)
    );
}
