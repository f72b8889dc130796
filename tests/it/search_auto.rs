//! `--search auto`, the default: the configured SearXNG when it answers (and then no
//! other service is asked), else a hosted API whose key is set (environment or
//! config file; the keyring's case is in `keyring`), else Wikipedia; each fallback
//! told once on stderr (not with `-q`) and `--json` naming the service that
//! answered; an explicit `--search searxng` keeps its errors. DuckDuckGo is never
//! picked. SearXNG is judged by its reply: a port that accepts and never answers, or
//! another web server, is no SearXNG. Loopback stand-ins for every service.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Stand-ins for the services `auto` may fall back to (and DuckDuckGo, which it must
/// never ask), each answering with one result.
struct Fallbacks {
    brave: MockServer,
    tavily: MockServer,
    wikipedia: MockServer,
    duckduckgo: MockServer,
}

impl Fallbacks {
    async fn start(world: &World) -> Self {
        let page = format!("{}/pages/tardigrades-space.html", world.pages.uri());
        let brave = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/res/v1/web/search"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "web": {"results": [{"url": page, "title": "Tardigrades (Brave)", "description": "in space"}]}
            })))
            .mount(&brave)
            .await;
        let tavily = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/search"))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "results": [{"url": page, "title": "Tardigrades (Tavily)", "content": "in space", "score": 0.9}]
            })))
            .mount(&tavily)
            .await;
        let wikipedia = MockServer::start().await;
        Mock::given(method("GET"))
            .and(path("/en/w/api.php"))
            .respond_with(
                ResponseTemplate::new(200).set_body_raw(
                    // Every result on the page server: nothing may reach the internet.
                    fixture("wikipedia/search-tardigrade.json")
                        .replace(
                            "https://en.wikipedia.org/wiki/Tardigrades_in_space",
                            &format!("{}/pages/tardigrades-overview.html", world.pages.uri()),
                        )
                        .replace("https://en.wikipedia.org/wiki/Tardigrade", &page)
                        .replace(
                            "https://en.wikipedia.org/wiki/Cryptobiosis",
                            &format!("{}/pages/tardigrades-cryptobiosis.html", world.pages.uri()),
                        ),
                    "application/json",
                ),
            )
            .mount(&wikipedia)
            .await;
        let duckduckgo = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(fixture("duckduckgo/results.html"), "text/html"),
            )
            .mount(&duckduckgo)
            .await;
        Fallbacks {
            brave,
            tavily,
            wikipedia,
            duckduckgo,
        }
    }

    /// `ground` on `auto` with its fallbacks here, and `searxng` as SearXNG's address;
    /// `config` is added to the config file's `[search]` section.
    fn ground(&self, world: &World, searxng: &str, config: &str) -> std::process::Command {
        let file = world.config_file(&format!(
            "[search]\nbrave_url = \"{}\"\ntavily_url = \"{}\"\n{config}",
            self.brave.uri(),
            self.tavily.uri()
        ));
        let mut cmd = world.ground_auto();
        cmd.env("GROUND_SEARXNG_URL", searxng)
            .env(
                "GROUND_WIKIPEDIA_URL",
                format!("{}/{{lang}}", self.wikipedia.uri()),
            )
            .env("GROUND_DUCKDUCKGO_URL", self.duckduckgo.uri())
            .env("GROUND_CONFIG", file);
        cmd
    }

    /// How many searches each stand-in received: Brave, Tavily, Wikipedia, DuckDuckGo.
    async fn asked(&self) -> [usize; 4] {
        let mut counts = [0; 4];
        for (count, server) in
            counts
                .iter_mut()
                .zip([&self.brave, &self.tavily, &self.wikipedia, &self.duckduckgo])
        {
            *count = server.received_requests().await.unwrap().len();
        }
        counts
    }
}

