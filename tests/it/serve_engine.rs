//! `ground serve --llm embedded` (issue 49): the engine keeps a queue of its own for
//! the model calls, so the service holds a place only for what a request uses. A
//! request admitted while another is being answered searches and reads its pages at
//! once (only its model call waits, in the engine's queue), and a client that leaves
//! while its model call waits there gives its place back. The real binary on the
//! tiny test model; SearXNG and the pages on wiremock.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

use crate::common::*;
use crate::serve::{Server, ask, http};

/// The tiny GGUF of the engine tests.
fn gguf() -> String {
    fixtures()
        .join("models/tiny-chatml.gguf")
        .display()
        .to_string()
}

/// When each search reached SearXNG, and its query.
type Arrivals = Arc<Mutex<Vec<(Instant, String)>>>;

/// SearXNG answering every search with a real capture (its page URLs pointed at the
/// page server), noting when each arrived; a search whose query holds [`SLOW_WORD`] is
/// answered after [`SLOW_SEARCH`].
struct Stamped {
    body: String,
    arrivals: Arrivals,
}

/// The word of the question whose search SearXNG answers slowly.
const SLOW_WORD: &str = "alpha";

/// How long SearXNG takes over that search: a run that holds a place while it
/// searches holds it at least this long.
const SLOW_SEARCH: Duration = Duration::from_millis(1500);

impl Respond for Stamped {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let query = request
            .url
            .query_pairs()
            .find(|(k, _)| k == "q")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let slow = query.contains(SLOW_WORD);
        self.arrivals.lock().unwrap().push((Instant::now(), query));
        let reply = ResponseTemplate::new(200).set_body_raw(self.body.clone(), "application/json");
        if slow {
            reply.set_delay(SLOW_SEARCH)
        } else {
            reply
        }
    }
}

/// The pages, and SearXNG noting its searches' arrivals.
async fn stamped_world() -> (World, Arrivals) {
    let world = World::new().await;
    world.serve_fixture_pages().await;
    let arrivals = Arrivals::default();
    let body =
        fixture("searxng/searxng/normal.body.json").replace(CAPTURED_PAGES_URL, &world.pages.uri());
    Mock::given(method("GET"))
        .and(path("/search"))
        .and(query_param("format", "json"))
        .respond_with(Stamped {
            body,
            arrivals: Arc::clone(&arrivals),
        })
        .mount(&world.searx)
        .await;
    (world, arrivals)
}

/// When the first search whose query holds `word` arrived.
fn searched(arrivals: &Arrivals, word: &str) -> Option<Instant> {
    arrivals
        .lock()
        .unwrap()
        .iter()
        .find(|(_, query)| query.contains(word))
        .map(|(at, _)| *at)
}

/// `ground serve --llm embedded` on the tiny model with `--concurrency 1` and
/// `queue` more waiting. Its answers are long (up to 1,024 tokens: the tiny model
/// rarely ends its JSON early), so a model call lasts a while.
async fn engine_server(world: &World, queue: &str) -> Server {
    Server::start(
        world.ground(),
        &[
            "--llm",
            "embedded",
            "--model-file",
            &gguf(),
            "--max-answer-tokens",
            "1024",
            "--context-tokens",
            "8192",
            "--concurrency",
            "1",
            "--queue",
            queue,
        ],
    )
    .await
}

/// A question the tiny model answers at length; `word` tells its search apart.
fn question(word: &str) -> Value {
    ask(&format!("Can tardigrades survive in space? {word}"))
}

#[tokio::test]
async fn a_request_behind_another_searches_while_the_first_is_answered() {
    let (world, arrivals) = stamped_world().await;
    let server = engine_server(&world, "2").await;
    let url = server.url("/v1/chat/completions");
    let asked = |word: &'static str| {
        let url = url.clone();
        async move {
            let reply = http()
                .post(url)
                .timeout(Duration::from_secs(240))
                .json(&question(word))
                .send()
                .await
                .unwrap();
            let status = reply.status().as_u16();
            let body: Value = reply.json().await.unwrap();
            (status, body, Instant::now())
        }
    };
    // The first holds the one running place of a server model from its search (which
    // SearXNG answers slowly) to its reply; the second is sent once the first's search
    // has arrived.
    let first = tokio::spawn(asked(SLOW_WORD));
    let started = Instant::now();
    while searched(&arrivals, SLOW_WORD).is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first never searched"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let second = asked("beta").await;
    let first = first.await.unwrap();
    assert_eq!(first.0, 200, "{}", first.1);
    assert_eq!(second.0, 200, "{}", second.1);
    let second_searched = searched(&arrivals, "beta").expect("the second searched");
    // The second searched while the first was still under way (searching, reading or
    // being answered), not after it as a request waiting for a place would: with the
    // embedded engine only model calls wait.
    assert!(
        second_searched + SLOW_SEARCH / 3 < first.2,
        "the second search came {:?} before the first reply's end",
        first.2.saturating_duration_since(second_searched)
    );
    let log = server.stop().await;
    assert_eq!(
        log.matches("POST /v1/chat/completions 200").count(),
        2,
        "{log}"
    );
}

