//! Test harness: wiremock servers standing in for SearXNG, the web pages and Ollama,
//! and a `ground` command with a clean environment pointed at them, so no test reads
//! a developer's real config or reaches the network; and the checks every failed run
//! must pass (exit code, `error:` and `hint:` lines, one JSON error object).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use wiremock::matchers::{body_partial_json, method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// Where the fixtures live.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// Reads a fixture file as text.
pub fn fixture(rel: &str) -> String {
    std::fs::read_to_string(fixtures().join(rel)).unwrap_or_else(|e| panic!("fixture {rel}: {e}"))
}

/// The URL that real captures use for pages; replaced by the page server's.
pub const CAPTURED_PAGES_URL: &str = "http://127.0.0.1:8899";

/// The three stand-in servers and a scratch home directory.
pub struct World {
    pub searx: MockServer,
    pub pages: MockServer,
    pub ollama: MockServer,
    pub home: tempfile::TempDir,
}

impl World {
    pub async fn new() -> Self {
        World {
            searx: MockServer::start().await,
            pages: MockServer::start().await,
            ollama: MockServer::start().await,
            home: tempfile::tempdir().unwrap(),
        }
    }

    /// `ground` with an empty environment except HOME (a temp dir), NO_COLOR and the
    /// servers' URLs; private addresses allowed because the pages are on loopback.
    /// Each command gets a cache folder of its own, so runs in one test never answer
    /// from each other's cache; a test about the cache sets XDG_CACHE_HOME or GROUND_CACHE_DIR itself.
    /// The search rate limit is off (GROUND_MAX_PER_MINUTE=0: tests send bursts of
    /// searches); tests about it set or remove the variable. There is no OS keyring.
    /// The search service is pinned to SearXNG (GROUND_SEARCH=searxng), as it was
    /// before `auto` became the default, so a stand-in that is down stays an error;
    /// tests of `auto` use [`World::ground_auto`] (or remove the variable). Wikipedia
    /// and DuckDuckGo point at a closed port on loopback: no test can reach them.
    pub fn ground(&self) -> std::process::Command {
        static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_ground"));
        cmd.env_clear()
            .env("HOME", self.home.path())
            .env(
                "XDG_CACHE_HOME",
                self.home.path().join(format!("cache-{run}")),
            )
            .env("NO_COLOR", "1")
            .env("GROUND_SEARXNG_URL", self.searx.uri())
            .env("GROUND_LLM_URL", self.ollama.uri())
            .env("GROUND_ALLOW_PRIVATE_ADDRESSES", "true")
            .env("GROUND_MODEL", "llama3.2")
            // The default backend is `auto` (Ollama if it answers, else the embedded
            // model); these tests are about the Ollama stand-in, so they pin it.
            .env("GROUND_LLM", "ollama")
            .env("GROUND_MAX_PER_MINUTE", "0")
            .env("GROUND_SEARCH", "searxng")
            .env("GROUND_WIKIPEDIA_URL", closed_port_url())
            .env("GROUND_DUCKDUCKGO_URL", closed_port_url())
            // No session bus, so no OS keyring: no test reads or writes the keys of
            // the person running it (the keyring module sets a real bus itself).
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                format!("unix:path={}", self.home.path().join("no-bus").display()),
            )
            .stdin(std::process::Stdio::null());
        cmd
    }

    /// [`World::ground`] with the search service left to its default, `auto`.
    pub fn ground_auto(&self) -> std::process::Command {
        let mut cmd = self.ground();
        cmd.env_remove("GROUND_SEARCH");
        cmd
    }

    /// Serves a real SearXNG capture (body file under fixtures/searxng) for any
    /// search, with its page URLs pointed at our page server; and, like a real
    /// SearXNG, its configuration at `/config` (what `--search auto` asks first).
    pub async fn search_replies_with_capture(&self, rel: &str) {
        Mock::given(method("GET"))
            .and(path("/config"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture("searxng/searxng/config.body.json"),
                "application/json",
            ))
            .mount(&self.searx)
            .await;
        let body =
            fixture(&format!("searxng/{rel}")).replace(CAPTURED_PAGES_URL, &self.pages.uri());
        Mock::given(method("GET"))
            .and(path("/search"))
            .and(query_param("format", "json"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
            .mount(&self.searx)
            .await;
    }

    /// Serves the four fixture pages under /pages/.
    pub async fn serve_fixture_pages(&self) {
        for name in [
            "tardigrades-space",
            "tardigrades-cryptobiosis",
            "tardigrades-overview",
            "sqlite-vacuum",
        ] {
            let body = fixture(&format!("pages/{name}.html"));
            Mock::given(method("GET"))
                .and(path(format!("/pages/{name}.html")))
                .respond_with(
                    ResponseTemplate::new(200).set_body_raw(body, "text/html; charset=utf-8"),
                )
                .mount(&self.pages)
                .await;
        }
    }

    /// Makes Ollama answer every chat request with `content` as the message: whole
    /// when asked not to stream (the planning calls), streamed as NDJSON in small
    /// pieces when asked to (the answer).
    pub async fn model_replies(&self, content: &str) {
        Mock::given(method("POST"))
            .and(path("/api/chat"))
            .and(body_partial_json(json!({"stream": false, "think": false})))
            .respond_with(ResponseTemplate::new(200).set_body_json(ollama_reply(content, "stop")))
            .mount(&self.ollama)
            .await;
        Mock::given(method("POST"))
            .and(path("/api/chat"))
            .and(body_partial_json(json!({"stream": true, "think": false})))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                ollama_stream(content, Some("stop"), 7),
                "application/x-ndjson",
            ))
            .mount(&self.ollama)
            .await;
    }

    /// The usual search: the normal capture for any query, and its fixture pages.
    pub async fn search_and_pages(&self) {
        self.search_replies_with_capture("searxng/normal.body.json")
            .await;
        self.serve_fixture_pages().await;
    }

    /// The usual happy setup: normal search capture, pages, and a model answer.
    pub async fn healthy(&self, model_content: &str) {
        self.search_and_pages().await;
        self.model_replies(model_content).await;
    }

    /// Replaces server addresses in output so snapshots are stable.
    pub fn scrub(&self, text: &str) -> String {
        text.replace(&self.pages.uri(), "http://pages.test")
            .replace(&self.searx.uri(), "http://searx.test")
            .replace(&self.ollama.uri(), "http://ollama.test")
    }
}

