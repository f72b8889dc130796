//! The streamed answer: every way a stream can end, against wiremock (whole bodies,
//! framed as the servers frame them) and, for pacing, a dropped connection and
//! Ctrl-C, a raw TCP stand-in on loopback that writes the reply a piece at a time.

use std::io::Read;
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::common::*;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::matchers::{body_partial_json, body_string_contains, method, path};
use wiremock::{Mock, ResponseTemplate};

/// The person output of a run whose model answered `good_answer()` in one piece.
async fn expected_output() -> String {
    let world = World::new().await;
    world.search_and_pages().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    world.scrub(&stdout(&out))
}

async fn world_with_pages() -> World {
    let world = World::new().await;
    world.search_and_pages().await;
    world
}

/// Serves `body` (raw, with `content_type`) to streamed answer requests; the first
/// `times` only when given, so a retry can get another reply.
async fn stream_replies(world: &World, body: String, content_type: &str, first_only: bool) {
    let mut mock = Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_partial_json(json!({"stream": true})))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, content_type));
    if first_only {
        mock = mock.up_to_n_times(1).with_priority(1);
    }
    mock.mount(&world.ollama).await;
}

fn answer_cmd(world: &World) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.args(["answer", "do tardigrades survive in space"]);
    cmd
}

#[tokio::test]
async fn a_streamed_reply_prints_what_a_whole_one_prints() {
    let expected = expected_output().await;
    let world = world_with_pages().await;
    stream_replies(
        &world,
        ollama_stream(&good_answer(), Some("stop"), 3),
        "application/x-ndjson",
        false,
    )
    .await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(world.scrub(&stdout(&out)), expected);
}

#[tokio::test]
async fn an_openai_compatible_stream_with_usage_is_read() {
    let world = world_with_pages().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(body_partial_json(
            json!({"stream": true, "stream_options": {"include_usage": true}}),
        ))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(sse_stream(&good_answer(), "stop", 4), "text/event-stream"),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM", "openai")
        .env("GROUND_LLM_URL", format!("{}/v1", world.ollama.uri()))
        .args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["grounded"], true, "{v}");
    assert_eq!(
        v["model"]["prompt_tokens"], 700,
        "usage came from the include_usage chunk"
    );
    assert_eq!(v["model"]["completion_tokens"], 90);
}

#[tokio::test]
async fn a_server_that_ignores_stream_and_sends_one_body_is_fine() {
    let expected = expected_output().await;
    let world = world_with_pages().await;
    // No useful Content-Type: the body is recognised by its first bytes.
    let body = serde_json::to_string_pretty(&ollama_reply(&good_answer(), "stop")).unwrap();
    stream_replies(&world, body, "text/plain", false).await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(world.scrub(&stdout(&out)), expected);
}

#[tokio::test]
async fn a_stream_cut_at_the_token_cap_is_retried_and_nothing_prints_twice() {
    let expected = expected_output().await;
    let world = world_with_pages().await;
    // First reply: the first statement complete, then cut at the cap.
    let full = good_answer();
    let cut = &full[..full.find("They survive").unwrap() + 10];
    stream_replies(
        &world,
        ollama_stream(cut, Some("length"), 5),
        "application/x-ndjson",
        true,
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("was cut off at the length limit"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            ollama_stream(&full, Some("stop"), 5),
            "application/x-ndjson",
        ))
        .expect(1)
        .with_priority(2)
        .mount(&world.ollama)
        .await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = world.scrub(&stdout(&out));
    assert_eq!(
        text, expected,
        "the statement printed from the cut reply is not printed again"
    );
    assert_eq!(text.matches("Dried tardigrades survived").count(), 1);
}

#[tokio::test]
async fn a_retry_that_changes_what_was_shown_says_so() {
    let world = world_with_pages().await;
    let full = good_answer();
    // First reply: one statement with a made-up quote, then invalid JSON.
    let first = json!({"answerable": true, "statements": [
        {"text": "Tardigrades live on the Moon.", "citations": [{"source": 1, "quote": "made up"}]}
    ]})
    .to_string();
    let broken = format!("{}, nonsense", &first[..first.len() - 1]);
    stream_replies(
        &world,
        ollama_stream(&broken, Some("stop"), 6),
        "application/x-ndjson",
        true,
    )
    .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("was not valid JSON"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            ollama_stream(&full, Some("stop"), 6),
            "application/x-ndjson",
        ))
        .expect(1)
        .with_priority(2)
        .mount(&world.ollama)
        .await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Tardigrades live on the Moon. [unsupported]\n"),
        "{text}"
    );
    assert!(
        text.contains("(The model's final answer differs from what is shown above from statement 1 on; the checked statements from there:)\nDried tardigrades survived"),
        "{text}"
    );
    assert_eq!(text.matches("Tardigrades live on the Moon").count(), 1);
}

