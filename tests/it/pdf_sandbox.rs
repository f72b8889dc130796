//! Hostile PDFs (issue 24): every file in fixtures/pdf/hostile/ (made by
//! scripts/make-hostile-pdfs.py) through `ground extract`, `ground fetch --json` and
//! MCP's `web_fetch`: each ends quickly with one clear error and never takes the
//! process down (no abort, exit 134, before the sandbox). Then the sandbox itself,
//! in-process, with stand-in workers that hang, crash, burn CPU, flood or talk
//! nonsense, and the real worker under a small memory limit: each way of ending is
//! the page's reason, and no worker is left behind. (The worker protocol's decoder
//! against arbitrary bytes is a property test: tests/props/pdf.rs.)
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use ground::pdf::protocol;
use ground::pdf::{PdfError, Sandbox};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

/// Each hostile fixture and a piece of the reason it must be refused with.
const HOSTILE: [(&str, &str); 9] = [
    (
        "xobject-self.pdf",
        "draws itself, directly or through others",
    ),
    (
        "xobject-mutual.pdf",
        "draws itself, directly or through others",
    ),
    ("xobject-deep.pdf", "nest more than 32 deep"),
    (
        "xobject-fanout.pdf",
        "runs past 1,000,000 operators and operands",
    ),
    ("self-parent.pdf", "page tree loops"),
    ("ascii85-flate-bomb.pdf", "inflate past 64 MiB"),
    ("raw-deflate-bomb.pdf", "inflate past 64 MiB"),
    (
        "q-flood.pdf",
        "graphics states (q) nest more than 4,096 deep",
    ),
    (
        "tounicode-range.pdf",
        "ToUnicode map covers more than 131,072 codes",
    ),
];

/// Well under the 20 s page deadline: the pre-scan refuses these at once.
const QUICK: Duration = Duration::from_secs(10);

fn hostile(name: &str) -> PathBuf {
    fixtures().join("pdf/hostile").join(name)
}

fn ground_bin() -> &'static str {
    env!("CARGO_BIN_EXE_ground")
}

#[tokio::test]
async fn extract_refuses_each_hostile_pdf_with_one_error_line() {
    for (name, reason) in HOSTILE {
        let mut cmd = std::process::Command::new(ground_bin());
        cmd.env_clear().arg("extract").arg(hostile(name));
        let started = Instant::now();
        let out = run_within(cmd, RUN_DEADLINE).await;
        let took = started.elapsed();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(stdout(&out).is_empty(), "{name}: {}", stdout(&out));
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(
            err.starts_with(&format!(
                "error: cannot read {} as a PDF: ",
                hostile(name).display()
            )),
            "{name}: {err}"
        );
        assert!(err.contains(reason), "{name}: {err}");
        assert!(took < QUICK, "{name} took {took:?}");
    }
}

#[tokio::test]
async fn fetch_json_gives_each_hostile_pdf_an_error_status() {
    let world = World::new().await;
    for (name, _) in HOSTILE {
        Mock::given(method("GET"))
            .and(path(format!("/{name}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(std::fs::read(hostile(name)).unwrap(), "application/pdf"),
            )
            .mount(&world.pages)
            .await;
    }
    for (name, reason) in HOSTILE {
        let mut cmd = world.ground();
        cmd.args(["fetch", "--json", &format!("{}/{name}", world.pages.uri())]);
        let started = Instant::now();
        let out = run_within(cmd, RUN_DEADLINE).await;
        let took = started.elapsed();
        assert_eq!(out.status.code(), Some(4), "{name}: {}", stderr(&out));
        let v = json_stdout(&out);
        assert_eq!(v["status"], "ERROR", "{name}: {v}");
        assert_eq!(v["content_type"], "application/pdf", "{name}: {v}");
        assert!(v["error"].as_str().unwrap().contains(reason), "{name}: {v}");
        assert!(took < QUICK, "{name} took {took:?}");
    }
}

#[tokio::test]
async fn a_worker_that_cannot_start_is_an_error_that_names_the_fix() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/report.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            std::fs::read(fixtures().join("pdf/report.pdf")).unwrap(),
            "application/pdf",
        ))
        .mount(&world.pages)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_PDF_WORKER", "/nonexistent/ground").args([
        "fetch",
        "--json",
        &format!("{}/report.pdf", world.pages.uri()),
    ]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "ERROR", "{v}");
    let error = v["error"].as_str().unwrap();
    assert!(
        error.starts_with(
            "the PDF parser could not be started: /nonexistent/ground could not be started"
        ),
        "{error}"
    );
    assert!(
        error.ends_with("set GROUND_PDF_WORKER to the path of the ground binary"),
        "{error}"
    );
}

