//! Wikipedia as a search service (`--search wikipedia`, and `auto`'s last fallback),
//! against a stand-in for MediaWiki's Action API that answers in the documented JSON
//! shapes (fixtures/wikipedia): the request, the wiki of the question's language, the
//! leads as snippets (and as snippet sources of an answer), errors that come with
//! HTTP 200, no results, the cache and the search log.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A MediaWiki stand-in whose first path segment is the wiki's language, as
/// `GROUND_WIKIPEDIA_URL={server}/{lang}` makes ground ask for it.
async fn wikipedia(lang: &str, body: &str) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path(format!("/{lang}/w/api.php")))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body.to_string(), "application/json"))
        .mount(&server)
        .await;
    server
}

/// `ground` searching Wikipedia at `server`.
fn ground(world: &World, server: &MockServer) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARCH", "wikipedia")
        .env("GROUND_WIKIPEDIA_URL", format!("{}/{{lang}}", server.uri()));
    cmd
}

#[tokio::test]
async fn results_come_in_search_rank_with_the_leads_as_snippets() {
    let world = World::new().await;
    let server = MockServer::start().await;
    // The parameters MediaWiki's documentation gives for a search with leads and URLs.
    let mut mock = Mock::given(method("GET")).and(path("/en/w/api.php"));
    for (name, value) in [
        ("action", "query"),
        ("generator", "search"),
        ("gsrsearch", "tardigrades space"),
        ("gsrnamespace", "0"),
        ("prop", "extracts|info"),
        ("exintro", "1"),
        ("explaintext", "1"),
        ("inprop", "url"),
        ("format", "json"),
        ("formatversion", "2"),
    ] {
        mock = mock.and(query_param(name, value));
    }
    // Wikimedia's policy: a descriptive User-Agent with contact information.
    let user_agent = |req: &wiremock::Request| {
        let ua = req
            .headers
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        ua.starts_with("ground/") && ua.contains("(") && ua.contains("me@example.org")
    };
    mock.and(user_agent)
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("wikipedia/search-tardigrade.json"),
            "application/json",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let mut cmd = ground(&world, &server);
    cmd.env("GROUND_CONTACT", "me@example.org")
        .args(["search", "--json", "tardigrades space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "wikipedia");
    let titles: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Tardigrade", "Cryptobiosis", "Tardigrades in space"]
    );
    assert_eq!(
        v["results"][0]["url"],
        "https://en.wikipedia.org/wiki/Tardigrade"
    );
    assert_eq!(v["results"][0]["engines"], json!(["wikipedia"]));
    assert!(
        v["results"][1]["snippet"]
            .as_str()
            .unwrap()
            .starts_with("Cryptobiosis is a metabolic state"),
        "{v}"
    );
    assert!(
        v.get("warnings").is_none(),
        "an explicit choice is no fallback: {v}"
    );
}

#[tokio::test]
async fn the_wiki_is_the_questions_language_or_the_one_given() {
    let world = World::new().await;
    let german = wikipedia("de", &fixture("wikipedia/search-de.json")).await;
    let mut cmd = ground(&world, &german);
    cmd.args(["search", "--json", "überleben Bärtierchen im Weltraum"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["results"][0]["title"], "Bärtierchen");

    let mut cmd = ground(&world, &german);
    cmd.args(["search", "--json", "--language", "de-CH", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(german.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn an_api_error_is_a_search_failure_naming_the_query() {
    let world = World::new().await;
    let server = wikipedia("en", &fixture("wikipedia/error-badvalue.json")).await;
    let mut cmd = ground(&world, &server);
    cmd.args(["search", "tardigrades"]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        3,
        &[
            "Wikipedia refused the search for \"tardigrades\"",
            "badvalue",
        ],
        "--language",
    );

    let mut cmd = ground(&world, &server);
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(json_stdout(&out)["error"]["kind"], "search_refused");
}

#[tokio::test]
async fn no_result_is_no_sources_and_a_server_away_is_a_search_failure() {
    let world = World::new().await;
    let server = wikipedia("en", &fixture("wikipedia/search-empty.json")).await;
    let mut cmd = ground(&world, &server);
    cmd.args(["search", "zzqxv"]);
    let out = run(cmd).await;
    assert_error_report(&out, 4, &["returned no results"], "rephrase");

    let mut cmd = world.ground();
    cmd.env("GROUND_SEARCH", "wikipedia")
        .env(
            "GROUND_WIKIPEDIA_URL",
            format!("{}/{{lang}}", closed_port_url()),
        )
        .args(["search", "tardigrades"]);
    let out = run(cmd).await;
    assert_error_report(&out, 3, &["cannot reach Wikipedia at"], "wikipedia_url");
}

/// The model's answer: one statement from the page read (source 1), one from the
/// lead of the second result, sent as a snippet (source 2).
fn answer_citing_a_lead() -> String {
    json!({
        "answerable": true,
        "statements": [
            {"text": "Dried tardigrades survived ten days in open space.",
             "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
            {"text": "Drying brings on anhydrobiosis, the best studied form of cryptobiosis.",
             "citations": [{"source": 2, "quote": "Anhydrobiosis, the form brought on by drying, is the best studied"}]}
        ],
        "unknowns": []
    })
    .to_string()
}

/// A Wikipedia stand-in whose result pages are on the page server (the first one
/// serves a real page; the others are only leads).
async fn wikipedia_with_pages(world: &World) -> MockServer {
    let body = fixture("wikipedia/search-tardigrade.json")
        .replace("https://en.wikipedia.org", &world.pages.uri());
    let server = wikipedia("en", &body).await;
    Mock::given(method("GET"))
        .and(path("/wiki/Tardigrade"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("pages/tardigrades-space.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&world.pages)
        .await;
    server
}

#[tokio::test]
async fn an_answer_reads_the_first_page_and_sends_the_other_leads_as_snippet_sources() {
    let world = World::new().await;
    world.model_replies(&answer_citing_a_lead()).await;
    let server = wikipedia_with_pages(&world).await;
    let mut cmd = ground(&world, &server);
    cmd.args([
        "answer",
        "--json",
        "--pages",
        "1",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["searches"][0]["backend"], "wikipedia");
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources[0]["status"], "SUCCESS");
    assert_eq!(sources[1]["kind"], "snippet", "{v}");
    assert!(
        sources[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Cryptobiosis is a metabolic state"),
        "{v}"
    );
    let citations = v["citations"].as_array().unwrap();
    assert!(
        citations.iter().all(|c| c["verified"] == true),
        "the lead's quote verifies like a page's: {v}"
    );
}

#[tokio::test]
async fn searches_are_cached_and_logged_under_the_service_that_answered() {
    let world = World::new().await;
    world.healthy(&answer_citing_a_lead()).await;
    let server = wikipedia_with_pages(&world).await;
    let cache = world.home.path().join("shared-cache");
    let answer = |search: &str| {
        let mut cmd = ground(&world, &server);
        cmd.env("XDG_CACHE_HOME", &cache).args([
            "answer",
            "--json",
            "--log-searches",
            "--search",
            search,
            "do tardigrades survive in space",
        ]);
        cmd
    };
    for cached in [false, true] {
        let out = run(answer("wikipedia")).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json_stdout(&out);
        assert_eq!(v["searches"][0]["backend"], "wikipedia");
        assert_eq!(v["searches"][0]["cached"], cached);
    }
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
    // The same question on SearXNG is another service's search: not Wikipedia's entry.
    let out = run(answer("searxng")).await;
    let v = json_stdout(&out);
    assert_eq!(v["searches"][0]["backend"], "searxng", "{}", stderr(&out));
    assert_eq!(v["searches"][0]["cached"], false);
    let log = std::fs::read_to_string(world.home.path().join(".local/state/ground/searches.jsonl"))
        .unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let backends: Vec<(&str, bool)> = lines
        .iter()
        .map(|l| {
            (
                l["backend"].as_str().unwrap(),
                l["cached"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        backends,
        [
            ("wikipedia", false),
            ("wikipedia", true),
            ("searxng", false)
        ]
    );
}
