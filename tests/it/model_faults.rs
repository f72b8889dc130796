//! Hostile input and faults around the embedded model (issue R4, findings 2-8): model
//! files crafted to crash llama.cpp or a terminal, and hubs that drip, overrun,
//! redirect inwards, or share a folder with a FIFO or a planted link.
//!
//! The hubs are stand-ins on loopback (wiremock, or a raw TCP server where wiremock
//! cannot misbehave finely enough); the crafted files are written by the tests
//! themselves, small, except the one that needs a real model to crash in (a copy of
//! the tiny committed test model with one metadata value changed in place).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ground::Error;
use ground::llm::embedded::models::{self, Download, ModelFile, Progress};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;
use wiremock::{Mock, MockServer, ResponseTemplate, matchers};

use crate::common::*;

const REPO: &str = "someone/Tiny-GGUF";
const FILE: &str = "tiny.gguf";

fn payload() -> Vec<u8> {
    (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

fn model_file(bytes: &[u8], size: Option<u64>) -> ModelFile {
    ModelFile {
        repo: REPO.into(),
        file: FILE.into(),
        sha256: Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
        size,
    }
}

fn resolve_path() -> String {
    format!("/{REPO}/resolve/main/{FILE}")
}

/// Fetches `file` from `hub` into `dir` with the given stall limit, on a runtime and
/// thread of its own, and gives up on it after `patience`: a download that blocks
/// its thread (a FIFO opened on the runtime) cannot hang the test.
fn fetch_within(
    hub: &str,
    dir: &Path,
    file: ModelFile,
    stall: Duration,
    patience: Duration,
) -> Result<Result<PathBuf, Error>, &'static str> {
    let (hub, dir) = (Url::parse(hub).unwrap(), dir.to_path_buf());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let result = runtime.block_on(async {
            let mut progress = |_: Progress| {};
            let mut download = Download {
                hub,
                dir,
                stall,
                free_space: None,
                progress: &mut progress,
                name: "tiny".into(),
            };
            models::fetch(&file, &mut download).await
        });
        let _ = tx.send(result);
        runtime.shutdown_background();
    });
    rx.recv_timeout(patience)
        .map_err(|_| "the download was still running")
}

async fn fetch_off_test_runtime(
    hub: String,
    dir: PathBuf,
    file: ModelFile,
    stall: Duration,
    patience: Duration,
) -> Result<Result<PathBuf, Error>, &'static str> {
    tokio::task::spawn_blocking(move || fetch_within(&hub, &dir, file, stall, patience))
        .await
        .unwrap()
}

/// A hub that answers every request with `200`, a `Content-Length` of 300,000, and
/// then one byte every `every`: a connection that is never silent for long.
async fn dripping_hub(every: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 4096];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-length: 300000\r\ncontent-type: application/octet-stream\r\n\r\n";
                if socket.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for _ in 0..300_000 {
                    tokio::time::sleep(every).await;
                    if socket.write_all(b"x").await.is_err() || socket.flush().await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}

// ---------------------------------------------------------------------------
// Finding 4: no bound on a download's time

#[tokio::test]
async fn a_dripping_hub_is_ended_by_the_minimum_rate() {
    let hub = dripping_hub(Duration::from_millis(100)).await;
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let result = fetch_off_test_runtime(
        hub,
        dir.path().to_path_buf(),
        model_file(&payload(), Some(300_000)),
        Duration::from_millis(800),
        Duration::from_secs(10),
    )
    .await
    .expect("a hub sending a byte every 100 ms kept the download going");
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::ModelDownload { reason, .. } if reason.contains("slower than")),
        "{err:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // What arrived is kept for a resume.
    let part = models::part_path(&dir.path().join(FILE));
    assert!(std::fs::metadata(part).unwrap().len() > 0);
}

#[tokio::test]
async fn an_answer_s_download_ends_at_its_timeout() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let hub = dripping_hub(Duration::from_millis(200)).await;
    let mut cmd = world.ground();
    cmd.env("GROUND_MODEL_HUB", &hub).args([
        "answer",
        "--llm",
        "embedded",
        "--model",
        "qwen3-0.6b",
        "--timeout",
        "3",
        "do tardigrades survive in space",
    ]);
    let started = Instant::now();
    let out = run_within(cmd, Duration::from_secs(20)).await;
    let elapsed = started.elapsed();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(elapsed < Duration::from_secs(6), "{elapsed:?}: {err}");
    assert!(err.contains("--timeout of 3 s"), "{err}");
    assert!(err.contains("ground model pull qwen3-0.6b"), "{err}");
}

