//! robots.txt for `ground fetch` and `ground answer`: exempt by default (a person
//! typed them), obeyed with `--obey-robots` / `[fetch] robots = "always"`, against a
//! loopback site. MCP's obedience is in `mcp`.

use std::time::{Duration, Instant};

use crate::common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A loopback site: `/robots.txt` answered with `robots` (status, body), and two
/// pages, `/private/page.html` and `/public/page.html`.
async fn site(robots: Option<(u16, &[u8])>) -> MockServer {
    let server = MockServer::start().await;
    if let Some((status, body)) = robots {
        Mock::given(method("GET"))
            .and(path("/robots.txt"))
            .respond_with(ResponseTemplate::new(status).set_body_raw(body.to_vec(), "text/plain"))
            .mount(&server)
            .await;
    }
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

/// The paths the site was asked for, in order.
async fn requested(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

const DISALLOW_PRIVATE: &[u8] =
    b"User-agent: *\nDisallow: /\n\nUser-agent: ground\nDisallow: /private/\nAllow: /public/\n";

fn fetch(world: &World, url: &str, extra: &[&str]) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", url]).args(extra);
    cmd
}

#[tokio::test]
async fn ground_fetch_is_exempt_by_default_and_obeys_when_asked() {
    let world = World::new().await;
    let server = site(Some((200, DISALLOW_PRIVATE))).await;
    let private = format!("{}/private/page.html", server.uri());
    let public = format!("{}/public/page.html", server.uri());

    // A person's fetch: robots.txt is not even read.
    let out = run(fetch(&world, &private, &[])).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(requested(&server).await, ["/private/page.html"]);

    // --obey-robots: our group disallows /private/ (refused before it is requested)
    // and allows /public/ (the `*` group's Disallow: / is not ours).
    let out = run(fetch(&world, &private, &["--obey-robots"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let page = json_stdout(&out);
    assert_eq!(page["status"], "BLOCKED");
    let reason = page["error"].as_str().unwrap();
    assert_eq!(
        reason,
        format!(
            "robots.txt of {} disallows this page for the `ground` user agent",
            server.uri()
        )
    );
    let out = run(fetch(&world, &public, &["--obey-robots"])).await;
    assert_eq!(json_stdout(&out)["status"], "SUCCESS");
    assert_eq!(
        requested(&server).await,
        [
            "/private/page.html",
            "/robots.txt",
            "/robots.txt",
            "/public/page.html"
        ]
    );

    // The same from the config file.
    let config = world.config_file("[fetch]\nrobots = \"always\"\n");
    let out = run(fetch(
        &world,
        &private,
        &["--config", config.to_str().unwrap()],
    ))
    .await;
    assert_eq!(json_stdout(&out)["status"], "BLOCKED");
    let config = world.config_file("[fetch]\nrobots = \"sometimes\"\n");
    let out = run(fetch(
        &world,
        &private,
        &["--config", config.to_str().unwrap()],
    ))
    .await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test]
async fn a_star_group_applies_when_none_names_ground() {
    let world = World::new().await;
    let server = site(Some((200, b"User-agent: *\nDisallow: /private\n"))).await;
    let out = run(fetch(
        &world,
        &format!("{}/private/page.html", server.uri()),
        &["--obey-robots"],
    ))
    .await;
    assert_eq!(json_stdout(&out)["status"], "BLOCKED");
    assert_eq!(requested(&server).await, ["/robots.txt"]);
}

#[tokio::test]
async fn a_missing_or_broken_robots_txt_allows_everything() {
    let world = World::new().await;
    for robots in [
        None,                                              // 404
        Some((500, &b"User-agent: *\nDisallow: /\n"[..])), // server error
        Some((
            200,
            &b"<html><body>Disallow: / is a phrase</body></html>"[..],
        )), // not robots
        Some((200, &[0xff, 0xfe, 0, 0x80, 0x81][..])),     // binary junk
    ] {
        let server = site(robots).await;
        let out = run(fetch(
            &world,
            &format!("{}/private/page.html", server.uri()),
            &["--obey-robots"],
        ))
        .await;
        assert_eq!(json_stdout(&out)["status"], "SUCCESS", "{robots:?}");
        assert_eq!(
            requested(&server).await,
            ["/robots.txt", "/private/page.html"]
        );
    }
}

// --- findings 9 and 10: robots.txt -----------------------------------------------------

/// A loopback site with `robots` as its robots.txt and a page at every other path.
async fn robots_site(robots: Vec<u8>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/robots.txt"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(robots, "text/plain"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/p/open"))
        .respond_with(ResponseTemplate::new(302).insert_header("location", "/private/x"))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("pages/tardigrades-space.html"),
            "text/html; charset=utf-8",
        ))
        .mount(&server)
        .await;
    server
}

/// The paths (with query) the site was asked for, in order.
async fn asked_for(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .collect()
}

#[tokio::test]
async fn robots_txt_is_checked_on_redirects_and_on_percent_encoded_paths() {
    let world = World::new().await;
    let site = robots_site(b"User-agent: *\nDisallow: /private\n".to_vec()).await;
    // An allowed page that redirects into a disallowed one.
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/p/open", site.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let page = json_stdout(&out);
    assert_eq!(page["status"], "BLOCKED", "{page}");
    assert!(
        page["error"].as_str().unwrap().contains(&format!(
            "the page it redirects to, {}/private/x,",
            site.uri()
        )),
        "{page}"
    );
    // Before: /private/x was requested.
    assert_eq!(asked_for(&site).await, ["/robots.txt", "/p/open"]);

    // The same path spelled with an escape of an unreserved character.
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/%70rivate/x", site.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["status"], "BLOCKED");
    assert_eq!(asked_for(&site).await.len(), 3, "only robots.txt again");

    // Allowed redirects are still followed.
    let allowed = robots_site(b"User-agent: *\nDisallow: /nothing\n".to_vec()).await;
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots"])
        .arg(format!("{}/p/open", allowed.uri()));
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["final_url"],
        format!("{}/private/x", allowed.uri())
    );
}

#[tokio::test]
async fn a_robots_txt_of_stars_is_matched_quickly_against_a_long_query() {
    let world = World::new().await;
    let mut robots = b"User-agent: *\nDisallow: /".to_vec();
    robots.resize(512 * 1024 - 8, b'*');
    robots.extend_from_slice(b"zz$\n");
    let site = robots_site(robots).await;
    let url = format!("{}/search?q={}", site.uri(), "a".repeat(8 * 1024));
    let started = Instant::now();
    let mut cmd = world.ground();
    cmd.args(["fetch", "--json", "--obey-robots", &url]);
    let out = run_within(cmd, Duration::from_secs(60)).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json_stdout(&out)["status"], "SUCCESS");
    // Before: 9 s of matching (512 K pattern octets times 8 K path octets), on the
    // async runtime.
    assert!(took < Duration::from_secs(3), "{took:?}");
}
