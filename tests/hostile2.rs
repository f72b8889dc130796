//! Hostile input, round two (issue 14): each finding of the red-team pass as a test
//! that failed before its fix: a proxy stand-in that would fetch `localhost`, a cache
//! pre-filled with a private page, and more below.

mod common;

use common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A page on loopback with a secret on it.
async fn secret_page(world: &World) -> String {
    Mock::given(method("GET"))
        .and(path("/secret"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<html><head><title>Internal</title></head><body><p>The secret launch code is 0000 and must never leave this network.</p></body></html>",
            "text/html",
        ))
        .mount(&world.pages)
        .await;
    format!(
        "{}/secret",
        world.pages.uri().replace("127.0.0.1", "localhost")
    )
}

#[tokio::test]
async fn a_system_proxy_is_no_way_around_the_address_rule() {
    let world = World::new().await;
    let url = secret_page(&world).await;
    // The proxy stand-in answers every request with the page, as a real forward
    // proxy on this machine would after resolving `localhost` itself.
    let proxy = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            "<html><body><p>The secret launch code is 0000 and must never leave this network.</p></body></html>",
            "text/html",
        ))
        .mount(&proxy)
        .await;
    for var in ["HTTP_PROXY", "http_proxy", "ALL_PROXY"] {
        let mut cmd = world.ground();
        cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES")
            .env(var, proxy.uri())
            .args(["fetch", "--json", &url]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(4), "{var}: {}", stderr(&out));
        assert_eq!(json_stdout(&out)["status"], "BLOCKED", "{var}");
        assert!(!stdout(&out).contains("launch code"), "{var}");
    }
    assert!(proxy.received_requests().await.unwrap().is_empty());
    assert!(world.pages.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn the_page_cache_keeps_the_address_rule() {
    let world = World::new().await;
    let url = secret_page(&world).await;
    let cache = world.home.path().join("shared-cache");
    // Fetched once with the flag: stored in the cache.
    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", &cache)
        .args(["fetch", "--json", "--allow-private-addresses", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("launch code"));
    // A later run without the flag must not be served the private page from there.
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES")
        .env("XDG_CACHE_HOME", &cache)
        .args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stdout(&out));
    let json = json_stdout(&out);
    assert_eq!(json["status"], "BLOCKED");
    assert_eq!(json["cached"], false);
    assert!(!stdout(&out).contains("launch code"));
    assert_eq!(world.pages.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn json_output_escapes_c1_controls_and_bidi_marks() {
    let world = World::new().await;
    let evil = "Tardigrades \u{9b}31m\u{9c} in \u{202e}space\u{2066} \u{61c}\u{7f}";
    let reply = serde_json::json!({
        "query": "tardigrades",
        "results": [{"url": "https://example.org/t", "title": evil, "content": evil, "engine": "x", "engines": ["x"]}],
        "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []
    });
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(reply))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for raw in [
        '\u{9b}', '\u{9c}', '\u{202e}', '\u{2066}', '\u{61c}', '\u{7f}',
    ] {
        assert!(!text.contains(raw), "{raw:?} raw in {text}");
    }
    assert!(text.contains(r"\u009b31m\u009c"), "{text}");
    // Still the same JSON for a parser.
    assert_eq!(json_stdout(&out)["results"][0]["title"], evil);
}

#[tokio::test]
async fn long_inputs_are_usage_errors_that_say_so() {
    let world = World::new().await;
    let long = "why ".repeat(16_500); // 66,000 characters
    let mut cmd = world.ground();
    cmd.args(["answer", &long]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: the question is 65999 characters long, more than the 2000 allowed\nhint: "
        ),
        "{}",
        stderr(&out)
    );

    // On stdin: read by whole characters up to the limit, and said when longer.
    let mut cmd = world.ground();
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), "é".repeat(40_000)).unwrap();
    cmd.stdin(std::fs::File::open(input.path()).unwrap())
        .args(["answer", "-"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("longer than 2000 characters")
            || stderr(&out).contains("characters long"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("UTF-8"), "{}", stderr(&out));

    // A config file with no end is read up to a cap, not until memory runs out.
    let mut cmd = world.ground();
    cmd.args(["answer", "--config", "/dev/zero", "why?"]);
    let out = run_within(cmd, std::time::Duration::from_secs(20)).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("larger than 1024 KiB"),
        "{}",
        stderr(&out)
    );
    assert!(world.searx.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_reply_with_thousands_of_statements_is_cut_to_the_schema_bounds() {
    let world = World::new().await;
    let statements: Vec<serde_json::Value> = (0..8001)
        .map(|i| serde_json::json!({"text": format!("Tardigrades fact number {i} is stated here."), "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]}))
        .collect();
    let reply = serde_json::json!({"answerable": true, "statements": statements, "unknowns": []})
        .to_string();
    assert!(reply.len() > 250_000);
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    // Streamed in large pieces: this test is about the reply, not its framing.
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            ollama_stream(&reply, Some("stop"), 4096),
            "application/x-ndjson",
        ))
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--timeout",
        "5",
        "Can tardigrades survive in space?",
    ]);
    let out = run_within(cmd, std::time::Duration::from_secs(30)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json = json_stdout(&out);
    assert_eq!(json["statements"].as_array().unwrap().len(), 8);
    assert!(
        stderr(&out)
            .contains("warning: the model's reply went past the answer schema's bounds: 7993"),
        "{}",
        stderr(&out)
    );
}

const LLM_KEY: &str = "sk-proj-FAKEKEY-0123456789abcdefXYZ";
const BRAVE_KEY: &str = "BSA-brave-FAKEKEY-99887766554433";

#[tokio::test]
async fn a_key_quoted_in_a_200_reply_is_never_shown() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    let content = format!("Error: the API key {LLM_KEY} is not valid for this model.");
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1763768412, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"completion_tokens": 20, "prompt_tokens": 700, "total_tokens": 720}
        })))
        .mount(&world.ollama)
        .await;
    for json in [false, true] {
        let mut cmd = world.ground();
        cmd.env("GROUND_LLM", "openai")
            .env("GROUND_LLM_URL", format!("{}/v1", world.ollama.uri()))
            .env("GROUND_LLM_API_KEY", LLM_KEY)
            .args(["answer", "Can tardigrades survive in space?"]);
        if json {
            cmd.arg("--json");
        }
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
        let all = format!("{}{}", stdout(&out), stderr(&out));
        assert!(all.contains("reply began"), "{all}");
        assert!(!all.contains("FAKEKEY"), "{all}");
        assert!(all.contains("<redacted>"), "{all}");
    }
}