// ---------------------------------------------------------------------------
// Finding 5: no size cap; Content-Range's end ignored

#[tokio::test]
async fn a_resume_answered_with_a_shorter_range_and_a_long_body_is_refused() {
    let bytes = payload();
    let server = MockServer::start().await;
    // Asked for the rest from byte 100, the hub says it sends ten bytes, then sends
    // two megabytes.
    Mock::given(matchers::method("GET"))
        .and(matchers::path(resolve_path()))
        .and(matchers::header("range", "bytes=100-"))
        .respond_with(
            ResponseTemplate::new(206)
                .insert_header("content-range", "bytes 100-109/110")
                .set_body_bytes(vec![b'x'; 2_000_000]),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let part = models::part_path(&dir.path().join(FILE));
    std::fs::write(&part, &bytes[..100]).unwrap();
    // No pinned size: the range is all that says where the file ends.
    let result = fetch_off_test_runtime(
        server.uri(),
        dir.path().to_path_buf(),
        model_file(&bytes, None),
        Duration::from_secs(5),
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::ModelDownload { reason, .. } if reason.contains("more than the 110 bytes")),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_resume_of_another_range_than_the_pinned_file_s_is_refused() {
    let bytes = payload();
    let server = MockServer::start().await;
    Mock::given(matchers::method("GET"))
        .and(matchers::path(resolve_path()))
        .respond_with(
            ResponseTemplate::new(206)
                .insert_header("content-range", "bytes 100-109/110")
                .set_body_bytes(vec![b'x'; 10]),
        )
        .mount(&server)
        .await;
    let dir = tempfile::tempdir().unwrap();
    let part = models::part_path(&dir.path().join(FILE));
    std::fs::write(&part, &bytes[..100]).unwrap();
    let result = fetch_off_test_runtime(
        server.uri(),
        dir.path().to_path_buf(),
        model_file(&bytes, Some(300_000)),
        Duration::from_secs(5),
        Duration::from_secs(20),
    )
    .await
    .unwrap();
    let err = result.unwrap_err();
    assert!(
        matches!(&err, Error::ModelDownload { reason, .. } if reason.contains("the range 100-109/110 of a file of 300000 bytes")),
        "{err:?}"
    );
    // The part was not touched: a resume can still use it.
    assert_eq!(std::fs::read(&part).unwrap(), &bytes[..100]);
}

// ---------------------------------------------------------------------------
// Finding 6: redirects followed to any address

#[tokio::test]
async fn a_hub_redirect_to_a_private_address_is_refused() {
    let inside = MockServer::start().await;
    Mock::given(matchers::any())
        .respond_with(ResponseTemplate::new(200).set_body_string("internal secret"))
        .mount(&inside)
        .await;
    let port = inside.address().port();
    for target in [
        format!("http://127.0.0.1:{port}/admin"),
        format!("http://localhost:{port}/admin"),
    ] {
        let hub = MockServer::start().await;
        Mock::given(matchers::method("GET"))
            .and(matchers::path(resolve_path()))
            .respond_with(ResponseTemplate::new(302).insert_header("location", target.as_str()))
            .mount(&hub)
            .await;
        let dir = tempfile::tempdir().unwrap();
        let result = fetch_off_test_runtime(
            hub.uri(),
            dir.path().to_path_buf(),
            model_file(b"x", Some(1)),
            Duration::from_secs(5),
            Duration::from_secs(20),
        )
        .await
        .unwrap();
        let err = result.unwrap_err();
        assert!(
            matches!(&err, Error::ModelDownload { reason, .. } if reason.contains("not a public address")),
            "{target}: {err:?}"
        );
    }
    assert!(
        inside.received_requests().await.unwrap().is_empty(),
        "the private server was reached"
    );
}

// ---------------------------------------------------------------------------
// Finding 7: FIFOs and links in the models folder

fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(made.success());
}

/// A hub serving `bytes` whole (or from a `Range`'s start) at the resolve path.
async fn plain_hub(bytes: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(matchers::method("GET"))
        .and(matchers::path(resolve_path()))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(bytes))
        .mount(&server)
        .await;
    server
}