#[test]
fn the_worker_command_is_hidden() {
    let help = std::process::Command::new(ground_bin())
        .arg("--help")
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("pdf-worker"));
    for shell in ["bash", "zsh", "fish"] {
        let script = std::process::Command::new(ground_bin())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(script.status.success());
        let script = String::from_utf8_lossy(&script.stdout);
        assert!(script.contains("extract"), "{shell}");
        assert!(!script.contains("pdf-worker"), "{shell}");
    }
    // Given something that is not a request, it says so and writes no reply.
    let out = std::process::Command::new(ground_bin())
        .arg("pdf-worker")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(b"hello")?;
            child.wait_with_output()
        })
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("the request could not be read"));
}

/// A minimal MCP client over the child's stdio: one JSON-RPC request, its reply.
struct Mcp {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    next_id: u64,
}

impl Mcp {
    async fn start(world: &World) -> Self {
        let mut cmd = world.ground();
        cmd.arg("mcp")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = tokio::process::Command::from(cmd)
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(
            child.stdout.take().unwrap(),
        ));
        let mut mcp = Mcp {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "pdf-sandbox-tests", "version": "0"}}),
        )
        .await;
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        mcp
    }

    async fn send(&mut self, message: Value) {
        use tokio::io::AsyncWriteExt;
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// Sends a request and returns its reply (skipping notifications), or fails
    /// the test after 30 s: the server must keep answering.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
                .await
                .expect("the server answers within 30 s")
                .expect("read stdout")
                .expect("the server is still running");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }
}

#[tokio::test]
async fn mcp_web_fetch_of_a_hostile_pdf_is_a_tool_error_and_the_server_goes_on() {
    let world = World::new().await;
    for name in ["xobject-self.pdf", "q-flood.pdf"] {
        Mock::given(method("GET"))
            .and(path(format!("/{name}")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(std::fs::read(hostile(name)).unwrap(), "application/pdf"),
            )
            .mount(&world.pages)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/report.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            std::fs::read(fixtures().join("pdf/report.pdf")).unwrap(),
            "application/pdf",
        ))
        .mount(&world.pages)
        .await;
    let mut mcp = Mcp::start(&world).await;
    for (name, reason) in [
        ("xobject-self.pdf", "draws itself"),
        ("q-flood.pdf", "nest more than 4,096 deep"),
    ] {
        let url = format!("{}/{name}", world.pages.uri());
        let reply = mcp
            .request(
                "tools/call",
                json!({"name": "web_fetch", "arguments": {"url": url}}),
            )
            .await;
        let result = &reply["result"];
        assert_eq!(result["isError"], true, "{reply}");
        assert_eq!(result["structuredContent"]["status"], "ERROR", "{reply}");
        assert!(
            result["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(reason),
            "{reply}"
        );
        let pong = mcp.request("ping", json!({})).await;
        assert!(pong["result"].is_object(), "{pong}");
    }
    // And it still reads PDFs.
    let url = format!("{}/report.pdf", world.pages.uri());
    let reply = mcp
        .request(
            "tools/call",
            json!({"name": "web_fetch", "arguments": {"url": url}}),
        )
        .await;
    assert_eq!(
        reply["result"]["structuredContent"]["status"], "SUCCESS",
        "{reply}"
    );
    assert_eq!(
        reply["result"]["structuredContent"]["title"],
        "Tardigrades in Space: A Field Report"
    );
    drop(mcp.stdin);
    let status = tokio::time::timeout(Duration::from_secs(20), mcp.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

// The sandbox in-process, with stand-in workers.

/// An executable shell script `body` in `dir`, to stand in for the worker.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn report() -> Vec<u8> {
    std::fs::read(fixtures().join("pdf/report.pdf")).unwrap()
}

/// The pids of processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            found.push(pid);
        }
    }
    found
}

