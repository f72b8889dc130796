//! Replicas of `ground serve` that share their state in one Redis (issue S5): two
//! real server processes (and a restarted one) against a real `redis-server` and the
//! usual stand-ins (SearXNG, pages and Ollama on wiremock). What they share is counted
//! at the stand-ins: a follow-up or a cached page on the other replica reaches none of
//! them. Skipped, loudly, where `redis-server` is missing (never in CI: see
//! `redis_support`).

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

use crate::common::*;
use crate::redis_support::RedisServer;
use crate::serve::{Server, ask, completion, http, model_calls};

const QUESTION: &str = "Can tardigrades survive in space?";

/// `ground` for a replica: the world's (its own cache folder) with a state dir of its
/// own too, so that only Redis can make two replicas share anything. The services
/// it must not reach are one closed port for every replica: the replicas of a
/// deployment are configured alike (an answer is reused only under the same
/// settings).
fn replica(world: &World, name: &str) -> std::process::Command {
    static CLOSED: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let closed = CLOSED.get_or_init(closed_port_url);
    let mut cmd = world.ground();
    cmd.env(
        "XDG_STATE_HOME",
        world.home.path().join(format!("state-{name}")),
    )
    .env("GROUND_WIKIPEDIA_URL", closed)
    .env("GROUND_DUCKDUCKGO_URL", closed)
    // A loaded test machine can hold a replica off its core for longer than the
    // default 250 ms: these tests are about what is shared, not about a slow Redis.
    .env("GROUND_REDIS_TIMEOUT_MS", "2000");
    cmd
}

/// Searches that reached the SearXNG stand-in.
async fn searches(world: &World) -> usize {
    world
        .searx
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.url.path() == "/search")
        .count()
}

async fn page_fetches(world: &World) -> usize {
    world.pages.received_requests().await.unwrap().len()
}

/// The world with a follow-up's rewrite call answered, then the usual answers.
async fn world_for_follow_ups() -> World {
    let world = World::new().await;
    world.search_and_pages().await;
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .and(wiremock::matchers::body_string_contains(
            "You rewrite the last question of a conversation",
        ))
        .respond_with(ResponseTemplate::new(200).set_body_json(ollama_reply(
            &json!({"question": "how long were dried tardigrades exposed to open space", "must_have_evidence": ["ten days", "FOTON-M3 mission"]}).to_string(),
            "stop",
        )))
        .with_priority(1)
        .mount(&world.ollama)
        .await;
    world.model_replies(&good_answer()).await;
    world
}

fn follow_up(answer: &str) -> Value {
    json!({"model": "ground", "messages": [
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": answer},
        {"role": "user", "content": "and how long were they out there?"},
    ]})
}

