//! `ground mcp` as an MCP client sees it: the real binary as a child process, spoken to
//! in newline-delimited JSON-RPC over its stdin/stdout (the stdio transport), against
//! wiremock stand-ins for SearXNG, the pages and Ollama.
//!
//! The client here is written by hand on purpose: it checks the wire format itself
//! (every stdout line is one JSON-RPC message, nothing else), which an SDK client
//! would hide. Every read has a time limit, so a hung server fails the test. Like the
//! official SDK clients, it reads each tool's `outputSchema` at the start and checks
//! every structured result, success or error, against it (the CI's end-to-end test
//! does the same with the TypeScript SDK's own client: e2e/mcp_sdk_client.mjs).

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, ResponseTemplate};

/// How long one reply may take (the slowest is a whole grounded_answer run).
const REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// The protocol revision this client asks for.
const PROTOCOL: &str = "2025-06-18";

/// One MCP session with a `ground mcp` child process.
pub(crate) struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Lines<BufReader<ChildStdout>>,
    stderr: tokio::task::JoinHandle<String>,
    next_id: u64,
    /// Each tool's declared `outputSchema`, compiled, from `tools/list`.
    output_schemas: HashMap<String, jsonschema::Validator>,
    /// The same schemas as declared, to explain a mismatch.
    declared: HashMap<String, Value>,
}

impl Session {
    /// Starts `ground mcp FLAGS` from the world's clean command and runs the handshake:
    /// `initialize` (whose result is returned) and `notifications/initialized`.
    pub(crate) async fn start(cmd: std::process::Command, flags: &[&str]) -> (Self, Value) {
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.arg("mcp")
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("start ground mcp");
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut stderr = child.stderr.take().unwrap();
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text).await;
            text
        });
        let mut session = Session {
            child,
            stdin,
            stdout,
            stderr,
            next_id: 1,
            output_schemas: HashMap::new(),
            declared: HashMap::new(),
        };
        let init = session
            .request(
                "initialize",
                json!({
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "ground-tests", "version": "0.0.0"}
                }),
            )
            .await;
        session
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        let tools = session.request("tools/list", json!({})).await;
        for tool in tools["tools"].as_array().expect("tools") {
            let name = tool["name"].as_str().expect("tool name").to_string();
            let schema = &tool["outputSchema"];
            assert_eq!(schema["type"], "object", "{name}: outputSchema {schema}");
            let validator = jsonschema::validator_for(schema)
                .unwrap_or_else(|e| panic!("{name}: outputSchema is not a JSON Schema: {e}"));
            session.output_schemas.insert(name.clone(), validator);
            session.declared.insert(name, schema.clone());
        }
        (session, init)
    }

    async fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        let mut line = message.to_string();
        line.push('\n');
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.flush().await.expect("flush");
    }

    /// The next message on stdout; fails the test on a timeout, on end of output or
    /// on a line that is not one JSON-RPC 2.0 object.
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(REPLY_TIMEOUT, self.stdout.next_line())
            .await
            .unwrap_or_else(|_| panic!("no reply within {REPLY_TIMEOUT:?}"))
            .expect("read stdout")
            .expect("ground mcp closed stdout");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        message
    }

    /// Sends a request and returns the whole response with the same id (the `result`
    /// or `error` member), skipping notifications the server sends in between.
    async fn request_raw(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self.read().await;
            if message["id"] == json!(id) {
                return message;
            }
            assert!(
                message.get("id").is_none(),
                "reply to another request: {message}"
            );
        }
    }

    /// A request that must succeed at the JSON-RPC level: its `result`.
    pub(crate) async fn request(&mut self, method: &str, params: Value) -> Value {
        let reply = self.request_raw(method, params).await;
        assert!(reply.get("error").is_none(), "{method} failed: {reply}");
        reply["result"].clone()
    }

    /// `tools/call`: the CallToolResult, whose structured content (on success and on
    /// error alike) must match the tool's declared `outputSchema`.
    pub(crate) async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        if let Some(validator) = self.output_schemas.get(tool)
            && let Some(content) = result.get("structuredContent")
            && !validator.is_valid(content)
        {
            panic!(
                "{tool}: structuredContent does not match its outputSchema:\n{}",
                schema_problems(&self.declared[tool], content)
            );
        }
        result
    }

    /// Closes stdin (the client goes away) and returns the exit code and stderr.
    pub(crate) async fn close(mut self) -> (Option<i32>, String) {
        drop(self.stdin.take());
        let status = tokio::time::timeout(REPLY_TIMEOUT, self.child.wait())
            .await
            .expect("ground mcp did not exit after stdin closed")
            .expect("wait");
        let stderr = self.stderr.await.unwrap();
        (status.code(), stderr)
    }
}

/// A successful tool result's object: `structuredContent`, which must equal the JSON
/// in the text content (for clients that only read text).
pub(crate) fn structured(result: &Value) -> Value {
    assert_eq!(result["isError"], json!(false), "{result}");
    let content = &result["structuredContent"];
    assert!(content.is_object(), "{result}");
    let text = result["content"][0]["text"].as_str().expect("text content");
    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), content);
    content.clone()
}

