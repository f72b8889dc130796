//! The search rate limit shared by every `ground` process of the user, and the
//! monthly usage of hosted search APIs, against the real binary, real state files and
//! loopback stand-ins.

use crate::common::*;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// `ground ARGS` in the world.
fn ground(world: &World, args: &[&str]) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_MAX_PER_MINUTE").args(args);
    cmd
}

/// The SearXNG searches the stand-in received.
async fn searches(world: &World) -> usize {
    world.searx.received_requests().await.unwrap().len()
}

#[tokio::test]
async fn twelve_searches_in_quick_succession_hit_the_default_limit_of_ten() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    for i in 0..10 {
        let out = run(ground(&world, &["search", "tardigrades"])).await;
        assert!(out.status.success(), "search {i}: {}", stderr(&out));
    }
    for _ in 0..2 {
        let cmd = ground(&world, &["search", "tardigrades", "--json"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
        let error = json_stdout(&out);
        assert_eq!(error["error"]["kind"], "search_rate_limit_local");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "the search rate limit (10 per minute) is reached; a search can be sent again in "
            ),
            "{message}"
        );
        assert!(
            error["error"]["hint"]
                .as_str()
                .unwrap()
                .contains("--max-per-minute"),
            "{error}"
        );
    }
    // The refused searches were never sent.
    assert_eq!(searches(&world).await, 10);
    // The person's error names the wait and the fix.
    let out = run(ground(&world, &["search", "tardigrades"])).await;
    assert_eq!(out.status.code(), Some(8));
    let text = stderr(&out);
    assert!(
        text.contains("error: the search rate limit (10 per minute)"),
        "{text}"
    );
    assert!(text.contains("hint: retry in "), "{text}");
    // 0 = no limit.
    let cmd = ground(&world, &["search", "tardigrades", "--max-per-minute", "0"]);
    assert!(run(cmd).await.status.success());
}

#[tokio::test]
async fn concurrent_processes_share_one_limit() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let config = world.config_file("[search]\nmax_per_minute = 4\n");
    let children: Vec<_> = (0..12)
        .map(|_| {
            let mut cmd = ground(&world, &["search", "tardigrades"]);
            cmd.arg("--config")
                .arg(&config)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null());
            cmd.spawn().unwrap()
        })
        .collect();
    let codes: Vec<i32> = children
        .into_iter()
        .map(|mut c| c.wait().unwrap().code().unwrap())
        .collect();
    assert_eq!(codes.iter().filter(|&&c| c == 0).count(), 4, "{codes:?}");
    assert_eq!(codes.iter().filter(|&&c| c == 8).count(), 8, "{codes:?}");
    assert_eq!(searches(&world).await, 4);
}

#[tokio::test]
async fn cached_searches_are_free_and_a_corrupt_state_file_never_blocks() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    let answer = |world: &World| {
        let mut cmd = world.ground();
        cmd.env("XDG_CACHE_HOME", &cache)
            .env("GROUND_MAX_PER_MINUTE", "1")
            .args(["answer", "do tardigrades survive in space", "--json"]);
        cmd
    };
    let first = run(answer(&world)).await;
    assert!(first.status.success(), "{}", stderr(&first));
    // The second run answers from the cache: no search sent, no slot needed.
    let second = run(answer(&world)).await;
    assert!(second.status.success(), "{}", stderr(&second));
    assert_eq!(json_stdout(&second)["searches"][0]["cached"], true);
    assert_eq!(searches(&world).await, 1);
    // A new search is over the limit of one a minute...
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "1")
        .args(["search", "tardigrades"]);
    assert_eq!(run(cmd).await.status.code(), Some(8));
    // ...until the state file is corrupt: then it is as if nothing was sent.
    let state = world.home.path().join(".local/state/ground");
    std::fs::write(state.join("recent-searches.json"), "{\"sent_ms\": [1, oops").unwrap();
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "1")
        .args(["search", "tardigrades"]);
    assert!(run(cmd).await.status.success());
    // An unwritable state folder (a file in its place) never blocks either.
    let mut cmd = world.ground();
    cmd.env("GROUND_STATE_DIR", world.home.path().join("shared-cache"))
        .env("GROUND_STATE_DIR", state.join("recent-searches.json"))
        .env("GROUND_MAX_PER_MINUTE", "1")
        .args(["search", "tardigrades"]);
    assert!(run(cmd).await.status.success());
}

