//! The cross-check a user sees: every statement of an answer matched against every
//! source read, not only the one it cites. Stand-in pages on two hosts (two wiremock
//! servers on loopback): one the answer cites, one that agrees on the other host, one
//! that gives another date, one that writes the same date another way, and one about
//! something else. The agreeing pages corroborate, the conflicting one contradicts,
//! the other date format and the unrelated page do neither; `--strict` counts the
//! contradicted statement as unsupported.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const QUESTION: &str = "when was the Quillfeather Lighthouse first lit";
const STATEMENT: &str = "The Quillfeather Lighthouse was first lit on 14 October 1911.";
const QUOTE: &str = "The Quillfeather Lighthouse was first lit on 14 October 1911";

/// A page of a test site: (the site, 0-2; its path; its title; its paragraphs).
pub(crate) type SitePage = (usize, &'static str, &'static str, Vec<&'static str>);

/// A plain article page: a title and paragraphs (`check.rs` serves them too).
pub(crate) fn page(title: &str, paragraphs: &[&str]) -> String {
    let body: String = paragraphs.iter().map(|p| format!("<p>{p}</p>\n")).collect();
    format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body><main><article><h1>{title}</h1>\n{body}</article></main></body></html>"
    )
}

/// Serves [`page`]`(title, paragraphs)` at `at` on `server` (`check.rs` too).
pub(crate) async fn serve_page(server: &MockServer, at: &str, title: &str, paragraphs: &[&str]) {
    Mock::given(method("GET"))
        .and(path(at))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(page(title, paragraphs), "text/html; charset=utf-8"),
        )
        .mount(server)
        .await;
}

/// The pages, in the search's order: (host 0 or 1, path, title, paragraphs).
fn pages() -> Vec<SitePage> {
    vec![
        (
            0,
            "/cited.html",
            "Quillfeather Lighthouse",
            vec![
                "The Quillfeather Lighthouse stands on the northern cape of Varnholm, facing the open sea.",
                "The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building.",
                "Its lens came from Paris and weighed about 5,000 kilograms, and the keepers lived in a cottage below the tower.",
            ],
        ),
        (
            1,
            "/agrees.html",
            "A history of the Varnholm coast",
            vec![
                "Ships had been lost on the rocks of Varnholm for a century before anyone built a light there.",
                "After four years of building, the Quillfeather Lighthouse was first lit on 14 October 1911.",
                "The harbour wall was finished two years earlier, in 1909, by the same engineer.",
            ],
        ),
    ]
    .into_iter()
    .chain(quillfeather_elsewhere())
    .collect()
}

/// Three pages about the lighthouse on other sites (site 0-1, path, title,
/// paragraphs): one that conflicts with its date, one that agrees in another date
/// format, one about another lighthouse. `check`'s tests serve them too.
pub(crate) fn quillfeather_elsewhere() -> Vec<SitePage> {
    vec![
        (
            0,
            "/conflict.html",
            "Lighthouses of the north",
            vec![
                "Many of the northern lights were built late, when the shipping lanes moved.",
                "The Quillfeather Lighthouse was first lit on 9 June 1936, long after the harbour opened.",
                "Its keepers left when the light was automated after the war.",
            ],
        ),
        (
            1,
            "/dotted.html",
            "Quillfeather Lighthouse facts",
            vec![
                "A short list of facts about the tower and its light for visitors to the cape.",
                "The Quillfeather Lighthouse was first lit on 14.10.1911 by its first keeper.",
                "The tower is painted white with a single red band below the lantern room.",
            ],
        ),
        (
            1,
            "/unrelated.html",
            "Varnholm Lighthouse",
            vec![
                "The Varnholm Lighthouse stands on the southern cape, across the bay from the town.",
                "The Varnholm Lighthouse was first lit on 2 May 1913, two years after its neighbour.",
                "It was closed to visitors after a storm damaged its gallery in the winter of 1953.",
            ],
        ),
    ]
}

/// Serves the pages on the two hosts and a SearXNG reply listing them in order.
async fn serve(world: &World, other: &MockServer) {
    let hosts = [&world.pages, other];
    let mut results = Vec::new();
    for (host, at, title, paragraphs) in pages() {
        serve_page(hosts[host], at, title, &paragraphs).await;
        results.push(json!({
            "url": format!("{}{at}", hosts[host].uri()),
            "title": title,
            "content": "A page about lighthouses.",
            "engine": "local",
            "engines": ["local"],
            "score": 1.0,
            "category": "general",
        }));
    }
    let body = json!({"query": QUESTION, "results": results, "answers": [], "corrections": [],
        "infoboxes": [], "suggestions": [], "unresponsive_engines": []});
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&world.searx)
        .await;
}