/// The follow-up's reply was answered from the conversation's sources alone.
fn assert_answered_from_the_conversation(reply: &Value, first: &Value) {
    assert_eq!(
        reply["ground"]["conversation"]["searched"], false,
        "{}",
        reply["ground"]["conversation"]
    );
    assert!(
        reply["ground"]["conversation"]["reused_sources"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{}",
        reply["ground"]["conversation"]
    );
    assert_eq!(reply["citations"][0], first["citations"][0]);
    assert_eq!(reply["citations"], first["citations"]);
}

#[tokio::test]
async fn a_follow_up_on_the_other_replica_makes_no_search_and_keeps_the_numbers() {
    let Some(redis) = RedisServer::start("replicas::a_follow_up_on_the_other_replica") else {
        return;
    };
    let world = world_for_follow_ups().await;
    let flags = ["--redis-url", &redis.url()];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let b = Server::start(replica(&world, "b"), &flags).await;
    let first = completion(&a, &ask(QUESTION)).await;
    let answer = first["choices"][0]["message"]["content"].as_str().unwrap();
    let searched = searches(&world).await;
    assert!(searched > 0);
    let reply = completion(&b, &follow_up(answer)).await;
    assert_eq!(searches(&world).await, searched, "replica b searched again");
    assert_answered_from_the_conversation(&reply, &first);
    // The evidence is in Redis under the deployment's prefix, nowhere else.
    let keys = redis.command("KEYS ground:conversation:*");
    assert!(keys.starts_with('*') && keys != "*0", "{keys}");
    let (a_log, b_log) = (a.stop().await, b.stop().await);
    for log in [&a_log, &b_log] {
        assert!(
            log.contains("sharing state through Redis at redis://127.0.0.1:"),
            "{log}"
        );
        assert!(!log.contains("warning"), "{log}");
    }
}

#[tokio::test]
async fn a_restarted_replica_continues_a_conversation() {
    let Some(redis) = RedisServer::start("replicas::a_restarted_replica") else {
        return;
    };
    let world = world_for_follow_ups().await;
    let flags = ["--redis-url", &redis.url()];
    let before = Server::start(replica(&world, "a"), &flags).await;
    let first = completion(&before, &ask(QUESTION)).await;
    let answer = first["choices"][0]["message"]["content"].as_str().unwrap();
    before.stop().await;
    let searched = searches(&world).await;
    let after = Server::start(replica(&world, "a"), &flags).await;
    let reply = completion(&after, &follow_up(answer)).await;
    assert_eq!(
        searches(&world).await,
        searched,
        "the restart forgot the conversation"
    );
    assert_answered_from_the_conversation(&reply, &first);
    after.stop().await;

    // Without Redis, the same restart forgets it (what the shared state is for).
    let alone = Server::start(replica(&world, "c"), &[]).await;
    let reply = completion(&alone, &follow_up(answer)).await;
    assert!(
        searches(&world).await > searched,
        "without Redis nothing is shared"
    );
    assert_eq!(reply["ground"]["conversation"]["searched"], true);
    alone.stop().await;
}

#[tokio::test]
async fn the_rate_limit_is_one_window_for_two_replicas() {
    let Some(redis) = RedisServer::start("replicas::the_rate_limit") else {
        return;
    };
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    // Two searches a minute for the deployment; each request may wait 3 s at most, so
    // one over the limit fails at once (a rate-limit error) instead of waiting.
    let flags = [
        "--redis-url",
        &redis.url(),
        "--max-per-minute",
        "2",
        "--timeout",
        "3",
        "--reuse-secs",
        "0",
    ];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let b = Server::start(replica(&world, "b"), &flags).await;
    let questions = [
        "Can tardigrades survive in space?",
        "How do tardigrades survive drying out?",
        "What are tardigrades?",
        "Where do tardigrades live?",
    ];
    for (i, question) in questions.iter().enumerate() {
        let server = if i % 2 == 0 { &a } else { &b };
        // Answered or refused over the limit: either way no error of Redis's.
        let reply = http()
            .post(server.url("/v1/chat/completions"))
            .json(&ask(question))
            .send()
            .await
            .unwrap();
        assert!(
            reply.status() == 200 || reply.status() == 429,
            "{question}: {}",
            reply.status()
        );
    }
    // Alone, each replica would have sent at least one search per question (four);
    // together they sent what one window allows.
    let sent = searches(&world).await;
    assert!((1..=2).contains(&sent), "{sent} searches reached SearXNG");
    let rate_keys = redis.command("KEYS ground:rate:*");
    assert_eq!(rate_keys, "*1", "one window for the deployment");
    for log in [a.stop().await, b.stop().await] {
        assert!(!log.contains("does not answer"), "{log}");
    }
}

#[tokio::test]
async fn the_cache_is_shared_so_the_second_replica_fetches_nothing() {
    let Some(redis) = RedisServer::start("replicas::the_cache_is_shared") else {
        return;
    };
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let flags = ["--redis-url", &redis.url(), "--reuse-secs", "0"];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let b = Server::start(replica(&world, "b"), &flags).await;
    let first = completion(&a, &ask(QUESTION)).await;
    let (searched, fetched) = (searches(&world).await, page_fetches(&world).await);
    assert!(
        searched > 0 && fetched > 0,
        "{searched} searches, {fetched} fetches"
    );
    // Replica b has a cache folder of its own, empty: only Redis can hold the entries.
    let second = completion(&b, &ask(QUESTION)).await;
    assert_eq!(searches(&world).await, searched, "replica b searched again");
    assert_eq!(
        page_fetches(&world).await,
        fetched,
        "replica b fetched again"
    );
    assert_eq!(second["citations"], first["citations"]);
    assert!(
        second["ground"].get("reused").is_none(),
        "{}",
        second["ground"]
    );
    // Every entry expires: the cache's TTL (24 h by default) is the key's.
    let key = redis.command("KEYS ground:page:*");
    assert!(key.starts_with('*') && key != "*0", "{key}");
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_question_one_replica_answered_is_reused_on_the_other() {
    let Some(redis) = RedisServer::start("replicas::a_question_one_replica_answered") else {
        return;
    };
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let flags = ["--redis-url", &redis.url()];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let b = Server::start(replica(&world, "b"), &flags).await;
    let first = completion(&a, &ask(QUESTION)).await;
    assert!(
        first["ground"].get("reused").is_none(),
        "{}",
        first["ground"]
    );
    let fetched = page_fetches(&world).await;
    // The same question in other words, on the other replica (its memory is empty):
    // the run replica a kept in Redis, marked as a reused answer is on one server.
    let second = completion(&b, &ask("can tardigrades  survive in space")).await;
    let reused = &second["ground"]["reused"];
    assert_eq!(reused["question"], QUESTION, "{}", second["ground"]);
    assert!(reused["age_secs"].as_u64().unwrap() < 60, "{reused}");
    assert_eq!(reused["ttl_secs"], 600, "{reused}");
    assert_eq!(
        second["choices"][0]["message"]["content"],
        first["choices"][0]["message"]["content"]
    );
    assert_eq!(second["citations"], first["citations"]);
    assert_eq!(
        page_fetches(&world).await,
        fetched,
        "replica b fetched pages"
    );
    // Stored under the deployment's prefix, expiring with the reuse window.
    let keys = redis.command("KEYS ground:answer:*");
    assert_eq!(keys, "*1", "one run stored");
    let ttl = redis.command(
        "EVAL \"return redis.call('PTTL', redis.call('KEYS', ARGV[1])[1])\" 0 ground:answer:*",
    );
    let ms: u64 = ttl.trim_start_matches(':').parse().expect(&ttl);
    assert!((500_000..=600_000).contains(&ms), "expires in {ms} ms");
    let (a_log, b_log) = (a.stop().await, b.stop().await);
    for log in [&a_log, &b_log] {
        assert!(!log.contains("warning"), "{log}");
    }
    // One search and one model call for the whole deployment: replica b made none.
    assert_eq!(searches(&world).await, 1, "searches");
    assert_eq!(model_calls(&world).await, 1, "model calls");
}

#[tokio::test]
async fn answers_are_reused_locally_while_redis_is_down() {
    let Some(mut redis) = RedisServer::start("replicas::answers_are_reused_locally") else {
        return;
    };
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let a = Server::start(replica(&world, "a"), &["--redis-url", &redis.url()]).await;
    redis.stop();
    let first = completion(&a, &ask(QUESTION)).await;
    assert!(first["ground"].get("reused").is_none());
    let searched = searches(&world).await;
    let asked = model_calls(&world).await;
    assert!(searched > 0 && asked > 0);
    // The replica's own memory answers: no search, no model call, no failure.
    let again = completion(&a, &ask(QUESTION)).await;
    assert_eq!(
        again["ground"]["reused"]["question"], QUESTION,
        "{}",
        again["ground"]
    );
    assert_eq!(searches(&world).await, searched);
    assert_eq!(model_calls(&world).await, asked);
    let log = a.stop().await;
    assert_eq!(log.matches("does not answer").count(), 1, "{log}");
}

#[tokio::test]
async fn two_replicas_missing_a_page_at_once_fetch_it_once() {
    let Some(redis) = RedisServer::start("replicas::two_replicas_missing_a_page") else {
        return;
    };
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    world.model_replies(&good_answer()).await;
    // Slow pages: both replicas are still waiting for them when the other asks, so
    // without a claim each would fetch every page itself.
    for name in [
        "tardigrades-space",
        "tardigrades-cryptobiosis",
        "tardigrades-overview",
        "sqlite-vacuum",
    ] {
        Mock::given(method("GET"))
            .and(path(format!("/pages/{name}.html")))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_raw(
                        fixture(&format!("pages/{name}.html")),
                        "text/html; charset=utf-8",
                    )
                    .set_delay(Duration::from_millis(600)),
            )
            .expect(0..=1)
            .mount(&world.pages)
            .await;
    }
    let flags = ["--redis-url", &redis.url(), "--reuse-secs", "0"];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let b = Server::start(replica(&world, "b"), &flags).await;
    let question = ask(QUESTION);
    let (first, second) = tokio::join!(completion(&a, &question), completion(&b, &question));
    assert_eq!(second["citations"], first["citations"]);
    let fetched: Vec<String> = world
        .pages
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| r.url.path().to_string())
        .filter(|p| p.starts_with("/pages/"))
        .collect();
    assert!(!fetched.is_empty());
    let mut distinct = fetched.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(fetched.len(), distinct.len(), "fetched twice: {fetched:?}");
    // One replica read each page from the other's fetch.
    let cached = |reply: &Value| {
        reply["ground"]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["cached"] == true)
            .count()
    };
    assert!(
        cached(&first) + cached(&second) >= distinct.len(),
        "{distinct:?}"
    );
    for log in [a.stop().await, b.stop().await] {
        assert!(!log.contains("does not answer"), "{log}");
    }
}