#[tokio::test]
async fn a_fifo_at_the_lock_or_the_part_is_refused_at_once() {
    let bytes = payload();
    let hub = plain_hub(bytes.clone()).await;
    for fifo in [".lock", ".part"] {
        let dir = tempfile::tempdir().unwrap();
        mkfifo(&dir.path().join(format!("{FILE}{fifo}")));
        let started = Instant::now();
        let result = fetch_off_test_runtime(
            hub.uri(),
            dir.path().to_path_buf(),
            model_file(&bytes, Some(300_000)),
            Duration::from_secs(5),
            Duration::from_secs(5),
        )
        .await
        .unwrap_or_else(|e| panic!("a FIFO at {fifo}: {e}"));
        let err = result.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(2), "{fifo}");
        assert!(
            err.to_string()
                .ends_with("is not a regular file but a FIFO"),
            "{fifo}: {err}"
        );
        assert_eq!(err.exit_code(), ground::error::exit::USAGE);
        assert!(err.report().contains("\nhint: delete "), "{}", err.report());
    }
}

#[tokio::test]
async fn a_link_at_the_lock_or_the_part_is_not_followed() {
    let bytes = payload();
    let hub = plain_hub(bytes.clone()).await;
    for link in [".lock", ".part"] {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        if link == ".part" {
            std::fs::write(&victim, b"keep me").unwrap();
        }
        std::os::unix::fs::symlink(&victim, dir.path().join(format!("{FILE}{link}"))).unwrap();
        let result = fetch_off_test_runtime(
            hub.uri(),
            dir.path().to_path_buf(),
            model_file(&bytes, Some(300_000)),
            Duration::from_secs(5),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
        let err = result.unwrap_err();
        assert!(
            err.to_string()
                .ends_with("is not a regular file but a symbolic link"),
            "{link}: {err}"
        );
        if link == ".part" {
            assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
        } else {
            assert!(!victim.exists(), "the lock's link created its target");
        }
    }
}

// ---------------------------------------------------------------------------
// Findings 2 and 8: crafted model files

/// A metadata value of a crafted file.
enum Value<'a> {
    U32(u32),
    Str(&'a str),
}

/// A small GGUF file: `meta`, a token table of `tokens` tokens, then F32 tensors of
/// `(name, dims)` filled with zeros.
fn crafted_gguf(meta: &[(&str, Value<'_>)], tokens: u64, tensors: &[(&str, &[u64])]) -> Vec<u8> {
    let mut out = b"GGUF".to_vec();
    let string = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(meta.len() as u64 + 1).to_le_bytes());
    for (key, value) in meta {
        string(&mut out, key);
        match value {
            Value::U32(n) => {
                out.extend_from_slice(&4u32.to_le_bytes());
                out.extend_from_slice(&n.to_le_bytes());
            }
            Value::Str(s) => {
                out.extend_from_slice(&8u32.to_le_bytes());
                string(&mut out, s);
            }
        }
    }
    string(&mut out, "tokenizer.ggml.tokens");
    out.extend_from_slice(&9u32.to_le_bytes());
    out.extend_from_slice(&8u32.to_le_bytes());
    out.extend_from_slice(&tokens.to_le_bytes());
    for i in 0..tokens {
        string(&mut out, &format!("t{i}"));
    }
    let mut offset = 0u64;
    let mut total = 0u64;
    for (name, dims) in tensors {
        string(&mut out, name);
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in *dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        let size = dims.iter().product::<u64>() * 4;
        offset += size.div_ceil(32) * 32;
        total = offset;
    }
    while !out.len().is_multiple_of(32) {
        out.push(0);
    }
    out.resize(out.len() + total as usize, 0);
    out
}

#[tokio::test]
async fn doctor_quotes_a_file_s_metadata_safely_and_does_not_call_it_ok() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let hostile = "llama\u{1b}]0;owned\u{7}\u{1b}[2J\u{202e}";
    let bytes = crafted_gguf(
        &[
            ("general.architecture", Value::Str(hostile)),
            ("llama.context_length", Value::U32(2048)),
            ("tokenizer.ggml.model", Value::Str("gpt2")),
        ],
        4,
        &[("token_embd.weight", &[8, 4])],
    );
    let path = world.home.path().join("hostile.gguf");
    std::fs::write(&path, bytes).unwrap();
    let mut cmd = world.ground();
    cmd.args(["doctor", "--llm", "embedded", "--model-file"])
        .arg(&path);
    let out = run_within(cmd, Duration::from_secs(30)).await;
    let (text, err) = (stdout(&out), stderr(&out));
    for bad in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(
            !text.contains(bad) && !err.contains(bad),
            "{bad:?} in {text:?}"
        );
    }
    let line = text
        .lines()
        .find(|l| l.contains("model.file") || l.contains("hostile.gguf"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("not a usable model file"), "{line}");
    assert_eq!(out.status.code(), Some(5), "{text}");
}

#[tokio::test]
async fn a_long_key_makes_a_short_error_line() {
    let world = World::new().await;
    world.search_and_pages().await;
    let key = "k".repeat(60_000);
    let mut bytes = crafted_gguf(&[(key.as_str(), Value::U32(1))], 1, &[]);
    // The key's value type (4, u32) becomes one no GGUF has.
    let at = 24 + 8 + key.len();
    bytes[at..at + 4].copy_from_slice(&77u32.to_le_bytes());
    let path = world.home.path().join("long-key.gguf");
    std::fs::write(&path, bytes).unwrap();
    let mut cmd = world.ground();
    cmd.args(["answer", "--llm", "embedded", "--model-file"])
        .arg(&path)
        .arg("do tardigrades survive in space");
    let out = run_within(cmd, Duration::from_secs(60)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{}", &err[..err.len().min(400)]);
    let line = err
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("{}", &err[..err.len().min(400)]));
    assert!(
        line.contains("unknown value type 77"),
        "{}",
        &line[..line.len().min(400)]
    );
    assert!(line.len() < 500, "an error line of {} bytes", line.len());
}

/// The engine tests' tiny committed model (fixtures/models, made by
/// scripts/make-tiny-gguf.py): a real llama.cpp model, no variable needed.
#[cfg(feature = "embedded")]
fn tiny_model() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/models/tiny-chatml.gguf")
}

