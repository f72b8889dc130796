//! `ground answer --docs`: local documents as sources beside the web, and `--no-web`
//! with no search request at all; quotes checked against the file as it is now.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use wiremock::matchers::any;
use wiremock::{Mock, ResponseTemplate};

use crate::common::{World, assert_matches_schema, json_stdout, run, stderr, stdout};

const NOTE: &str = "# The Quillfeather Lighthouse\n\nSome history first.\n\nThe lighthouse was first lit in 1871 by the harbour board.\n\nIts lamp burned whale oil until 1902, then kerosene.\n";

/// Writes the note and indexes its folder into the collection `default`.
async fn indexed_note(world: &World) -> PathBuf {
    let dir = world.home.path().join("notes");
    fs::create_dir_all(&dir).unwrap();
    let file = dir.join("lighthouse.md");
    fs::write(&file, NOTE).unwrap();
    let mut cmd = world.ground();
    cmd.args(["index", "add"]).arg(&dir);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    file.canonicalize().unwrap()
}

/// A model reply of statements, each citing (source, quote).
fn reply(statements: &[(&str, usize, &str)]) -> String {
    json!({
        "answerable": true,
        "statements": statements.iter().map(|(text, source, quote)| json!({
            "text": text, "citations": [{"source": source, "quote": quote}]
        })).collect::<Vec<_>>(),
        "unknowns": []
    })
    .to_string()
}

/// The search stand-in must not be asked anything.
async fn no_search_allowed(world: &World) {
    Mock::given(any())
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .named("any search request")
        .mount(&world.searx)
        .await;
}

fn source_kinds(value: &Value) -> Vec<String> {
    value["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn no_web_answers_from_the_file_without_any_search_request() {
    let world = World::new().await;
    let file = indexed_note(&world).await;
    no_search_allowed(&world).await;
    world
        .model_replies(&reply(&[(
            "The lighthouse was first lit in 1871.",
            1,
            "The lighthouse was first lit in 1871 by the harbour board",
        )]))
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs",
        "--no-web",
        "--json",
        "When was the lighthouse first lit?",
    ]);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let value = json_stdout(&out);
    // The MCP tool's declared schema holds for a file source too.
    assert_matches_schema(ground::mcp::schemas::GROUNDED_ANSWER, &value);
    let source = &value["sources"][0];
    assert_eq!(source["kind"], "file", "{value}");
    assert_eq!(source["path"], file.to_str().unwrap());
    assert_eq!(
        source["url"],
        url::Url::from_file_path(&file).unwrap().as_str()
    );
    assert_eq!(source["title"], "The Quillfeather Lighthouse");
    assert!(source["line_start"].as_u64().unwrap() >= 1);
    assert!(source["line_end"].as_u64().unwrap() >= 5, "{source}");
    assert_eq!(value["citations"][0]["verified"], true, "{value}");
    assert_eq!(value["searches"], json!([]));
    assert_eq!(value["webSearchQueries"], Value::Null);
    let chunk = &value["groundingMetadata"]["groundingChunks"][0]["retrievedContext"];
    assert_eq!(chunk["uri"], source["url"]);
    assert!(
        chunk["text"]
            .as_str()
            .unwrap()
            .contains("first lit in 1871")
    );

    // The person output names the file and its lines.
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs=default",
        "--no-web",
        "When was the lighthouse first lit?",
    ]);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("{}:", file.display())), "{text}");
    // wiremock checks `expect(0)` when the server drops.
}

#[tokio::test]
async fn no_web_without_a_collection_is_a_usage_error() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--no-web", "anything?"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("hint: add --docs"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn a_collection_named_after_a_space_is_refused_with_the_spelling_that_works() {
    let world = World::new().await;
    for face in [&["serve"][..], &["mcp"], &["batch", "questions.txt"]] {
        let mut cmd = world.ground();
        cmd.arg(face[0])
            .args(["--docs", "handbook"])
            .args(&face[1..]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{face:?}");
        assert_eq!(
            stderr(&out),
            "error: `--docs handbook`: --docs takes its collection after an equals sign\n\
             hint: write --docs=handbook\n",
            "{face:?}"
        );
    }
}

