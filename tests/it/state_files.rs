//! The shared state files (rate limit, usage counts, calibration, the search log)
//! when another process holds their lock or something that is no state file sits at
//! their names: a bounded wait, a warning, and a run that keeps its deadline; the
//! search log redacted and the user's alone.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::{Value, json};

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

/// Every file and folder under `dir` whose mode lets the group or others in.
#[cfg(unix)]
fn open_to_others(dir: &std::path::Path) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let meta = entry.metadata().unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            found.push(format!("{} {mode:o}", entry.path().display()));
        }
        if meta.is_dir() {
            found.extend(open_to_others(&entry.path()));
        }
    }
    found
}

#[cfg(unix)]
#[tokio::test]
async fn sessions_the_cache_and_the_state_files_are_the_users_alone() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "100")
        .env("XDG_CACHE_HOME", world.home.path().join("cache"))
        .args([
            "answer",
            "--session",
            "mine",
            "do tardigrades survive in space",
        ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // What the run wrote: the session, the search and page cache, the rate limit.
    assert!(state_dir(&world).join("sessions/mine.json").is_file());
    assert!(state_dir(&world).join("recent-searches.json").is_file());
    assert!(world.home.path().join("cache/ground").is_dir());
    assert_eq!(open_to_others(world.home.path()), Vec::<String>::new());
}
