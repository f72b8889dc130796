//! `--site` and `--exclude-site`: each search service is told the filter its own way
//! (the stand-ins' matchers assert the request), and ground enforces it on the
//! results, so an off-site page is never requested and its snippet never sent.

use serde_json::json;
use wiremock::matchers::{body_partial_json, header, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::common::*;

/// The paths `server` was asked for.
async fn paths(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

/// The `url`s of `ground search --json`'s results.
fn urls(value: &serde_json::Value) -> Vec<String> {
    value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["url"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_searxng_that_ignores_the_filter_has_off_site_results_dropped_and_never_fetched() {
    let world = World::new().await;
    // The same page server under another name: `--site 127.0.0.1` is an IP literal,
    // so `localhost` is off-site, and a request for it would reach the stand-in.
    let port = world.pages.address().port();
    let off_site = format!("http://localhost:{port}/pages/tardigrades-overview.html");
    let body = fixture("searxng/searxng/normal.body.json")
        .replace(
            &format!("{CAPTURED_PAGES_URL}/pages/tardigrades-overview.html"),
            &off_site,
        )
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    let asks_for_the_site = |req: &wiremock::Request| {
        req.url
            .query_pairs()
            .any(|(k, v)| k == "q" && v.ends_with(" site:127.0.0.1"))
    };
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .and(asks_for_the_site)
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--site",
        "127.0.0.1",
        "Can tardigrades survive in space?",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    let dropped = v["search"]["dropped"].as_u64().unwrap();
    assert!(dropped >= 1, "{}", v["search"]);
    assert_eq!(v["search"]["sites"], json!(["127.0.0.1"]));
    assert_eq!(v["search"]["exclude_sites"], json!([]));
    assert!(
        stderr(&out).contains("outside --site / --exclude-site dropped unread"),
        "{}",
        stderr(&out)
    );
    let sources = v["sources"].to_string();
    assert!(!sources.contains("localhost"), "{sources}");
    assert!(
        !paths(&world.pages)
            .await
            .contains(&"/pages/tardigrades-overview.html".to_string()),
        "the off-site page was requested"
    );
    assert!(
        paths(&world.pages)
            .await
            .contains(&"/pages/tardigrades-space.html".to_string()),
        "the on-site pages are read"
    );
    // Its snippet never reached the model either.
    for request in world.ollama.received_requests().await.unwrap() {
        let body = String::from_utf8_lossy(&request.body);
        assert!(!body.contains("localhost:"), "{body}");
    }
}

#[tokio::test]
async fn several_sites_go_to_searxng_as_one_or_group_and_subdomains_are_kept() {
    let world = World::new().await;
    let result = |url: &str| json!({"url": url, "title": url, "content": "about rust", "engine": "bing", "engines": ["bing"]});
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param(
            "q",
            "rust (site:a.com OR site:b.org) -site:c.net",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "rust",
            "results": [
                result("https://docs.a.com/rust"),
                result("https://a.com.evil.net/rust"),
                result("https://b.org/rust"),
                result("https://c.net/rust"),
                result("https://nota.com/rust"),
            ],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
            "unresponsive_engines": [],
        })))
        .expect(1)
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_EXCLUDE_SITES", "c.net").args([
        "search",
        "--json",
        "--site",
        "a.com,B.org.",
        "rust",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(urls(&v), ["https://docs.a.com/rust", "https://b.org/rust"]);
    assert_eq!(
        v["search"],
        json!({"sites": ["a.com", "b.org"], "exclude_sites": ["c.net"], "dropped": 3})
    );
    assert!(
        stderr(&out)
            .contains("warning: 3 search results outside --site / --exclude-site dropped unread"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn brave_gets_site_terms_and_its_off_site_results_are_dropped() {
    let world = World::new().await;
    let brave = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .and(query_param("q", "tokio site:docs.rs -site:blog.docs.rs"))
        .and(header("x-subscription-token", "BSAsitesKEY0123456789"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "web": {"results": [
                {"url": "https://docs.rs/tokio", "title": "tokio", "description": "runtime"},
                {"url": "https://blog.docs.rs/tokio", "title": "blog", "description": "news"},
                {"url": "https://crates.io/crates/tokio", "title": "crate", "description": "crate"},
            ]}
        })))
        .expect(1)
        .mount(&brave)
        .await;
    let config = world.config_file(&format!("[search]\nbrave_url = \"{}\"\n", brave.uri()));
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", config)
        .env("GROUND_BRAVE_API_KEY", "BSAsitesKEY0123456789")
        .args(["search", "--json", "--search", "brave", "--site", "docs.rs"])
        .args(["--exclude-site", "blog.docs.rs", "tokio"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(urls(&v), ["https://docs.rs/tokio"]);
    assert_eq!(v["search"]["dropped"], 2);
}

#[tokio::test]
async fn tavily_gets_include_and_exclude_domains_and_the_query_as_asked() {
    let world = World::new().await;
    let tavily = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/search"))
        .and(body_partial_json(json!({
            "query": "tokio",
            "include_domains": ["docs.rs", "192.0.2.7"],
            "exclude_domains": ["blog.docs.rs"],
        })))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "results": [
                {"url": "http://192.0.2.7/tokio", "title": "mirror", "content": "mirror", "score": 0.9},
                {"url": "http://192.0.2.70/tokio", "title": "other", "content": "other", "score": 0.8},
                {"url": "https://www.docs.rs/tokio", "title": "tokio", "content": "runtime", "score": 0.7},
            ]
        })))
        .expect(1)
        .mount(&tavily)
        .await;
    let config = world.config_file(&format!(
        "[search]\ntavily_url = \"{}\"\nsites = [\"docs.rs\", \"192.0.2.7\"]\nexclude_sites = [\"blog.docs.rs\"]\n",
        tavily.uri()
    ));
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", config)
        .env("GROUND_TAVILY_API_KEY", "tvly-sitesKEY0123456789")
        .args(["search", "--json", "--search", "tavily", "tokio"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(
        urls(&v),
        ["http://192.0.2.7/tokio", "https://www.docs.rs/tokio"],
        "an IP literal matches exactly"
    );
}

#[tokio::test]
async fn duckduckgo_gets_site_terms_in_its_form() {
    let world = World::new().await;
    let server = MockServer::start().await;
    let filtered = |req: &wiremock::Request| {
        String::from_utf8_lossy(&req.body)
            == "q=tardigrades+site%3Aesa.int+-site%3Aen.wikipedia.org&b=&kl=wt-wt"
    };
    Mock::given(method("POST"))
        .and(path("/html/"))
        .and(filtered)
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("duckduckgo/results.html"),
            "text/html; charset=UTF-8",
        ))
        .expect(1)
        .mount(&server)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_DUCKDUCKGO_URL", server.uri()).args([
        "search",
        "--json",
        "--search",
        "duckduckgo",
        "--site",
        "esa.int",
        "--exclude-site",
        "en.wikipedia.org",
        "tardigrades",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(
        urls(&v),
        ["https://www.esa.int/Science_Exploration/Tardigrades_in_space"]
    );
    assert_eq!(v["search"]["dropped"], 2);
}

