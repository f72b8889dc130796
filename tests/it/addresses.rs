//! The private-address rule on the ways around the fetcher's own check: a system proxy
//! (`HTTP_PROXY`, `http_proxy`, `ALL_PROXY`) that would fetch `localhost` for us, and
//! a private page cached by a run with `--allow-private-addresses`. Each command's own
//! check is in `fetch`, `answer` and `mcp`.

use crate::common::*;
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
