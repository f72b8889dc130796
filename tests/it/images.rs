//! Image results (issue 46): `ground search --images` on SearXNG's images category
//! and Brave's image search, `answer --images` beside the usual search, and the rule
//! that ground never downloads an image (the stand-in serving the image addresses
//! counts no request).
//!
//! The SearXNG reply is the `images-lighthouse` fixture: not a capture (the captured
//! instance has no image engines), but SearXNG's own result shapes (see its
//! `.meta.json`), its image addresses on the page stand-in.

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{header, method, path, path_regex, query_param};
use wiremock::{Mock, ResponseTemplate};

const BRAVE_KEY: &str = "BSA-FAKE-brave-key-images";

/// SearXNG answering the images category (and only it) with the fixture, its
/// addresses on the page stand-in; and its `/config` like a real one.
pub(crate) async fn searxng_images(world: &World) {
    Mock::given(method("GET"))
        .and(path("/config"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(
            fixture("searxng/searxng/config.body.json"),
            "application/json",
        ))
        .mount(&world.searx)
        .await;
    let body = fixture("searxng/searxng/images-lighthouse.body.json")
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .and(query_param("categories", "images"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "application/json"))
        .mount(&world.searx)
        .await;
}

/// Every request the page stand-in got for an image or a thumbnail.
pub(crate) async fn image_requests(world: &World) -> usize {
    world
        .pages
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path().starts_with("/images/") || r.url.path().starts_with("/thumbs/"))
        .count()
}

/// The page stand-in serves the image addresses too, so a request would succeed
/// (and be counted).
pub(crate) async fn serve_images(world: &World) {
    Mock::given(method("GET"))
        .and(path_regex("^/(images|thumbs)/"))
        .respond_with(
            ResponseTemplate::new(200).set_body_raw(vec![0xFFu8, 0xD8, 0xFF], "image/jpeg"),
        )
        .mount(&world.pages)
        .await;
}

