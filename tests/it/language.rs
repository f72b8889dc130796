//! The answer's language: detected from the question, or set by `--answer-language`
//! or `[llm] answer_language`, and asked of the model in its system prompt (quotes
//! are never translated); a language name instead of a code is a usage error.

use crate::common::*;
use serde_json::{Value, json};

/// The system message of the model call(s) the run made.
async fn system_prompts(world: &World) -> Vec<String> {
    world
        .ollama
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            body["messages"][0]["content"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn a_german_question_asks_the_model_for_german() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args(["answer", "--json", "Überleben Bärtierchen im Weltraum?"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(
        v["answer_language"],
        json!({"code": "de", "name": "German", "source": "detected"})
    );
    let system = system_prompts(&world).await;
    assert!(
        system[0].contains("in German (language code de)"),
        "{}",
        system[0]
    );
    assert!(system[0].contains("never translate a quote"));
}

#[tokio::test]
async fn answer_language_flag_and_config_set_it() {
    let world = World::new().await;
    world.healthy(&good_answer()).await;
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--answer-language",
        "fr",
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["answer_language"],
        json!({"code": "fr", "name": "French", "source": "set"})
    );
    assert!(system_prompts(&world).await[0].contains("in French (language code fr)"));

    let config = world.config_file("[llm]\nanswer_language = \"es\"\n");
    let mut cmd = world.ground();
    cmd.args([
        "answer",
        "--json",
        "--config",
        config.to_str().unwrap(),
        "do tardigrades survive in space",
    ]);
    let out = run(cmd).await;
    assert_eq!(json_stdout(&out)["answer_language"]["code"], "es");

    let mut cmd = world.ground();
    cmd.args(["answer", "--answer-language", "français", "why"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("hint: give --answer-language a code such as de"),
        "{}",
        stderr(&out)
    );
}
