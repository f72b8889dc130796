//! Hostile input, round three (issue 24): the search stage, its state files, robots.txt
//! and the evidence check. Each test is one finding of the red-team pass and failed
//! before its fix: state files another process holds or replaced by a FIFO, a SearXNG
//! results page nested thousands deep, an instance whose page cannot be read, secrets
//! in the search log, Brave's two rate-limit windows, robots.txt tricks and one server
//! counted as two sources.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The state dir a [`World`] command uses (`$HOME/.local/state/ground`).
fn state_dir(world: &World) -> std::path::PathBuf {
    world.home.path().join(".local/state/ground")
}

/// Takes the state lock the way another `ground` process would, and keeps it until
/// the returned file is dropped.
fn hold_state_lock(world: &World) -> std::fs::File {
    let dir = state_dir(world);
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("state.lock"))
        .unwrap();
    lock.lock().unwrap();
    lock
}

/// Makes a FIFO at `path` (no writer ever opens it).
fn mkfifo(path: &std::path::Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

// --- finding 5: state files that cannot hold a run ------------------------------------

#[tokio::test]
async fn a_held_state_lock_costs_a_bounded_wait_and_a_warning() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let _held = hold_state_lock(&world);
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "10").args([
        "answer",
        "--json",
        "--timeout",
        "30",
        "do tardigrades survive in space",
    ]);
    let out = run_within(cmd, Duration::from_secs(30)).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The lock is waited for two seconds, not for ever.
    assert!(took < Duration::from_secs(10), "{took:?}");
    let warnings = json_stdout(&out)["warnings"].to_string();
    assert!(
        warnings.contains("the search rate limit was not applied")
            && warnings.contains("state.lock stayed locked by another process"),
        "{warnings}"
    );
}

#[tokio::test]
async fn the_run_deadline_holds_while_the_state_lock_is_waited_for() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let _held = hold_state_lock(&world);
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "10").args([
        "answer",
        "--json",
        "--timeout",
        "1",
        "do tardigrades survive in space",
    ]);
    let out = run_within(cmd, Duration::from_secs(30)).await;
    let took = started.elapsed();
    // The deadline (1 s) strikes inside the lock's 2 s wait, while searching: exit 3.
    assert!(took < Duration::from_millis(1900), "{took:?}");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["error"]["kind"], "deadline", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("while searching"),
        "{v}"
    );
}

#[tokio::test]
async fn ctrl_c_is_prompt_while_the_state_lock_is_waited_for() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let _held = hold_state_lock(&world);
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "10")
        .args(["search", "tardigrades"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (status, latency) = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().unwrap();
        std::thread::sleep(Duration::from_millis(600));
        let sent = Instant::now();
        let killed = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                break (status, sent.elapsed());
            }
            if sent.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                panic!("ground ignored Ctrl-C while waiting for the state lock");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(latency < Duration::from_millis(800), "{latency:?}");
}

#[tokio::test]
async fn fifos_at_the_state_files_names_are_not_state_files() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let state = state_dir(&world);
    mkfifo(&state.join("recent-searches.json"));
    mkfifo(&state.join("searches.jsonl"));
    let cache = world.home.path().join("fifo-cache");
    mkfifo(&cache.join("calibration.json"));
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "10")
        .env("GROUND_CACHE_DIR", &cache)
        .args([
            "answer",
            "--json",
            "--log-searches",
            "--timeout",
            "20",
            "do tardigrades survive in space",
        ]);
    let started = Instant::now();
    let out = run_within(cmd, Duration::from_secs(30)).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let warnings = json_stdout(&out)["warnings"].to_string();
    for said in [
        "the search rate limit was not applied",
        "recent-searches.json is not a regular file but a FIFO",
        "not written to the search log",
        "the token calibration was not used",
        "calibration.json is not a regular file but a FIFO",
    ] {
        assert!(warnings.contains(said), "{said}: {warnings}");
    }
    // Left as they were.
    for fifo in [
        state.join("recent-searches.json"),
        cache.join("calibration.json"),
    ] {
        assert!(!std::fs::metadata(&fifo).unwrap().is_file());
    }
}

/// An MCP session over stdio, initialised.
struct Mcp {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl Mcp {
    async fn start(mut cmd: std::process::Command) -> Mcp {
        use tokio::io::AsyncBufReadExt;
        cmd.arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = tokio::process::Command::from(cmd).spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
        };
        mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})).await;
        assert_eq!(mcp.next(Duration::from_secs(20)).await["id"], 1);
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        mcp
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }

    async fn next(&mut self, within: Duration) -> Value {
        let line = tokio::time::timeout(within, self.lines.next_line())
            .await
            .expect("the server must keep answering")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }
}

