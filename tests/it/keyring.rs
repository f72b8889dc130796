//! API keys in a real OS keyring (issue 16): `ground key set|delete|status` against a
//! real Secret Service, and a search that finds its Brave key there. These tests need
//! a running, unlocked Secret Service on the session bus, which a developer machine
//! without one lacks: they are ignored by plain `cargo test`, and `.ci/keyring` (run by
//! `.ci/run`) starts gnome-keyring inside `dbus-run-session` and runs exactly them.
//! They share one keyring, so they run one at a time (`--test-threads=1`).

use std::io::Write;
use std::process::{Command, Output, Stdio};

use crate::common::*;
use serde_json::json;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, ResponseTemplate};

const BRAVE_KEY: &str = "BSAkeyringTESTabcdefghijklmnop42";

/// `ground` as `World::ground`, but with the session bus of this process, so that it
/// reaches the Secret Service `.ci/keyring` started.
fn ground(world: &World) -> Command {
    let mut cmd = world.ground();
    for var in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"] {
        if let Ok(value) = std::env::var(var) {
            cmd.env(var, value);
        }
    }
    cmd.env("XDG_CONFIG_HOME", world.home.path().join("config"))
        .env("GROUND_STATE_DIR", world.home.path().join("state"));
    cmd
}

/// Runs `ground key ...` with `input` on stdin.
fn key(world: &World, args: &[&str], input: &str) -> Output {
    let mut child = ground(world)
        .arg("key")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The status line of one key.
fn status_of(world: &World, name: &str) -> String {
    let out = key(world, &["status"], "");
    assert!(out.status.success(), "status: {}", stderr(&out));
    assert!(!stdout(&out).contains(BRAVE_KEY), "status prints the key");
    stdout(&out)
        .lines()
        .find(|l| l.starts_with(name))
        .unwrap_or_else(|| panic!("no {name} line in:\n{}", stdout(&out)))
        .to_string()
}

#[tokio::test]
#[ignore = "needs a Secret Service: .ci/run starts one"]
async fn a_key_goes_in_is_used_by_a_search_and_comes_out() {
    let world = World::new().await;
    let _ = key(&world, &["delete", "brave"], "");

    // Stored from stdin, checked first, never echoed.
    let out = key(&world, &["set", "brave"], &format!("{BRAVE_KEY}\n"));
    assert!(out.status.success(), "set: {}", stderr(&out));
    assert!(!stdout(&out).contains(BRAVE_KEY) && !stderr(&out).contains(BRAVE_KEY));
    assert_eq!(status_of(&world, "brave"), "brave   set in the OS keyring");

    // A Brave search finds the key in the keyring and sends it.
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .and(header("x-subscription-token", BRAVE_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "type": "search", "query": {"original": "q"},
            "web": {"type": "search", "results": [
                {"title": "Water bears", "url": "https://example.org/tardigrades", "description": "tun state"}
            ]}
        })))
        .expect(1)
        .mount(&world.searx)
        .await;
    let config = world.home.path().join("brave.toml");
    std::fs::write(
        &config,
        format!(
            "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
            world.searx.uri()
        ),
    )
    .unwrap();
    let out = ground(&world)
        .env_remove("GROUND_SEARCH") // the config file names the service
        .env("GROUND_CONFIG", &config)
        .args(["search", "--json", "water bears"])
        .output()
        .unwrap();
    assert!(out.status.success(), "search: {}", stderr(&out));
    assert!(stdout(&out).contains("Water bears"));
    assert!(!stdout(&out).contains(BRAVE_KEY) && !stderr(&out).contains(BRAVE_KEY));

    // The environment beats the keyring.
    let out = ground(&world)
        .env("GROUND_BRAVE_API_KEY", "BSAfromTHEenvironment0123456789")
        .args(["key", "status"])
        .output()
        .unwrap();
    assert!(stdout(&out).contains("brave   set by GROUND_BRAVE_API_KEY"));

    // Deleted, it is gone: the search now fails before sending anything, and the
    // hint says how to store a key.
    let out = key(&world, &["delete", "brave"], "");
    assert!(out.status.success(), "delete: {}", stderr(&out));
    assert_eq!(status_of(&world, "brave"), "brave   not set");
    let out = ground(&world)
        .env_remove("GROUND_SEARCH") // the config file names the service
        .env("GROUND_CONFIG", &config)
        .args(["search", "water bears"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ground key set brave"),
        "{}",
        stderr(&out)
    );

    // Deleting what is not there is an error with a hint.
    let out = key(&world, &["delete", "brave"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no brave key is stored"));
}

#[tokio::test]
#[ignore = "needs a Secret Service: .ci/run starts one"]
async fn a_keyring_key_makes_brave_the_fallback_of_auto() {
    let world = World::new().await;
    let _ = key(&world, &["delete", "brave"], "");
    let out = key(&world, &["set", "brave"], &format!("{BRAVE_KEY}\n"));
    assert!(out.status.success(), "set: {}", stderr(&out));
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .and(header("x-subscription-token", BRAVE_KEY))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "web": {"results": [{"url": "https://example.org/water-bears", "title": "Water bears", "description": "Tardigrades."}]}
        })))
        .expect(1)
        .mount(&world.searx)
        .await;
    // No SearXNG, no key in the environment or the config file: the keyring's.
    let config = world.home.path().join("auto.toml");
    std::fs::write(
        &config,
        format!("[search]\nbrave_url = \"{}\"\n", world.searx.uri()),
    )
    .unwrap();
    let down = closed_port_url();
    let out = ground(&world)
        .env_remove("GROUND_SEARCH")
        .env("GROUND_SEARXNG_URL", &down)
        .env("GROUND_CONFIG", &config)
        .args(["search", "--json", "water bears"])
        .output()
        .unwrap();
    assert!(out.status.success(), "search: {}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!(
            "warning: no SearXNG at {down}: searching Brave Search with your API key instead"
        )),
        "{}",
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("\"backend\":\"brave\""),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains(BRAVE_KEY) && !stderr(&out).contains(BRAVE_KEY));
    let out = key(&world, &["delete", "brave"], "");
    assert!(out.status.success());
}

