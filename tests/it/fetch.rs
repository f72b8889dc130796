//! `ground fetch`: one page through the same fetch limits, address policy and
//! statuses as `ground answer`. And those limits on pages built to break them: a gzip
//! bomb and a 20 MB body cut at `max_bytes` (also among an answer's results), and a
//! page that is slow to parse, which holds neither `fetch` nor an MCP session.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

async fn serve(world: &World, route: &str, response: ResponseTemplate) -> String {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(response)
        .mount(&world.pages)
        .await;
    format!("{}{route}", world.pages.uri())
}

#[tokio::test]
async fn prints_title_url_and_main_text() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/pages/tardigrades-space.html",
        ResponseTemplate::new(200).set_body_raw(
            fixture("pages/tardigrades-space.html"),
            "text/html; charset=utf-8",
        ),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Tardigrades in space: the FOTON-M3 experiment\n"),
        "{text}"
    );
    assert!(text.contains("FOTON-M3 mission"), "{text}");
    assert!(
        !text.contains("We use cookies"),
        "boilerplate must be gone: {text}"
    );
    assert!(
        !text.contains("All rights reserved"),
        "footer must be gone: {text}"
    );
}

#[tokio::test]
async fn json_has_status_and_sizes() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/p",
        ResponseTemplate::new(200).set_body_raw(
            fixture("pages/sqlite-vacuum.html"),
            "text/html; charset=utf-8",
        ),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::WEB_FETCH, &v);
    assert_eq!(v["status"], "SUCCESS");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["content_type"], "text/html; charset=utf-8");
    assert_eq!(v["title"], "Reclaiming space in SQLite with VACUUM");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("returns free pages to the operating system")
    );
    assert_eq!(
        v["chars"].as_u64().unwrap() as usize,
        v["text"].as_str().unwrap().chars().count()
    );
}

#[tokio::test]
async fn failures_have_their_status_and_exit_4() {
    let world = World::new().await;
    let not_found = serve(
        &world,
        "/gone",
        ResponseTemplate::new(404).set_body_string("no"),
    )
    .await;
    // An unsupported type (PDFs are read since issue 13, so a ZIP stands for them).
    let zip = serve(
        &world,
        "/doc.zip",
        ResponseTemplate::new(200).set_body_raw(b"PK\x03\x04\x14\x00".to_vec(), "application/zip"),
    )
    .await;
    // A PDF that is only its header: read, and unreadable.
    let pdf = serve(
        &world,
        "/doc.pdf",
        ResponseTemplate::new(200).set_body_raw(b"%PDF-1.7\n%\xe2\xe3".to_vec(), "application/pdf"),
    )
    .await;
    let binary = serve(
        &world,
        "/bin",
        ResponseTemplate::new(200)
            .set_body_raw(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec(), "text/html"),
    )
    .await;
    let shell = serve(
        &world,
        "/app",
        ResponseTemplate::new(200).set_body_raw("<html><head><title>App</title><script src=app.js></script></head><body><div id=root></div></body></html>", "text/html"),
    )
    .await;
    for (url, status, http) in [
        (not_found, "ERROR", Some(404)),
        (zip, "UNSUPPORTED", Some(200)),
        (pdf, "ERROR", Some(200)),
        (binary, "UNSUPPORTED", Some(200)),
        (shell, "EMPTY", Some(200)),
    ] {
        let mut cmd = world.ground();
        cmd.args(["fetch", "--json", &url]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(4), "{url}");
        let v = json_stdout(&out);
        assert_eq!(v["status"], status, "{url}: {v}");
        assert_eq!(v["http_status"].as_u64().map(|c| c as u16), http, "{url}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: cannot use ")
                && err.contains(status)
                && err.contains("\nhint: "),
            "{err}"
        );
    }
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/p",
        ResponseTemplate::new(200).set_body_raw(fixture("pages/sqlite-vacuum.html"), "text/html"),
    )
    .await;
    let localhost = url.replace("127.0.0.1", "localhost");
    for target in [&url, &localhost] {
        let mut cmd = world.ground();
        cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES")
            .args(["fetch", "--json", target]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(4));
        assert_eq!(json_stdout(&out)["status"], "BLOCKED", "{target}");
        assert!(
            stderr(&out).contains("not a public address"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out)
                .contains("hint: the address is not public; pass --allow-private-addresses"),
            "{}",
            stderr(&out)
        );
    }
    assert!(
        world.pages.received_requests().await.unwrap().is_empty(),
        "nothing may reach the private address"
    );
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES").args([
        "fetch",
        "--allow-private-addresses",
        &url,
    ]);
    assert_eq!(run(cmd).await.status.code(), Some(0));
}

