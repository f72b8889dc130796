//! A run cut short: `--timeout` stops the whole run and names the stage it stopped in,
//! with that stage's exit code; Ctrl-C while pages are fetched ends the run promptly
//! with 130 and no partial JSON. (Ctrl-C while the answer streams is in `streaming`.)

use crate::common::*;
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

#[tokio::test]
async fn the_whole_run_deadline_names_the_stage_and_its_exit_code() {
    let world = World::new().await;
    Mock::given(method("GET"))
        .and(path("/search"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.searx)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--timeout",
        "1",
        "do tardigrades survive in space",
    ]);
    let started = std::time::Instant::now();
    let out = run(cmd).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        stderr(&out),
        "error: ground did not finish within 1 s (stopped while searching)\n\
         hint: raise --timeout (or [run] timeout_secs), or make the run smaller with fewer --pages\n"
    );

    let world = World::new().await;
    world.search_and_pages().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.ollama)
        .await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--timeout",
        "1",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(5));
    assert!(
        stderr(&out).contains("stopped while asking the model"),
        "{}",
        stderr(&out)
    );
    assert_eq!(json_stdout(&out)["error"]["kind"], "deadline");
}

#[tokio::test]
async fn ctrl_c_during_fetch_ends_promptly_with_130_and_no_partial_json() {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_delay(std::time::Duration::from_secs(30)))
        .mount(&world.pages)
        .await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "do tardigrades survive in space"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let out = tokio::task::spawn_blocking(move || {
        let child = cmd.spawn().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(800));
        let status = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let started = std::time::Instant::now();
        let out = child.wait_with_output().unwrap();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "must stop promptly"
        );
        out
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(
        !world.pages.received_requests().await.unwrap().is_empty(),
        "it was fetching"
    );
    let v = json_stdout(&out);
    assert_eq!(
        v["error"]["kind"], "interrupted",
        "only the error object, never a partial answer"
    );
}