#[tokio::test]
#[ignore = "needs a Secret Service: .ci/run starts one"]
async fn a_key_of_the_wrong_format_is_never_stored() {
    let world = World::new().await;
    let _ = key(&world, &["delete", "tavily"], "");
    let out = key(&world, &["set", "tavily"], "not-a-tavily-key\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Tavily keys start with tvly-"));
    assert!(!stderr(&out).contains("not-a-tavily-key"));
    assert_eq!(status_of(&world, "tavily"), "tavily  not set");

    let out = key(
        &world,
        &["set", "tavily"],
        "tvly-dev-keyringTEST0123456789\n",
    );
    assert!(out.status.success(), "set: {}", stderr(&out));
    assert_eq!(status_of(&world, "tavily"), "tavily  set in the OS keyring");
    let out = key(&world, &["delete", "tavily"], "");
    assert!(out.status.success());
}

#[tokio::test]
#[ignore = "needs a Secret Service: .ci/run starts one"]
async fn the_redis_password_comes_from_the_keyring_when_the_url_has_none() {
    const PASSWORD: &str = "hunter2@ground:redis";
    let Some(redis) = crate::redis_support::RedisServer::start_with(
        "keyring::the_redis_password",
        Some(PASSWORD),
    ) else {
        return;
    };
    let world = World::new().await;
    let _ = key(&world, &["delete", "redis"], "");
    let (state, _) = crate::replicas::doctor_state(ground(&world), &redis.url()).await;
    assert_eq!(state["status"], "warn", "no password, refused: {state}");

    let out = key(&world, &["set", "redis"], &format!("{PASSWORD}\n"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains(PASSWORD));
    assert_eq!(status_of(&world, "redis"), "redis   set in the OS keyring");
    // The URL names no password: the keyring's is used, and printed nowhere.
    let (state, printed) = crate::replicas::doctor_state(ground(&world), &redis.url()).await;
    assert_eq!(state["status"], "ok", "{state}");
    assert!(!printed.contains("hunter2"), "{printed}");

    let out = key(&world, &["delete", "redis"], "");
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test]
#[ignore = "needs a Secret Service: .ci/run starts one"]
async fn a_missing_keyring_is_a_warning_unless_the_key_was_needed() {
    let world = World::new().await;
    let no_bus = |cmd: &mut Command| {
        cmd.env(
            "DBUS_SESSION_BUS_ADDRESS",
            format!("unix:path={}", world.home.path().join("no-bus").display()),
        );
    };

    // Status works and warns.
    let mut cmd = ground(&world);
    no_bus(&mut cmd);
    let out = cmd.args(["key", "status"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("warning: the OS keyring is not available"));
    assert!(stdout(&out).contains("brave   not set (the OS keyring could not be asked)"));

    // A run that needs no key neither fails nor warns.
    let mut cmd = ground(&world);
    no_bus(&mut cmd);
    let out = cmd.args(["usage"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("keyring"), "{}", stderr(&out));

    // A run that needs a key fails with the usual error, saying why the keyring was
    // no help and how to store a key.
    let mut cmd = ground(&world);
    no_bus(&mut cmd);
    let out = cmd.args(["usage", "--search", "brave"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("the OS keyring could not be asked"));
    assert!(stderr(&out).contains("ground key set brave"));

    // Storing a key without a keyring fails with a hint.
    let mut child = {
        let mut cmd = ground(&world);
        no_bus(&mut cmd);
        cmd.args(["key", "set", "brave"])
            .stdin(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(BRAVE_KEY.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("hint: start and unlock your keyring"));
}