#[tokio::test]
async fn an_answer_with_a_collection_after_a_space_is_refused_not_misread() {
    let world = World::new().await;
    no_search_allowed(&world).await;
    let dir = world.home.path().join("handbook");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("vpn.md"),
        "# VPN\n\nConnect with the office profile.\n",
    )
    .unwrap();
    let mut cmd = world.ground();
    cmd.args(["index", "add", "--collection", "handbook"])
        .arg(&dir);
    assert!(run(cmd).await.status.success());
    // Without the check, "handbook" became the question's first word and the run
    // searched the collection `default`.
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs",
        "handbook",
        "how do I connect to the vpn",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: `--docs handbook`: --docs takes its collection after an equals sign\n\
         hint: write --docs=handbook\n"
    );
    // Nothing after the name: the same mistake (the question would be "handbook").
    let mut cmd = world.ground();
    cmd.args(["answer", "--docs", "handbook"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("write --docs=handbook"),
        "{}",
        stderr(&out)
    );
    // A question that only begins after a bare `--docs` is still a question: here no
    // collection is named "vpn", so this runs (and fails for want of `default`).
    let mut cmd = world.ground();
    cmd.args(["answer", "--docs", "vpn", "profile", "name", "--no-web"]);
    let out = run(cmd).await;
    assert!(!stderr(&out).contains("equals sign"), "{}", stderr(&out));
}

#[tokio::test]
async fn a_mixed_answer_carries_pages_and_files() {
    let world = World::new().await;
    indexed_note(&world).await;
    world.search_and_pages().await;
    world
        .model_replies(&reply(&[
            (
                "Dried tardigrades survived ten days in open space.",
                1,
                "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission",
            ),
            (
                "The lamp burned whale oil until 1902.",
                2,
                "Its lamp burned whale oil until 1902",
            ),
        ]))
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs",
        "--pages",
        "1",
        "--json",
        "tardigrades in space and the lighthouse lamp",
    ]);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let value = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::GROUNDED_ANSWER, &value);
    let kinds = source_kinds(&value);
    assert!(
        kinds.contains(&"page".to_string()) && kinds.contains(&"file".to_string()),
        "{kinds:?}"
    );
    let file_citation = value["citations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["source_url"].as_str().unwrap().starts_with("file://"))
        .expect("a citation of the file");
    assert_eq!(file_citation["verified"], true, "{value}");
    // No text of the note went into the web query: only the question was searched.
    let requests = world.searx.received_requests().await.unwrap();
    for request in requests.iter().filter(|r| r.url.path() == "/search") {
        let q = request
            .url
            .query_pairs()
            .find(|(k, _)| k == "q")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        assert!(!q.contains("whale") && !q.contains("harbour"), "{q}");
    }
}

#[tokio::test]
async fn quotes_are_checked_against_the_file_as_it_is_now() {
    let world = World::new().await;
    let file = indexed_note(&world).await;
    // Changed after indexing: the lamp's story is new, and the 1871 line is gone.
    fs::write(
        &file,
        "# The Quillfeather Lighthouse\n\nThe lighthouse was first lit in 1875 by the navy.\n\nIts lamp burned whale oil until 1902, then kerosene.\n",
    )
    .unwrap();
    no_search_allowed(&world).await;
    world
        .model_replies(&reply(&[
            (
                "It was first lit in 1871.",
                1,
                "The lighthouse was first lit in 1871 by the harbour board",
            ),
            (
                "It was first lit in 1875.",
                1,
                "The lighthouse was first lit in 1875 by the navy",
            ),
        ]))
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs",
        "--no-web",
        "--json",
        "When was the lighthouse first lit?",
    ]);
    let out = run(cmd).await;
    let value = json_stdout(&out);
    let verified: Vec<&Value> = value["citations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["support"] != "match")
        .map(|c| &c["verified"])
        .collect();
    assert_eq!(verified, [&json!(false), &json!(true)], "{value}");
}