#[tokio::test]
async fn mcp_keeps_answering_while_searches_wait_for_the_state_lock() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let _held = hold_state_lock(&world);
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "10");
    let mut mcp = Mcp::start(cmd).await;
    for id in [2, 3] {
        mcp.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "web_search", "arguments": {"query": format!("tardigrades {id}")}}})).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let pinged = Instant::now();
    mcp.send(json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}))
        .await;
    let mut answered = Vec::new();
    while answered.len() < 3 {
        let reply = mcp.next(Duration::from_secs(20)).await;
        if reply["id"] == 4 {
            // Before the fix, both runtime threads sat in `flock` and the ping waited
            // (15 s and more).
            assert!(
                pinged.elapsed() < Duration::from_millis(1000),
                "ping took {:?}",
                pinged.elapsed()
            );
        } else {
            let result = &reply["result"];
            assert_ne!(result["isError"], true, "{reply}");
            assert!(
                !result["structuredContent"]["results"]
                    .as_array()
                    .unwrap()
                    .is_empty(),
                "{reply}"
            );
        }
        answered.push(reply["id"].clone());
    }
    assert_eq!(answered[0], 4, "the ping came first: {answered:?}");
    let _ = mcp.child.kill().await;
}

// --- finding 6 and 11: SearXNG's HTML results page ------------------------------------

/// `depth` `div.result`s nested in each other, each with a link and a snippet.
fn nested_results_page(depth: usize) -> String {
    let mut page = String::from("<html><body><div id=urls>");
    for i in 0..depth {
        page.push_str(&format!(
            "<div class=\"result\"><h3><a href=\"https://example.org/{i}\">Result {i}</a></h3><p class=\"content\">snippet {i}</p>"
        ));
    }
    page.push_str(&"</div>".repeat(depth));
    page.push_str("</div></body></html>");
    page
}

/// Makes `server` answer like a SearXNG with JSON off whose HTML results page is
/// `html`.
async fn json_off_with_page(server: &MockServer, html: String) {
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(403).set_body_raw(
            fixture("searxng/searxng/noformat-json.body.html"),
            "text/html; charset=utf-8",
        ))
        .mount(server)
        .await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param_is_missing("format"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html; charset=utf-8"))
        .mount(server)
        .await;
}

#[tokio::test]
async fn a_results_page_nested_thousands_deep_is_read_in_linear_time() {
    let world = World::new().await;
    let page = nested_results_page(13_000);
    assert!(page.len() > 1_500_000);
    json_off_with_page(&world.searx, page).await;
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run_within(cmd, Duration::from_secs(60)).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Before: 68.8 s for this page, on the async runtime.
    assert!(took < Duration::from_secs(5), "{took:?}");
    let v = json_stdout(&out);
    assert_eq!(v["results"][0]["url"], "https://example.org/0", "{v}");
    assert!(stderr(&out).contains("formats: [html, json]"));
}

#[tokio::test]
async fn an_unreadable_html_page_tries_the_next_instance_and_keeps_the_advice() {
    let world = World::new().await;
    let first = MockServer::start().await;
    json_off_with_page(
        &first,
        "<html><head><title>Sign in</title></head><body><form action=/login><input name=user></form></body></html>".into(),
    )
    .await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "search",
        "--json",
        "--searxng-url",
        &first.uri(),
        "--searxng-url",
        &world.searx.uri(),
        "tardigrades",
    ]);
    let out = run(cmd).await;
    let err = stderr(&out);
    // Before: exit 4, "no results", "rephrase", and the second instance never asked.
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!json_stdout(&out)["results"].as_array().unwrap().is_empty());
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 1);
    assert!(
        err.contains(&format!("SearXNG at {} failed", first.uri()))
            && err.contains("its HTML results page could not be read")
            && err.contains("`formats: [html, json]`")
            && err.contains("trying the next instance"),
        "{err}"
    );

    // Alone, such an instance is a search failure that names the fix, not "no results".
    let mut cmd = world.ground();
    cmd.args(["search", "--searxng-url", &first.uri(), "tardigrades"]);
    let out = run(cmd).await;
    assert_error_report(
        &out,
        3,
        &["refused the JSON format"],
        "formats: [html, json]",
    );
}

// --- finding 12: the search log -------------------------------------------------------