/// A tool error's text (and that it is one).
pub(crate) fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], json!(true), "{result}");
    assert_eq!(result["content"][0]["type"], "text", "{result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn a_session_lists_and_calls_every_tool() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let (mut mcp, init) = Session::start(world.ground(), &[]).await;

    assert_eq!(init["protocolVersion"], PROTOCOL);
    assert_eq!(init["serverInfo"]["name"], "ground");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("web_search")
    );

    let list = mcp.request("tools/list", json!({})).await;
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "check_claims",
            "document_search",
            "grounded_answer",
            "web_fetch",
            "web_search"
        ]
    );
    let required = |name: &str| {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        assert!(!tool["description"].as_str().unwrap().is_empty());
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        tool["inputSchema"]["required"].clone()
    };
    assert_eq!(required("web_search"), json!(["query"]));
    assert_eq!(required("web_fetch"), json!(["url"]));
    assert_eq!(required("grounded_answer"), json!(["question"]));
    assert_eq!(required("document_search"), json!(["query"]));
    let search_schema = &tools[4]["inputSchema"]["properties"];
    assert_eq!(search_schema["limit"]["minimum"], 1);
    assert_eq!(search_schema["limit"]["maximum"], 10);
    // Each tool declares the schema of its structured content: the result or the
    // error object (the files in src/mcp/schemas, as compiled in).
    // web_search's results are pages or (category "images") images.
    for (name, file, shapes) in [
        ("web_search", ground::mcp::schemas::WEB_SEARCH, 3),
        ("web_fetch", ground::mcp::schemas::WEB_FETCH, 2),
        ("grounded_answer", ground::mcp::schemas::GROUNDED_ANSWER, 2),
        ("document_search", ground::mcp::schemas::DOCUMENT_SEARCH, 2),
    ] {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        let declared = &tool["outputSchema"];
        assert_eq!(
            declared,
            &serde_json::from_str::<Value>(file).unwrap(),
            "{name}"
        );
        assert_eq!(
            declared["anyOf"].as_array().map(Vec::len),
            Some(shapes),
            "{name}"
        );
    }

    // web_search: the CLI's `search --json` object, cut to the limit.
    let found = structured(
        &mcp.call(
            "web_search",
            json!({"query": "tardigrades space", "limit": 2}),
        )
        .await,
    );
    assert_eq!(found["query"], "tardigrades space");
    assert_eq!(found["backend"], "searxng");
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0]["title"],
        "Tardigrades in space: the FOTON-M3 experiment"
    );
    assert_eq!(
        results[0]["url"],
        format!("{}/pages/tardigrades-space.html", world.pages.uri())
    );
    for key in ["snippet", "engines", "published"] {
        assert!(
            results[0].get(key).is_some(),
            "{key} missing: {}",
            results[0]
        );
    }
    // Without a limit: every result of the capture (4, under the cap of 10).
    let all = structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    assert_eq!(all["results"].as_array().unwrap().len(), 4);

    // web_fetch: one page's main text.
    let url = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS");
    assert_eq!(page["http_status"], 200);
    assert!(
        page["content_type"]
            .as_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(
        page["text"].as_str().unwrap().contains("FOTON-M3"),
        "{page}"
    );
    assert!(page["chars"].as_u64().unwrap() > 100);
    assert_eq!(page["final_url"], json!(url));

    // grounded_answer: exactly what `ground answer --json` prints for the question.
    let question = "Can tardigrades survive in space?";
    let answer = structured(
        &mcp.call("grounded_answer", json!({"question": question}))
            .await,
    );
    assert_eq!(answer["question"], question);
    assert_eq!(answer["grounded"], true, "{answer}");
    assert!(!answer["citations"].as_array().unwrap().is_empty());
    assert!(answer["groundingMetadata"]["groundingChunks"].is_array());
    let mut cli = world.ground();
    cli.args(["answer", "--json", question]);
    let cli = json_stdout(&run(cli).await);
    // The session's web_fetch above put source 1 in the server's page cache, so it
    // says `cached: true` there; the CLI run has a cache of its own.
    assert_eq!(answer["sources"][0]["cached"], true);
    let uncached = |mut v: serde_json::Value| {
        for s in v["sources"].as_array_mut().unwrap() {
            s["cached"] = json!(false);
        }
        stable_json(v)
    };
    assert_eq!(uncached(answer), uncached(cli));

    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("ground mcp: serving"), "{stderr}");
}

/// Issue 27: web_search returns SearXNG's answers, infoboxes, suggestions and
/// corrections; grounded_answer's sources say their kind.
#[tokio::test]
async fn web_search_returns_the_whole_reply_and_answers_say_each_sources_kind() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/infobox-lighthouse.body.json")
        .await;
    crate::search_extras::serve_lighthouse_pages(&world).await;
    world
        .model_replies(&crate::search_extras::steps_answer(
            4,
            "Steps: 287 Height: 41 m",
        ))
        .await;
    let (mut mcp, _) = Session::start(world.ground(), &["--allow-private-addresses"]).await;
    let found = structured(
        &mcp.call(
            "web_search",
            json!({"query": "quilfeather lighthouse steps"}),
        )
        .await,
    );
    assert_eq!(found["corrections"], json!(["quillfeather lighthouse"]));
    assert_eq!(
        found["suggestions"],
        json!([
            "quillfeather lighthouse steps characteristics",
            "quillfeather lighthouse steps history"
        ])
    );
    assert_eq!(found["infoboxes"][0]["title"], "Quillfeather Lighthouse");
    assert_eq!(
        found["answers"][0]["answer"],
        "The Quillfeather Lighthouse has 287 steps."
    );
    let answered = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "How many steps does the Quillfeather Lighthouse have?"}),
        )
        .await,
    );
    let kinds: Vec<&str> = answered["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"infobox") && kinds.contains(&"answer"),
        "{kinds:?}"
    );
    assert_eq!(
        answered["search"]["corrections"],
        json!(["quillfeather lighthouse"])
    );
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
}

