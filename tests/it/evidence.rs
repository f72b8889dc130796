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

/// A search reply with the four fixture results and `copies` more: the same pages
/// again under /pages/copy{n}/ (served by [`serve_copies`]), as a wide search
/// returns many pages on one subject.
fn wide_capture(world: &World, copies: usize) -> String {
    let mut body: serde_json::Value = serde_json::from_str(
        &fixture("searxng/searxng/normal.body.json")
            .replace("http://127.0.0.1:8899", &world.pages.uri()),
    )
    .unwrap();
    let originals = body["results"].as_array().unwrap().clone();
    let results = body["results"].as_array_mut().unwrap();
    for n in 0..copies {
        let mut copy = originals[n % originals.len()].clone();
        let url = copy["url"]
            .as_str()
            .unwrap()
            .replace("/pages/", &format!("/pages/copy{n}/"));
        copy["url"] = url.into();
        results.push(copy);
    }
    body.to_string()
}

/// Serves each fixture page under /pages/copy{n}/ as well.
async fn serve_copies(world: &World, copies: usize) {
    let names = [
        "tardigrades-space",
        "tardigrades-cryptobiosis",
        "tardigrades-overview",
        "sqlite-vacuum",
    ];
    for n in 0..copies {
        let name = names[n % names.len()];
        Mock::given(method("GET"))
            .and(path(format!("/pages/copy{n}/{name}.html")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(fixture(&format!("pages/{name}.html")), "text/html"),
            )
            .mount(&world.pages)
            .await;
    }
}

#[tokio::test]
async fn a_page_read_but_not_used_is_listed_as_such() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    // Four pages read; the SQLite page shares no word with the question.
    let question = "How do tardigrades survive drying out?";
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--pages", "4", question]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = json_stdout(&out);
    let sources = json["sources"].as_array().unwrap();
    assert_eq!(sources.len(), 4, "{json}");
    let sqlite = &sources[3];
    assert_eq!(sqlite["status"], "SUCCESS", "{sqlite}");
    assert_eq!(sqlite["index"], 4, "numbered like every page read");
    assert_eq!(sqlite["used"], false, "{sqlite}");
    assert_eq!(sqlite["chars_sent"], 0);
    assert!(sources[..3].iter().all(|s| s["used"] == true), "{json}");
    // Numbering stays that of the pages read: four chunks, the fourth never cited.
    assert_eq!(
        json["groundingMetadata"]["groundingChunks"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    // The model was not shown it at all: no block, no header.
    let requests = world.ollama.received_requests().await.unwrap();
    let prompt = String::from_utf8_lossy(&requests.last().unwrap().body).to_string();
    assert!(prompt.contains(r#"<source id=\"3\">"#), "{prompt}");
    assert!(!prompt.contains(r#"<source id=\"4\""#), "{prompt}");
    assert!(!prompt.contains("sqlite-vacuum"), "{prompt}");

    // For a person, the source list says so.
    let mut cmd = world.ground();
    cmd.args(["answer", "--pages", "4", question]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("[4]"))
        .expect(&text);
    assert!(line.contains("(read, not used, not cited)"), "{line}");
}

#[tokio::test]
async fn the_prompt_stays_within_the_budget_at_each_window_and_page_count() {
    let world = World::new().await;
    let body = wide_capture(&world, 8);
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    serve_copies(&world, 8).await;
    world.model_replies(&good_answer()).await;
    for (window, answer) in [
        ("1024", "256"),
        ("1400", "256"),
        ("2048", "512"),
        ("4096", "1024"),
    ] {
        for pages in ["1", "3", "10"] {
            let mut cmd = world.ground();
            cmd.args([
                "answer",
                "--json",
                "--no-cache",
                "--pages",
                pages,
                "--context-tokens",
                window,
                "--max-answer-tokens",
                answer,
                "Can tardigrades survive in space?",
            ]);
            let out = run(cmd).await;
            let json = json_stdout(&out);
            let context = &json["context"];
            let (used, budget) = (
                context["estimated_tokens"].as_u64().unwrap(),
                context["budget_tokens"].as_u64().unwrap(),
            );
            assert!(used <= budget, "{window}/{pages}: {used} > {budget}");
            let read = json["sources"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["status"] == "SUCCESS")
                .count();
            assert_eq!(read.to_string(), pages, "{window}: {json}");
            // Every source the model was shown is numbered once, in order.
            let requests = world.ollama.received_requests().await.unwrap();
            let prompt = String::from_utf8_lossy(&requests.last().unwrap().body).to_string();
            let chunks = json["groundingMetadata"]["groundingChunks"]
                .as_array()
                .unwrap()
                .len();
            for n in 1..=chunks {
                let tag = format!(r#"<source id=\"{n}\""#);
                assert!(prompt.matches(&tag).count() <= 1, "{window}/{pages}: {n}");
            }
            assert!(!prompt.contains(&format!(r#"<source id=\"{}\""#, chunks + 1)));
        }
    }
}