/// `ground answer --docs --no-web` asking about the lighthouse note when the note
/// cannot be used: it must end with exit 4 (nothing to answer from); its output and
/// stderr.
async fn lighthouse_question_without_a_source(world: &World) -> (Output, String) {
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--docs",
        "--no-web",
        "When was the lighthouse first lit?",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    (out, err)
}

#[tokio::test]
async fn a_vanished_file_is_a_warning_not_a_source() {
    let world = World::new().await;
    let file = indexed_note(&world).await;
    fs::remove_file(Path::new(&file)).unwrap();
    no_search_allowed(&world).await;
    world.model_replies(&reply(&[("x", 1, "y")])).await;
    let (_, err) = lighthouse_question_without_a_source(&world).await;
    assert!(
        err.contains("lighthouse.md is in the index but cannot be read now"),
        "{err}"
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_file_turned_into_a_link_out_of_the_folder_is_never_read() {
    let world = World::new().await;
    let file = indexed_note(&world).await;
    // After indexing, the note becomes a link to a file outside the folder (a
    // `git pull` can do that): its words are what the question asks for.
    let secret = world.home.path().join("secret.md");
    fs::write(
        &secret,
        "# Keys\n\nThe lighthouse was first lit in 1871. SECRET-TOKEN-42\n",
    )
    .unwrap();
    fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&secret, &file).unwrap();
    no_search_allowed(&world).await;
    world.model_replies(&reply(&[LIT])).await;
    let (out, err) = lighthouse_question_without_a_source(&world).await;
    assert!(
        err.contains("lighthouse.md is in the index but cannot be read now (it is now a symbolic link leading out of the folder)"),
        "{err}"
    );
    for request in world.ollama.received_requests().await.unwrap() {
        assert!(!String::from_utf8_lossy(&request.body).contains("SECRET-TOKEN"));
    }
    assert!(!stdout(&out).contains("SECRET-TOKEN"));

    // Nor is it shown by `ground index search`.
    let mut cmd = world.ground();
    cmd.args(["index", "search", "lighthouse", "--json"]);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("SECRET-TOKEN"), "{text}");
    assert!(
        text.contains("symbolic link leading out of the folder"),
        "{text}"
    );
}

// ---- The faces for programs: MCP and serve answer from the operator's collections ----

const LIT: (&str, usize, &str) = (
    "The lighthouse was first lit in 1871.",
    1,
    "The lighthouse was first lit in 1871 by the harbour board",
);

#[tokio::test]
async fn mcp_searches_and_answers_from_the_served_collections_and_no_other() {
    use crate::mcp::{Session, structured};
    let world = World::new().await;
    let file = indexed_note(&world).await;
    no_search_allowed(&world).await;
    world.model_replies(&reply(&[LIT])).await;
    let (mut mcp, _) = Session::start(world.ground(), &["--docs"]).await;

    // document_search: `ground index search --json`'s object.
    let found = structured(
        &mcp.call(
            "document_search",
            json!({"query": "when was the lighthouse lit", "n": 3}),
        )
        .await,
    );
    assert_eq!(found["query"], "when was the lighthouse lit");
    let first = &found["results"][0];
    assert_eq!(first["collection"], "default", "{found}");
    assert_eq!(first["path"], file.to_str().unwrap());
    assert!(first["line_start"].as_u64().unwrap() >= 1);
    assert!(found["results"].as_array().unwrap().len() <= 3);

    // A collection the server was not started with is refused, naming what it serves.
    for (tool, arguments) in [
        (
            "document_search",
            json!({"query": "lighthouse", "collection": "private"}),
        ),
        (
            "grounded_answer",
            json!({"question": "When was the lighthouse first lit?", "docs": ["private"]}),
        ),
    ] {
        let refused = mcp.call(tool, arguments).await;
        assert_eq!(refused["isError"], true, "{refused}");
        let text = refused["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("the collection \"private\" is not served here"),
            "{text}"
        );
        assert!(text.contains("hint: name one of: default"), "{text}");
    }
    // no_web with the web alone asked for is a contradiction, said as such.
    let refused = mcp
        .call(
            "grounded_answer",
            json!({"question": "When?", "docs": [], "no_web": true}),
        )
        .await;
    assert_eq!(refused["isError"], true, "{refused}");

    // grounded_answer with no_web: the file is the source, found in its collection.
    let answer = structured(
        &mcp.call(
            "grounded_answer",
            json!({"question": "When was the lighthouse first lit?", "no_web": true}),
        )
        .await,
    );
    let source = &answer["sources"][0];
    assert_eq!(source["kind"], "file", "{answer}");
    assert_eq!(source["collection"], "default");
    assert_eq!(answer["citations"][0]["verified"], true, "{answer}");
    let chunk = &answer["groundingMetadata"]["groundingChunks"][0]["retrievedContext"];
    assert_eq!(
        chunk["fileSearchStore"], "fileSearchStores/default",
        "{chunk}"
    );
    let (code, stderr) = mcp.close().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("local documents: default"), "{stderr}");
}