#[cfg(unix)]
#[tokio::test]
async fn the_search_log_redacts_every_secret_and_is_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    let state = state_dir(&world);
    std::fs::create_dir_all(&state).unwrap();
    // A link planted at the log's name, pointing at a file of the user's.
    let victim = world.home.path().join(".bashrc");
    std::fs::write(&victim, "# mine\n").unwrap();
    std::os::unix::fs::symlink(&victim, state.join("searches.jsonl")).unwrap();
    let query = "why is sk-model-key-0451 refused";
    let search = |world: &World| {
        let mut cmd = world.ground();
        cmd.env("GROUND_LLM_API_KEY", "sk-model-key-0451").args([
            "search",
            "--log-searches",
            query,
        ]);
        cmd
    };
    let out = run(search(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "# mine\n");
    assert!(
        stderr(&out).contains("not written to the search log"),
        "{}",
        stderr(&out)
    );

    // Without the link: a new log, mode 0600, the model key redacted.
    std::fs::remove_file(state.join("searches.jsonl")).unwrap();
    let out = run(search(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = state.join("searches.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("sk-model-key-0451"), "{text}");
    assert!(
        text.contains(r#""query":"why is <redacted> refused""#),
        "{text}"
    );
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");

    // An older log readable by others is narrowed.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(run(search(&world)).await.status.success());
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
}

// --- finding 13: Brave's rate-limit windows -------------------------------------------

#[tokio::test]
async fn a_paid_brave_plan_is_judged_on_its_monthly_window() {
    let world = World::new().await;
    let reply = json!({"type": "search", "web": {"type": "search", "results": [
        {"title": "Water bears", "url": "https://example.com/water-bears", "description": "Tardigrades are microscopic."}
    ]}});
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(reply)
                .insert_header("X-RateLimit-Limit", "20, 20000")
                .insert_header("X-RateLimit-Remaining", "19, 15000")
                .insert_header("X-RateLimit-Reset", "1, 1419704"),
        )
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    for round in 0..2 {
        let mut cmd = world.ground();
        cmd.env("GROUND_BRAVE_API_KEY", "BSA-test-key")
            .args(["search", "tardigrades", "--config"])
            .arg(&config);
        let out = run(cmd).await;
        // Before: the second search was refused, "quota spent: 5000 of 2000".
        assert_eq!(
            out.status.code(),
            Some(0),
            "round {round}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("of 2000"), "{}", stderr(&out));
    }
    let mut cmd = world.ground();
    cmd.env("GROUND_BRAVE_API_KEY", "BSA-test-key")
        .args(["usage", "--json", "--config"])
        .arg(&config);
    let usage = json_stdout(&run(cmd).await);
    let brave = &usage["usage"]["services"][0];
    assert_eq!(brave["service"], "brave", "{usage}");
    assert_eq!(
        (brave["used"].as_u64(), brave["quota"].as_u64()),
        (Some(5000), Some(20000)),
        "{usage}"
    );
}

// --- findings 9 and 10: robots.txt -----------------------------------------------------

/// A loopback site with `robots` as its robots.txt and a page at every other path.
async fn robots_site(robots: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(robots, "text/plain"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/p/open"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/private/x"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("pages/tardigrades-space.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    server
}

/// The paths (with query) the site was asked for, in order.
async fn asked_for(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

#[tokio::test]
async fn robots_txt_is_checked_on_redirects_and_on_percent_encoded_paths() {
    let world = World::new().await;
    let site = robots_site(b"User-agent: *\nDisallow: /private\n".to_vec()).await;
    // An allowed page that redirects into a disallowed one.
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/p/open", site.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let page = json_stdout(&out);
    assert_eq!(page["status"], "BLOCKED", "{page}");
    assert!(
        page["error"].as_str().unwrap().contains(&format!(
            "the page it redirects to, {}/private/x,",
            site.uri()
        )),
        "{page}"
    );
    // Before: /private/x was requested.
    assert_eq!(asked_for(&site).await, ["/robots.txt", "/p/open"]);

    // The same path spelled with an escape of an unreserved character.
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/%70rivate/x", site.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["status"], "BLOCKED");
    assert_eq!(asked_for(&site).await.len(), 3, "only robots.txt again");

    // Allowed redirects are still followed.
    let allowed = robots_site(b"User-agent: *\nDisallow: /nothing\n".to_vec()).await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/p/open", allowed.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["final_url"],
        format!("{}/private/x", allowed.uri())
    );
}

#[tokio::test]
async fn a_robots_txt_of_stars_is_matched_quickly_against_a_long_query() {
    let world = World::new().await;
    let mut robots = b"User-agent: *\nDisallow: /".to_vec();
    robots.resize(512 * 1024 - 8, b'*');
    robots.extend_from_slice(b"zz$\n");
    let site = robots_site(robots).await;
    let url = format!("{}/search?q={}", site.uri(), "a".repeat(8 * 1024));
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots", &url]);
    let out = run_within(cmd, Duration::from_secs(60)).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["status"], "SUCCESS");
    // Before: 9 s of matching (512 K pattern octets times 8 K path octets), on the
    // async runtime.
    assert!(took < Duration::from_secs(3), "{took:?}");
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