/// A copy of the test model with its tokenizer model, `gpt2`, changed in place to
/// `none`: a file that reads well and that llama.cpp aborts on at the first
/// tokenization.
#[cfg(feature = "embedded")]
fn model_without_tokenizer(dir: &Path) -> PathBuf {
    let mut bytes = std::fs::read(tiny_model()).unwrap();
    let needle = b"tokenizer.ggml.model\x08\0\0\0\x04\0\0\0\0\0\0\0gpt2";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the test model's tokenizer is gpt2");
    let value = at + needle.len() - 4;
    bytes[value..value + 4].copy_from_slice(b"none");
    let path = dir.join("no-tokenizer.gguf");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[cfg(feature = "embedded")]
#[tokio::test]
async fn a_model_llama_cpp_would_abort_on_is_an_error_naming_the_file() {
    let world = World::new().await;
    world.search_and_pages().await;
    let path = model_without_tokenizer(world.home.path());
    let mut cmd = world.ground();
    cmd.args(["answer", "--llm", "embedded", "--model-file"])
        .arg(&path)
        .arg("do tardigrades survive in space");
    let out = run_within(cmd, Duration::from_secs(120)).await;
    let err = stderr(&out);
    // Before: killed by SIGABRT (no exit code) after ggml ran gdb against it.
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert!(
        err.contains(&format!(
            "error: the model file {} cannot be used",
            path.display()
        )),
        "{err}"
    );
    assert!(err.contains("tokenizer.ggml.model \"none\""), "{err}");
    assert!(err.contains("\nhint: "), "{err}");
    assert!(!err.contains("GGML_ASSERT"), "{err}");
}

#[cfg(feature = "embedded")]
#[tokio::test]
async fn mcp_survives_a_model_llama_cpp_would_abort_on() {
    let world = World::new().await;
    world.search_and_pages().await;
    let path = model_without_tokenizer(world.home.path());
    let mut cmd = world.ground();
    cmd.args(["mcp", "--llm", "embedded", "--model-file"])
        .arg(&path);
    let call = |id: u32, question: &str| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "grounded_answer", "arguments": {"question": question}}})
        .to_string()
    };
    let input = [
        serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        .to_string(),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        call(1, "do tardigrades survive in space"),
        call(2, "do water bears survive in space"),
    ];
    let out = tokio::task::spawn_blocking(move || {
        use std::io::{BufRead, BufReader, Write};
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut replies = Vec::new();
        for message in &input {
            writeln!(stdin, "{message}").unwrap();
            stdin.flush().unwrap();
            if message.contains("\"id\"") {
                match lines.next() {
                    Some(Ok(line)) => replies.push(line),
                    _ => break,
                }
            }
        }
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
        replies
    })
    .await
    .unwrap();
    // Both calls were answered (with an error naming the file): the server lived.
    assert_eq!(out.len(), 3, "{out:?}");
    for reply in &out[1..] {
        assert!(reply.contains("\"isError\":true"), "{reply}");
        assert!(reply.contains("no-tokenizer.gguf"), "{reply}");
    }
}

// ---------------------------------------------------------------------------
// Finding 3: the engine outlives an MCP deadline

// ---------------------------------------------------------------------------
// R5 finding 10: hyperparameters llama.cpp asserts on