#[tokio::test]
async fn mcp_without_collections_says_how_to_serve_some() {
    use crate::mcp::Session;
    let world = World::new().await;
    let (mut mcp, _) = Session::start(world.ground(), &[]).await;
    let refused = mcp
        .call("document_search", json!({"query": "lighthouse"}))
        .await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("this server serves no local document collection"),
        "{text}"
    );
    assert!(text.contains("--docs=NAME"), "{text}");
    mcp.close().await;
}

#[tokio::test]
async fn serve_answers_from_the_operators_collections_on_both_faces() {
    use crate::serve::{Server, http};
    let world = World::new().await;
    let file = indexed_note(&world).await;
    let uri = url::Url::from_file_path(&file).unwrap().to_string();
    no_search_allowed(&world).await;
    world.model_replies(&reply(&[LIT])).await;

    // Gemini's file search tool alone: the named collection, nothing searched on the web.
    let server = Server::start(world.ground(), &["--docs"]).await;
    let generate = server.url("/v1beta/models/gemini-2.5-flash:generateContent");
    let ask = |stores: Value| {
        json!({
            "contents": [{"role": "user", "parts": [{"text": "When was the lighthouse first lit?"}]}],
            "tools": [{"fileSearch": {"fileSearchStoreNames": stores}}]
        })
    };
    let reply = http()
        .post(&generate)
        .header("x-goog-api-key", "any")
        .json(&ask(json!(["fileSearchStores/default"])))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let body: Value = reply.json().await.unwrap();
    let metadata = &body["candidates"][0]["groundingMetadata"];
    let chunk = &metadata["groundingChunks"][0]["retrievedContext"];
    assert_eq!(chunk["uri"], uri.as_str(), "{metadata}");
    assert_eq!(chunk["title"], "The Quillfeather Lighthouse");
    assert_eq!(chunk["fileSearchStore"], "fileSearchStores/default");
    assert!(
        chunk["text"]
            .as_str()
            .unwrap()
            .contains("first lit in 1871")
    );
    assert_eq!(
        metadata["groundingSupports"][0]["groundingChunkIndices"],
        json!([0])
    );

    // A store the operator does not serve is the client's error, in Gemini's shape.
    let reply = http()
        .post(&generate)
        .header("x-goog-api-key", "any")
        .json(&ask(json!(["fileSearchStores/private"])))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 400);
    let body: Value = reply.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"fileSearchStores/private\" is not served here"),
        "{body}"
    );
    server.stop().await;

    // OpenAI's face, on a server answering from its collection alone: the file's
    // url_citation is its file:// URI.
    let server = Server::start(world.ground(), &["--docs", "--no-web"]).await;
    let reply = http()
        .post(server.url("/v1/chat/completions"))
        .json(&crate::serve::ask("When was the lighthouse first lit?"))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let body: Value = reply.json().await.unwrap();
    let annotation = &body["choices"][0]["message"]["annotations"][0];
    assert_eq!(annotation["type"], "url_citation", "{body}");
    assert_eq!(annotation["url_citation"]["url"], uri.as_str());
    assert_eq!(body["ground"]["sources"][0]["kind"], "file", "{body}");
    assert_eq!(body["ground"]["sources"][0]["path"], file.to_str().unwrap());
    server.stop().await;
}