#[tokio::test]
async fn redirects_are_followed_and_the_final_url_reported() {
    let world = World::new().await;
    let target = serve(
        &world,
        "/new",
        ResponseTemplate::new(200).set_body_raw(fixture("pages/sqlite-vacuum.html"), "text/html"),
    )
    .await;
    let url = serve(
        &world,
        "/old",
        ResponseTemplate::new(301).insert_header("location", "/new"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["url"], url);
    assert_eq!(v["final_url"], target);
}

#[tokio::test]
async fn body_is_capped_and_redirects_bounded() {
    let world = World::new().await;
    let big = format!(
        "<html><head><title>Big</title></head><body><article>{}</article></body></html>",
        "<p>Some text that repeats itself over and over again.</p>".repeat(60_000)
    );
    let big_url = serve(
        &world,
        "/big",
        ResponseTemplate::new(200).set_body_raw(big, "text/html"),
    )
    .await;
    let config = world.home.path().join("small.toml");
    std::fs::write(
        &config,
        "[fetch]\nmax_bytes = 100000\nmax_redirects = 2\ntimeout_secs = 5\n",
    )
    .unwrap();
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", &config)
        .args(["fetch", "--json", &big_url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["body_truncated"], true);
    assert!(v["chars_fetched"].as_u64().unwrap() <= 100_000);

    let loop_url = serve(
        &world,
        "/loop",
        ResponseTemplate::new(302).insert_header("location", "/loop"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", &config)
        .args(["fetch", "--json", &loop_url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "ERROR");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("more than 2 redirects"),
        "{v}"
    );
}

#[tokio::test]
async fn legacy_charsets_are_decoded() {
    let world = World::new().await;
    let mut body = b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e is a dessert \x96 with a caramel top.</p></body></html>".to_vec();
    body.extend_from_slice(b"");
    let url = serve(
        &world,
        "/cafe",
        ResponseTemplate::new(200).set_body_raw(body, "text/html"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["title"], "Café");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("Crème brûlée is a dessert – with a caramel top."),
        "{v}"
    );
}

#[tokio::test]
async fn a_bad_url_is_a_usage_error() {
    let world = World::new().await;
    for bad in ["not a url", "ftp://example.org/file", "file:///etc/passwd"] {
        let mut cmd = world.ground();
        cmd.args(["fetch", "--json", bad]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(json_stdout(&out)["url"], bad);
        assert!(
            stderr(&out).contains("hint: give a full address"),
            "{}",
            stderr(&out)
        );
    }
}

// Oversized pages ---------------------------------------------------------------------
//
// A gzip bomb (356 KB on the wire, 100 MB inflated) and a 20 MB plain body are cut at
// the configured `max_bytes` (counted after decompression), quickly and without
// holding the whole body in memory. The real binary runs against wiremock; where GNU
// time is installed, the run's peak memory is measured.

/// 100 MB of HTML paragraphs, gzip-compressed (fixtures/bombs/html-100mb.gz).
fn gzip_bomb() -> Vec<u8> {
    std::fs::read(fixtures().join("bombs/html-100mb.gz")).unwrap()
}

const INFLATED: usize = 104_857_527;

async fn serve_bomb(world: &World, route: &str) -> String {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-encoding", "gzip")
                .set_body_raw(gzip_bomb(), "text/html; charset=utf-8"),
        )
        .mount(&world.pages)
        .await;
    format!("{}{route}", world.pages.uri())
}

/// Runs `cmd` under GNU time, returning the output and the peak resident memory in
/// KiB. Without GNU time the test fails (it never passes with its memory unchecked):
/// `.ci/test` installs it (Debian's package `time`).
async fn run_measured(cmd: Command) -> (std::process::Output, u64) {
    let time = std::path::Path::new("/usr/bin/time");
    assert!(
        time.exists(),
        "/usr/bin/time (GNU time) is missing, so this test cannot check peak memory: install it (Debian and Ubuntu: apt-get install time; .ci/test does)"
    );
    let report = tempfile::NamedTempFile::new().unwrap();
    let mut measured = Command::new(time);
    measured
        .args(["-f", "%M", "-o"])
        .arg(report.path())
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear()
        .stdin(std::process::Stdio::null());
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            measured.env(key, value);
        }
    }
    let out = run_within(measured, RUN_DEADLINE).await;
    let written = std::fs::read_to_string(report.path()).unwrap_or_default();
    let kib = written
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("GNU time wrote no peak memory figure: {written:?}"));
    eprintln!("peak memory: {kib} KiB");
    (out, kib)
}

/// Peak memory a capped fetch may use: far below the 100 MB the bomb inflates to.
const MAX_RSS_KIB: u64 = 80 * 1024;

#[tokio::test]
async fn a_gzip_bomb_stops_at_max_bytes_quickly_and_in_little_memory() {
    let world = World::new().await;
    let url = serve_bomb(&world, "/bomb.html").await;
    for (config, cap) in [
        (None, 2 * 1024 * 1024),
        (Some("[fetch]\nmax_bytes = 100000\n"), 100_000),
    ] {
        let mut cmd = world.ground();
        if let Some(toml) = config {
            cmd.env("GROUND_CONFIG", world.config_file(toml));
        }
        cmd.args(["fetch", "--json", &url]);
        let started = Instant::now();
        let (out, rss) = run_measured(cmd).await;
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json_stdout(&out);
        assert_eq!(v["status"], "SUCCESS", "{v}");
        assert_eq!(v["body_truncated"], true, "{v}");
        let fetched = v["chars_fetched"].as_u64().unwrap() as usize;
        assert!(
            fetched <= cap && fetched > cap / 2,
            "fetched {fetched} of cap {cap}"
        );
        assert!(fetched < INFLATED);
        assert!(
            v["text"].as_str().unwrap().contains("All work and no play"),
            "{v}"
        );
        assert!(took < Duration::from_secs(10), "cap {cap}: took {took:?}");
        assert!(
            rss < MAX_RSS_KIB,
            "cap {cap}: peak memory {rss} KiB, more than {MAX_RSS_KIB} KiB"
        );
    }
}

#[tokio::test]
async fn a_gzip_bomb_among_the_results_does_not_stop_the_answer() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    // The third result is the bomb; the two cited pages are the usual fixtures.
    serve_bomb(&world, "/pages/tardigrades-overview.html").await;
    for name in ["tardigrades-space", "tardigrades-cryptobiosis"] {
        Mock::given(method("GET"))
            .and(path(format!("/pages/{name}.html")))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture(&format!("pages/{name}.html")),
                "text/html; charset=utf-8",
            ))
            .mount(&world.pages)
            .await;
    }
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.env(
        "GROUND_CONFIG",
        world.config_file("[fetch]\nmax_bytes = 200000\n"),
    )
    .args(["answer", "--json", "do tardigrades survive in space"]);
    let started = Instant::now();
    let (out, rss) = run_measured(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(15));
    let v = json_stdout(&out);
    let bomb = v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["url"]
                .as_str()
                .unwrap()
                .ends_with("tardigrades-overview.html")
        })
        .unwrap();
    assert_eq!(bomb["body_truncated"], true, "{bomb}");
    assert!(bomb["chars_fetched"].as_u64().unwrap() <= 200_000, "{bomb}");
    assert_eq!(v["grounded"], true, "{v}");
    assert!(rss < MAX_RSS_KIB, "peak memory {rss} KiB");
}

