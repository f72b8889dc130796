//! Oversized pages: a gzip bomb (356 KB on the wire, 100 MB inflated) and a 20 MB
//! plain body are cut at the configured `max_bytes` (counted after decompression),
//! quickly and without holding the whole body in memory. The real binary runs
//! against wiremock; where GNU time is installed, the run's peak memory is measured.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

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

/// Runs `cmd` under GNU time when it is installed, returning the output and the
/// peak resident memory in KiB.
async fn run_measured(cmd: Command) -> (std::process::Output, Option<u64>) {
    let time = std::path::Path::new("/usr/bin/time");
    if !time.exists() {
        return (run_within(cmd, RUN_DEADLINE).await, None);
    }
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
    let kib = std::fs::read_to_string(report.path())
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()));
    eprintln!("peak memory: {kib:?} KiB");
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
        if let Some(kib) = rss {
            assert!(
                kib < MAX_RSS_KIB,
                "cap {cap}: peak memory {kib} KiB, more than {MAX_RSS_KIB} KiB"
            );
        }
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
    if let Some(kib) = rss {
        assert!(kib < MAX_RSS_KIB, "peak memory {kib} KiB");
    }
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
    if let Some(kib) = rss {
        assert!(kib < MAX_RSS_KIB, "peak memory {kib} KiB");
    }
}
