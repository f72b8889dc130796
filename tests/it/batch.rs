//! `ground batch` (issue B1): the real binary over a file of questions, against the
//! usual stand-ins; where a test must see the model's requests as they overlap (which
//! question, how many at once) the model is a small axum server of its own that
//! counts them and answers after a pause.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::common::*;

/// A paced Ollama stand-in: which questions it was asked (by their `Qnn` marker) and
/// the most chat requests it held at once.
struct PacedModel {
    url: String,
    pause: Duration,
    seen: Mutex<Vec<String>>,
    now: AtomicUsize,
    most: AtomicUsize,
}

impl PacedModel {
    async fn start(pause: Duration) -> Arc<PacedModel> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let model = Arc::new(PacedModel {
            url: format!("http://{}", listener.local_addr().unwrap()),
            pause,
            seen: Mutex::new(Vec::new()),
            now: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
        });
        let app = axum::Router::new()
            .route("/api/chat", axum::routing::post(chat))
            .with_state(Arc::clone(&model));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        model
    }

    /// The question markers seen so far, each once.
    fn questions(&self) -> BTreeSet<String> {
        self.seen.lock().unwrap().iter().cloned().collect()
    }
}

async fn chat(State(model): State<Arc<PacedModel>>, body: String) -> Response {
    let at_once = model.now.fetch_add(1, Ordering::SeqCst) + 1;
    model.most.fetch_max(at_once, Ordering::SeqCst);
    if let Some(at) = body.find("question Q") {
        let marker = body[at + 9..at + 12].to_string();
        model.seen.lock().unwrap().push(marker);
    }
    tokio::time::sleep(model.pause).await;
    model.now.fetch_sub(1, Ordering::SeqCst);
    let request: Value = serde_json::from_str(&body).unwrap_or_default();
    if request["stream"] == true {
        (
            [("content-type", "application/x-ndjson")],
            ollama_stream(&good_answer(), Some("stop"), 7),
        )
            .into_response()
    } else {
        axum::Json(ollama_reply(&good_answer(), "stop")).into_response()
    }
}

/// `count` JSON Lines questions with ids `Q01`... and a marker the model sees.
fn questions(count: usize) -> String {
    (1..=count)
        .map(|n| format!("{}\n", json!({"id": format!("Q{n:02}"), "question": format!("How do tardigrades survive space, question Q{n:02}?")})))
        .collect()
}