#[tokio::test]
async fn failures_are_tool_errors_and_the_session_goes_on() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    let mut cmd = world.ground();
    cmd.env("GROUND_SEARXNG_URL", closed_port_url());
    let (mut mcp, _) = Session::start(cmd, &[]).await;

    // SearXNG is down: an error result naming the query, with the hint.
    let text = error_text(
        &mcp.call("web_search", json!({"query": "tardigrades in orbit"}))
            .await,
    );
    assert!(
        text.starts_with("error: cannot reach SearXNG at http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.contains("\nquery: tardigrades in orbit\n"), "{text}");
    assert!(text.contains("hint: start SearXNG"), "{text}");
    let failed = mcp
        .call("web_search", json!({"query": "tardigrades in orbit"}))
        .await;
    assert_eq!(failed["structuredContent"]["query"], "tardigrades in orbit");
    assert_eq!(
        failed["structuredContent"]["error"]["kind"],
        "search_unreachable"
    );

    // The same for a whole answer, which needs the search first.
    let text = error_text(
        &mcp.call(
            "grounded_answer",
            json!({"question": "Why is the sky blue?"}),
        )
        .await,
    );
    assert!(text.contains("cannot reach SearXNG"), "{text}");
    assert!(
        text.contains("\nquestion: Why is the sky blue?\n"),
        "{text}"
    );

    // The server is still there: a fetch that needs no search works.
    let url = format!("{}/pages/sqlite-vacuum.html", world.pages.uri());
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS");

    // A bad URL and an unusable page are tool errors too.
    let text = error_text(&mcp.call("web_fetch", json!({"url": "not a url"})).await);
    assert!(
        text.starts_with("error: \"not a url\" is not a valid URL"),
        "{text}"
    );
    assert!(
        text.contains("\nurl: not a url\nhint: give a full address"),
        "{text}"
    );
    let missing = format!("{}/pages/missing.html", world.pages.uri());
    let result = mcp.call("web_fetch", json!({"url": missing})).await;
    let text = error_text(&result);
    assert!(text.contains("(ERROR: "), "{text}");
    assert_eq!(result["structuredContent"]["status"], "ERROR");
    assert_eq!(result["structuredContent"]["http_status"], 404);

    // Arguments the schema rejects: tool errors, still naming the query.
    for limit in [json!(0), json!(11), json!("three")] {
        let text = error_text(
            &mcp.call(
                "web_search",
                json!({"query": "tardigrades", "limit": limit}),
            )
            .await,
        );
        assert!(
            text.contains("limit must be a whole number from 1 to 10"),
            "{text}"
        );
        assert!(text.contains("\nquery: tardigrades\n"), "{text}");
    }
    let text = error_text(&mcp.call("web_search", json!({"query": "  "})).await);
    assert!(text.starts_with("error: the query is empty"), "{text}");
    let text = error_text(&mcp.call("web_search", json!({"limit": 3})).await);
    assert!(text.contains("query"), "{text}");
    let text = error_text(&mcp.call("grounded_answer", json!({"question": ""})).await);
    assert!(text.starts_with("error: the question is empty"), "{text}");

    // An unknown tool is a JSON-RPC error (invalid params), not a crash.
    let reply = mcp
        .request_raw(
            "tools/call",
            json!({"name": "web_browse", "arguments": {"url": url}}),
        )
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");

    // And after all that, the session still serves.
    let list = mcp.request("tools/list", json!({})).await;
    assert_eq!(list["tools"].as_array().unwrap().len(), 5);
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS");

    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("ground mcp: web_search failed (query \"tardigrades in orbit\")"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_model_that_is_down_is_a_tool_error() {
    let world = World::new().await;
    world.search_and_pages().await;
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM_URL", closed_port_url());
    let (mut mcp, _) = Session::start(cmd, &[]).await;

    let question = "Can tardigrades survive in space?";
    let result = mcp
        .call("grounded_answer", json!({"question": question}))
        .await;
    let text = error_text(&result);
    assert!(
        text.starts_with("error: cannot reach the Ollama model server at http://127.0.0.1:"),
        "{text}"
    );
    assert!(
        text.contains(&format!("\nquestion: {question}\n")),
        "{text}"
    );
    assert!(
        text.contains("hint: start Ollama with `ollama serve`"),
        "{text}"
    );
    assert_eq!(result["structuredContent"]["question"], question);
    assert_eq!(
        result["structuredContent"]["error"]["kind"],
        "model_unreachable"
    );

    // Search does not need the model.
    let found = structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    assert_eq!(found["results"].as_array().unwrap().len(), 4);
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn private_addresses_stay_blocked_unless_allowed() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES");
    let (mut mcp, _) = Session::start(cmd, &[]).await;
    let url = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    let result = mcp.call("web_fetch", json!({"url": url})).await;
    let text = error_text(&result);
    assert!(
        text.contains("(BLOCKED: 127.0.0.1 is not a public address)"),
        "{text}"
    );
    assert!(text.contains("hint: the address is not public"), "{text}");
    assert_eq!(result["structuredContent"]["status"], "BLOCKED");
    mcp.close().await;

    // The flag on the command line allows them, as for `ground fetch`.
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES");
    let (mut mcp, _) = Session::start(cmd, &["--allow-private-addresses"]).await;
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS");
    mcp.close().await;
}

#[tokio::test]
async fn a_bad_configuration_stops_before_serving() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args(["mcp"]).env("GROUND_SEARCH", "bing");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "stdout is the protocol");
    assert_eq!(
        stderr(&out),
        "error: invalid configuration: GROUND_SEARCH is \"bing\", not auto, searxng, brave, tavily, wikipedia or duckduckgo\n\
         hint: use auto (the default: your SearXNG when it answers, else Brave or Tavily when you have a key, else Wikipedia), searxng, brave or tavily (hosted, with an API key), wikipedia or duckduckgo\n"
    );
}

#[tokio::test]
async fn the_session_search_budget_is_enforced_with_a_clear_tool_error() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--session-searches", "2"]).await;

    // One search, then a grounded answer (one query): the budget of 2 is used up.
    structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    let answer = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "do tardigrades survive in space"}),
        )
        .await,
    );
    assert_eq!(answer["grounded"], true);

    let result = mcp
        .call("web_search", json!({"query": "tardigrades"}))
        .await;
    let text = error_text(&result);
    assert!(
        text.starts_with(
            "error: this session's search budget is spent: 0 of 2 searches left, 1 needed"
        ),
        "{text}"
    );
    assert!(text.contains("\nquery: tardigrades\n"), "{text}");
    assert!(
        text.contains("hint: start a new MCP session, or raise the budget with --session-searches"),
        "{text}"
    );
    assert_eq!(
        result["structuredContent"]["error"]["kind"],
        "search_budget_spent"
    );
    let result = mcp
        .call("grounded_answer", json!({"question": "again?"}))
        .await;
    assert!(error_text(&result).contains("search budget is spent"));
    // Fetching needs no search and still works.
    let page = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    assert_eq!(
        structured(&mcp.call("web_fetch", json!({"url": page})).await)["status"],
        "SUCCESS"
    );
    // Exactly the two budgeted searches reached SearXNG.
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 2);
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn no_mcp_client_on_stdin_is_a_usage_error_with_a_hint() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.arg("mcp");
    let out = run(cmd).await; // stdin is /dev/null: closed before `initialize`
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "", "stdout carries only the protocol");
    let err = stderr(&out);
    assert!(
        err.contains("\nerror: the MCP session over stdio failed: "),
        "{err}"
    );
    assert!(!err.contains("invalid configuration"), "{err}");
    assert!(err.ends_with("hint: run `ground mcp` from an MCP client (it speaks JSON-RPC on stdin/stdout), not from a terminal\n"), "{err}");
}

