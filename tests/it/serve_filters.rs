//! `ground serve` and the operator's site filter (issue R5, finding 9): a request's
//! `search_domain_filter` (OpenAI face) or `excludeDomains` (Gemini face) may only
//! narrow `--site` / `--exclude-site`, never replace or widen them. The search
//! stand-in's matchers assert the `site:` terms each request's search is sent with.

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;

/// The serve tests' server (`crate::serve::Server`), started with no answer reuse
/// (each request here must search), and a JSON POST.
struct Server(crate::serve::Server);

impl Server {
    /// Starts `cmd serve --listen 127.0.0.1:0 --reuse-secs 0` and waits for its line.
    async fn start(cmd: std::process::Command) -> Server {
        Server(crate::serve::Server::start(cmd, &["--reuse-secs", "0"]).await)
    }

    /// POSTs `body` to `path` and returns the status and the JSON reply.
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let reply = crate::serve::http()
            .post(self.0.url(path))
            .json(body)
            .send()
            .await
            .unwrap();
        let status = reply.status().as_u16();
        (status, reply.json().await.unwrap())
    }

    /// Stops the server.
    async fn stop(self) {
        self.0.stop().await;
    }
}

const QUESTION: &str = "Can tardigrades survive in space?";

/// A chat completion request for the question with `filter` as its
/// `search_domain_filter`.
fn chat(filter: Value) -> Value {
    json!({"model": "ground", "messages": [{"role": "user", "content": QUESTION}],
           "search_domain_filter": filter})
}

/// Answers a search whose `q` ends with `terms` (and only such a search) with the
/// usual capture, its pages on the page server.
async fn search_sent_with(world: &World, terms: &'static str) {
    let asked = move |req: &wiremock::Request| {
        req.url
            .query_pairs()
            .any(|(k, v)| k == "q" && v.ends_with(&format!(" {terms}")))
    };
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(asked)
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(
                fixture("searxng/searxng/normal.body.json")
                    .replace(CAPTURED_PAGES_URL, &world.pages.uri()),
                "application/json",
            ),
        )
        .mount(&world.searx)
        .await;
}

/// The `q` of every search the stand-in was sent.
async fn queries(world: &World) -> Vec<String> {
    world
        .searx
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter_map(|r| {
            r.url
                .query_pairs()
                .find(|(k, _)| k == "q")
                .map(|(_, v)| v.into_owned())
        })
        .collect()
}

#[tokio::test]
async fn search_domain_filter_narrows_the_operators_filter_and_never_widens_it() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    // The request's exclusion joins the operator's; its site is within the operator's.
    search_sent_with(
        &world,
        "site:127.0.0.1 -site:pinterest.com -site:ads.example.org",
    )
    .await;
    // `[]`: the operator's filter as it is.
    search_sent_with(
        &world,
        "(site:127.0.0.1 OR site:example.org) -site:pinterest.com",
    )
    .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_SITES", "127.0.0.1,example.org")
        .env("GROUND_EXCLUDE_SITES", "pinterest.com");
    let server = Server::start(cmd).await;

    let (status, reply) = server
        .post(
            "/v1/chat/completions",
            &chat(json!(["127.0.0.1", "-ads.example.org"])),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["ground"]["search"]["sites"], json!(["127.0.0.1"]));
    assert_eq!(
        reply["ground"]["search"]["exclude_sites"],
        json!(["pinterest.com", "ads.example.org"])
    );

    let (status, reply) = server.post("/v1/chat/completions", &chat(json!([]))).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply["ground"]["search"]["sites"],
        json!(["127.0.0.1", "example.org"])
    );

    // A site outside the operator's: refused, saying why (before: searched instead
    // of the operator's sites, and its pages read).
    let before = queries(&world).await.len();
    let (status, error) = server
        .post("/v1/chat/completions", &chat(json!(["evil.com"])))
        .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["param"], "search_domain_filter", "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(
            "search_domain_filter: \"evil.com\" is not within this server's sites (127.0.0.1, example.org): a request may only narrow the server's site filter"
        ),
        "{message}"
    );
    assert_eq!(queries(&world).await.len(), before, "nothing was searched");
    // Every search kept the operator's exclusion.
    assert!(
        queries(&world)
            .await
            .iter()
            .all(|q| q.contains("-site:pinterest.com")),
        "{:?}",
        queries(&world).await
    );
    server.stop().await;
}

#[tokio::test]
async fn a_name_in_another_script_is_searched_in_its_ascii_form() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    let server = Server::start(world.ground()).await;
    // The capture's pages are all off `bücher.de`: dropped, so the run has no
    // sources; what matters is what the search was sent.
    let (status, reply) = server
        .post("/v1/chat/completions", &chat(json!(["Bücher.de"])))
        .await;
    assert_ne!(status, 400, "{reply}");
    let sent = queries(&world).await;
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|q| q.ends_with(" site:xn--bcher-kva.de")),
        "{sent:?}"
    );
    server.stop().await;
}

#[tokio::test]
async fn geminis_exclude_domains_add_to_the_operators_exclusions() {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    world.model_replies(&good_answer()).await;
    search_sent_with(
        &world,
        "site:127.0.0.1 -site:pinterest.com -site:ads.example.org",
    )
    .await;
    let mut cmd = world.ground();
    cmd.env("GROUND_SITES", "127.0.0.1")
        .env("GROUND_EXCLUDE_SITES", "pinterest.com");
    let server = Server::start(cmd).await;
    let ask = |tool: Value| json!({"contents": [{"role": "user", "parts": [{"text": QUESTION}]}], "tools": [tool]});
    let (status, reply) = server
        .post(
            "/v1beta/models/gemini-2.5-flash:generateContent",
            &ask(json!({"googleSearch": {"excludeDomains": ["ads.example.org"]}})),
        )
        .await;
    assert_eq!(status, 200, "{reply}");
    // Excluding the one site the operator keeps to leaves nothing: refused.
    let (status, error) = server
        .post(
            "/v1beta/models/gemini-2.5-flash:generateContent",
            &ask(json!({"googleSearch": {"excludeDomains": ["127.0.0.1"]}})),
        )
        .await;
    assert_eq!(status, 400, "{error}");
    assert_eq!(error["error"]["status"], "INVALID_ARGUMENT");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("every site left to search (127.0.0.1) is excluded"),
        "{error}"
    );
    server.stop().await;
}