#[tokio::test]
async fn a_worker_that_never_answers_is_killed_at_the_deadline_and_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("30.{}", std::process::id());
    let mut sandbox = Sandbox::new(script(
        dir.path(),
        "hang",
        &format!("exec /bin/sleep {marker}"),
    ));
    sandbox.deadline = Duration::from_secs(2);
    let started = Instant::now();
    let read = tokio::spawn(async move { sandbox.read(report()).await });
    // Find the worker while it runs ...
    let mut pids = Vec::new();
    while pids.is_empty() && started.elapsed() < Duration::from_secs(2) {
        pids = processes_with(&marker);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pids.len(), 1, "the worker was seen running");
    let result = read.await.unwrap();
    let took = started.elapsed();
    assert_eq!(result, Err(PdfError::Deadline(Duration::from_secs(2))));
    assert_eq!(
        result.unwrap_err().to_string(),
        "the PDF parser was killed at the 2 s page deadline"
    );
    assert!(took < Duration::from_secs(4), "took {took:?}");
    // ... and after: gone, not even a zombie (its /proc entry is removed once reaped).
    assert!(
        !Path::new(&format!("/proc/{}", pids[0])).exists(),
        "the worker is still there"
    );
}

#[tokio::test]
async fn each_way_a_worker_ends_is_its_own_reason() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = |body: &str, name: &str| Sandbox::new(script(dir.path(), name, body));

    let crash = sandbox("kill -SEGV $$", "crash").read(report()).await;
    assert_eq!(
        crash.unwrap_err().to_string(),
        "the PDF parser crashed (signal 11: segmentation fault)"
    );

    let mut burn = sandbox("while :; do :; done", "burn");
    burn.cpu_seconds = 1;
    burn.deadline = Duration::from_secs(15);
    let started = Instant::now();
    let burnt = burn.read(report()).await;
    assert_eq!(
        burnt.unwrap_err().to_string(),
        "the PDF parser ran out of its 1 s CPU time limit"
    );
    assert!(started.elapsed() < Duration::from_secs(10));

    let chatter = sandbox("cat >/dev/null; echo hello", "chatter")
        .read(report())
        .await;
    let chatter = chatter.unwrap_err();
    assert!(matches!(
        chatter,
        PdfError::Protocol(protocol::ProtocolError::BadMagic)
    ));
    assert!(
        chatter.to_string().starts_with("the PDF parser's reply could not be read (it does not start with the worker protocol's magic bytes)"),
        "{chatter}"
    );

    let flood = sandbox("exec /bin/cat /dev/zero", "flood")
        .read(report())
        .await;
    assert!(
        matches!(
            flood,
            Err(PdfError::Protocol(protocol::ProtocolError::TooLong {
                field: "reply",
                ..
            }))
        ),
        "{flood:?}"
    );

    let exit = sandbox("echo 'something broke' >&2; exit 3", "exit")
        .read(report())
        .await;
    assert_eq!(
        exit.unwrap_err().to_string(),
        "the PDF parser crashed (exit code 3: something broke)"
    );

    // No file writes and no core files: a worker writing a file is stopped.
    let writer = sandbox(
        &format!("echo data > {}/written", dir.path().display()),
        "writer",
    )
    .read(report())
    .await;
    assert!(
        writer
            .unwrap_err()
            .to_string()
            .contains("signal 25: tried to write a file"),
    );

    let missing = Sandbox::new(dir.path().join("no-such-worker"))
        .read(report())
        .await;
    let missing = missing.unwrap_err().to_string();
    assert!(
        missing.contains("no-such-worker could not be started"),
        "{missing}"
    );
    assert!(missing.ends_with("set GROUND_PDF_WORKER to the path of the ground binary"));
}