#[tokio::test]
async fn grounded_answer_keeps_the_run_timeout() {
    let world = World::new().await;
    world.search_and_pages().await;
    // A model that takes 60 s; the configured run timeout is 2 s.
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .and(wiremock::matchers::path("/api/chat"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_json(ollama_reply(&good_answer(), "stop"))
                .set_delay(std::time::Duration::from_secs(60)),
        )
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.env(
        "GROUND_CONFIG",
        world.config_file("[run]\ntimeout_secs = 2\n"),
    );
    let (mut mcp, _) = Session::start(cmd, &[]).await;
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        mcp.call(
            "grounded_answer",
            json!({"question": "Can tardigrades survive in space?"}),
        ),
    )
    .await
    .expect("grounded_answer must stop at the run timeout");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(result["structuredContent"]["error"]["kind"], "deadline");
    assert!(
        error_text(&result).contains("did not finish within 2 s"),
        "{}",
        error_text(&result)
    );
    // The session goes on.
    let found = structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    assert_eq!(found["results"].as_array().unwrap().len(), 4);
}

#[tokio::test]
async fn web_fetch_reads_a_pdf() {
    let world = World::new().await;
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    Mock::given(method("GET"))
        .and(path("/report.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            std::fs::read(fixtures().join("pdf/report.pdf")).unwrap(),
            "application/pdf",
        ))
        .mount(&world.pages)
        .await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let url = format!("{}/report.pdf", world.pages.uri());
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS", "{page}");
    assert_eq!(page["title"], "Tardigrades in Space: A Field Report");
    let text = page["text"].as_str().unwrap();
    assert!(
        text.contains("FOTON-M3 mission") && text.contains("Kraków, Ångström"),
        "{text}"
    );
    mcp.close().await;
}

