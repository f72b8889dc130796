//! Usage and configuration errors (exit 2), caught before anything is searched or
//! asked: an empty, blank or overlong question (also on stdin), a config file that is
//! missing, endless, malformed or has an unknown key, run settings out of range, and
//! an answer reserve over half the window.

use crate::common::*;

const QUESTION: &str = "do tardigrades survive in space";

#[tokio::test]
async fn empty_or_blank_question_is_a_usage_error() {
    let world = World::new().await;
    for question in ["", "   ", " \t\n "] {
        fails_both_ways(
            &world,
            no_changes,
            question,
            &Failure {
                code: 2,
                kind: "empty_question",
                cause: &["the question is empty"],
                hint: "pass a question",
            },
        )
        .await;
    }
    // No question at all, with nothing on stdin, or `-` with an empty stdin.
    for args in [
        &["answer"][..],
        &["answer", "-"],
        &["answer", "--json", "-"],
    ] {
        let mut cmd = world.ground();
        cmd.args(args);
        let out = run_within(cmd, RUN_DEADLINE).await;
        assert_error_report(&out, 2, &["the question is empty"], "pass a question");
        if args.contains(&"--json") {
            assert_json_error(&out, "empty_question", "");
        } else {
            assert_eq!(stdout(&out), "");
        }
    }
    // Nothing was searched or asked.
    assert!(world.searx.received_requests().await.unwrap().is_empty());
    assert!(world.ollama.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn malformed_url_in_the_config_file_is_a_usage_error() {
    let world = World::new().await;
    let config = world.config_file("[search]\nurl = \"localhost:8080\"\n");
    let value = fails_both_ways(
        &world,
        |cmd| {
            cmd.env_remove("GROUND_SEARXNG_URL")
                .arg("--config")
                .arg(&config);
        },
        QUESTION,
        &Failure {
            code: 2,
            kind: "config",
            cause: &["[search] url", "localhost:8080"],
            hint: "http://localhost:8080",
        },
    )
    .await;
    assert!(value["error"]["message"].as_str().unwrap().contains("URL"));
    assert!(world.searx.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn unknown_key_in_the_config_file_is_named() {
    let world = World::new().await;
    let config =
        world.config_file("[search]\nurl = \"http://localhost:8080\"\nlanguagee = \"en\"\n");
    fails_both_ways(
        &world,
        |cmd| {
            cmd.arg("--config").arg(&config);
        },
        QUESTION,
        &Failure {
            code: 2,
            kind: "config",
            cause: &["test-config.toml", "languagee"],
            hint: "config.example.toml",
        },
    )
    .await;
}

#[tokio::test]
async fn missing_config_file_is_a_usage_error() {
    let world = World::new().await;
    let missing = world.home.path().join("no-such-config.toml");
    fails_both_ways(
        &world,
        |cmd| {
            cmd.arg("--config").arg(&missing);
        },
        QUESTION,
        &Failure {
            code: 2,
            kind: "config",
            cause: &["cannot read config file", "no-such-config.toml"],
            hint: "--config",
        },
    )
    .await;
}

#[tokio::test]
async fn long_inputs_are_usage_errors_that_say_so() {
    let world = World::new().await;
    let long = "why ".repeat(16_500); // 66,000 characters
    let mut cmd = world.ground();
    cmd.args(["answer", &long]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with(
            "error: the question is 65999 characters long, more than the 2000 allowed\nhint: "
        ),
        "{}",
        stderr(&out)
    );

    // On stdin: read by whole characters up to the limit, and said when longer.
    let mut cmd = world.ground();
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), "é".repeat(40_000)).unwrap();
    cmd.stdin(std::fs::File::open(input.path()).unwrap())
        .args(["answer", "-"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("longer than 2000 characters")
            || stderr(&out).contains("characters long"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("UTF-8"), "{}", stderr(&out));

    // A config file with no end is read up to a cap, not until memory runs out.
    let mut cmd = world.ground();
    cmd.args(["answer", "--config", "/dev/zero", "why?"]);
    let out = run_within(cmd, std::time::Duration::from_secs(20)).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("larger than 1024 KiB"),
        "{}",
        stderr(&out)
    );
    assert!(world.searx.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn bad_run_settings_are_usage_errors() {
    let world = World::new().await;
    for (args, message) in [
        (vec!["--queries", "5"], "queries is 5, outside 1..=3"),
        (
            vec!["--max-searches", "0"],
            "max searches is 0, outside 1..=100",
        ),
        (
            vec!["--timeout", "0"],
            "--timeout / [run] timeout_secs is 0, outside 1..=3600",
        ),
    ] {
        let mut cmd = world.ground();
        cmd.arg("answer").args(&args).arg("q");
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(message), "{args:?}: {}", stderr(&out));
    }
}

#[tokio::test]
async fn a_reserve_below_the_least_names_the_real_range_and_why() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--max-answer-tokens", "24", "why is the sky blue"]);
    let out = run(cmd).await;
    let (error, hint) = assert_error_report(
        &out,
        2,
        &["max answer tokens is 24", "64"],
        "between 64 and 2048",
    );
    assert!(!hint.contains("between 64 and 64"), "{hint}");
    assert!(error.contains("one cited statement"), "{error}");
    assert!(
        hint.contains("half of the 4096-token context window"),
        "{hint}"
    );
}

#[tokio::test]
async fn an_explicit_reserve_over_half_the_window_is_a_config_error() {
    let world = World::new().await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--context-tokens",
        "1024",
        "--max-answer-tokens",
        "1024",
        "why is the sky blue",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("at most 512") && err.contains("--context-tokens 1024"),
        "{err}"
    );
}