#[tokio::test]
async fn a_site_wikipedia_cannot_search_is_a_usage_error_naming_the_service() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args([
        "search",
        "--search",
        "wikipedia",
        "--site",
        "docs.rs",
        "tokio",
    ]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        2,
        &["--site docs.rs", "wikipedia search service"],
        "--site en.wikipedia.org",
    );
}

#[tokio::test]
async fn a_bad_domain_is_a_usage_error_naming_it_and_where_it_came_from() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--site", "exa mple.com", "question"]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        2,
        &["--site", "\"exa mple.com\""],
        "--site python.org",
    );
    let mut cmd = world.ground();
    cmd.env("GROUND_SITES", "python.org,co.uk")
        .args(["search", "question"]);
    let out = run(cmd).await;
    assert_error_report(&out, 2, &["GROUND_SITES", "\"co.uk\""], "--site python.org");
    assert!(
        world.searx.received_requests().await.unwrap().is_empty(),
        "nothing is searched"
    );
}

#[tokio::test]
async fn a_name_in_another_script_goes_to_the_search_in_its_ascii_form() {
    // Issue R5, finding 17: `--site bücher.de` was refused as no domain.
    let world = World::new().await;
    let result = |url: &str| json!({"url": url, "title": url, "content": "über Bücher", "engine": "bing", "engines": ["bing"]});
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("q", "bücher site:xn--bcher-kva.de"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "query": "bücher",
            "results": [
                result("https://www.xn--bcher-kva.de/a"),
                result("https://buecher.de/b"),
            ],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [],
            "unresponsive_engines": [],
        })))
        .expect(1)
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "--site", "Bücher.de", "bücher"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(urls(&v), ["https://www.xn--bcher-kva.de/a"]);
    assert_eq!(
        v["search"],
        json!({"sites": ["xn--bcher-kva.de"], "exclude_sites": [], "dropped": 1})
    );
}