/// The records of an output file, each line parsed (a line that is not JSON fails).
fn records(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn ids(records: &[Value]) -> BTreeSet<String> {
    records
        .iter()
        .map(|r| r["id"].as_str().map_or(r["id"].to_string(), String::from))
        .collect()
}

/// A world whose search and pages are the usual stand-ins, and `ground` pointed at
/// `model` for its model.
async fn world_with(model: &Arc<PacedModel>) -> (World, impl Fn() -> std::process::Command) {
    let world = World::new().await;
    world.search_and_pages().await;
    let (url, base) = (model.url.clone(), world.ground());
    let ground = move || {
        let mut cmd = std::process::Command::new(base.get_program());
        cmd.env_clear()
            .envs(base.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("GROUND_LLM_URL", &url)
            .stdin(std::process::Stdio::null());
        cmd
    };
    (world, ground)
}

#[tokio::test]
async fn batch_mixed_good_and_bad_lines_each_get_a_record() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let input = world.home.path().join("questions.jsonl");
    let long = "why ".repeat(600);
    let lines = [
        json!({"id": "a", "question": "How do tardigrades survive space?", "topic": "biology"})
            .to_string(),
        "this is not json".to_string(),
        json!({"id": "b", "question": "   "}).to_string(),
        json!({"id": "a", "question": "Again?"}).to_string(),
        json!({"id": "c", "question": long}).to_string(),
        json!({"id": 7, "question": "What is a tun state?"}).to_string(),
    ];
    std::fs::write(&input, lines.join("\n") + "\n").unwrap();
    let out_file = world.home.path().join("out.jsonl");
    let mut cmd = world.ground();
    cmd.arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .args(["-j", "2"]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));

    let mut records = records(&out_file);
    records.sort_by_key(|r| r["line"].as_u64());
    let lines_seen: Vec<u64> = records
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines_seen, [1, 2, 3, 4, 5, 6]);
    // The good ones: `answer --json`'s object, with the id and the extra keys.
    assert_eq!(records[0]["id"], "a");
    assert_eq!(records[0]["topic"], "biology");
    assert!(records[0]["answer"].as_str().unwrap().contains("FOTON-M3"));
    assert!(
        records[0]["citations"]
            .as_array()
            .is_some_and(|c| !c.is_empty())
    );
    assert_eq!(records[5]["id"], 7);
    assert!(records[5].get("error").is_none(), "{}", records[5]);
    // The bad ones: their own record naming the line, with a hint.
    let expected = [
        (1, json!(2), "line 2 is not a JSON object"),
        (2, json!("b"), "line 3: the question is empty"),
        (
            3,
            json!("a"),
            "line 4: the id \"a\" is used by an earlier line",
        ),
        (
            4,
            json!("c"),
            "line 5: the question is 2399 characters long",
        ),
    ];
    for (at, id, message) in expected {
        let error = &records[at]["error"];
        assert_eq!(records[at]["id"], id);
        assert_eq!(error["kind"], "invalid_input", "{error}");
        assert!(
            error["message"].as_str().unwrap().starts_with(message),
            "{error}"
        );
        assert!(error["hint"].as_str().is_some_and(|h| !h.is_empty()));
    }
    let err = stderr(&out);
    assert!(
        err.contains("6 of 6 questions recorded")
            && err.contains("2 answered (2 grounded), 4 failed (invalid_input 4)"),
        "{err}"
    );

    // Again: nothing is asked, and the failures on file still make it exit 9.
    let mut again = world.ground();
    again.arg("batch").arg(&input).arg("--out").arg(&out_file);
    let out = run_within(again, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("6 recorded by an earlier run (3 of them failures"),
        "{}",
        stderr(&out)
    );
    assert_eq!(super::batch::records(&out_file).len(), 6);
    // --retry-failed drops the failure records of ids with no answer and asks those
    // lines again: still bad, recorded once each; the answers, and the duplicate's
    // failure beside its id's answer, are kept.
    let mut retry = world.ground();
    retry
        .arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .arg("--retry-failed");
    let out = run_within(retry, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let after = super::batch::records(&out_file);
    assert_eq!(after.len(), 6);
    assert_eq!(after.iter().filter(|r| r.get("error").is_some()).count(), 4);
    assert!(
        stderr(&out).contains("3 of 3 questions recorded"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn batch_resumes_after_a_kill_without_asking_an_answered_id_again() {
    let model = PacedModel::start(Duration::from_millis(150)).await;
    let (world, ground) = world_with(&model).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(&input, questions(8)).unwrap();
    let out_file = world.home.path().join("out.jsonl");

    let mut first = ground();
    first
        .arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .args(["-j", "1", "-q"]);
    let mut child = first
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while records(&out_file).len() < 3 {
        assert!(waited.elapsed() < RUN_DEADLINE, "no records written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL: nothing gets to tidy up.
    child.wait().unwrap();
    let answered = ids(&records(&out_file));
    assert!(answered.len() >= 3 && answered.len() < 8, "{answered:?}");
    // A line cut short by the kill, for a question not yet answered.
    let cut = (1..=8)
        .map(|n| format!("Q{n:02}"))
        .find(|id| !answered.contains(id))
        .unwrap();
    let mut text = std::fs::read_to_string(&out_file).unwrap();
    text.push_str(&format!("{{\"id\":\"{cut}\",\"answer\":\"half"));
    std::fs::write(&out_file, text).unwrap();
    model.seen.lock().unwrap().clear();

    let mut second = ground();
    second
        .arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .args(["-j", "2"]);
    let out = run_within(second, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cut off a partial last line"),
        "{}",
        stderr(&out)
    );
    let asked_again = model.questions();
    assert!(
        asked_again.is_disjoint(&answered),
        "asked again: {asked_again:?}, answered before: {answered:?}"
    );
    assert!(asked_again.contains(&cut));
    let all = records(&out_file);
    assert_eq!(all.len(), 8, "every id once");
    assert_eq!(ids(&all), (1..=8).map(|n| format!("Q{n:02}")).collect());
}

/// The ids `ground batch INPUT -q` answers with `args` and `env` added.
async fn answered_ids(
    world: &World,
    input: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> BTreeSet<String> {
    let mut cmd = world.ground();
    cmd.arg("batch").arg(input).args(args).arg("-q");
    cmd.envs(env.iter().copied());
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?} {env:?}: {}",
        stderr(&out)
    );
    let got: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    ids(&got)
}

#[tokio::test]
async fn batch_shards_partition_the_ids_exactly() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let input = world.home.path().join("questions.txt");
    let text: String = (1..=12)
        .map(|n| format!("How do tardigrades survive space, take {n}?\n"))
        .collect();
    std::fs::write(&input, text).unwrap();
    // K counts from 1: 1/3, 2/3 and 3/3 are the three shards.
    let mut shards = Vec::new();
    for k in 1..=3 {
        let shard = format!("{k}/3");
        shards.push(answered_ids(&world, &input, &["--shard", &shard], &[]).await);
    }
    let mut union = BTreeSet::new();
    for shard in &shards {
        assert!(shard.is_disjoint(&union), "an id in two shards: {shards:?}");
        union.extend(shard.iter().cloned());
    }
    assert_eq!(union, (1..=12).map(|n| n.to_string()).collect());
    assert!(
        shards.iter().filter(|s| !s.is_empty()).count() >= 2,
        "{shards:?}"
    );
    // The 0-based form, as flags and as a Kubernetes Indexed Job passes it (the
    // environment), is the same partition: index I is K = I+1.
    for (i, shard) in shards.iter().enumerate() {
        let index = i.to_string();
        let by_flags = answered_ids(
            &world,
            &input,
            &["--shard-index", &index, "--shard-count", "3"],
            &[],
        )
        .await;
        assert_eq!(&by_flags, shard, "--shard-index {i} is --shard {}/3", i + 1);
        let by_env = answered_ids(
            &world,
            &input,
            &[],
            &[("GROUND_SHARD_INDEX", &index), ("GROUND_SHARD_COUNT", "3")],
        )
        .await;
        assert_eq!(
            &by_env,
            shard,
            "GROUND_SHARD_INDEX={i} is --shard {}/3",
            i + 1
        );
    }
}

/// A shard that must be refused: its arguments, its environment, and what the
/// message must say.
type Refused = (
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
    &'static [&'static str],
);

#[tokio::test]
async fn batch_shards_that_cannot_be_are_refused_naming_the_forms() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let input = world.home.path().join("questions.txt");
    std::fs::write(&input, "How do tardigrades survive space?\n").unwrap();
    let refused = |args: &'static [&'static str], env: &'static [(&'static str, &'static str)]| {
        let mut cmd = world.ground();
        cmd.arg("batch").arg(&input).args(args).arg("-q");
        cmd.envs(env.iter().copied());
        cmd
    };
    let cases: [Refused; 7] = [
        // Counted from 0 by habit: the message names the 1-based form and the index flags.
        (
            &["--shard", "0/2"],
            &[],
            &["--shard 1/2", "--shard-index 0 --shard-count 2"],
        ),
        (
            &["--shard", "3/2"],
            &[],
            &["K from 1 to N", "--shard-index"],
        ),
        (
            &["--shard", "1/0"],
            &[],
            &["K from 1 to N", "--shard-index"],
        ),
        (
            &["--shard", "two"],
            &[],
            &["K from 1 to N", "--shard-index"],
        ),
        (
            &["--shard-index", "2", "--shard-count", "2"],
            &[],
            &["0 to 1", "--shard K/N"],
        ),
        (&[], &[("GROUND_SHARD_INDEX", "0")], &["--shard-count"]),
        (
            &["--shard", "1/2", "--shard-index", "0", "--shard-count", "2"],
            &[],
            &["--shard-index"],
        ),
    ];
    for (args, env, says) in cases {
        let out = run_within(refused(args, env), RUN_DEADLINE).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {err}");
        for said in says {
            assert!(
                err.contains(said),
                "{args:?} {env:?} should say {said:?}: {err}"
            );
        }
        assert!(stdout(&out).is_empty(), "{args:?}: nothing answered");
    }
    assert!(
        world.ollama.received_requests().await.unwrap().is_empty(),
        "a refused shard asks nothing"
    );
}