/// A one-page PDF whose content stream inflates to `inflated` bytes of spaces.
fn pdf_inflating_to(inflated: usize) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let block = vec![b' '; 1 << 20];
    let mut left = inflated;
    while left > 0 {
        let n = left.min(block.len());
        encoder.write_all(&block[..n]).unwrap();
        left -= n;
    }
    let data = encoder.finish().unwrap();
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let objects: [Vec<u8>; 4] = [
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 /MediaBox [0 0 612 792] >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /Resources << >> /Contents 4 0 R >>".to_vec(),
        [
            format!(
                "<< /Length {} /Filter /FlateDecode >>\nstream\n",
                data.len()
            )
            .into_bytes(),
            data,
            b"\nendstream".to_vec(),
        ]
        .concat(),
    ];
    for (n, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", n + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(b"xref\n0 5\n0000000000 65535 f \n");
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!("trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n").as_bytes(),
    );
    out
}

#[tokio::test]
async fn the_real_worker_reads_pdfs_and_its_memory_limit_holds() {
    let sandbox = Sandbox::new(ground_bin());
    let doc = sandbox.read(report()).await.unwrap();
    assert_eq!(
        doc.title.as_deref(),
        Some("Tardigrades in Space: A Field Report")
    );
    assert_eq!((doc.pages, doc.pages_read), (2, 2));
    assert!(doc.text.contains("Kraków, Ångström, naïve café."));

    // 60 MiB of content passes the pre-scan's 64 MiB; an address space of the
    // program's own mapped size and 24 MiB more cannot hold it: the operating
    // system's limit is what stops the worker. (The limit follows the binary: a debug
    // build's code alone is over 64 MiB with every dependency in it.)
    let limit_mib = loadable_bytes(std::path::Path::new(ground_bin())).div_ceil(1 << 20) + 24;
    let mut small = Sandbox::new(ground_bin());
    small.memory_bytes = limit_mib << 20;
    let e = small.read(pdf_inflating_to(60 << 20)).await.unwrap_err();
    assert_eq!(e, PdfError::Memory(limit_mib << 20));
    assert_eq!(
        e.to_string(),
        format!("the PDF parser ran out of its {limit_mib} MiB memory limit")
    );
    // With the room the default limit leaves a release build (256 MiB less a program
    // of about 40 MiB) it is read, and has no text.
    let mut roomy = Sandbox::new(ground_bin());
    roomy.memory_bytes = (limit_mib - 24 + 216) << 20;
    let doc = roomy.read(pdf_inflating_to(60 << 20)).await.unwrap();
    assert_eq!(doc.text, "");
}

/// The bytes an ELF64 executable maps when it starts: the memory sizes of its
/// loadable segments (`PT_LOAD`), read from its program headers.
fn loadable_bytes(path: &std::path::Path) -> u64 {
    let elf = std::fs::read(path).unwrap();
    assert_eq!(&elf[..5], b"\x7fELF\x02", "a 64-bit ELF file");
    let u16_at = |at: usize| u64::from(u16::from_le_bytes([elf[at], elf[at + 1]]));
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap());
    let (table, size, count) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    (0..count)
        .map(|i| (table + i * size) as usize)
        .filter(|&header| u32_at(header) == 1)
        .map(|header| u64_at(header + 0x28))
        .sum()
}