#[tokio::test]
async fn over_the_search_rate_limit_web_search_waits_and_past_its_deadline_says_when_to_retry() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    // Within the deadline: the third search waits for its slot (the minute is 1.5 s
    // here) and gets through.
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "2")
        .env("GROUND_TEST_RATE_WINDOW_MS", "1500")
        .env("GROUND_STATE_DIR", world.home.path().join("state-paced"));
    let (mut mcp, _) = Session::start(cmd, &[]).await;
    let started = std::time::Instant::now();
    for _ in 0..3 {
        structured(
            &mcp.call("web_search", json!({"query": "tardigrades"}))
                .await,
        );
    }
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 3);
    let (code, log) = mcp.close().await;
    assert_eq!(code, Some(0));
    assert!(
        log.contains("ground mcp: waiting ")
            && log.contains(" s for the search rate limit (2 per 1500 ms)"),
        "{log}"
    );

    // Past the deadline ([run] timeout_secs = 3, the slot a minute away): a tool error
    // naming the limit, and nothing sent.
    let config = world.config_file("[run]\ntimeout_secs = 3\n");
    let mut cmd = world.ground();
    cmd.env("GROUND_MAX_PER_MINUTE", "2")
        .env("GROUND_STATE_DIR", world.home.path().join("state-deadline"))
        .env("GROUND_CONFIG", &config);
    let (mut mcp, _) = Session::start(cmd, &[]).await;
    for _ in 0..2 {
        structured(
            &mcp.call("web_search", json!({"query": "tardigrades"}))
                .await,
        );
    }
    let result = mcp
        .call("web_search", json!({"query": "tardigrades"}))
        .await;
    let text = error_text(&result);
    assert!(
        text.starts_with(
            "error: the search rate limit (2 a minute) is reached and its next free slot, in "
        ),
        "{text}"
    );
    assert!(
        text.contains("hint: give the run a longer --timeout"),
        "{text}"
    );
    assert_eq!(
        result["structuredContent"]["error"]["kind"],
        "search_rate_limit_local"
    );
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 5);
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn with_auto_and_no_searxng_web_search_names_the_service_that_answered() {
    let world = World::new().await;
    let wikipedia = wiremock::MockServer::start().await;
    {
        use wiremock::matchers::{method, path};
        use wiremock::{Mock, ResponseTemplate};
        Mock::given(method("GET"))
            .and(path("/en/w/api.php"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture("wikipedia/search-tardigrade.json"),
                "application/json",
            ))
            .mount(&wikipedia)
            .await;
    }
    let down = closed_port_url();
    let mut cmd = world.ground_auto();
    cmd.env("GROUND_SEARXNG_URL", &down).env(
        "GROUND_WIKIPEDIA_URL",
        format!("{}/{{lang}}", wikipedia.uri()),
    );
    let (mut mcp, _) = Session::start(cmd, &[]).await;
    let first = structured(
        &mcp.call("web_search", json!({"query": "tardigrades", "limit": 2}))
            .await,
    );
    assert_eq!(first["backend"], "wikipedia");
    assert_eq!(first["results"].as_array().unwrap().len(), 2);
    assert_eq!(
        first["warnings"],
        json!([format!(
            "no SearXNG at {down}: searching Wikipedia only; see README to set up SearXNG or add a Brave key"
        )])
    );
    // Told once in the session.
    let second = structured(
        &mcp.call("web_search", json!({"query": "water bears"}))
            .await,
    );
    assert_eq!(second["backend"], "wikipedia");
    assert!(second.get("warnings").is_none(), "{second}");
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

/// A loopback site whose robots.txt disallows `/private/` for `ground`, with a page
/// under `/private/` and one under `/public/`.
async fn robots_site() -> wiremock::MockServer {
    use wiremock::matchers::{method, path};
    use wiremock::{Mock, ResponseTemplate};
    let server = wiremock::MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw("User-agent: ground\nDisallow: /private/\n", "text/plain"),
        )
        .mount(&server)
        .await;
    for page in ["private", "public"] {
        Mock::given(method("GET"))
            .and(path(format!("/{page}/page.html")))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                fixture("pages/tardigrades-space.html"),
                "text/html; charset=utf-8",
            ))
            .mount(&server)
            .await;
    }
    server
}

async fn paths(server: &wiremock::MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

#[tokio::test]
async fn web_fetch_obeys_robots_txt_and_never_requests_a_disallowed_page() {
    let world = World::new().await;
    let site = robots_site().await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let private = format!("{}/private/page.html", site.uri());
    let result = mcp.call("web_fetch", json!({"url": private})).await;
    let text = error_text(&result);
    assert!(
        text.contains("robots.txt of ")
            && text.contains("disallows this page for the `ground` user agent"),
        "{text}"
    );
    assert_eq!(result["structuredContent"]["status"], "BLOCKED");
    // Allowed pages are fetched; robots.txt was read once for the host.
    let public = format!("{}/public/page.html", site.uri());
    assert_eq!(
        structured(&mcp.call("web_fetch", json!({"url": public})).await)["status"],
        "SUCCESS"
    );
    assert_eq!(paths(&site).await, ["/robots.txt", "/public/page.html"]);
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));

    // --ignore-robots: the server's operator chose to fetch regardless.
    let (mut mcp, _) = Session::start(world.ground(), &["--ignore-robots"]).await;
    assert_eq!(
        structured(&mcp.call("web_fetch", json!({"url": private})).await)["status"],
        "SUCCESS"
    );
    assert_eq!(
        paths(&site).await,
        ["/robots.txt", "/public/page.html", "/private/page.html"]
    );
    mcp.close().await;
}