#[tokio::test]
async fn search_images_lists_title_page_and_image_and_fetches_none() {
    let world = World::new().await;
    searxng_images(&world).await;
    serve_images(&world).await;
    let mut cmd = world.ground();
    cmd.args(["search", "--images", "quillfeather lighthouse"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let pages = world.pages.uri();
    let expected = format!(
        " 1. The Quillfeather Lighthouse at dusk
    page:  {pages}/pages/quillfeather-lighthouse-history.html
    image: {pages}/images/quillfeather-dusk.jpg
    [1920 × 1080 · bing images]
 2. Visitors on the lantern gallery
    page:  {pages}/pages/quillfeather-lighthouse-visiting.html
    image: {pages}/images/gallery.png
    [1280 × 853 · png · duckduckgo images]
 3. File:Quillfeather Lighthouse.jpg
    page:  https://commons.wikimedia.org/wiki/File:Quillfeather_Lighthouse.jpg
    image: {pages}/images/commons-quillfeather.jpg
    [3000 × 2000 · image/jpeg · wikicommons.images]
 4. The light flashes white
    page:  {pages}/pages/quillfeather-lighthouse-light.html
    image: {pages}/images/light.webp
    [google images]
 5. Ada Marrow, first keeper
    page:  {pages}/pages/keeper.html
    image: {pages}/images/keeper.jpg
    [startpage images]
"
    );
    assert_eq!(stdout(&out), expected);
    assert_eq!(
        image_requests(&world).await,
        0,
        "ground never downloads an image"
    );
    // The request: the images category, no engines of the web search.
    let requests = world.searx.received_requests().await.unwrap();
    let search = requests.iter().find(|r| r.url.path() == "/search").unwrap();
    let pairs: Vec<(String, String)> = search.url.query_pairs().into_owned().collect();
    assert!(
        pairs.contains(&("categories".into(), "images".into())),
        "{pairs:?}"
    );
    assert!(
        pairs.contains(&("q".into(), "quillfeather lighthouse".into())),
        "{pairs:?}"
    );
}

#[tokio::test]
async fn search_images_json_has_the_documented_shape() {
    let world = World::new().await;
    searxng_images(&world).await;
    serve_images(&world).await;
    let mut cmd = world.ground();
    cmd.args([
        "search",
        "--images",
        "--json",
        "--limit",
        "3",
        "quillfeather lighthouse",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "searxng");
    assert_eq!(v["query"], "quillfeather lighthouse");
    let images = v["images"].as_array().unwrap();
    assert_eq!(images.len(), 3, "{v}");
    let pages = world.pages.uri();
    assert_eq!(
        images[0],
        json!({
            "image_url": format!("{pages}/images/quillfeather-dusk.jpg"),
            "thumbnail_url": format!("{pages}/thumbs/quillfeather-dusk.jpg"),
            "origin_url": format!("{pages}/pages/quillfeather-lighthouse-history.html"),
            "title": "The Quillfeather Lighthouse at dusk",
            "width": 1920,
            "height": 1080,
            "format": null,
            "engine": "bing images",
        })
    );
    assert_eq!(
        (images[1]["width"].as_u64(), images[1]["height"].as_u64()),
        (Some(1280), Some(853))
    );
    assert_eq!(
        (images[2]["width"].as_u64(), images[2]["height"].as_u64()),
        (Some(3000), Some(2000))
    );
    // No javascript: or data: address anywhere, and each image once.
    let text = v.to_string();
    assert!(
        !text.contains("javascript:") && !text.contains("data:image"),
        "{text}"
    );
    assert_eq!(image_requests(&world).await, 0);
}

#[tokio::test]
async fn an_instance_without_image_engines_finds_no_images() {
    // The real capture of `categories=images` on an instance with no image engine:
    // general results, each with `img_src: ""`.
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/params-category-images.body.json")
        .await;
    let mut cmd = world.ground();
    cmd.args(["search", "--images", "rust"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("error: "), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
}

#[tokio::test]
async fn services_without_an_images_search_are_told_apart() {
    let world = World::new().await;
    for service in ["wikipedia", "duckduckgo"] {
        let mut cmd = world.ground();
        cmd.env("GROUND_SEARCH", service)
            .args(["search", "--images", "lighthouse"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{service}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("error: images need SearXNG or Brave: ")
                && err.contains("\nhint: search with your SearXNG (--search searxng"),
            "{service}: {err}"
        );
        let mut cmd = world.ground();
        cmd.env("GROUND_SEARCH", service)
            .args(["search", "--images", "--json", "lighthouse"]);
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            json_stdout(&out)["error"]["kind"],
            "images_unsupported",
            "{}",
            stdout(&out)
        );
    }
    assert!(world.searx.received_requests().await.unwrap().is_empty());
}

fn brave_images_reply(images: &str) -> Value {
    json!({
        "type": "images",
        "query": {"original": "quillfeather lighthouse", "spellcheck_off": false, "show_strict_warning": false},
        "results": [
            {"type": "image_result", "title": "Quillfeather Lighthouse from the sea",
             "url": "https://photos.example.org/quillfeather", "source": "photos.example.org",
             "page_fetched": "2025-06-01T10:00:00Z",
             "thumbnail": {"src": format!("{images}/thumbs/brave-1.jpg"), "width": 500, "height": 333},
             "properties": {"url": format!("{images}/images/brave-1.jpg"),
                            "placeholder": format!("{images}/thumbs/brave-1-p.jpg"), "width": 2400, "height": 1600},
             "meta_url": {"scheme": "https", "netloc": "photos.example.org", "hostname": "photos.example.org",
                          "favicon": "https://imgs.search.brave.com/favicon", "path": "› quillfeather"},
             "confidence": "high"},
            {"type": "image_result", "title": "No size given",
             "url": "https://blog.example.net/lights",
             "thumbnail": {"src": format!("{images}/thumbs/brave-2.png")},
             "properties": {"url": format!("{images}/images/brave-2.png")},
             "confidence": "medium"},
            {"type": "image_result", "title": "Bad", "url": "https://bad.example",
             "properties": {"url": "data:image/gif;base64,R0lGODlhAQABAAAAACw="}}
        ],
        "extra": {"might_be_offensive": false}
    })
}

#[tokio::test]
async fn brave_images_use_their_endpoint_and_count_one_query() {
    let world = World::new().await;
    serve_images(&world).await;
    Mock::given(method("GET"))
        .and(path("/res/v1/images/search"))
        .and(query_param("q", "quillfeather lighthouse"))
        .and(query_param("count", "10"))
        .and(query_param("safesearch", "strict"))
        .and(header("x-subscription-token", BRAVE_KEY))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(brave_images_reply(&world.pages.uri())),
        )
        .expect(1)
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_SEARCH")
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .args([
            "search",
            "--images",
            "--json",
            "--safesearch",
            "1",
            "--config",
        ])
        .arg(&config)
        .arg("quillfeather lighthouse");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["backend"], "brave");
    let images = v["images"].as_array().unwrap();
    assert_eq!(images.len(), 2, "{v}");
    let pages = world.pages.uri();
    assert_eq!(
        images[0],
        json!({
            "image_url": format!("{pages}/images/brave-1.jpg"),
            "thumbnail_url": format!("{pages}/thumbs/brave-1.jpg"),
            "origin_url": "https://photos.example.org/quillfeather",
            "title": "Quillfeather Lighthouse from the sea",
            "width": 2400, "height": 1600, "format": "JPG", "engine": "brave",
        })
    );
    assert_eq!(
        (images[1]["width"].clone(), images[1]["height"].clone()),
        (Value::Null, Value::Null)
    );
    assert!(!stdout(&out).contains(BRAVE_KEY) && !stderr(&out).contains(BRAVE_KEY));
    assert_eq!(image_requests(&world).await, 0);
    // Counted like a web search: one query this month.
    let mut cmd = world.ground();
    cmd.env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .args(["usage", "--json", "--config"])
        .arg(&config);
    let usage = json_stdout(&run(cmd).await);
    let brave = &usage["usage"]["services"][0];
    assert_eq!(brave["service"], "brave", "{usage}");
    assert_eq!(brave["used"].as_u64(), Some(1), "{usage}");
}

#[tokio::test]
async fn a_refused_brave_key_is_a_search_failure_with_its_hint() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/images/search"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "type": "ErrorResponse",
            "error": {"id": "c1", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                      "detail": "The provided subscription token is invalid."},
            "time": 1763768412
        })))
        .mount(&world.searx)
        .await;
    let config = world.config_file(&format!(
        "[search]\nbackend = \"brave\"\nurl = \"{}\"\n",
        world.searx.uri()
    ));
    let mut cmd = world.ground();
    cmd.env_remove("GROUND_SEARCH")
        .env("GROUND_BRAVE_API_KEY", BRAVE_KEY)
        .args(["search", "--images", "--config"])
        .arg(&config)
        .arg("lighthouse");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refused the API key"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("\nhint: "), "{}", stderr(&out));
}