/// The lines of stderr that tell a fallback.
fn told(out: &std::process::Output) -> Vec<String> {
    stderr(out)
        .lines()
        .filter(|l| l.contains("no SearXNG at"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn an_answering_searxng_is_used_and_nothing_else_is_asked() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let fallbacks = Fallbacks::start(&world).await;
    let mut cmd = fallbacks.ground(
        &world,
        &world.searx.uri(),
        "brave_api_key = \"BSAkeyINconfig0123\"\n",
    );
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["backend"], "searxng");
    assert!(told(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(fallbacks.asked().await, [0, 0, 0, 0]);
    // Two requests to SearXNG: its configuration (is it SearXNG?), then the search.
    let asked: Vec<String> = world
        .searx
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect();
    assert_eq!(asked, ["/config", "/search"]);
}

#[tokio::test]
async fn without_searxng_a_brave_key_in_the_environment_picks_brave_told_once() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let down = closed_port_url();
    let mut cmd = fallbacks.ground(&world, &down, "");
    cmd.env("GROUND_BRAVE_API_KEY", "BSAkeyINenv0123456789")
        .args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let note = format!(
        "no SearXNG at {down}: searching Brave Search with your API key instead; see README to set up SearXNG"
    );
    assert_eq!(told(&out), [format!("warning: {note}")]);
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "brave");
    assert_eq!(v["warnings"], json!([note]));
    assert_eq!(fallbacks.asked().await, [1, 0, 0, 0]);
}

#[tokio::test]
async fn a_key_in_the_config_file_is_found_without_a_keyring() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let down = closed_port_url();
    for (config, backend) in [
        ("brave_api_key = \"BSAkeyINconfig0123\"\n", "brave"),
        ("tavily_api_key = \"tvly-keyINconfig0123456\"\n", "tavily"),
        // With auto, `api_key` is the service's whose form it has, and no other's.
        ("api_key = \"BSAsharedKEY0123456789\"\n", "brave"),
        ("api_key = \"tvly-sharedKEY0123456\"\n", "tavily"),
        ("api_key = \"sk-not/a search key\"\n", "wikipedia"),
        // Brave first when both are set.
        (
            "tavily_api_key = \"tvly-keyINconfig0123456\"\nbrave_api_key = \"BSAkeyINconfig0123\"\n",
            "brave",
        ),
    ] {
        let mut cmd = fallbacks.ground(&world, &down, config);
        cmd.args(["search", "--json", "tardigrades"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{config}: {}", stderr(&out));
        assert_eq!(json_stdout(&out)["backend"], backend, "{config}");
    }
    assert_eq!(fallbacks.asked().await, [3, 2, 1, 0]);
}

#[tokio::test]
async fn without_searxng_or_a_key_wikipedia_answers_told_once_and_duckduckgo_is_never_asked() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let down = closed_port_url();
    let mut cmd = fallbacks.ground(&world, &down, "");
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        told(&out),
        [format!(
            "warning: no SearXNG at {down}: searching Wikipedia only; see README to set up SearXNG or add a Brave key"
        )]
    );
    assert_eq!(json_stdout(&out)["backend"], "wikipedia");
    assert_eq!(fallbacks.asked().await, [0, 0, 1, 0]);
}

