//! `ground cache stats|clear` through the real binary, with the cache folder in a
//! scratch home. Entries are put there with the library's own `Cache`, as a run
//! would. And the cache as `ground answer` uses it: a second run answers from it
//! (`--refresh` and `--no-cache` go past it), and twenty runs at once share one.

use std::path::Path;
use std::time::Duration;

use crate::common::{
    CAPTURED_PAGES_URL, World, fixture, good_answer, json_stdout, run, stderr, stdout,
};
use ground::cache::{Cache, CachedPage, SearchKey};
use ground::search::SearchOutcome;
use ground::settings::{CacheMode, CacheSettings};
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// Fills the cache at `dir` with two searches and one page under two URLs.
fn fill(dir: &Path) {
    let cache = Cache::open(&CacheSettings {
        dir: Some(dir.to_path_buf()),
        mode: CacheMode::Use,
        search_ttl: Duration::from_secs(3600),
        page_ttl: Duration::from_secs(3600),
        max_bytes: 1024 * 1024,
    });
    for query in ["tardigrades", "sqlite vacuum"] {
        let key = SearchKey {
            backend: "searxng http://localhost:8080/".into(),
            query: query.into(),
            ..SearchKey::default()
        };
        let outcome = SearchOutcome {
            query: query.into(),
            ..SearchOutcome::default()
        };
        cache.put_search(&key, &outcome);
    }
    let page = CachedPage {
        final_url: "https://example.org/final".into(),
        http_status: 200,
        content_type: Some("text/html".into()),
        title: "Tardigrades".into(),
        text: "Tardigrades survive in space.".into(),
        chars_fetched: 1234,
        body_truncated: false,
        private_allowed: false,
    };
    cache.put_page(
        &["https://example.org/start", "https://example.org/final"],
        &page,
    );
}

#[tokio::test]
async fn stats_and_clear_report_the_xdg_cache_folder() {
    let world = World::new().await;
    let xdg = world.home.path().join("xdg-cache");
    let dir = xdg.join("ground");
    fill(&dir);
    let notes = dir.join("search").join("notes.txt");
    std::fs::write(&notes, "not an entry").unwrap();

    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", &xdg)
        .args(["cache", "stats", "--json"]);
    let out = crate::common::run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value = json_stdout(&out);
    assert_eq!(value["action"], "stats");
    let stats = &value["stats"];
    assert_eq!(stats["dir"], dir.to_str().unwrap());
    assert_eq!(stats["enabled"], true);
    assert_eq!(stats["mode"], "use");
    assert_eq!(stats["searches"]["entries"], 2);
    assert_eq!(stats["pages"]["entries"], 2);
    assert_eq!(stats["searches"]["ttl_secs"], 24 * 3600);
    assert_eq!(stats["max_bytes"], 200 * 1024 * 1024);
    assert!(stats["bytes"].as_u64().unwrap() > 0, "{stats}");
    assert!(stats["oldest_age_secs"].as_u64().is_some(), "{stats}");

    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", &xdg)
        .args(["cache", "clear", "--json"]);
    let out = crate::common::run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value = json_stdout(&out);
    assert_eq!(value["action"], "clear");
    assert_eq!(value["cleared"]["entries"], 4);
    assert_eq!(value["cleared"]["bytes"], stats["bytes"]);
    assert!(notes.exists(), "clear deletes only the cache's own entries");

    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", &xdg).args(["cache", "stats"]);
    let out = crate::common::run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with(&format!("Cache folder: {}\n", dir.display())),
        "{text}"
    );
    assert!(text.contains("Mode: read and write\n"), "{text}");
    assert!(
        text.contains("Searches: 0 entries, 0 B, 0 expired (fresh for 1 d)\n"),
        "{text}"
    );
    assert!(
        text.contains("Total:    0 B of 200.0 MiB allowed\n"),
        "{text}"
    );
}