#[tokio::test]
async fn redis_stopped_mid_run_degrades_to_local_state_with_one_warning() {
    let Some(mut redis) = RedisServer::start("replicas::redis_stopped_mid_run") else {
        return;
    };
    let world = world_for_follow_ups().await;
    let flags = ["--redis-url", &redis.url(), "--reuse-secs", "0"];
    let a = Server::start(replica(&world, "a"), &flags).await;
    let first = completion(&a, &ask(QUESTION)).await;
    let answer = first["choices"][0]["message"]["content"].as_str().unwrap();
    redis.stop();
    // Every request is still answered: fresh questions and the follow-up (its
    // evidence is also in this replica's memory).
    let started = std::time::Instant::now();
    for question in [
        "How do tardigrades survive drying out?",
        "What are tardigrades?",
        "Where do tardigrades live?",
    ] {
        completion(&a, &ask(question)).await;
    }
    let searched = searches(&world).await;
    let reply = completion(&a, &follow_up(answer)).await;
    assert_eq!(searches(&world).await, searched);
    assert_answered_from_the_conversation(&reply, &first);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "requests waited for Redis: {:?}",
        started.elapsed()
    );
    // Redis back: the replica shares again after its next try.
    redis.restart();
    for question in ["Are tardigrades animals?", "How big are tardigrades?"] {
        tokio::time::sleep(Duration::from_millis(1200)).await;
        completion(&a, &ask(question)).await;
    }
    let log = a.stop().await;
    assert_eq!(
        log.matches("does not answer").count(),
        1,
        "one warning for the outage: {log}"
    );
    assert!(
        log.contains("warning: shared state: Redis at redis://127.0.0.1:"),
        "{log}"
    );
    assert!(log.contains("answers again"), "{log}");
}