/// A copy of the test model with the f32 metadata value under `key` (the full key,
/// e.g. `llama.rope.freq_base`) set to `value` in place, written to `dir/name`.
#[cfg(feature = "embedded")]
fn model_with_float(dir: &Path, key: &str, value: f32, name: &str) -> PathBuf {
    let mut bytes = std::fs::read(tiny_model()).unwrap();
    // The key as GGUF writes it (its length, then its bytes), then type 6 (f32).
    let mut needle = (key.len() as u64).to_le_bytes().to_vec();
    needle.extend_from_slice(key.as_bytes());
    needle.extend_from_slice(&6u32.to_le_bytes());
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .unwrap_or_else(|| panic!("the test model has no f32 {key}"));
    let value_at = at + needle.len();
    bytes[value_at..value_at + 4].copy_from_slice(&value.to_le_bytes());
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The test model with a NaN `layer_norm_rms_epsilon`: before R5 it loaded, and
/// ggml's `GGML_ASSERT(eps >= 0.0f)` aborted the process at the first answer.
#[cfg(feature = "embedded")]
fn model_with_nan_epsilon(dir: &Path) -> PathBuf {
    model_with_float(
        dir,
        "llama.attention.layer_norm_rms_epsilon",
        f32::NAN,
        "nan-epsilon.gguf",
    )
}

#[cfg(feature = "embedded")]
#[tokio::test]
async fn a_norm_epsilon_or_rope_base_llama_cpp_would_assert_on_is_refused() {
    let world = World::new().await;
    world.search_and_pages().await;
    for (key, value, name, says) in [
        (
            "llama.attention.layer_norm_rms_epsilon",
            f32::NAN,
            "nan-epsilon.gguf",
            "its llama.attention.layer_norm_rms_epsilon is NaN",
        ),
        (
            "llama.attention.layer_norm_rms_epsilon",
            -1e-5,
            "negative-epsilon.gguf",
            "its llama.attention.layer_norm_rms_epsilon is -0.00001",
        ),
        (
            "llama.rope.freq_base",
            f32::NAN,
            "nan-rope.gguf",
            "its llama.rope.freq_base is NaN",
        ),
        (
            "llama.rope.freq_base",
            0.0,
            "zero-rope.gguf",
            "its llama.rope.freq_base is 0",
        ),
    ] {
        let path = model_with_float(world.home.path(), key, value, name);
        let mut cmd = world.ground();
        cmd.args(["answer", "--llm", "embedded", "--model-file"])
            .arg(&path)
            .arg("do tardigrades survive in space");
        let out = run_within(cmd, Duration::from_secs(120)).await;
        let err = stderr(&out);
        // Before: killed by SIGABRT (no exit code) at the first decode (the epsilon).
        assert_eq!(out.status.code(), Some(5), "{name}: {err}");
        assert!(
            err.contains(&format!(
                "error: the model file {} cannot be used",
                path.display()
            )),
            "{err}"
        );
        assert!(err.contains(says), "{name}: {err}");
        assert!(err.contains("convert the model again"), "{name}: {err}");
        assert!(err.contains("\nhint: "), "{err}");
        assert!(!err.contains("GGML_ASSERT"), "{err}");
    }
}

/// A bad model in `ground serve` is that request's 503, never the process: the next
/// request gets its own 503 and /health still answers.
#[cfg(feature = "embedded")]
#[tokio::test]
async fn serve_answers_503_for_a_model_llama_cpp_would_abort_on_and_lives() {
    use crate::serve::{Server, ask, http};
    let world = World::new().await;
    world.search_and_pages().await;
    let path = model_with_nan_epsilon(world.home.path());
    let path_text = path.to_str().unwrap().to_string();
    let server = Server::start(
        world.ground(),
        &["--llm", "embedded", "--model-file", &path_text],
    )
    .await;
    for question in [
        "do tardigrades survive in space",
        "do water bears survive in space",
    ] {
        let reply = http()
            .post(server.url("/v1/chat/completions"))
            .json(&ask(question))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 503, "{question}");
        let body: serde_json::Value = reply.json().await.unwrap();
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(body["error"]["code"], "model_file_invalid", "{body}");
        assert!(message.contains("nan-epsilon.gguf"), "{message}");
        assert!(
            message.contains("layer_norm_rms_epsilon is NaN"),
            "{message}"
        );
        let health = http().get(server.url("/health")).send().await.unwrap();
        assert_eq!(health.status(), 200);
    }
    let log = server.stop().await;
    assert!(!log.contains("GGML_ASSERT"), "{log}");
}