#[tokio::test]
async fn the_home_cache_and_ground_cache_dir_and_config_are_honoured() {
    let world = World::new().await;

    // Without XDG_CACHE_HOME: $HOME/.cache/ground. Stats never create it.
    let mut cmd = world.ground();
    cmd.env_remove("XDG_CACHE_HOME")
        .args(["cache", "stats", "--json"]);
    let out = crate::common::run(cmd).await;
    let home_dir = world.home.path().join(".cache").join("ground");
    assert_eq!(
        json_stdout(&out)["stats"]["dir"],
        home_dir.to_str().unwrap()
    );
    assert!(!home_dir.exists());

    // GROUND_CACHE_DIR wins over XDG_CACHE_HOME.
    let own = world.home.path().join("own-cache");
    fill(&own);
    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", world.home.path().join("xdg"))
        .env("GROUND_CACHE_DIR", &own)
        .args(["cache", "stats", "--json"]);
    let out = crate::common::run(cmd).await;
    let stats = &json_stdout(&out)["stats"];
    assert_eq!(stats["dir"], own.to_str().unwrap());
    assert_eq!(stats["pages"]["entries"], 2);

    // The config file's [cache] keys: TTLs, cap, and enabled = false (stats still work).
    let config = world.config_file(&format!(
        "[cache]\nenabled = false\ndir = {:?}\nsearch_ttl_hours = 2\npage_ttl_hours = 0\nmax_mb = 5\n",
        own.to_str().unwrap()
    ));
    let mut cmd = world.ground();
    cmd.arg("cache")
        .arg("stats")
        .arg("--json")
        .arg("--config")
        .arg(&config);
    let out = crate::common::run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let stats = &json_stdout(&out)["stats"];
    assert_eq!(stats["enabled"], false);
    assert_eq!(stats["mode"], "off");
    assert_eq!(stats["searches"]["ttl_secs"], 7200);
    assert_eq!(stats["pages"]["ttl_secs"], 0);
    assert_eq!(
        stats["pages"]["expired"], 2,
        "a TTL of 0 makes every page stale"
    );
    assert_eq!(stats["max_bytes"], 5 * 1024 * 1024);
}

#[tokio::test]
async fn clear_without_any_cache_folder_says_what_to_set() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.env_remove("HOME")
        .env_remove("XDG_CACHE_HOME")
        .args(["cache", "clear"]);
    let out = crate::common::run(cmd).await;
    crate::common::assert_error_report(
        &out,
        2,
        &["cannot clear the cache", "no cache folder"],
        "GROUND_CACHE_DIR",
    );
    assert_eq!(stdout(&out), "");
}

// The cache in `ground answer` --------------------------------------------------------

#[tokio::test]
async fn a_second_run_answers_from_the_cache() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                fixture("searxng/searxng/normal.body.json")
                    .replace(CAPTURED_PAGES_URL, &world.pages.uri()),
                "application/json",
            ),
        )
        .expect(3) // runs 1, 3 (--refresh) and 4 (--no-cache); run 2 is cached
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    let ask = |extra: &[&str]| {
        let mut cmd = world.ground();
        cmd.env("GROUND_CACHE_DIR", &cache)
            .args(["answer", "--json"])
            .args(extra)
            .arg("do tardigrades survive in space");
        cmd
    };
    let first = json_stdout(&run(ask(&[])).await);
    assert_eq!(first["searches"][0]["cached"], false);
    assert!(
        first["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cached"] == false)
    );
    let page_requests = world.pages.received_requests().await.unwrap().len();

    let second = json_stdout(&run(ask(&[])).await);
    assert_eq!(second["searches"][0]["cached"], true);
    assert!(
        second["sources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["cached"] == true)
    );
    assert_eq!(
        world.pages.received_requests().await.unwrap().len(),
        page_requests,
        "no page fetched again"
    );
    assert_eq!(second["answer"], first["answer"]);

    let third = json_stdout(&run(ask(&["--refresh"])).await);
    assert_eq!(third["searches"][0]["cached"], false);
    let fourth = json_stdout(&run(ask(&["--no-cache"])).await);
    assert_eq!(fourth["searches"][0]["cached"], false);
}

#[tokio::test]
async fn twenty_parallel_runs_share_one_cache_without_errors() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let cache = world.home.path().join("shared-cache");
    // Twenty processes at once, all reading and writing the same cache folder.
    let children: Vec<std::process::Child> = (0..20)
        .map(|_| {
            let mut cmd = world.ground();
            cmd.env("GROUND_CACHE_DIR", &cache)
                .args(["answer", "--json", "do tardigrades survive in space"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let outs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in &outs {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        assert_eq!(json_stdout(out)["grounded"], true);
    }
    // Every entry left behind is a complete, readable JSON file.
    for kind in ["search", "pages"] {
        for entry in std::fs::read_dir(cache.join(kind)).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                serde_json::from_str::<Value>(&text).is_ok(),
                "{} is torn",
                path.display()
            );
        }
    }
}