// --- answer --images ------------------------------------------------------------------

const QUESTION: &str = "How many steps does the Quillfeather Lighthouse have?";

/// The lighthouse world of `search_extras` (web search, pages, model), with the
/// images category answered by the fixture ahead of the web search's stand-in.
async fn lighthouse_with_images(images_status: u16) -> World {
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
    serve_images(&world).await;
    let body = fixture("searxng/searxng/images-lighthouse.body.json")
        .replace(CAPTURED_PAGES_URL, &world.pages.uri());
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("categories", "images"))
        .respond_with(ResponseTemplate::new(images_status).set_body_raw(body, "application/json"))
        .with_priority(1)
        .mount(&world.searx)
        .await;
    world
}

/// The `/search` requests SearXNG got for the images category.
async fn images_searches(world: &World) -> Vec<Vec<(String, String)>> {
    world
        .searx
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.query_pairs().into_owned().collect::<Vec<_>>())
        .filter(|pairs| pairs.contains(&("categories".into(), "images".into())))
        .collect()
}

#[tokio::test]
async fn answer_images_lists_images_beside_an_unchanged_answer() {
    let world = lighthouse_with_images(200).await;
    let mut plain = world.ground();
    plain.args(["answer", "--json", QUESTION]);
    let plain = run(plain).await;
    assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
    let plain = json_stdout(&plain);
    assert!(
        plain.get("images").is_none(),
        "no images unless asked: {plain}"
    );
    assert!(images_searches(&world).await.is_empty());

    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--images", QUESTION]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    // The answer and its citations are the same with images.
    for key in ["answer", "statements", "citations", "grounded"] {
        assert_eq!(v[key], plain[key], "{key} changed");
    }
    let read = |v: &Value| -> Vec<(Value, Value)> {
        v["sources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["index"].clone(), s["url"].clone()))
            .collect()
    };
    assert_eq!(read(&v), read(&plain), "the sources changed");
    let images = v["images"].as_array().unwrap();
    assert_eq!(images.len(), 5, "{v}");
    assert_eq!(images[0]["title"], "The Quillfeather Lighthouse at dusk");
    assert_eq!(images[0]["width"], 1920);
    // One images search, for the question (the planner's one query).
    let searches = images_searches(&world).await;
    assert_eq!(searches.len(), 1, "{searches:?}");
    assert!(
        searches[0].contains(&("q".into(), QUESTION.into())),
        "{searches:?}"
    );
    assert_eq!(
        image_requests(&world).await,
        0,
        "ground never downloads an image"
    );
}

#[tokio::test]
async fn answer_images_are_listed_after_the_sources() {
    let world = lighthouse_with_images(200).await;
    let config = world.config_file("[search]\nimages = true\n");
    let mut cmd = world.ground();
    cmd.args(["answer", "--config"]).arg(&config).arg(QUESTION);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let pages = world.pages.uri();
    let listed = format!(
        "\nImages:\n 1. The Quillfeather Lighthouse at dusk\n    page:  {pages}/pages/quillfeather-lighthouse-history.html\n    image: {pages}/images/quillfeather-dusk.jpg\n"
    );
    let at = text.find(&listed).unwrap_or_else(|| panic!("{text}"));
    let sources = text.find("Quillfeather Lighthouse").unwrap();
    assert!(sources < at, "{text}");
    assert!(text.trim_end().ends_with("[startpage images]"), "{text}");
    assert_eq!(image_requests(&world).await, 0);
}

#[tokio::test]
async fn a_failed_images_search_is_a_warning_not_a_failed_answer() {
    let world = lighthouse_with_images(500).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "--images", QUESTION]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["images"], json!([]), "{v}");
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w.as_str().unwrap().starts_with(
            "the images search failed, so no images are listed (the answer is unaffected): SearXNG"
        )),
        "{v}"
    );
    assert!(
        stderr(&out).contains("warning: the images search failed"),
        "{}",
        stderr(&out)
    );
    assert!(v["answer"].as_str().is_some_and(|a| !a.is_empty()));
}