#[tokio::test]
async fn a_repeated_question_reuses_the_sessions_evidence_without_searching() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--session-searches", "1"]).await;
    let first = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "Do tardigrades survive in space?"}),
        )
        .await,
    );
    assert_eq!(first["grounded"], true, "{first}");
    assert!(first.get("reused").is_none(), "a fresh run is not marked");
    // The same question, written differently: the budget of 1 is spent, yet it is
    // answered from the first run's evidence.
    let again = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "do tardigrades  survive in space"}),
        )
        .await,
    );
    assert_eq!(
        again["reused"]["question"],
        "Do tardigrades survive in space?"
    );
    assert_eq!(again["reused"]["ttl_secs"], 600);
    assert!(again["reused"]["age_secs"].is_u64());
    assert_eq!(again["sources"], first["sources"]);
    assert_eq!(again["citations"], first["citations"]);
    assert_eq!(
        world.searx.received_requests().await.unwrap().len(),
        1,
        "no second search"
    );
    assert_eq!(
        world.ollama.received_requests().await.unwrap().len(),
        1,
        "no second model call"
    );
    // Another question is a new run (and here the budget says no).
    let other = mcp
        .call(
            "grounded_answer",
            json!({"question": "do tardigrades live on the moon"}),
        )
        .await;
    assert!(error_text(&other).contains("search budget is spent"));
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn reuse_can_be_turned_off() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--reuse-secs", "0", "--no-cache"]).await;
    for _ in 0..2 {
        let answer = structured(
            &mcp.call(
                "grounded_answer",
                json!({"question": "do tardigrades survive in space"}),
            )
            .await,
        );
        assert!(answer.get("reused").is_none());
    }
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 2);
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn grounded_answer_skips_pages_robots_txt_disallows() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    // The pages server disallows one of the fixture pages for ground.
    {
        use wiremock::matchers::{method, path};
        use wiremock::{Mock, ResponseTemplate};
        Mock::given(method("GET"))
            .and(path("/robots.txt"))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                "User-agent: *\nDisallow: /pages/tardigrades-space.html\n",
                "text/plain",
            ))
            .mount(&world.pages)
            .await;
    }
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let result = mcp
        .call(
            "grounded_answer",
            json!({"question": "do tardigrades survive in space"}),
        )
        .await;
    assert!(result.to_string().contains("BLOCKED"), "{result}");
    let asked = paths(&world.pages).await;
    assert!(
        !asked.iter().any(|p| p == "/pages/tardigrades-space.html"),
        "{asked:?}"
    );
    assert_eq!(
        asked.iter().filter(|p| *p == "/robots.txt").count(),
        1,
        "{asked:?}"
    );
    mcp.close().await;
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

    // Over the 4 MiB line limit: refused, with the request's own id so the client's
    // wait for it ends.
    let mut huge = br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"grounded_answer","arguments":{"question":""#.to_vec();
    huge.extend(vec![b'x'; 5 * 1024 * 1024]);
    huge.extend_from_slice(b"\"}}}\n");
    stdin.write_all(&huge).await.unwrap();
    let oversized = next().await;
    assert_eq!(oversized["error"]["code"], -32600, "{oversized}");
    assert_eq!(oversized["id"], 77, "{oversized}");

    // A conversation of 40 turns of 8,000 CJK characters a question and an answer
    // (1.9 MB as UTF-8; 3.8 MB escaped as `\uXXXX`, as Python's json writes it) is
    // read whole and answered with its id (a tool error here: the question is empty).
    let turn = json!({"question": "問".repeat(8000), "answer": "答".repeat(8000)});
    let conversation: Vec<_> = std::iter::repeat_n(turn, 40).collect();
    let call = json!({"jsonrpc": "2.0", "id": 78, "method": "tools/call", "params": {
        "name": "grounded_answer",
        "arguments": {"question": " ", "conversation": conversation}}});
    let mut line = ascii_json(&call).into_bytes();
    assert!(line.len() > 3_800_000, "{} bytes", line.len());
    line.push(b'\n');
    stdin.write_all(&line).await.unwrap();
    let answered = next().await;
    assert_eq!(answered["id"], 78, "{answered}");
    assert_eq!(answered["result"]["isError"], true, "{answered}");

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

#[tokio::test]
async fn different_questions_never_share_a_reused_answer() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--no-cache"]).await;
    // Pairs the old key (words only) took for one question: a symbol, a minus sign.
    let questions = [
        "Is C++ memory safe?",
        "Is C# memory safe?",
        "Is C memory-safe",
        "is 40 °C colder than -40 °C?",
        "is -40 °C colder than 40 °C?",
    ];
    for question in questions {
        let answer = structured(
            &mcp.call("grounded_answer", json!({"question": question}))
                .await,
        );
        assert!(
            answer.get("reused").is_none(),
            "{question:?} got another question's answer: {}",
            answer["reused"]
        );
    }
    // A question of symbols only has nothing to key it by: asked twice, it runs twice.
    for _ in 0..2 {
        let result = mcp.call("grounded_answer", json!({"question": "?!"})).await;
        assert!(
            result["structuredContent"].get("reused").is_none(),
            "{result}"
        );
    }
    assert_eq!(
        world.searx.received_requests().await.unwrap().len(),
        questions.len() + 2,
        "every question searched"
    );
    // The same question again is still reused.
    let again = structured(
        &mcp.call("grounded_answer", json!({"question": "is C# memory safe"}))
            .await,
    );
    assert_eq!(again["reused"]["question"], "Is C# memory safe?");
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn a_session_budget_smaller_than_the_queries_runs_the_searches_it_may() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains("You turn a question into web search queries"))
        .respond_with(ResponseTemplate::new(200).set_body_json(ollama_reply(
            &json!({"queries": ["tardigrades space", "FOTON-M3 tardigrades", "water bears vacuum"]})
                .to_string(),
            "stop",
        )))
        .mount(&world.ollama)
        .await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(
            "You answer a question using only the numbered sources",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&good_answer(), "stop")),
        )
        .mount(&world.ollama)
        .await;
    let (mut mcp, _) = Session::start(
        world.ground(),
        &["--session-searches", "2", "--queries", "3", "--no-cache"],
    )
    .await;
    let answer = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "do tardigrades survive in space"}),
        )
        .await,
    );
    assert_eq!(answer["grounded"], true, "{answer}");
    assert_eq!(
        answer["groundingMetadata"]["webSearchQueries"],
        json!(["tardigrades space", "FOTON-M3 tardigrades"]),
        "the two searches left ran"
    );
    assert_eq!(world.searx.received_requests().await.unwrap().len(), 2);
    // Now the budget is spent: the next call is refused, naming it.
    let result = mcp
        .call("grounded_answer", json!({"question": "and on the moon?"}))
        .await;
    assert!(
        error_text(&result).starts_with(
            "error: this session's search budget is spent: 0 of 2 searches left, 3 needed"
        ),
        "{}",
        error_text(&result)
    );
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn a_follow_up_with_its_conversation_is_answered_from_the_pages_read() {
    let world = World::new().await;
    world.search_and_pages().await;
    let standalone = "how long were dried tardigrades exposed to open space";
    let rewrite =
        json!({"question": standalone, "must_have_evidence": ["ten days", "FOTON-M3 mission"]});
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(body_string_contains(
            "You rewrite the last question of a conversation",
        ))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(ollama_reply(&rewrite.to_string(), "stop")),
        )
        .expect(1)
        .mount(&world.ollama)
        .await;
    world.model_replies(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let question = "Do tardigrades survive in space?";
    let first = structured(
        &mcp.call("grounded_answer", json!({"question": question}))
            .await,
    );
    assert_eq!(first["grounded"], true, "{first}");
    assert!(first.get("conversation").is_none());
    let conversation = json!([{"question": question, "answer": first["answer"]}]);
    let follow_up = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "and how long were they out there?", "conversation": conversation}),
        )
        .await,
    );
    assert_eq!(
        follow_up["conversation"],
        // The three pages and the snippet the first answer numbered [4]: a follow-up
        // that searched would number its new pages from 5.
        json!({"standalone_question": standalone, "reused_sources": 4, "searched": false}),
        "{follow_up}"
    );
    assert_eq!(follow_up["searches"], json!([]));
    let pages = |v: &Value| {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["index"].is_u64() && s["kind"] == "page")
            .map(|s| (s["index"].clone(), s["url"].clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(pages(&follow_up), pages(&first), "the same numbers");
    // The snippet [4] keeps its number but is not passed off as a page read.
    assert_eq!(pages(&follow_up).len(), 3, "{follow_up}");
    assert_eq!(
        world.searx.received_requests().await.unwrap().len(),
        1,
        "no second search"
    );
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

/// `value` as JSON with every non-ASCII character escaped (`\\uXXXX`), as Python's
/// `json.dumps` writes it by default.
fn ascii_json(value: &serde_json::Value) -> String {
    let mut out = String::new();
    for c in value.to_string().chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

/// R4 finding 1: with no model to be had (no Ollama, no embedded model on disk, a hub
/// that refuses the download), `ground mcp` still answers `initialize` and serves the
/// tools that need no model, touching the hub only when grounded_answer needs the
/// model; that call is a tool error with the hint, and the session goes on. Before,
/// the server downloaded the model before `initialize` and exited 5 when it could not.
#[tokio::test]
async fn with_no_model_to_be_had_the_server_still_serves_search_and_fetch() {
    let world = World::new().await;
    world.search_and_pages().await;
    let hub = wiremock::MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&hub)
        .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM", "auto")
        .env("GROUND_LLM_URL", closed_port_url())
        .env("GROUND_MODEL_HUB", hub.uri());
    let (mut mcp, init) = Session::start(cmd, &[]).await;
    assert_eq!(init["serverInfo"]["name"], "ground");

    let found = structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    assert_eq!(found["results"].as_array().unwrap().len(), 4);
    let url = format!("{}/pages/tardigrades-space.html", world.pages.uri());
    let page = structured(&mcp.call("web_fetch", json!({"url": url})).await);
    assert_eq!(page["status"], "SUCCESS");
    assert!(
        hub.received_requests().await.unwrap().is_empty(),
        "the hub was asked for the model before any call needed it"
    );

    let result = mcp
        .call(
            "grounded_answer",
            json!({"question": "Can tardigrades survive in space?"}),
        )
        .await;
    let text = error_text(&result);
    assert!(text.contains("\nhint: "), "{text}");
    assert!(!hub.received_requests().await.unwrap().is_empty());
    // The session goes on.
    let again = structured(
        &mcp.call("web_search", json!({"query": "tardigrades"}))
            .await,
    );
    assert_eq!(again["query"], "tardigrades");

    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("if Ollama has it, else the embedded qwen3-1.7b"),
        "{stderr}"
    );
}

/// R4 finding 1: the start-up line names the model actually used: with
/// `--model-file` the file, not the catalogue default at Ollama's address.
#[tokio::test]
async fn the_start_up_line_names_the_model_file_in_use() {
    let world = World::new().await;
    let file = world.home.path().join("my-model.gguf");
    std::fs::write(&file, b"GGUF").unwrap();
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM", "auto");
    let model_file = file.display().to_string();
    let (mcp, _) = Session::start(cmd, &["--model-file", &model_file]).await;
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("model: the embedded model my-model.gguf,"),
        "{stderr}"
    );
}