#[tokio::test]
async fn with_fallback_offline_a_rate_limited_search_answers_from_the_model() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world
        .model_replies(r#"{"answer": "Tardigrades have survived exposure to open space."}"#)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "1")
        .args(["search", "tardigrades"]);
    assert!(run(cmd).await.status.success());
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "1").args([
        "answer",
        "do tardigrades survive in space",
        "--fallback",
        "offline",
        "--json",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let report: Value = json_stdout(&out);
    assert_eq!(report["mode"], "offline");
    assert!(
        report["offline_reason"]
            .as_str()
            .unwrap()
            .starts_with("the search rate limit (1 per minute) is reached"),
        "{report}"
    );
    assert_eq!(searches(&world).await, 1);
}

/// A Brave stand-in answering every search with `remaining` left of a monthly 2,000.
async fn brave(world: &World, remaining: Option<u64>) {
    let mut reply = ResponseTemplate::new(200).set_body_json(serde_json::json!({
        "web": {"results": [{"url": format!("{}/pages/tardigrades-space.html", world.pages.uri()),
                              "title": "Tardigrades", "description": "in space"}]}
    }));
    if let Some(left) = remaining {
        reply = reply
            .insert_header("X-RateLimit-Limit", "1, 2000")
            .insert_header("X-RateLimit-Remaining", format!("1, {left}").as_str())
            .insert_header("X-RateLimit-Policy", "1;w=1, 2000;w=2592000");
    }
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(reply)
        .mount(&world.searx)
        .await;
}

fn brave_search(world: &World, quota: &str) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARCH", "brave")
        .env("GROUND_BRAVE_API_KEY", "BSAsecretkey0123456789")
        .env("GROUND_MAX_PER_MINUTE", "0")
        .arg("search")
        .arg("tardigrades")
        .arg("--config")
        .arg(world.config_file(&format!(
            "[search]\nurl = \"{}\"\nmonthly_quota = {quota}\n",
            world.searx.uri()
        )));
    cmd
}

#[tokio::test]
async fn a_quota_warning_at_eighty_percent_and_an_error_when_spent_before_sending() {
    let world = World::new().await;
    brave(&world, None).await;
    for i in 1..=5 {
        let out = run(brave_search(&world, "5")).await;
        assert!(out.status.success(), "search {i}: {}", stderr(&out));
        let warned = stderr(&out).contains("warning: Brave Search: ");
        assert_eq!(warned, i >= 4, "search {i}: {}", stderr(&out));
    }
    let out = run(brave_search(&world, "5")).await;
    assert_eq!(out.status.code(), Some(3));
    let text = stderr(&out);
    assert!(
        text.contains("error: this month's Brave Search quota is spent: 5 of 5 queries used in "),
        "{text}"
    );
    assert!(
        text.contains("hint: wait for next month, raise [search] monthly_quota"),
        "{text}"
    );
    assert_eq!(searches(&world).await, 5, "the sixth search was not sent");
    // `ground usage` shows the count; no key anywhere in the state.
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "0")
        .args(["usage", "--json"]);
    let usage = json_stdout(&run(cmd).await);
    assert_eq!(usage["usage"]["services"][0]["service"], "brave");
    assert_eq!(usage["usage"]["services"][0]["used"], 5);
    let state = world.home.path().join(".local/state/ground");
    for entry in std::fs::read_dir(&state).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("BSAsecretkey"), "{text}");
    }
}

#[tokio::test]
async fn brave_rate_limit_headers_set_the_count() {
    let world = World::new().await;
    brave(&world, Some(1700)).await;
    let out = run(brave_search(&world, "2000")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stderr(&out);
    assert!(
        text.contains("warning: Brave Search: 300 of 2000 queries") || !text.contains("warning"),
        "{text}"
    );
    let mut cmd = world.ground();
    cmd.args(["usage"]);
    let out = run(cmd).await;
    let text = stdout(&out);
    assert!(
        text.contains("300 of 2000 queries used (15 %); the plan reports 2000 a month"),
        "{text}"
    );
    assert!(text.contains("Search log: off"), "{text}");
}

#[tokio::test]
async fn the_search_log_is_written_only_when_enabled_and_never_holds_a_key() {
    let world = World::new().await;
    brave(&world, None).await;
    let log = world.home.path().join(".local/state/ground/searches.jsonl");
    assert!(run(brave_search(&world, "0")).await.status.success());
    assert!(!log.exists(), "the log is off by default");

    let mut cmd = brave_search(&world, "0");
    cmd.arg("--log-searches");
    assert!(run(cmd).await.status.success());
    // A query that quotes the key is logged without it.
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARCH", "brave")
        .env("GROUND_BRAVE_API_KEY", "BSAsecretkey0123456789")
        .arg("search")
        .arg("why BSAsecretkey0123456789")
        .arg("--log-searches")
        .arg("--config")
        .arg(world.config_file(&format!(
            "[search]\nurl = \"{}\"\n[privacy]\nlog_searches = true\n",
            world.searx.uri()
        )));
    assert!(run(cmd).await.status.success());
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("BSAsecretkey"), "{text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0]["backend"], "brave");
    assert_eq!(lines[0]["query"], "tardigrades");
    assert_eq!(lines[0]["results"], 1);
    assert_eq!(lines[0]["cached"], false);
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(lines[1]["query"], "why <redacted>");
    // `ground usage` says where the log is.
    let mut cmd = world.ground();
    cmd.arg("usage").arg("--log-searches");
    let out = stdout(&run(cmd).await);
    assert!(out.contains("Search log: on, "), "{out}");
    assert!(
        out.contains("searches.jsonl (delete the file to delete the log)"),
        "{out}"
    );
}

#[tokio::test]
async fn the_search_log_records_cached_answers_too() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    for _ in 0..2 {
        let mut cmd = world.ground();
        cmd.env("XDG_CACHE_HOME", &cache).args([
            "answer",
            "do tardigrades survive in space",
            "--log-searches",
        ]);
        assert!(run(cmd).await.status.success());
    }
    let text =
        std::fs::read_to_string(world.home.path().join(".local/state/ground/searches.jsonl"))
            .unwrap();
    let cached: Vec<bool> = text
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["cached"]
                .as_bool()
                .unwrap()
        })
        .collect();
    assert_eq!(cached, [false, true], "{text}");
}