#[tokio::test]
async fn batch_and_chat_take_images_too() {
    let world = lighthouse_with_images(200).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(
        &input,
        json!({"id": "q1", "question": QUESTION}).to_string() + "\n",
    )
    .unwrap();
    let mut cmd = world.ground();
    cmd.arg("batch").arg(&input).arg("--images");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let record: Value = serde_json::from_str(stdout(&out).lines().next().unwrap()).unwrap();
    assert_eq!(record["id"], "q1");
    assert_eq!(
        record["images"].as_array().map(Vec::len),
        Some(5),
        "{record}"
    );

    let mut cmd = world.ground();
    cmd.args(["chat", "--images", "--session", "pictures"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        use std::io::Write;
        let mut child = cmd.spawn().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(format!("{QUESTION}\n").as_bytes()).unwrap();
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\nImages:\n 1. The Quillfeather Lighthouse at dusk\n"),
        "{}",
        stdout(&out)
    );
    assert_eq!(images_searches(&world).await.len(), 2);
    assert_eq!(image_requests(&world).await, 0);
}

// --- ground serve ---------------------------------------------------------------------

use crate::serve::{Server, http};

fn openai_ask(extra: Value) -> Value {
    let mut body = json!({"model": "ground", "messages": [{"role": "user", "content": QUESTION}]});
    for (key, value) in extra.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

#[tokio::test]
async fn the_openai_face_returns_images_and_related_questions_only_when_asked() {
    let world = lighthouse_with_images(200).await;
    let server = Server::start(world.ground(), &["--allow-private-addresses"]).await;
    let url = server.url("/v1/chat/completions");
    let plain: Value = http()
        .post(&url)
        .json(&openai_ask(json!({})))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        plain.get("images").is_none() && plain.get("related_questions").is_none(),
        "{plain}"
    );
    assert!(images_searches(&world).await.is_empty());

    let asked = openai_ask(json!({"return_images": true, "return_related_questions": true}));
    let body: Value = http()
        .post(&url)
        .json(&asked)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["object"], "chat.completion", "{body}");
    let pages = world.pages.uri();
    let images = body["images"].as_array().unwrap();
    assert_eq!(images.len(), 5, "{body}");
    assert_eq!(
        images[0],
        json!({
            "image_url": format!("{pages}/images/quillfeather-dusk.jpg"),
            "origin_url": format!("{pages}/pages/quillfeather-lighthouse-history.html"),
            "height": 1080,
            "width": 1920,
        })
    );
    assert_eq!(
        body["related_questions"],
        json!([
            "quillfeather lighthouse steps characteristics",
            "quillfeather lighthouse steps history"
        ])
    );
    // The answer is the same one.
    assert_eq!(
        body["choices"][0]["message"]["content"],
        plain["choices"][0]["message"]["content"]
    );

    // Streamed: both on the last chunk.
    let mut streamed = asked.clone();
    streamed["stream"] = json!(true);
    let text = http()
        .post(&url)
        .json(&streamed)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let chunks: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let last = chunks
        .iter()
        .rev()
        .find(|c| c.get("citations").is_some())
        .unwrap();
    assert_eq!(last["images"].as_array().map(Vec::len), Some(5), "{last}");
    assert!(last["related_questions"].is_array(), "{last}");
    assert!(chunks[0].get("images").is_none());

    // A bad value is a 400 naming it.
    let bad = http()
        .post(&url)
        .json(&openai_ask(json!({"return_images": "yes"})))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    let bad: Value = bad.json().await.unwrap();
    assert_eq!(bad["error"]["param"], "return_images", "{bad}");
    assert_eq!(image_requests(&world).await, 0);
    server.stop().await;
}