/// R4 finding 3: a client's `notifications/cancelled` stops the grounded_answer it
/// names (rmcp only cancels the request's token; the tool selects on it and drops the
/// run, which aborts its task), and the session goes on.
#[tokio::test]
async fn a_cancelled_grounded_answer_stops_its_run() {
    let world = World::new().await;
    world.search_and_pages().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(ResponseTemplate::new(200).set_delay(Duration::from_secs(60)))
        .mount(&world.ollama)
        .await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    mcp.send(json!({"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": {
        "name": "grounded_answer", "arguments": {"question": "Can tardigrades survive in space?"}}}))
        .await;
    for _ in 0..200 {
        if !world.ollama.received_requests().await.unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!world.ollama.received_requests().await.unwrap().is_empty());
    mcp.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 100, "reason": "the user gave up"}}),
    )
    .await;
    let pong = mcp.request("ping", json!({})).await;
    assert!(pong.is_object());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("the call was cancelled by the client"),
        "the run went on after the cancel: {stderr}"
    );
}

#[tokio::test]
async fn web_search_and_grounded_answer_take_sites_and_say_what_they_dropped() {
    let world = World::new().await;
    // One page of the capture is on `localhost`: off-site for `127.0.0.1`.
    let port = world.pages.address().port();
    let body = fixture("searxng/searxng/normal.body.json")
        .replace(
            &format!("{CAPTURED_PAGES_URL}/pages/tardigrades-overview.html"),
            &format!("http://localhost:{port}/pages/tardigrades-overview.html"),
        )
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    let filtered = |req: &wiremock::Request| {
        req.url
            .query_pairs()
            .any(|(k, v)| k == "q" && v.ends_with(" site:127.0.0.1 -site:example.com"))
    };
    wiremock::Mock::given(wiremock::matchers::path("/search"))
        .and(filtered)
        .respond_with(wiremock::ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&world.searx)
        .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--allow-private-addresses"]).await;
    let sites = json!({"sites": ["127.0.0.1"], "exclude_sites": ["example.com"]});
    let mut arguments = sites.clone();
    arguments["query"] = json!("tardigrades");
    let found = structured(&mcp.call("web_search", arguments).await);
    assert_eq!(
        found["search"],
        json!({"sites": ["127.0.0.1"], "exclude_sites": ["example.com"], "dropped": 1})
    );
    assert!(
        !found["results"].to_string().contains("localhost"),
        "{found}"
    );
    let mut arguments = sites;
    arguments["question"] = json!("Can tardigrades survive in space?");
    let answered = structured(&mcp.call("grounded_answer", arguments).await);
    assert_eq!(answered["search"]["sites"], json!(["127.0.0.1"]));
    assert!(answered["search"]["dropped"].as_u64().unwrap() >= 1);
    assert!(!answered["sources"].to_string().contains("localhost"));
    let failed = mcp
        .call(
            "web_search",
            json!({"query": "tardigrades", "sites": ["not a domain"]}),
        )
        .await;
    assert_eq!(failed["isError"], true);
    assert_eq!(
        failed["structuredContent"]["error"]["kind"],
        "invalid_arguments"
    );
    assert!(
        error_text(&failed).contains("\"not a domain\" is not a domain"),
        "{failed}"
    );
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
}