#[tokio::test]
async fn a_key_straddling_the_cut_of_an_error_message_leaks_no_prefix() {
    let world = World::new().await;
    // Brave's message puts the key right where the 200-character excerpt ends.
    let message = format!(
        "{} {BRAVE_KEY} is not a valid subscription token",
        "x".repeat(190)
    );
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(401).set_body_json(serde_json::json!({
            "type": "ErrorResponse",
            "error": {"id": "1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": message, "meta": {}}
        })))
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", &config)
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("BSA-brave"), "{all}");
    assert!(!all.contains("BSA-b"), "{all}");
}

#[tokio::test]
async fn credentials_in_configured_urls_are_never_printed() {
    let world = World::new().await;
    let closed = closed_port_url().replace("http://", "http://me:s3cretpw@");
    // Search down: the error (stderr and --json) names the server without the password.
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", &closed)
        .args(["search", "--json", "tardigrades"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("s3cretpw"), "{all}");
    assert!(all.contains("me:redacted@"), "{all}");
    // Model down: the same.
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.serve_fixture_pages().await;
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM_URL", &closed).args([
        "answer",
        "--json",
        "Can tardigrades survive in space?",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let all = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!all.contains("s3cretpw"), "{all}");
}

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

#[tokio::test]
async fn mcp_answers_malformed_and_oversized_lines_and_keeps_serving() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.arg("mcp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped());
    let mut child = tokio::process::Command::from(cmd).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = async || -> serde_json::Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), lines.next_line())
            .await
            .expect("every line gets a reply")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    };
    stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n").await.unwrap();
    assert_eq!(next().await["id"], 1);
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();

    stdin.write_all(b"this is not json\n").await.unwrap();
    let parse = next().await;
    assert_eq!(parse["error"]["code"], -32700, "{parse}");
    assert_eq!(parse["id"], serde_json::Value::Null);

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":42}\n")
        .await
        .unwrap();
    let invalid = next().await;
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    assert_eq!(invalid["id"], 42, "the reply carries the request's id");

    let mut huge = vec![b'x'; 3 * 1024 * 1024];
    huge.push(b'\n');
    stdin.write_all(&huge).await.unwrap();
    let oversized = next().await;
    assert_eq!(oversized["error"]["code"], -32600, "{oversized}");

    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    let ping = next().await;
    assert_eq!(ping["id"], 5);
    assert!(ping["result"].is_object(), "{ping}");
    drop(stdin);
    let status = tokio::time::timeout(std::time::Duration::from_secs(20), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}