#[tokio::test]
async fn batch_jobs_bound_the_model_requests_at_once() {
    let model = PacedModel::start(Duration::from_millis(200)).await;
    let (world, ground) = world_with(&model).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(&input, questions(8)).unwrap();
    let mut cmd = ground();
    cmd.arg("batch").arg(&input).args(["-j", "3", "-q"]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 8);
    let most = model.most.load(Ordering::SeqCst);
    assert_eq!(most, 3, "the model held {most} requests at once with -j 3");
}

#[tokio::test]
async fn batch_ctrl_c_writes_what_finished() {
    let model = PacedModel::start(Duration::from_millis(700)).await;
    let (world, ground) = world_with(&model).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(&input, questions(10)).unwrap();
    let out_file = world.home.path().join("out.jsonl");
    let mut cmd = ground();
    cmd.arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .args(["-j", "2"]);
    let child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while model.questions().len() < 3 {
        assert!(waited.elapsed() < RUN_DEADLINE, "the batch did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SAFETY: signalling our own child by its pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopping: finishing the questions under way"),
        "{}",
        stderr(&out)
    );
    let written = ids(&records(&out_file));
    // Every question the model was asked was finished and written; the rest were not started.
    assert_eq!(written, model.questions());
    assert!(written.len() < 10, "{written:?}");
}