#[tokio::test]
async fn the_gemini_face_gives_image_chunks_for_an_image_search_tool() {
    let world = lighthouse_with_images(200).await;
    let server = Server::start(world.ground(), &["--allow-private-addresses"]).await;
    let url = server.url("/v1beta/models/gemini-2.5-flash:generateContent");
    let ask = |tool: Value| json!({"contents": [{"role": "user", "parts": [{"text": QUESTION}]}], "tools": [tool]});
    let plain: Value = http()
        .post(&url)
        .json(&ask(json!({"googleSearch": {}})))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let plain_chunks = plain["candidates"][0]["groundingMetadata"]["groundingChunks"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        plain_chunks.iter().all(|c| c.get("image").is_none()),
        "{plain}"
    );
    let pages = world.pages.uri();
    for tool in [
        json!({"googleSearch": {"searchTypes": {"webSearch": {}, "imageSearch": {}}}}),
        json!({"google_search": {"search_types": {"image_search": {}}}}),
    ] {
        let body: Value = http()
            .post(&url)
            .json(&ask(tool.clone()))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let metadata = &body["candidates"][0]["groundingMetadata"];
        let chunks = metadata["groundingChunks"].as_array().unwrap();
        // The web chunks first, as before (the supports index them), then the images.
        assert_eq!(&chunks[..plain_chunks.len()], &plain_chunks[..], "{tool}");
        let images: Vec<&Value> = chunks[plain_chunks.len()..]
            .iter()
            .map(|c| &c["image"])
            .collect();
        assert_eq!(images.len(), 5, "{tool}: {body}");
        assert_eq!(
            images[0],
            &json!({
                "sourceUri": format!("{pages}/pages/quillfeather-lighthouse-history.html"),
                "imageUri": format!("{pages}/images/quillfeather-dusk.jpg"),
                "title": "The Quillfeather Lighthouse at dusk",
                "domain": "127.0.0.1",
            })
        );
        assert_eq!(
            metadata["groundingSupports"],
            plain["candidates"][0]["groundingMetadata"]["groundingSupports"]
        );
    }
    // excludeDomains is an exclusion for the images too.
    let excluded = json!({"googleSearch": {"searchTypes": {"imageSearch": {}}, "excludeDomains": ["commons.wikimedia.org"]}});
    let body: Value = http()
        .post(&url)
        .json(&ask(excluded))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let chunks = body["candidates"][0]["groundingMetadata"]["groundingChunks"]
        .as_array()
        .unwrap();
    let sources: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["image"]["sourceUri"].as_str())
        .collect();
    assert_eq!(sources.len(), 4, "{body}");
    assert!(
        sources.iter().all(|s| !s.contains("wikimedia")),
        "{sources:?}"
    );
    let bad = http()
        .post(&url)
        .json(&ask(
            json!({"googleSearch": {"searchTypes": {"imageSearch": true}}}),
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(image_requests(&world).await, 0);
    server.stop().await;
}