/// A non-streaming Ollama `/api/chat` reply shaped like a real one.
pub fn ollama_reply(content: &str, done_reason: &str) -> Value {
    json!({
        "model": "llama3.2",
        "created_at": "2026-11-21T23:40:12.123456Z",
        "message": {"role": "assistant", "content": content},
        "done_reason": done_reason,
        "done": true,
        "total_duration": 5_191_566_416u64,
        "load_duration": 2_154_458u64,
        "prompt_eval_count": 912,
        "prompt_eval_duration": 383_809_000u64,
        "eval_count": 121,
        "eval_duration": 4_799_921_000u64
    })
}

/// `content` cut into pieces of at most `piece` characters.
pub fn pieces(content: &str, piece: usize) -> Vec<String> {
    let chars: Vec<char> = content.chars().collect();
    chars
        .chunks(piece.max(1))
        .map(|c| c.iter().collect())
        .collect()
}

/// A streamed Ollama `/api/chat` body (NDJSON) carrying `content` in pieces of
/// `piece` characters, ending with a `"done": true` line when `done_reason` is given
/// (and without one, like a cut connection, when it is not).
pub fn ollama_stream(content: &str, done_reason: Option<&str>, piece: usize) -> String {
    let mut body = String::new();
    for text in pieces(content, piece) {
        let line = json!({"model": "llama3.2", "created_at": "2026-11-21T23:40:12Z",
            "message": {"role": "assistant", "content": text}, "done": false});
        body.push_str(&format!("{line}\n"));
    }
    if let Some(reason) = done_reason {
        let line = json!({"model": "llama3.2", "created_at": "2026-11-21T23:40:13Z",
            "message": {"role": "assistant", "content": ""}, "done": true,
            "done_reason": reason, "prompt_eval_count": 912, "eval_count": 121});
        body.push_str(&format!("{line}\n"));
    }
    body
}