fn answer() -> String {
    json!({"answerable": true, "statements": [
        {"text": STATEMENT, "citations": [{"source": 1, "quote": QUOTE}]}
    ], "unknowns": []})
    .to_string()
}

/// The source number of the page at `at`, from `--json`'s sources.
fn number_of(v: &Value, at: &str) -> u64 {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["url"].as_str().is_some_and(|u| u.ends_with(at)))
        .and_then(|s| s["index"].as_u64())
        .unwrap_or_else(|| panic!("{at} is not a source: {v}"))
}

#[tokio::test]
async fn agreeing_pages_corroborate_and_a_conflicting_date_contradicts() {
    let world = World::new().await;
    let other = MockServer::start().await;
    serve(&world, &other).await;
    world.model_replies(&answer()).await;

    let mut cmd = world.ground();
    // Every page read (the default reads fewer, and gives the rest as snippets).
    cmd.args(["answer", "--json", "--pages", "5", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::GROUNDED_ANSWER, &v);
    let statement = &v["statements"][0];
    assert_eq!(statement["support"], "quote", "{statement}");
    // The other host's agreeing page and the same date written 14.10.1911 support it;
    // the page about another lighthouse does not.
    let (agrees, dotted) = (number_of(&v, "/agrees.html"), number_of(&v, "/dotted.html"));
    assert_eq!(
        statement["corroborated_by"],
        json!([agrees, dotted]),
        "{statement}"
    );
    assert_eq!(
        statement["contradicted_by"],
        json!([{
            "source": number_of(&v, "/conflict.html"),
            "quote": "The Quillfeather Lighthouse was first lit on 9 June 1936, long after the harbour opened.",
            "kind": "date",
            "value": "9 June 1936",
        }])
    );
    // Lenient, the answer stands; --strict counts the contradicted statement as
    // unsupported, and says why.
    assert_eq!(v["verdict"]["name"], "accepted", "{v}");

    let mut cmd = world.ground();
    cmd.args(["answer", "--strict", "--pages", "5", QUESTION]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(
        &out,
        6,
        &[
            "not fully grounded",
            "1 of 1 statements are contradicted by another source read",
        ],
        "--strict",
    );
    let person = stdout(&out);
    let conflict = number_of(&v, "/conflict.html");
    assert!(
        person.contains(&format!(
            "Checked against every source read:\n  - \"{STATEMENT}\": also [{agrees}][{dotted}]; [{conflict}] says 9 June 1936\n"
        )),
        "{person}"
    );
}

#[tokio::test]
async fn a_page_text_reaches_the_terminal_escaped_in_the_cross_check_note() {
    let world = World::new().await;
    let other = MockServer::start().await;
    // The conflicting page names the keeper with a terminal escape in the name.
    let title = "Quillfeather Lighthouse";
    let body = page(
        title,
        &[
            "The Quillfeather Lighthouse was designed by the engineer Mara Lindqvist in 1907.",
            "Ships had been lost on the rocks of Varnholm for a century before anyone built a light there.",
        ],
    );
    let evil = page(
        "Lighthouses of the north",
        &[
            "The Quillfeather Lighthouse was designed by the engineer Ottilie Brannock\u{1b}]0;owned\u{7} in 1907.",
            "Many of the northern lights were built late, when the shipping lanes moved.",
        ],
    );
    for (server, at, html) in [
        (&world.pages, "/cited.html", body),
        (&other, "/evil.html", evil),
    ] {
        Mock::given(method("GET"))
            .and(path(at))
            .respond_with(ResponseTemplate::new(200).set_body_raw(html, "text/html; charset=utf-8"))
            .mount(server)
            .await;
    }
    let results: Vec<Value> = [(&world.pages, "/cited.html"), (&other, "/evil.html")]
        .iter()
        .map(|(s, at)| json!({"url": format!("{}{at}", s.uri()), "title": title, "content": "", "engine": "local", "engines": ["local"], "score": 1.0, "category": "general"}))
        .collect();
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"query": "q", "results": results, "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []})))
        .mount(&world.searx)
        .await;
    let statement =
        "The Quillfeather Lighthouse was designed by the engineer Mara Lindqvist in 1907.";
    world
        .model_replies(
            &json!({"answerable": true, "statements": [{"text": statement, "citations": [{"source": 1, "quote": statement.trim_end_matches('.')}]}], "unknowns": []})
                .to_string(),
        )
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "who designed the Quillfeather Lighthouse"]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let person = stdout(&out);
    assert!(!person.contains('\u{1b}'), "{person:?}");
    assert!(
        person.contains("\": [2] says Ottilie Brannock\n"),
        "{person}"
    );
}