#[tokio::test]
async fn invalid_json_twice_is_a_model_error_after_the_retry() {
    let world = world_with_pages().await;
    stream_replies(
        &world,
        ollama_stream(
            "{\"answerable\": true, \"statements\": [oops",
            Some("stop"),
            4,
        ),
        "application/x-ndjson",
        false,
    )
    .await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unusable after 2 attempts"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn an_error_line_in_a_200_stream_is_a_model_error_with_a_hint() {
    let world = world_with_pages().await;
    let full = good_answer();
    let mut body = ollama_stream(&full[..60], None, 6);
    body.push_str("{\"error\":\"llama runner process has terminated: signal: killed\"}\n");
    stream_replies(&world, body, "application/x-ndjson", false).await;
    let out = run(answer_cmd(&world)).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("failed while writing its reply: llama runner process has terminated"),
        "{err}"
    );
    assert!(err.contains("hint: the server gave up mid-answer"), "{err}");
}

#[tokio::test]
async fn a_stream_without_its_end_marker_is_a_cut_reply() {
    let world = world_with_pages().await;
    // The whole body arrives, but the "done" line never does.
    stream_replies(
        &world,
        ollama_stream(&good_answer(), None, 6),
        "application/x-ndjson",
        false,
    )
    .await;
    let mut cmd = answer_cmd(&world);
    cmd.arg("--json");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["error"]["kind"], "model_stream_cut", "{v}");
}

/// A model server on loopback that answers one request with NDJSON headers, then
/// writes `lines` as HTTP chunks one by one, `gap` apart, then either closes the
/// connection without the last chunk (`hang` false) or keeps it open.
async fn paced_model(lines: Vec<String>, gap: Duration, hang: bool) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        // Read the request head and body (its Content-Length).
        let mut seen = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let Ok(n) = socket.read(&mut buf).await else {
                return;
            };
            if n == 0 {
                return;
            }
            seen.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&seen).to_string();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if seen.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for line in lines {
            let chunk = format!("{:x}\r\n{line}\r\n", line.len());
            if socket.write_all(chunk.as_bytes()).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
            tokio::time::sleep(gap).await;
        }
        if hang {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        // Dropping the socket here cuts the chunked body short.
    });
    url
}

fn ndjson_lines(content: &str, piece: usize) -> Vec<String> {
    ollama_stream(content, None, piece)
        .lines()
        .map(|l| format!("{l}\n"))
        .collect()
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_keeps_the_statement_shown_and_says_so() {
    let world = world_with_pages().await;
    let full = good_answer();
    let upto = full.find("They survive").unwrap() + 10;
    let url = paced_model(
        ndjson_lines(&full[..upto], 20),
        Duration::from_millis(5),
        false,
    )
    .await;
    let mut cmd = answer_cmd(&world);
    cmd.env("GROUND_LLM_URL", url);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.[1]\n"
    );
    let err = stderr(&out);
    assert!(
        err.contains("the answer above was cut off after 1 statement"),
        "{err}"
    );
    assert!(
        err.contains("error: the model server's reply broke off after"),
        "{err}"
    );
    assert!(
        err.contains("hint: the connection to the model server broke mid-answer"),
        "{err}"
    );
}

#[tokio::test]
async fn ctrl_c_mid_stream_exits_130_keeping_what_was_printed() {
    let world = world_with_pages().await;
    let full = good_answer();
    let upto = full.find("They survive").unwrap() + 10;
    let url = paced_model(
        ndjson_lines(&full[..upto], 20),
        Duration::from_millis(5),
        true,
    )
    .await;
    let mut cmd = answer_cmd(&world);
    cmd.env("GROUND_LLM_URL", url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out: Output = tokio::task::spawn_blocking(move || {
        let mut child = cmd.spawn().expect("spawn ground");
        let mut stdout = child.stdout.take().unwrap();
        // Wait for the first statement: it is printed while the reply is still open.
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("[1]") {
            let n = stdout.read(&mut buf).expect("read stdout");
            assert!(n > 0, "stdout closed before the first statement");
            seen.extend_from_slice(&buf[..n]);
        }
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill -INT");
        assert!(status.success());
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        seen.extend(rest);
        let mut out = child.wait_with_output().unwrap();
        out.stdout = seen;
        out
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.[1]\n"
    );
    let err = stderr(&out);
    assert!(
        err.contains("interrupted: the answer above was cut off after 1 statement"),
        "{err}"
    );
}

#[tokio::test]
async fn a_statement_said_twice_prints_once_streamed_or_not() {
    // The model repeats its first statement citing another source: streamed output
    // shows it once with its first citation, exactly as a whole reply prints.
    let twice = json!({"answerable": true, "statements": [
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 2, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"}]}
    ], "unknowns": []})
    .to_string();
    let world = world_with_pages().await;
    stream_replies(
        &world,
        ollama_stream(&twice, Some("stop"), 4),
        "application/x-ndjson",
        false,
    )
    .await;
    let streamed = run(answer_cmd(&world)).await;
    assert_eq!(streamed.status.code(), Some(0), "{}", stderr(&streamed));
    let text = stdout(&streamed);
    assert!(!text.contains("differs"), "{text}");
    assert_eq!(
        text.matches("Dried tardigrades survived").count(),
        1,
        "{text}"
    );

    let whole = world_with_pages().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ollama_reply(&twice, "stop")))
        .mount(&whole.ollama)
        .await;
    let out = run(answer_cmd(&whole)).await;
    assert_eq!(
        whole.scrub(&stdout(&out)),
        world.scrub(&text),
        "streamed output ends up as without streaming"
    );
}