#[tokio::test]
async fn a_20_mb_plain_body_is_cut_at_the_cap() {
    let world = World::new().await;
    let body = "plain text line that goes on and on to fill twenty megabytes\n"
        .repeat(20 * 1024 * 1024 / 62);
    assert!(body.len() > 19 * 1024 * 1024);
    Mock::given(method("GET"))
        .and(path("/huge.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/plain"))
        .mount(&world.pages)
        .await;
    let url = format!("{}/huge.txt", world.pages.uri());
    let mut cmd = world.ground();
    cmd.env(
        "GROUND_CONFIG",
        world.config_file("[fetch]\nmax_bytes = 100000\n"),
    )
    .args(["fetch", "--json", &url]);
    let started = Instant::now();
    let (out, rss) = run_measured(cmd).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "SUCCESS", "{v}");
    assert_eq!(v["body_truncated"], true, "{v}");
    assert!(v["chars_fetched"].as_u64().unwrap() <= 100_000, "{v}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(rss < MAX_RSS_KIB, "peak memory {rss} KiB");
}

// A page that is slow to parse --------------------------------------------------------

/// A page of 40,000 unclosed formatting elements (`<b id=0>x<b id=1>x…`, 520 KB): the
/// HTML parser's formatting-element handling made such pages take minutes.
fn formatting_bomb() -> String {
    let mut page = String::from("<html><head><title>Bomb</title></head><body><p>");
    for i in 0..40_000 {
        page.push_str(&format!("<b id={i}>x"));
    }
    page
}

