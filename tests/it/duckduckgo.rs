//! DuckDuckGo's HTML results page as a search service (`--search duckduckgo`, opt-in
//! only), against a stand-in serving hand-written pages in the markup SearXNG's
//! engine reads (fixtures/duckduckgo): the form and headers sent, results read with
//! ads dropped and redirect links decoded, the challenge page (and HTTP 202) as a
//! search error with a hint, never an empty result, no results, no redirects followed.

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A DuckDuckGo stand-in answering `POST /html/` with `reply`.
async fn duckduckgo(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/html/"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

fn page(name: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(
        fixture(&format!("duckduckgo/{name}")),
        "text/html; charset=UTF-8",
    )
}

/// `ground` searching DuckDuckGo at `server`.
fn ground(world: &World, server: &MockServer) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env("GROUND_DUCKDUCKGO_URL", server.uri())
        .args(["search", "--search", "duckduckgo"]);
    cmd
}

#[tokio::test]
async fn the_results_page_is_read_with_ads_dropped_and_redirect_links_decoded() {
    let world = World::new().await;
    let server = MockServer::start().await;
    // The form a browser posts, with the headers SearXNG's engine sends.
    let browser_like = |req: &wiremock::Request| {
        let get = |name: &str| {
            req.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let body = String::from_utf8_lossy(&req.body).to_string();
        get("content-type") == "application/x-www-form-urlencoded"
            && get("sec-fetch-mode") == "navigate"
            && get("sec-fetch-dest") == "document"
            && get("referer").ends_with("/html/")
            && get("accept").contains("text/html")
            && !get("accept-language").is_empty()
            && get("user-agent").starts_with("ground/")
            && body == "q=tardigrades+space&b=&kl=wt-wt"
    };
    Mock::given(method("POST"))
        .and(path("/html/"))
        .and(browser_like)
        .respond_with(page("results.html"))
        .expect(1)
        .mount(&server)
        .await;
    let mut cmd = ground(&world, &server);
    cmd.args(["--json", "tardigrades space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "duckduckgo");
    let urls: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        [
            "https://en.wikipedia.org/wiki/Tardigrade",
            "https://www.esa.int/Science_Exploration/Tardigrades_in_space",
            "https://example.org/water-bears?lang=en&x=1",
        ],
        "the ad is dropped, the redirect links decoded"
    );
    assert_eq!(v["results"][1]["title"], "Tardigrades in space - ESA");
    assert_eq!(
        v["results"][1]["snippet"],
        "In 2007 dried tardigrades flew on the FOTON-M3 capsule and were exposed to open space for ten days."
    );
    assert_eq!(v["results"][0]["engines"], json!(["duckduckgo"]));
}

#[tokio::test]
async fn the_time_range_and_region_go_in_the_form_and_its_cookies() {
    let world = World::new().await;
    let server = MockServer::start().await;
    let filtered = |req: &wiremock::Request| {
        let body = String::from_utf8_lossy(&req.body).to_string();
        let cookie = req
            .headers
            .get("cookie")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        body == "q=tardigrades&b=&kl=ch-de&df=w" && cookie == "kl=ch-de; df=w"
    };
    Mock::given(method("POST"))
        .and(path("/html/"))
        .and(filtered)
        .respond_with(page("results.html"))
        .expect(1)
        .mount(&server)
        .await;
    let mut cmd = ground(&world, &server);
    cmd.args(["--time-range", "week", "--language", "de-CH", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test]
async fn a_challenge_page_is_a_search_error_with_a_hint_never_an_empty_result() {
    let world = World::new().await;
    for reply in [
        page("challenge.html"),
        // DuckDuckGo also answers a client it suspects with HTTP 202.
        ResponseTemplate::new(202).set_body_raw(fixture("duckduckgo/challenge.html"), "text/html"),
    ] {
        let server = duckduckgo(reply).await;
        let mut cmd = ground(&world, &server);
        cmd.arg("tardigrades");
        let out = run(cmd).await;
        assert_error_report(
            &out,
            3,
            &["DuckDuckGo answered the search for \"tardigrades\" with a challenge page"],
            "made for people",
        );
        let mut cmd = ground(&world, &server);
        cmd.args(["--json", "tardigrades"]);
        let out = run(cmd).await;
        let v = json_stdout(&out);
        assert_eq!(v["error"]["kind"], "search_challenged");
        assert_eq!(v["query"], "tardigrades");
    }
}

#[tokio::test]
async fn no_results_is_no_sources_and_a_page_that_is_no_results_page_a_search_failure() {
    let world = World::new().await;
    let server = duckduckgo(page("no-results.html")).await;
    let mut cmd = ground(&world, &server);
    cmd.arg("zzqxv");
    assert_error_report(&run(cmd).await, 4, &["returned no results"], "rephrase");

    let server = duckduckgo(
        ResponseTemplate::new(200).set_body_raw("<html><body>Sign in</body></html>", "text/html"),
    )
    .await;
    let mut cmd = ground(&world, &server);
    cmd.arg("tardigrades");
    assert_error_report(
        &run(cmd).await,
        3,
        &["DuckDuckGo at", "no results list"],
        "made for people",
    );
}

#[tokio::test]
async fn a_redirect_is_not_followed() {
    let world = World::new().await;
    // A `!bang` answer: DuckDuckGo sends the browser to another site.
    let server = duckduckgo(
        ResponseTemplate::new(303)
            .insert_header("Location", format!("{}/elsewhere", world.pages.uri())),
    )
    .await;
    let mut cmd = ground(&world, &server);
    cmd.arg("tardigrades");
    assert_error_report(
        &run(cmd).await,
        3,
        &["HTTP 303", "redirected"],
        "made for people",
    );
    assert!(world.pages.received_requests().await.unwrap().is_empty());
}