#[tokio::test]
async fn batch_out_is_refused_when_it_is_the_input_a_stranger_or_not_a_file() {
    let world = World::new().await;
    let input = world.home.path().join("questions.txt");
    let questions = "What is a tun state?\nHow do tardigrades survive space?\n";
    std::fs::write(&input, questions).unwrap();
    let refused = |out_file: &Path| {
        let mut cmd = world.ground();
        cmd.arg("batch").arg(&input).arg("--out").arg(out_file);
        cmd
    };

    // The questions file itself: refused, and not a byte of it lost.
    let out = run_within(refused(&input), RUN_DEADLINE).await;
    assert_error_report(&out, 2, &["is the questions file itself"], "another file");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), questions);
    // The same file through a link, and as stdin.
    let link = world.home.path().join("link-to-questions");
    std::os::unix::fs::symlink(&input, &link).unwrap();
    let out = run_within(refused(&link), RUN_DEADLINE).await;
    assert_error_report(&out, 2, &["is the questions file itself"], "another file");
    let mut from_stdin = world.ground();
    from_stdin
        .args(["batch", "-", "--out"])
        .arg(&input)
        .stdin(std::fs::File::open(&input).unwrap());
    let out = run_within(from_stdin, RUN_DEADLINE).await;
    assert_error_report(&out, 2, &["is the questions file itself"], "another file");
    assert_eq!(std::fs::read_to_string(&input).unwrap(), questions);

    // A file that is not a batch's output keeps every line, its last one included.
    let notes = world.home.path().join("notes.txt");
    let text = "shopping list\nmilk, no newline";
    std::fs::write(&notes, text).unwrap();
    let out = run_within(refused(&notes), RUN_DEADLINE).await;
    assert_error_report(
        &out,
        2,
        &["is not a batch's output: its line 1 is not a batch record"],
        "nothing in this one was changed",
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), text);

    // Not a regular file: refused at once, never opened (a FIFO would wait for a
    // reader, /dev/zero would be read for ever).
    let fifo = world.home.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (path, kind) in [
        (fifo.as_path(), "a FIFO"),
        (Path::new("/dev/zero"), "a character device"),
        (world.home.path(), "a directory"),
    ] {
        let out = run_within(refused(path), Duration::from_secs(20)).await;
        assert_error_report(
            &out,
            2,
            &[&format!("is {kind}, not a regular file")],
            "leave --out out",
        );
    }
}