#[tokio::test]
async fn a_page_that_is_slow_to_parse_never_holds_a_run_past_its_bounds() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/bomb"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(formatting_bomb(), "text/html"))
        .mount(&world.pages)
        .await;
    let url = format!("{}/bomb", world.pages.uri());
    // `ground fetch`: within the extraction budget (5 s) plus start-up.
    let started = std::time::Instant::now();
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run_within(cmd, std::time::Duration::from_secs(60)).await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let status = json_stdout(&out)["status"].as_str().unwrap().to_string();
    assert!(
        ["TIMEOUT", "SUCCESS", "EMPTY"].contains(&status.as_str()),
        "{status}"
    );

    // MCP keeps answering while a slow page is extracted.
    let mut cmd = world.ground();
    cmd.arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = tokio::process::Command::from(cmd).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let send = |v: serde_json::Value| format!("{v}\n");
    stdin.write_all(send(serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})).as_bytes()).await.unwrap();
    let _ = lines.next_line().await.unwrap();
    stdin
        .write_all(
            send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                .as_bytes(),
        )
        .await
        .unwrap();
    stdin.write_all(send(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "web_fetch", "arguments": {"url": url}}})).as_bytes()).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let pinged = std::time::Instant::now();
    stdin
        .write_all(
            send(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "ping"})).as_bytes(),
        )
        .await
        .unwrap();
    let mut ping_answered = None;
    for _ in 0..2 {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("the server must keep answering")
            .unwrap()
            .unwrap();
        let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
        if reply["id"] == 3 {
            ping_answered = Some(pinged.elapsed());
            break;
        }
    }
    let ping = ping_answered.expect("ping answered");
    // Well under the 5 s extraction budget: the ping did not wait for the page.
    assert!(
        ping < std::time::Duration::from_secs(4),
        "ping took {ping:?}"
    );
    let _ = child.kill().await;
}
