//! `ground cache stats|clear` through the real binary, with the cache folder in a
//! scratch home. Entries are put there with the library's own `Cache`, as a run
//! would.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{World, json_stdout, stderr, stdout};
use ground::cache::{Cache, CachedPage, SearchKey};
use ground::search::SearchOutcome;
use ground::settings::{CacheMode, CacheSettings};

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
    let out = common::run(cmd).await;
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
    let out = common::run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let value = json_stdout(&out);
    assert_eq!(value["action"], "clear");
    assert_eq!(value["cleared"]["entries"], 4);
    assert_eq!(value["cleared"]["bytes"], stats["bytes"]);
    assert!(notes.exists(), "clear deletes only the cache's own entries");

    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", &xdg).args(["cache", "stats"]);
    let out = common::run(cmd).await;
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
    let out = common::run(cmd).await;
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
    let out = common::run(cmd).await;
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
    let out = common::run(cmd).await;
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
    let out = common::run(cmd).await;
    common::assert_error_report(
        &out,
        2,
        &["cannot clear the cache", "no cache folder"],
        "GROUND_CACHE_DIR",
    );
    assert_eq!(stdout(&out), "");
}