#[tokio::test]
async fn batch_keeps_a_linked_out_a_link_and_big_ids_exact() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let input = world.home.path().join("questions.jsonl");
    // Ids a float would make one (and change): each must come back as written.
    let ids = [
        "18446744073709551616",
        "18446744073709551617",
        "-99999999999999999999999",
    ];
    let text: String = ids
        .iter()
        .map(|id| {
            format!("{{\"id\": {id}, \"question\": \"How do tardigrades survive space?\"}}\n")
        })
        .collect();
    std::fs::write(&input, &text).unwrap();
    let target = world.home.path().join("kept/answers.jsonl");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    // An earlier run's failure, to be retried through the link (a rewrite).
    std::fs::write(
        &target,
        format!(
            "{{\"id\":{},\"line\":1,\"error\":{{\"kind\":\"model\"}}}}\n",
            ids[0]
        ),
    )
    .unwrap();
    let link = world.home.path().join("answers.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut cmd = world.ground();
    cmd.arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&link)
        .arg("--retry-failed");
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("3 of 3 questions recorded"),
        "{}",
        stderr(&out)
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    let written = std::fs::read_to_string(&target).unwrap();
    assert_eq!(written.lines().count(), 3, "{written}");
    for id in ids {
        assert!(
            written.contains(&format!("{{\"id\":{id},")),
            "{id} not written as given: {written}"
        );
    }
    assert!(
        records(&target).iter().all(|r| r.get("error").is_none()),
        "the failure retried is gone: {written}"
    );
    // No lock file is left beside the output.
    let names: Vec<String> = std::fs::read_dir(target.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["answers.jsonl"]);

    // Again, by stdin from a pipe: nothing is asked, every id is recorded.
    let mut again = world.ground();
    again
        .args(["batch", "-", "--out"])
        .arg(&link)
        .stdin(std::process::Stdio::piped());
    let mut child = again
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, text.as_bytes()).unwrap();
    drop(stdin);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("0 of 0 questions")
            && stderr(&out).contains("3 recorded by an earlier run"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn batch_a_second_run_on_one_out_is_refused_and_names_the_first() {
    let model = PacedModel::start(Duration::from_millis(300)).await;
    let (world, ground) = world_with(&model).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(&input, questions(6)).unwrap();
    let out_file = world.home.path().join("out.jsonl");
    let mut first = ground();
    first
        .arg("batch")
        .arg(&input)
        .arg("--out")
        .arg(&out_file)
        .args(["-j", "1", "-q"]);
    let child = first
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while model.questions().is_empty() {
        assert!(
            waited.elapsed() < RUN_DEADLINE,
            "the first batch did not start"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut second = ground();
    second.arg("batch").arg(&input).arg("--out").arg(&out_file);
    let out = run_within(second, RUN_DEADLINE).await;
    let (error, _) = assert_error_report(
        &out,
        2,
        &[
            "another `ground batch` is writing to",
            &format!("pid {} on this machine", child.id()),
            "out.jsonl.lock",
        ],
        &format!("kill {}", child.id()),
    );
    assert!(error.contains("s ago"), "{error}");
    let first = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // Every question recorded once, by the first run alone.
    let all = records(&out_file);
    assert_eq!(all.len(), 6);
    assert_eq!(ids(&all).len(), 6);
}

/// `ground batch` with its stdout (and with `both`, its stderr too) piped into
/// `head -1`; the exit status of ground.
fn into_head(ground: std::process::Command, args: &str, both: bool) -> std::process::Command {
    let mut cmd = std::process::Command::new("bash");
    cmd.env_clear()
        .envs(ground.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("GROUND", ground.get_program())
        .arg("-c")
        .arg(format!(
            "\"$GROUND\" batch {args} {} | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}",
            if both { "2>&1" } else { "" }
        ))
        .stdin(std::process::Stdio::null());
    cmd
}

#[tokio::test]
async fn batch_into_a_closed_pipe_ends_quietly() {
    let model = PacedModel::start(Duration::from_millis(100)).await;
    let (world, ground) = world_with(&model).await;
    let input = world.home.path().join("questions.jsonl");
    std::fs::write(&input, questions(6)).unwrap();
    let args = format!("'{}' -j 1", input.display());
    for both in [false, true] {
        let out = run_within(into_head(ground(), &args, both), RUN_DEADLINE).await;
        assert_eq!(out.status.code(), Some(0), "2>&1: {both}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
        assert!(!stderr(&out).contains("error:"), "{}", stderr(&out));
    }
}