#[tokio::test]
async fn a_client_that_leaves_while_waiting_for_the_engine_gives_its_place_back() {
    let (world, arrivals) = stamped_world().await;
    // One answered, three more admitted: a fifth is refused while all four are held.
    let server = engine_server(&world, "3").await;
    let url = server.url("/v1/chat/completions");
    let streamed = |question: &str| {
        let mut request = ask(question);
        request["stream"] = json!(true);
        request
    };
    // The first: a long question (thousands of prompt tokens to read, so its model
    // call lasts), read to its end in a task of its own. A streamed reply is admitted
    // before its headers come back.
    let long = format!("alpha {}", LONG_QUESTION.repeat(36));
    let first = http()
        .post(&url)
        .json(&streamed(&long))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let first = tokio::spawn(async move {
        let text = first.text().await.unwrap();
        (text, Instant::now())
    });
    // Two more long questions behind it (each reads its own question again), so the
    // engine stays busy for three long model calls.
    let mut behind = Vec::new();
    for word in ["delta", "epsilon"] {
        let question = format!("{word} {}", LONG_QUESTION.repeat(36));
        let reply = http()
            .post(&url)
            .json(&streamed(&question))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status(), 200);
        behind.push(tokio::spawn(async move {
            let text = reply.text().await.unwrap();
            (text, Instant::now())
        }));
    }
    // The second searches at once and reads its pages, then its model call waits
    // behind the first's; its client leaves while it waits.
    let second = http()
        .post(&url)
        .json(&streamed("beta"))
        .send()
        .await
        .unwrap();
    assert_eq!(second.status(), 200, "the second was not admitted");
    let second_admitted = Instant::now();
    let started = Instant::now();
    while searched(&arrivals, "beta").is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the second request waited without searching"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(second);
    // The place it left admits the next request (with it still held, a 429) while
    // the engine is still busy with the two long ones.
    let mut next = None;
    for _ in 0..40 {
        let reply = http()
            .post(&url)
            .json(&streamed("gamma"))
            .send()
            .await
            .unwrap();
        if reply.status() != 429 {
            next = Some((reply, Instant::now()));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (next, admitted) = next.expect("the place of the client that left was kept");
    assert_eq!(next.status(), 200);
    let next = next.text().await.unwrap();
    assert!(next.trim_end().ends_with("data: [DONE]"), "{next}");
    let mut ends = Vec::new();
    for reply in behind {
        let (text, end) = reply.await.unwrap();
        assert!(!text.contains("data: {\"error\""), "{text}");
        ends.push(end);
    }
    let last_end = ends.into_iter().max().unwrap();
    let (first, first_end) = first.await.unwrap();
    assert!(first.trim_end().ends_with("data: [DONE]"), "{first}");
    assert!(!first.contains("data: {\"error\""), "{first}");
    assert!(
        second_admitted < first_end,
        "the second request was admitted only once the first had ended"
    );
    assert!(
        admitted < last_end,
        "the first reply ended before the next was admitted: the test proves nothing"
    );
    server.stop().await;
}

/// A sentence of a long question.
const LONG_QUESTION: &str = "Can tardigrades survive in open space for ten days? ";

/// llama.cpp's OpenMP threads sleep soon when they wait for each other
/// (`GOMP_SPINCOUNT` 1000: on a busy machine libgomp's default spin made replies
/// several times slower): the binary runs again with it set, unless the environment
/// already says how they wait. Read from the server's environment as the kernel
/// holds it.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_engine_s_threads_spin_briefly_unless_the_environment_says_otherwise() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let world = World::new().await;
    let cases = [
        (None, Some("1000")),
        (Some(("OMP_WAIT_POLICY", "active")), None),
        (Some(("GOMP_SPINCOUNT", "5")), Some("5")),
    ];
    for (set, expected) in cases {
        let mut cmd = world.ground();
        if let Some((name, value)) = set {
            cmd.env(name, value);
        }
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if line.contains("listening on ") {
                    return;
                }
            }
            panic!("ground serve ended without listening");
        })
        .await
        .expect("ground serve did not start");
        let environ = std::fs::read(format!("/proc/{}/environ", child.id().unwrap())).unwrap();
        let spin = environ
            .split(|b| *b == 0)
            .find_map(|e| e.strip_prefix(b"GOMP_SPINCOUNT="))
            .map(|v| String::from_utf8_lossy(v).into_owned());
        assert_eq!(spin.as_deref(), expected, "{set:?}");
        child.kill().await.unwrap();
    }
}