#[tokio::test]
async fn doctor_checks_the_shared_state() {
    let Some(mut redis) = RedisServer::start("replicas::doctor_checks_the_shared_state") else {
        return;
    };
    let world = World::new().await;
    let (state, _) = doctor_state(world.ground(), &redis.url()).await;
    assert_eq!(state["status"], "ok", "{state}");
    assert!(
        state["detail"]
            .as_str()
            .unwrap()
            .contains("answers PING in"),
        "{state}"
    );
    redis.stop();
    let with_password = redis.url().replace("127.0.0.1", ":hunter2@127.0.0.1");
    let (state, printed) = doctor_state(world.ground(), &with_password).await;
    assert!(!printed.contains("hunter2"), "{printed}");
    assert_eq!(state["status"], "warn", "{state}");
    assert!(
        state["hint"].as_str().unwrap().contains("redis-cli"),
        "{state}"
    );
}

/// `ground doctor --json`'s state check, with Redis named by `url`, and all it
/// printed.
pub(crate) async fn doctor_state(mut cmd: std::process::Command, url: &str) -> (Value, String) {
    cmd.env("GROUND_REDIS_URL", url).args(["doctor", "--json"]);
    let out = run_within(cmd, Duration::from_secs(30)).await;
    let printed = format!("{}{}", stdout(&out), stderr(&out));
    let checks = json_stdout(&out);
    let state = checks["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "state"))
        .unwrap_or_else(|| panic!("no state check: {checks}"))
        .clone();
    (state, printed)
}

#[tokio::test]
async fn a_redis_with_a_password_is_reached_with_the_url_s() {
    const PASSWORD: &str = "hunter2@ground:redis";
    let Some(redis) = RedisServer::start_with("replicas::a_redis_with_a_password", Some(PASSWORD))
    else {
        return;
    };
    let world = World::new().await;
    // Percent-encoded in the URL, as `ground key set redis` puts it there.
    let with_password = redis
        .url()
        .replace("redis://", "redis://:hunter2%40ground%3Aredis@");
    let (state, printed) = doctor_state(world.ground(), &with_password).await;
    assert_eq!(state["status"], "ok", "{state}");
    assert!(!printed.contains("hunter2"), "{printed}");
    // Without it Redis refuses: a warning, the password still nowhere.
    let (state, printed) = doctor_state(world.ground(), &redis.url()).await;
    assert_eq!(state["status"], "warn", "{state}");
    assert!(!printed.contains("hunter2"), "{printed}");
}

/// `ground search` on Brave's stand-in (the world's SearXNG server plays it) with a
/// monthly quota of `quota`, in a state dir of its own, sharing `redis` when given.
fn brave_search(
    world: &World,
    name: &str,
    quota: u32,
    redis: Option<&str>,
) -> std::process::Command {
    let mut cmd = replica(world, name);
    cmd.env("GROUND_SEARCH", "brave")
        .env("GROUND_BRAVE_API_KEY", "BSAsecretkey0123456789")
        .arg("search")
        .arg("tardigrades")
        .arg("--config")
        .arg(world.config_file(&format!(
            "[search]\nurl = \"{}\"\nmonthly_quota = {quota}\n",
            world.searx.uri()
        )));
    if let Some(url) = redis {
        cmd.env("GROUND_REDIS_URL", url);
    }
    cmd
}

#[tokio::test]
async fn the_monthly_quota_is_counted_for_the_deployment() {
    let Some(redis) = RedisServer::start("replicas::the_monthly_quota") else {
        return;
    };
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/res/v1/web/search"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "web": {"results": [{"url": format!("{}/pages/tardigrades-space.html", world.pages.uri()),
                                  "title": "Tardigrades", "description": "in space"}]}
        })))
        .mount(&world.searx)
        .await;
    let brave_calls = || async { world.searx.received_requests().await.unwrap().len() };
    let out = run(brave_search(&world, "a", 2, Some(&redis.url()))).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(brave_search(&world, "b", 2, Some(&redis.url()))).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // A third process with a state dir of its own: its file says 0, the deployment 2.
    let out = run(brave_search(&world, "c", 2, Some(&redis.url()))).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("this month's Brave Search quota is spent: 2 of 2 queries used in "),
        "{}",
        stderr(&out)
    );
    assert_eq!(brave_calls().await, 2, "the third search was sent");
    let keys = redis.command("KEYS ground:quota:*");
    assert_eq!(keys, "*1", "one counter for the service and month");
    // Without Redis, the same process counts alone (what sharing changes).
    let out = run(brave_search(&world, "d", 2, None)).await;
    assert!(out.status.success(), "{}", stderr(&out));
}

#[tokio::test]
async fn batch_shards_on_two_machines_share_the_cache_through_redis() {
    let Some(redis) = RedisServer::start("replicas::batch_shards") else {
        return;
    };
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(
        &input,
        format!("{}\n", json!({"id": "1", "question": QUESTION})),
    )
    .unwrap();
    // Two "machines": each its own cache folder and state dir, one Redis.
    let batch = |name: &str| {
        let mut cmd = replica(&world, name);
        cmd.arg("batch")
            .arg(&input)
            .arg("--out")
            .arg(world.home.path().join(format!("out-{name}.jsonl")))
            .args(["--redis-url", &redis.url(), "-q"])
            // No answer reused from the other machine: the cache alone is tested.
            .arg("--config")
            .arg(world.config_file("[run]\nreuse_secs = 0\n"));
        cmd
    };
    let out = run(batch("a")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (searched, fetched) = (searches(&world).await, page_fetches(&world).await);
    assert!(searched > 0 && fetched > 0);
    let out = run(batch("b")).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        searches(&world).await,
        searched,
        "the second machine searched"
    );
    assert_eq!(
        page_fetches(&world).await,
        fetched,
        "the second machine fetched"
    );
}
