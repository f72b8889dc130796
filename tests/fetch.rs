//! `ground fetch`: one page through the same fetch limits, address policy and
//! statuses as `ground answer`.

mod common;

use common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

async fn serve(world: &World, route: &str, response: ResponseTemplate) -> String {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(response)
        .mount(&world.pages)
        .await;
    format!("{}{route}", world.pages.uri())
}

#[tokio::test]
async fn prints_title_url_and_main_text() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/pages/tardigrades-space.html",
        ResponseTemplate::new(200).set_body_raw(
            fixture("pages/tardigrades-space.html"),
            "text/html; charset=utf-8",
        ),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("Tardigrades in space: the FOTON-M3 experiment\n"),
        "{text}"
    );
    assert!(text.contains("FOTON-M3 mission"), "{text}");
    assert!(
        !text.contains("We use cookies"),
        "boilerplate must be gone: {text}"
    );
    assert!(
        !text.contains("All rights reserved"),
        "footer must be gone: {text}"
    );
}

#[tokio::test]
async fn json_has_status_and_sizes() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/p",
        ResponseTemplate::new(200).set_body_raw(
            fixture("pages/sqlite-vacuum.html"),
            "text/html; charset=utf-8",
        ),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "SUCCESS");
    assert_eq!(v["http_status"], 200);
    assert_eq!(v["content_type"], "text/html; charset=utf-8");
    assert_eq!(v["title"], "Reclaiming space in SQLite with VACUUM");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("returns free pages to the operating system")
    );
    assert_eq!(
        v["chars"].as_u64().unwrap() as usize,
        v["text"].as_str().unwrap().chars().count()
    );
}

#[tokio::test]
async fn failures_have_their_status_and_exit_4() {
    let world = World::new().await;
    let not_found = serve(
        &world,
        "/gone",
        ResponseTemplate::new(404).set_body_string("no"),
    )
    .await;
    // An unsupported type (PDFs are read since issue 13, so a ZIP stands for them).
    let zip = serve(
        &world,
        "/doc.zip",
        ResponseTemplate::new(200).set_body_raw(b"PK\x03\x04\x14\x00".to_vec(), "application/zip"),
    )
    .await;
    // A PDF that is only its header: read, and unreadable.
    let pdf = serve(
        &world,
        "/doc.pdf",
        ResponseTemplate::new(200).set_body_raw(b"%PDF-1.7\n%\xe2\xe3".to_vec(), "application/pdf"),
    )
    .await;
    let binary = serve(
        &world,
        "/bin",
        ResponseTemplate::new(200)
            .set_body_raw(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR".to_vec(), "text/html"),
    )
    .await;
    let shell = serve(
        &world,
        "/app",
        ResponseTemplate::new(200).set_body_raw("<html><head><title>App</title><script src=app.js></script></head><body><div id=root></div></body></html>", "text/html"),
    )
    .await;
    for (url, status, http) in [
        (not_found, "ERROR", Some(404)),
        (zip, "UNSUPPORTED", Some(200)),
        (pdf, "ERROR", Some(200)),
        (binary, "UNSUPPORTED", Some(200)),
        (shell, "EMPTY", Some(200)),
    ] {
        let mut cmd = world.ground();
        cmd.args(["fetch", "--json", &url]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(4), "{url}");
        let v = json_stdout(&out);
        assert_eq!(v["status"], status, "{url}: {v}");
        assert_eq!(v["http_status"].as_u64().map(|c| c as u16), http, "{url}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: cannot use ")
                && err.contains(status)
                && err.contains("\nhint: "),
            "{err}"
        );
    }
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let world = World::new().await;
    let url = serve(
        &world,
        "/p",
        ResponseTemplate::new(200).set_body_raw(fixture("pages/sqlite-vacuum.html"), "text/html"),
    )
    .await;
    let localhost = url.replace("127.0.0.1", "localhost");
    for target in [&url, &localhost] {
        let mut cmd = world.ground();
        cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES")
            .args(["fetch", "--json", target]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(4));
        assert_eq!(json_stdout(&out)["status"], "BLOCKED", "{target}");
        assert!(
            stderr(&out).contains("not a public address"),
            "{}",
            stderr(&out)
        );
        assert!(
            stderr(&out)
                .contains("hint: the address is not public; pass --allow-private-addresses"),
            "{}",
            stderr(&out)
        );
    }
    assert!(
        world.pages.received_requests().await.unwrap().is_empty(),
        "nothing may reach the private address"
    );
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES").args([
        "fetch",
        "--allow-private-addresses",
        &url,
    ]);
    assert_eq!(run(cmd).await.status.code(), Some(0));
}

#[tokio::test]
async fn redirects_are_followed_and_the_final_url_reported() {
    let world = World::new().await;
    let target = serve(
        &world,
        "/new",
        ResponseTemplate::new(200).set_body_raw(fixture("pages/sqlite-vacuum.html"), "text/html"),
    )
    .await;
    let url = serve(
        &world,
        "/old",
        ResponseTemplate::new(301).insert_header("location", "/new"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["url"], url);
    assert_eq!(v["final_url"], target);
}

#[tokio::test]
async fn body_is_capped_and_redirects_bounded() {
    let world = World::new().await;
    let big = format!(
        "<html><head><title>Big</title></head><body><article>{}</article></body></html>",
        "<p>Some text that repeats itself over and over again.</p>".repeat(60_000)
    );
    let big_url = serve(
        &world,
        "/big",
        ResponseTemplate::new(200).set_body_raw(big, "text/html"),
    )
    .await;
    let config = world.home.path().join("small.toml");
    std::fs::write(
        &config,
        "[fetch]\nmax_bytes = 100000\nmax_redirects = 2\ntimeout_secs = 5\n",
    )
    .unwrap();
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", &config)
        .args(["fetch", "--json", &big_url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["body_truncated"], true);
    assert!(v["chars_fetched"].as_u64().unwrap() <= 100_000);

    let loop_url = serve(
        &world,
        "/loop",
        ResponseTemplate::new(302).insert_header("location", "/loop"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_CONFIG", &config)
        .args(["fetch", "--json", &loop_url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4));
    let v = json_stdout(&out);
    assert_eq!(v["status"], "ERROR");
    assert!(
        v["error"]
            .as_str()
            .unwrap()
            .contains("more than 2 redirects"),
        "{v}"
    );
}

#[tokio::test]
async fn legacy_charsets_are_decoded() {
    let world = World::new().await;
    let mut body = b"<html><head><meta charset=\"windows-1252\"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e is a dessert \x96 with a caramel top.</p></body></html>".to_vec();
    body.extend_from_slice(b"");
    let url = serve(
        &world,
        "/cafe",
        ResponseTemplate::new(200).set_body_raw(body, "text/html"),
    )
    .await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", &url]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["title"], "Café");
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .contains("Crème brûlée is a dessert – with a caramel top."),
        "{v}"
    );
}

#[tokio::test]
async fn a_bad_url_is_a_usage_error() {
    let world = World::new().await;
    for bad in ["not a url", "ftp://example.org/file", "file:///etc/passwd"] {
        let mut cmd = world.ground();
        cmd.args(["fetch", "--json", bad]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert_eq!(json_stdout(&out)["url"], bad);
        assert!(
            stderr(&out).contains("hint: give a full address"),
            "{}",
            stderr(&out)
        );
    }
}
