//! `ground answer --docs`: local documents as sources beside the web, and `--no-web`
//! with no search request at all; quotes checked against the file as it is now.

use std::fs;
use std::path::{Path, PathBuf};

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

#[tokio::test]
async fn a_vanished_file_is_a_warning_not_a_source() {
    let world = World::new().await;
    let file = indexed_note(&world).await;
    fs::remove_file(Path::new(&file)).unwrap();
    no_search_allowed(&world).await;
    world.model_replies(&reply(&[("x", 1, "y")])).await;
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
    assert!(
        err.contains("lighthouse.md is in the index but cannot be read now"),
        "{err}"
    );
}