/// A streamed OpenAI-compatible body (Server-Sent Events) carrying `content` in
/// pieces, the finish reason, a usage chunk and `[DONE]`.
pub fn sse_stream(content: &str, finish_reason: &str, piece: usize) -> String {
    let mut body = String::new();
    for text in pieces(content, piece) {
        let chunk = json!({"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]});
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let end = json!({"object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish_reason}]});
    let usage = json!({"object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 700, "completion_tokens": 90, "total_tokens": 790}});
    body.push_str(&format!("data: {end}\n\ndata: {usage}\n\ndata: [DONE]\n\n"));
    body
}

/// The model's JSON for a well-cited answer about tardigrades in space.
pub fn good_answer() -> String {
    json!({
        "answerable": true,
        "statements": [
            {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
             "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
            {"text": "They survive by entering a dormant tun state in which their metabolism almost stops.",
             "citations": [{"source": 2, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"},
                           {"source": 2, "quote": "their metabolism falls to less than 0.01 percent"}]}
        ],
        "unknowns": []
    })
    .to_string()
}

/// Runs a command off the async runtime and returns its output.
pub async fn run(mut cmd: std::process::Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().expect("run ground"))
        .await
        .unwrap()
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// stdout parsed as the one JSON object it must be.
pub fn json_stdout(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {}", stdout(out)))
}

/// Zeroes run-dependent numbers (timings) so a JSON report can be snapshotted.
pub fn stable_json(mut value: Value) -> Value {
    if let Some(t) = value.get_mut("timings_ms").and_then(Value::as_object_mut) {
        for v in t.values_mut() {
            *v = json!(0);
        }
    }
    if let Some(searches) = value.get_mut("searches").and_then(Value::as_array_mut) {
        for s in searches {
            s["ms"] = json!(0);
        }
    }
    if let Some(sources) = value.get_mut("sources").and_then(Value::as_array_mut) {
        for s in sources {
            s["ms"] = json!(0);
        }
    }
    value
}

/// An address where nothing listens.
pub fn closed_port_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A matcher for the headers SearXNG's limiter needs (GUIDE 3): Accept with
/// text/html, Accept-Encoding with gzip or deflate, a non-empty Accept-Language and a
/// User-Agent that is not a bot library's. Reads the raw header values (wiremock's
/// own header matchers split them at commas).
pub fn limiter_friendly_headers() -> impl wiremock::Match {
    |req: &wiremock::Request| {
        let get = |name: &str| {
            req.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        get("accept").contains("text/html")
            && (get("accept-encoding").contains("gzip")
                || get("accept-encoding").contains("deflate"))
            && !get("accept-language").trim().is_empty()
            && get("user-agent").starts_with("ground/")
    }
}

/// How long one run of `ground` may take before a test calls it a hang. Every limit
/// the tests configure is far below this.
pub const RUN_DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

/// Like [`run`], but a run that has not ended after `deadline` is killed and the test
/// fails: a hang is a bug, not a slow test.
pub async fn run_within(mut cmd: std::process::Command, deadline: std::time::Duration) -> Output {
    use std::io::Read;
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        let mut child = cmd
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run ground");
        // Drain both pipes while waiting so a chatty run cannot block on a full pipe.
        let drain = |mut pipe: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = pipe.read_to_end(&mut buf);
                buf
            })
        };
        let out = drain(Box::new(child.stdout.take().unwrap()));
        let err = drain(Box::new(child.stderr.take().unwrap()));
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for ground") {
                break Ok(status);
            }
            if started.elapsed() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break Err(());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
        match status {
            Ok(status) => Output {
                status,
                stdout,
                stderr,
            },
            Err(()) => panic!(
                "ground did not end within {deadline:?} (killed); stderr so far: {}",
                String::from_utf8_lossy(&stderr)
            ),
        }
    })
    .await
    .unwrap()
}

impl World {
    /// Writes `toml` as a config file in the scratch home and returns its path, for
    /// `--config`.
    pub fn config_file(&self, toml: &str) -> PathBuf {
        let path = self.home.path().join("test-config.toml");
        std::fs::write(&path, toml).unwrap();
        path
    }
}

/// Asserts that a run failed the way a user should see it: exit code `code`, an
/// `error:` line on stderr containing every piece of `cause`, and right after it a
/// `hint:` line containing `hint`. Returns the two lines.
pub fn assert_error_report(
    out: &Output,
    code: i32,
    cause: &[&str],
    hint: &str,
) -> (String, String) {
    let err = stderr(out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code; stderr: {err}\nstdout: {}",
        stdout(out)
    );
    let lines: Vec<&str> = err.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no `error:` line on stderr: {err}"));
    let error_line = lines[at];
    for piece in cause {
        assert!(
            error_line.contains(piece),
            "the error line should contain {piece:?}: {error_line}"
        );
    }
    let hint_line = lines
        .get(at + 1)
        .filter(|l| l.starts_with("hint: "))
        .unwrap_or_else(|| panic!("no `hint:` line right after the error: {err}"));
    assert!(
        hint_line.contains(hint),
        "the hint should contain {hint:?}: {hint_line}"
    );
    (error_line.to_string(), hint_line.to_string())
}

/// Asserts that stdout is exactly one JSON error object (`--json` runs that fail) for
/// `question`, of `kind`, with the process's exit code in it. Returns the object.
pub fn assert_json_error(out: &Output, kind: &str, question: &str) -> Value {
    let value = json_stdout(out);
    assert!(value.is_object(), "not an object: {value}");
    assert_eq!(value["error"]["kind"], kind, "{value}");
    assert_eq!(value["question"], question, "{value}");
    assert_eq!(
        value["error"]["exit_code"].as_i64(),
        out.status.code().map(i64::from),
        "{value}"
    );
    assert!(value["error"]["message"].is_string(), "{value}");
    assert!(value["error"]["hint"].is_string(), "{value}");
    assert!(
        value.get("answer").is_none(),
        "an error object has no answer: {value}"
    );
    value
}

// Failures of `ground answer` ---------------------------------------------------------

/// What a failed run must show.
pub struct Failure<'a> {
    /// Exit code.
    pub code: i32,
    /// `error.kind` in `--json`.
    pub kind: &'a str,
    /// Pieces the `error:` line (and the JSON message) must contain.
    pub cause: &'a [&'a str],
    /// A piece the `hint:` line must contain.
    pub hint: &'a str,
}

/// Runs `ground answer [configure] QUESTION` twice, for a person and with `--json`,
/// and asserts the failure both ways. Returns the JSON error object.
pub async fn fails_both_ways(
    world: &World,
    configure: impl Fn(&mut Command),
    question: &str,
    expected: &Failure<'_>,
) -> Value {
    let mut cmd = world.ground();
    cmd.arg("answer");
    configure(&mut cmd);
    cmd.arg(question);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(&out, expected.code, expected.cause, expected.hint);
    assert_eq!(stdout(&out), "", "a failed run prints nothing on stdout");

    let mut cmd = world.ground();
    cmd.args(["answer", "--json"]);
    configure(&mut cmd);
    cmd.arg(question);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_json_failure(&out, question, expected)
}

/// Asserts one `--json` run's failure: stderr report and stdout error object.
pub fn assert_json_failure(out: &Output, question: &str, expected: &Failure<'_>) -> Value {
    assert_error_report(out, expected.code, expected.cause, expected.hint);
    let value = assert_json_error(out, expected.kind, question.trim());
    let message = value["error"]["message"].as_str().unwrap();
    for piece in expected.cause {
        assert!(message.contains(piece), "{piece:?} not in {message:?}");
    }
    assert!(
        value["error"]["hint"]
            .as_str()
            .unwrap()
            .contains(expected.hint),
        "{value}"
    );
    value
}

/// Stands in a [`Failure`]'s cause for the address of the server the case is about,
/// known only once the test world runs ([`fails_both_ways_at`]).
pub const SERVER: &str = "<server>";

/// [`fails_both_ways`] with [`SERVER`] in the expected cause read as `server`.
pub async fn fails_both_ways_at(
    world: &World,
    server: &str,
    configure: impl Fn(&mut Command),
    question: &str,
    expected: &Failure<'_>,
) -> Value {
    let cause: Vec<&str> = expected
        .cause
        .iter()
        .map(|&piece| if piece == SERVER { server } else { piece })
        .collect();
    let expected = Failure {
        cause: &cause,
        ..*expected
    };
    fails_both_ways(world, configure, question, &expected).await
}

/// For [`fails_both_ways`]: no flags beyond the question.
pub fn no_changes(_: &mut Command) {}

/// Why `content` matches none of the schema's choices (result or error): each
/// choice's own errors with the place they are at, since the `anyOf` alone only says
/// that none matched.
pub fn schema_problems(schema: &Value, content: &Value) -> String {
    let mut out = String::new();
    for choice in schema["anyOf"].as_array().into_iter().flatten() {
        let name = choice["$ref"]
            .as_str()
            .unwrap_or("")
            .trim_start_matches("#/$defs/");
        let mut alone = schema["$defs"][name].clone();
        alone["$defs"] = schema["$defs"].clone();
        let validator = jsonschema::validator_for(&alone).expect("schema compiles");
        out.push_str(&format!("as {name}:\n"));
        for error in validator.iter_errors(content) {
            let at = error.instance_path().to_string();
            let what = error.to_string();
            // The whole object is in some messages; the place and its start suffice.
            out.push_str(&format!(
                "  at {at:?}: {}\n",
                what.chars().take(200).collect::<String>()
            ));
        }
    }
    out
}

/// Fails the test unless `value` matches `schema` (JSON Schema text, e.g. one of
/// `ground::mcp::schemas`: the CLI's `--json` objects are the MCP tools' results, so
/// their declared schemas hold for both), naming every place that does not.
pub fn assert_matches_schema(schema: &str, value: &Value) {
    let schema: Value = serde_json::from_str(schema).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    assert!(
        validator.is_valid(value),
        "the output does not match its schema:\n{}",
        schema_problems(&schema, value)
    );
}

/// A pseudo-terminal for tests of what a person sees: the binary's stdout and stderr
/// on a terminal (progress lines, live warnings, Ctrl-C).
pub mod pty {
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    /// A pseudo-terminal pair: the side the test reads and types into, and the side
    /// the child gets as its terminal.
    pub fn open_pty() -> (std::fs::File, OwnedFd) {
        let (mut main, mut child) = (0, 0);
        let size = libc::winsize {
            ws_row: 24,
            ws_col: 100,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let made = unsafe {
            libc::openpty(
                &mut main,
                &mut child,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &size,
            )
        };
        assert_eq!(made, 0, "openpty");
        unsafe {
            (
                std::fs::File::from_raw_fd(main),
                OwnedFd::from_raw_fd(child),
            )
        }
    }

    /// Everything the child wrote, gathered by a thread.
    pub fn collect(mut main: std::fs::File) -> Arc<Mutex<String>> {
        let seen = Arc::new(Mutex::new(String::new()));
        let into = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = main.read(&mut buf) {
                if n == 0 {
                    break;
                }
                into.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        seen
    }

    /// Waits (up to 60 s) until `what` shows after byte `after` of what the child
    /// wrote; returns the byte just past it.
    pub async fn wait_for(seen: &Arc<Mutex<String>>, what: &str, after: usize) -> usize {
        let started = Instant::now();
        loop {
            if let Some(at) = seen.lock().unwrap()[after..].find(what) {
                return after + at + what.len();
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "waited for {what:?}; the terminal shows:\n{}",
                seen.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