/// P2: with the embedded model, a `grounded_answer` whose call carries a
/// `progressToken` gets the prompt reading as `notifications/progress`, in order and
/// bounded, before its result.
#[cfg(feature = "embedded")]
#[tokio::test]
async fn the_embedded_models_prompt_reading_is_sent_as_mcp_progress() {
    let world = World::new().await;
    world.search_and_pages().await;
    let model = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/models/tiny-chatml.gguf")
        .display()
        .to_string();
    let (mut mcp, _) = Session::start(
        world.ground(),
        &["--llm", "embedded", "--model-file", &model],
    )
    .await;
    mcp.send(
        json!({"jsonrpc": "2.0", "id": 200, "method": "tools/call", "params": {
        "name": "grounded_answer",
        "arguments": {"question": "Can tardigrades survive in space?"},
        "_meta": {"progressToken": "reading-1"}}}),
    )
    .await;
    let mut progress = Vec::new();
    let result = loop {
        let message = mcp.read().await;
        if message["id"] == json!(200) {
            break message;
        }
        if message["method"] == "notifications/progress" {
            progress.push(message["params"].clone());
        }
    };
    assert!(result.get("result").is_some(), "{result}");
    // A notification may still be on its way as the result arrives.
    while let Ok(message) = tokio::time::timeout(Duration::from_millis(500), mcp.read()).await {
        if message["method"] == "notifications/progress" {
            progress.push(message["params"].clone());
        }
    }
    assert!(!progress.is_empty(), "no progress notification");
    assert!(progress.len() <= 40, "{} notifications", progress.len());
    let mut last = -1.0;
    for p in &progress {
        assert_eq!(p["progressToken"], "reading-1", "{p}");
        let (done, total) = (
            p["progress"].as_f64().unwrap(),
            p["total"].as_f64().unwrap(),
        );
        assert!(done >= last && done <= total, "{progress:?}");
        last = done;
        assert!(
            p["message"].as_str().unwrap().contains("prompt tokens"),
            "{p}"
        );
    }
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
}

/// Issue 46: `web_search` with `category: "images"` asks SearXNG's images category
/// and returns the images (checked against the declared output schema); a bad
/// category is a tool error; no image is downloaded.
#[tokio::test]
async fn web_search_finds_images_in_the_images_category() {
    let world = World::new().await;
    crate::images::searxng_images(&world).await;
    crate::images::serve_images(&world).await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let found = structured(
        &mcp.call(
            "web_search",
            json!({"query": "quillfeather lighthouse", "category": "images", "limit": 2}),
        )
        .await,
    );
    assert_eq!(found["backend"], "searxng", "{found}");
    let images = found["images"].as_array().unwrap();
    assert_eq!(images.len(), 2, "{found}");
    assert_eq!(images[0]["title"], "The Quillfeather Lighthouse at dusk");
    assert_eq!(
        (images[0]["width"].as_u64(), images[0]["height"].as_u64()),
        (Some(1920), Some(1080))
    );
    let bad = mcp
        .call(
            "web_search",
            json!({"query": "lighthouse", "category": "videos"}),
        )
        .await;
    assert_eq!(bad["isError"], true, "{bad}");
    assert!(error_text(&bad).contains("category must be"), "{bad}");
    assert_eq!(crate::images::image_requests(&world).await, 0);
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
}
