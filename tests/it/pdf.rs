//! PDF pages (issue 13): `ground fetch`, `answer` and `extract` read PDFs made like real
//! ones (fixtures/pdf, from scripts/make-pdf-fixtures.py: a subset TrueType font with a
//! ToUnicode map, compressed streams, accents, two pages; a standard-font one without
//! a title; a scan with no text; and one cut short), served by a loopback server.

use crate::common::*;
use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

fn pdf(name: &str) -> Vec<u8> {
    std::fs::read(fixtures().join("pdf").join(name)).unwrap()
}

/// Serves fixtures/pdf/NAME at `at` with `content_type`.
async fn serve_pdf(world: &World, at: &str, name: &str, content_type: &str) {
    Mock::given(method("GET"))
        .and(path(at.to_string()))
        .respond_with(ResponseTemplate::new(200).set_body_raw(pdf(name), content_type))
        .mount(&world.pages)
        .await;
}

async fn fetch_json(world: &World, at: &str) -> (Option<i32>, Value) {
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &format!("{}{at}", world.pages.uri())]);
    let out = run(cmd).await;
    (out.status.code(), json_stdout(&out))
}

#[tokio::test]
async fn fetch_reads_both_pages_of_a_pdf_with_accents_and_its_title() {
    let world = World::new().await;
    serve_pdf(&world, "/report.pdf", "report.pdf", "application/pdf").await;
    let (code, v) = fetch_json(&world, "/report.pdf").await;
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], "SUCCESS");
    assert_eq!(v["content_type"], "application/pdf");
    assert_eq!(v["title"], "Tardigrades in Space: A Field Report");
    let text = v["text"].as_str().unwrap();
    // Page one, with a sentence wrapped over two lines joined again.
    assert!(
        text.contains(
            "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission."
        ),
        "{text}"
    );
    assert!(text.contains("Die Bärtierchen überstanden die Kälte und das Vakuum; die Größe der Tiere beträgt meist weniger als einen Millimeter."), "{text}");
    // Page two.
    assert!(
        text.contains("their metabolism falls to less than 0.01 percent of normal."),
        "{text}"
    );
    assert!(
        text.contains(
            "Résumé : les tardigrades survivent à la déshydratation. Kraków, Ångström, naïve café."
        ),
        "{text}"
    );
    assert_eq!(v["chars"].as_u64().unwrap() as usize, text.chars().count());
}

#[tokio::test]
async fn a_pdf_sent_as_octet_stream_is_recognised_and_a_standard_font_reads() {
    let world = World::new().await;
    serve_pdf(&world, "/dl", "core-font.pdf", "application/octet-stream").await;
    let (code, v) = fetch_json(&world, "/dl").await;
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], "SUCCESS");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("rebuilds the database file. Café, naïve, Größe."),
        "{v}"
    );
}

#[tokio::test]
async fn a_scanned_pdf_is_empty_with_a_reason_and_a_cut_one_is_an_error() {
    let world = World::new().await;
    serve_pdf(&world, "/scan.pdf", "scanned.pdf", "application/pdf").await;
    serve_pdf(&world, "/cut.pdf", "truncated.pdf", "application/pdf").await;
    let (code, v) = fetch_json(&world, "/scan.pdf").await;
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "EMPTY");
    assert!(
        v["error"].as_str().unwrap().contains("no text layer"),
        "{v}"
    );
    let (code, v) = fetch_json(&world, "/cut.pdf").await;
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "ERROR");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("cut short or damaged"),
        "{v}"
    );
}

#[tokio::test]
async fn a_pdf_the_parser_panics_on_is_an_error_without_a_backtrace() {
    let world = World::new().await;
    serve_pdf(&world, "/bad.pdf", "malformed.pdf", "application/pdf").await;
    let mut cmd = world.ground();
    cmd.env("RUST_BACKTRACE", "1").args([
        "fetch",
        "--json",
        &format!("{}/bad.pdf", world.pages.uri()),
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "ERROR");
    assert!(v["error"].as_str().unwrap().contains("malformed"), "{v}");
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

#[tokio::test]
async fn a_pdf_bigger_than_its_cap_is_not_read() {
    let world = World::new().await;
    let mut big = pdf("report.pdf");
    big.resize(ground::pdf::MAX_PDF_BYTES + 10, b' ');
    Mock::given(method("GET"))
        .and(path("/big.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(big, "application/pdf"))
        .mount(&world.pages)
        .await;
    let (code, v) = fetch_json(&world, "/big.pdf").await;
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "UNSUPPORTED");
    assert!(
        v["error"].as_str().unwrap().contains("larger than 16 MiB"),
        "{v}"
    );
}

#[tokio::test]
async fn answer_cites_a_pdf_and_replaces_a_scan_with_the_next_result() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    // Result 1 is the two-page report, result 2 a scan, results 3 and 4 HTML.
    serve_pdf(
        &world,
        "/pages/tardigrades-space.html",
        "report.pdf",
        "application/pdf",
    )
    .await;
    serve_pdf(
        &world,
        "/pages/tardigrades-cryptobiosis.html",
        "scanned.pdf",
        "application/pdf",
    )
    .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let v = json_stdout(&out);
    let sources = v["sources"].as_array().unwrap();
    assert_eq!(sources[0]["status"], "SUCCESS", "{v}");
    assert_eq!(sources[0]["index"], 1);
    assert_eq!(sources[0]["content_type"], "application/pdf");
    assert_eq!(sources[0]["title"], "Tardigrades in Space: A Field Report");
    assert_eq!(sources[1]["status"], "EMPTY");
    assert!(
        sources[1]["error"]
            .as_str()
            .unwrap()
            .contains("no text layer")
    );
    assert_eq!(sources[1]["index"], Value::Null);
    // Statement 1's quote is on the PDF's first page: verified against the PDF.
    let first = &v["citations"][0];
    assert_eq!(first["source"], 1);
    assert_eq!(first["verified"], true, "{v}");
}

#[tokio::test]
async fn a_pdf_without_a_title_keeps_the_results_title() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    serve_pdf(
        &world,
        "/pages/tardigrades-space.html",
        "core-font.pdf",
        "application/pdf",
    )
    .await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"]);
    let out = run(cmd).await;
    let v = json_stdout(&out);
    let capture: Value =
        serde_json::from_str(&fixture("searxng/searxng/normal.body.json")).unwrap();
    assert_eq!(v["sources"][0]["status"], "SUCCESS", "{v}");
    assert_eq!(v["sources"][0]["title"], capture["results"][0]["title"]);
}

#[test]
fn extract_reads_a_pdf_file_and_fails_clearly_on_a_cut_one() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ground"))
        .arg("extract")
        .arg(fixtures().join("pdf/report.pdf"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("Tardigrades in Space: A Field Report\n\n"),
        "{text}"
    );
    assert!(text.contains("Kraków, Ångström, naïve café."), "{text}");
    // Words placed one by one, and word gaps as real-number TJ offsets: spaced by
    // their positions (lopdf's own extract_text glues these into one word).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ground"))
        .arg("extract")
        .arg(fixtures().join("pdf/positioned.pdf"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, "Words placed one by one.\n\nGaps as real offsets.\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ground"))
        .arg("extract")
        .arg(fixtures().join("pdf/truncated.pdf"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("truncated.pdf as a PDF") && err.contains("check that the file is complete"),
        "{err}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ground"))
        .arg("extract")
        .arg(fixtures().join("pdf/scanned.pdf"))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("no text layer")
    );
}