#[tokio::test]
async fn an_answer_with_planned_queries_searches_wikipedia_for_each_and_tells_it_once() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    world.serve_fixture_pages().await;
    // The planner's three queries (no must-have evidence: they run at once), then the
    // answer.
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(wiremock::matchers::body_string_contains(
            "You turn a question into web search queries",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(ollama_reply(
            &json!({"queries": ["tardigrades space", "FOTON-M3 tardigrades", "water bears vacuum"]})
                .to_string(),
            "stop",
        )))
        .mount(&world.ollama)
        .await;
    world.model_replies(&good_answer()).await;
    let down = closed_port_url();
    let answer = |quiet: bool| {
        let mut cmd = fallbacks.ground(&world, &down, "");
        cmd.args(["answer", "--json", "--queries", "3"]);
        if quiet {
            cmd.arg("-q");
        }
        cmd.arg("do tardigrades survive in space");
        cmd
    };
    let out = run(answer(false)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(told(&out).len(), 1, "{}", stderr(&out));
    let v = json_stdout(&out);
    let backends: Vec<&Value> = v["searches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["backend"])
        .collect();
    assert_eq!(backends, [&json!("wikipedia"); 3]);
    let notes = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w.as_str().unwrap().starts_with("no SearXNG at"))
        .count();
    assert_eq!(notes, 1, "{v}");
    // With -q nothing is told on stderr; --json still carries it.
    let out = run(answer(true)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(told(&out).is_empty(), "{}", stderr(&out));
    assert!(
        json_stdout(&out)["warnings"]
            .to_string()
            .contains("no SearXNG at")
    );
}

#[tokio::test]
async fn an_explicit_searxng_keeps_its_errors() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let down = closed_port_url();
    let mut cmd = fallbacks.ground(&world, &down, "brave_api_key = \"BSAkeyINconfig0123\"\n");
    cmd.args(["search", "--search", "searxng", "tardigrades"]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        3,
        &[&format!("cannot reach SearXNG at {down}")],
        "start SearXNG",
    );
    assert!(told(&out).is_empty());
    assert_eq!(fallbacks.asked().await, [0, 0, 0, 0]);
}

/// A listener on loopback that accepts every connection and never says a word.
async fn silent_port() -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    (url, held)
}

#[tokio::test]
async fn a_port_that_accepts_and_never_answers_is_no_searxng() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let (silent, held) = silent_port().await;
    let mut cmd = fallbacks.ground(&world, &silent, "");
    cmd.args(["search", "--json", "tardigrades"]);
    let started = std::time::Instant::now();
    let out = run(cmd).await;
    let took = started.elapsed();
    held.abort();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["backend"], "wikipedia");
    assert_eq!(told(&out).len(), 1, "{}", stderr(&out));
    // Judged within the probe's 2 s, not the search's timeout.
    assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    assert_eq!(fallbacks.asked().await, [0, 0, 1, 0]);
}

#[tokio::test]
async fn a_server_that_is_not_searxng_is_no_searxng() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    // Another web server on SearXNG's port: 404 for everything, or a 200 page that
    // is not SearXNG's configuration.
    let other = MockServer::start().await;
    let html = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("<html><body>It works!</body></html>", "text/html"),
        )
        .mount(&html)
        .await;
    for server in [&other, &html] {
        let mut cmd = fallbacks.ground(
            &world,
            &server.uri(),
            "brave_api_key = \"BSAkeyINconfig0123\"\n",
        );
        cmd.args(["search", "--json", "tardigrades"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(json_stdout(&out)["backend"], "brave", "{}", server.uri());
        assert_eq!(told(&out).len(), 1, "{}", stderr(&out));
        // Asked for its configuration, then for SearXNG's reply to an empty search
        // (the probe: no question was ever sent to it).
        let asked: Vec<String> = server
            .received_requests()
            .await
            .unwrap()
            .iter()
            .map(|r| match r.url.query() {
                Some(query) => format!("{}?{query}", r.url.path()),
                None => r.url.path().to_string(),
            })
            .collect();
        assert_eq!(
            asked,
            ["/config", "/search?q=&format=json"],
            "{}",
            server.uri()
        );
    }
    assert_eq!(fallbacks.asked().await, [2, 0, 0, 0]);
}

/// A SearXNG-shaped service without `/config` (a stand-in, or a proxy that passes
/// only `/search`) is still told from another server by its JSON search reply, and
/// used: the development harness of real news questions serves exactly that.
#[tokio::test]
async fn a_searxng_shaped_service_without_config_is_used() {
    let world = World::new().await;
    let fallbacks = Fallbacks::start(&world).await;
    let shaped = MockServer::start().await;
    let body = fixture("searxng/searxng/normal.body.json");
    Mock::given(method("GET"))
        .and(wiremock::matchers::path("/search"))
        .and(wiremock::matchers::query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&shaped)
        .await;
    let mut cmd = fallbacks.ground(
        &world,
        &shaped.uri(),
        "brave_api_key = \"BSAkeyINconfig0123\"\n",
    );
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["backend"], "searxng", "{}", stderr(&out));
    assert!(told(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(fallbacks.asked().await, [0, 0, 0, 0]);
}