/// The sources of `ground answer --json` as (last path segment, status, error).
fn statuses(v: &serde_json::Value) -> Vec<(String, String, String)> {
    v["sources"]
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
                s["error"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_result_that_redirects_off_the_filter_is_blocked_and_never_read() {
    // Issue R5, finding 4: an allowed result that redirected to an excluded host was
    // fetched, read and cited under the allowed address.
    let world = World::new().await;
    let port = world.pages.address().port();
    // The third result, on 127.0.0.1, redirects to the same server as `localhost`,
    // which `--exclude-site localhost` keeps away from.
    let moved = format!("{}/moved", world.pages.uri());
    let body = fixture("searxng/searxng/normal.body.json")
        .replace(
            &format!("{CAPTURED_PAGES_URL}/pages/tardigrades-overview.html"),
            &moved,
        )
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&world.searx)
        .await;
    Mock::given(method("GET"))
        .and(path("/moved"))
        .respond_with(ResponseTemplate::new(302).insert_header(
            "location",
            format!("http://localhost:{port}/pages/tardigrades-overview.html").as_str(),
        ))
        .mount(&world.pages)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let overview_reads = || async {
        paths(&world.pages)
            .await
            .iter()
            .filter(|p| *p == "/pages/tardigrades-overview.html")
            .count()
    };
    let cache = world.home.path().join("shared-cache");
    let answer = |extra: &[&str]| {
        let mut cmd = world.ground();
        cmd.env("XDG_CACHE_HOME", &cache)
            .args(["answer", "--json"])
            .args(extra)
            .arg("Can tardigrades survive in space?");
        cmd
    };

    // Without a filter the redirect is followed (and the page cached).
    let out = run(answer(&[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(statuses(&json_stdout(&out))[2].1, "SUCCESS");
    assert_eq!(overview_reads().await, 1);

    // With it: BLOCKED before the excluded host is asked, whether the client follows
    // the redirect (the default) or ground does hop by hop (obeying robots.txt), and
    // the cached copy, which ended up off the filter, is not used.
    for extra in [&[][..], &["--obey-robots"][..]] {
        let mut args = vec!["--exclude-site", "localhost"];
        args.extend_from_slice(extra);
        let out = run(answer(&args)).await;
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", stderr(&out));
        let v = json_stdout(&out);
        let rows = statuses(&v);
        let (name, status, error) = &rows[2];
        assert_eq!(
            (name.as_str(), status.as_str()),
            ("moved", "BLOCKED"),
            "{extra:?}: {rows:?}"
        );
        assert_eq!(
            error,
            "the page redirects to localhost, which is outside the site filter (--site / --exclude-site)",
            "{extra:?}"
        );
        assert_eq!(v["sources"][2]["cached"], false, "{extra:?}");
        assert_eq!(
            v["sources"][2]["index"],
            serde_json::Value::Null,
            "{extra:?}"
        );
        // The next result took its place; nothing cites the redirect.
        assert_eq!(rows[3].1, "SUCCESS", "{extra:?}: {rows:?}");
        assert_eq!(
            overview_reads().await,
            1,
            "{extra:?}: the excluded host was asked"
        );
    }
}
