//! Token calibration (issue 15, part 3): a stand-in model counts the prompt it receives
//! with a known "tokenizer" (one token per `chars_per_token` characters, plus a chat
//! template), and `ground` learns the ratio, keeps it beside the cache and fills the
//! window with it.
//!
//! `cargo test --test it calibration:: -- --nocapture` prints the budget use, in the
//! stand-in's own tokens, before calibration (first run) and after (later runs).

use std::sync::{Arc, Mutex};

use crate::common::*;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, Request, Respond, ResponseTemplate};

/// Tokens the stand-in's chat template adds to every prompt.
const TEMPLATE_TOKENS: f64 = 12.0;
const QUESTION: &str = "How do tardigrades survive in space?";
const WINDOW: u32 = 4096;
const ANSWER: u32 = 512;

/// The stand-in tokenizer.
fn real_tokens(text: &str, chars_per_token: f64) -> f64 {
    (text.chars().count() as f64 / chars_per_token).ceil()
}

/// A model that counts its prompt with [`real_tokens`] and cuts it at the window
/// the request asks for, as Ollama does; it records every prompt it saw.
#[derive(Clone)]
struct StandIn {
    chars_per_token: f64,
    prompts: Arc<Mutex<Vec<(String, String)>>>,
}

impl Respond for StandIn {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        let text = |role: &str| -> String {
            body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == role)
                .map(|m| m["content"].as_str().unwrap_or("").to_string())
                .collect()
        };
        let (system, user) = (text("system"), text("user"));
        let counted = real_tokens(&system, self.chars_per_token)
            + real_tokens(&user, self.chars_per_token)
            + TEMPLATE_TOKENS;
        let window = body["options"]["num_ctx"].as_f64().unwrap();
        let counted = counted.min(window) as u64;
        self.prompts.lock().unwrap().push((system, user));
        let answer = json!({"answerable": true, "statements": [{"text": "They dry out.",
            "citations": [{"source": 1, "quote": "tardigrades survive in space by drying out"}]}],
            "unknowns": []})
        .to_string();
        let mut stream = String::new();
        for piece in pieces(&answer, 16) {
            stream.push_str(&format!(
                "{}\n",
                json!({"model": "m", "message": {"role": "assistant", "content": piece}, "done": false})
            ));
        }
        stream.push_str(&format!(
            "{}\n",
            json!({"model": "m", "message": {"role": "assistant", "content": ""}, "done": true,
                "done_reason": "stop", "prompt_eval_count": counted, "eval_count": 40})
        ));
        ResponseTemplate::new(200).set_body_raw(stream, "application/x-ndjson")
    }
}

/// A long page of sentences that all match the question, of varied lengths, with
/// one that the stand-in's answer quotes.
fn long_page(seed: u64, title: &str) -> String {
    let words = [
        "water",
        "cells",
        "dormant",
        "radiation",
        "vacuum",
        "researchers",
        "found",
        "sugar",
        "trehalose",
        "proteins",
        "damage",
        "repair",
        "orbit",
        "mission",
        "samples",
        "returned",
        "alive",
        "days",
        "exposure",
        "cold",
        "heat",
        "pressure",
        "moss",
        "lichen",
        "animals",
        "tiny",
        "experiments",
        "temperatures",
    ];
    let function = [
        "the", "of", "and", "in", "a", "to", "is", "was", "for", "that", "with",
    ];
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = |n: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % n
    };
    let mut html =
        format!("<html><head><title>{title}</title></head><body><article><h1>{title}</h1>");
    html.push_str(
        "<p>Tardigrades survive in space by drying out, and the tun state protects them.</p>",
    );
    for _ in 0..60 {
        html.push_str("<p>");
        for _ in 0..4 {
            // English prose: about half the words are function words.
            let length = 6 + next(22);
            let mut sentence = vec!["Tardigrades"];
            for i in 0..length {
                sentence.push(match i {
                    _ if i == length / 2 => "survive",
                    _ if i % 2 == 0 => function[next(function.len())],
                    _ => words[next(words.len())],
                });
            }
            if next(3) == 0 {
                sentence.push("space");
            }
            html.push_str(&sentence.join(" "));
            html.push_str(". ");
        }
        html.push_str("</p>");
    }
    html.push_str("</article></body></html>");
    html
}

/// A world with three long pages and the stand-in model.
async fn world(chars_per_token: f64) -> (World, StandIn) {
    let world = World::new().await;
    world
        .search_replies_with_capture("searxng/normal.body.json")
        .await;
    for (i, name) in [
        "tardigrades-space",
        "tardigrades-cryptobiosis",
        "tardigrades-overview",
        "sqlite-vacuum",
    ]
    .iter()
    .enumerate()
    {
        Mock::given(method("GET"))
            .and(path(format!("/pages/{name}.html")))
            .respond_with(ResponseTemplate::new(200).set_body_raw(
                long_page(i as u64 + 1, &format!("Tardigrades in space, part {i}")),
                "text/html; charset=utf-8",
            ))
            .mount(&world.pages)
            .await;
    }
    let model = StandIn {
        chars_per_token,
        prompts: Arc::default(),
    };
    Mock::given(method("POST"))
        .and(path("/api/chat"))
        .respond_with(model.clone())
        .mount(&world.ollama)
        .await;
    (world, model)
}

/// One `ground answer --json` run with the cache in `cache` (shared between runs).
async fn ask(world: &World, cache: &std::path::Path, extra: &[&str]) -> Value {
    let mut cmd = world.ground();
    cmd.env("XDG_CACHE_HOME", cache).args([
        "answer",
        "--json",
        "--context-tokens",
        &WINDOW.to_string(),
        "--max-answer-tokens",
        &ANSWER.to_string(),
    ]);
    cmd.args(extra).arg(QUESTION);
    let out = run(cmd).await;
    assert!(
        out.status.code().is_some_and(|c| c == 0 || c == 6),
        "{}",
        stderr(&out)
    );
    json_stdout(&out)
}

/// Budget use of the last prompt in the stand-in's tokens: the sources' tokens over
/// the room the model had for them (window - answer reserve - everything else in the
/// prompt), and the whole prompt's tokens.
fn budget_use(model: &StandIn) -> (f64, f64) {
    let prompts = model.prompts.lock().unwrap();
    let (system, user) = prompts.last().unwrap();
    let sources = user
        .strip_prefix("Sources:\n\n")
        .and_then(|u| u.split("\n\nQuestion: ").next())
        .unwrap();
    let cpt = model.chars_per_token;
    let whole = real_tokens(system, cpt) + real_tokens(user, cpt) + TEMPLATE_TOKENS;
    let sources = real_tokens(sources, cpt);
    let room = f64::from(WINDOW - ANSWER) - (whole - sources);
    (sources / room, whole)
}

/// Runs `runs` times with one cache; returns the budget use of each run.
async fn runs(chars_per_token: f64, runs: usize) -> (Vec<(f64, f64)>, Vec<Value>) {
    let (world, model) = world(chars_per_token).await;
    let cache = world.home.path().join("shared-cache");
    let (mut uses, mut reports) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        reports.push(ask(&world, &cache, &[]).await);
        uses.push(budget_use(&model));
    }
    (uses, reports)
}

#[tokio::test]
async fn calibration_is_persisted_and_used() {
    let (world, model) = world(4.6).await;
    let cache = world.home.path().join("shared-cache");
    let first = ask(&world, &cache, &[]).await;
    assert_eq!(
        first["model"]["token_ratio_calibrated"], false,
        "{}",
        first["model"]
    );
    assert_eq!(first["model"]["token_ratio"], 1.0);

    // Stored beside the cache, for this backend, server and model.
    let file: Value =
        serde_json::from_slice(&std::fs::read(cache.join("ground/calibration.json")).unwrap())
            .unwrap();
    let models = file["models"].as_object().unwrap();
    assert_eq!(models.len(), 1, "{file}");
    let (key, stored) = models.iter().next().unwrap();
    assert!(
        key.starts_with("ollama http://127.0.0.1:") && key.ends_with(" llama3.2"),
        "{key}"
    );
    let measured = first["model"]["prompt_tokens"].as_f64().unwrap()
        / first["model"]["estimated_prompt_tokens"].as_f64().unwrap();
    assert!(
        (stored["ratio"].as_f64().unwrap() - measured).abs() < 1e-9,
        "{stored}"
    );

    // The next run uses it: a larger budget, since this tokenizer makes fewer tokens.
    let second = ask(&world, &cache, &[]).await;
    assert_eq!(second["model"]["token_ratio_calibrated"], true);
    assert_eq!(second["model"]["token_ratio"], stored["ratio"]);
    let budget = |r: &Value| r["context"]["budget_tokens"].as_u64().unwrap();
    assert!(
        budget(&second) > budget(&first),
        "{} {}",
        budget(&first),
        budget(&second)
    );
    let (used, _) = budget_use(&model);
    assert!(used >= 0.95, "{used}");

    // With the cache off it is neither read nor written.
    let off = ask(&world, &cache, &["--no-cache"]).await;
    assert_eq!(off["model"]["token_ratio_calibrated"], false);
    assert_eq!(budget(&off), budget(&first));
}

#[tokio::test]
async fn budget_use_reaches_95_percent_with_a_known_tokenizer_ratio() {
    // A large-vocabulary tokenizer (the estimate errs high) and a small one (it errs
    // low, so uncalibrated prompts come close to the window).
    for chars_per_token in [4.6, 3.1] {
        let (uses, reports) = runs(chars_per_token, 3).await;
        for (run, ((used, whole), report)) in uses.iter().zip(&reports).enumerate() {
            eprintln!(
                "{chars_per_token} chars/token, run {}: sources use {:.1} % of their room in the model's tokens, prompt {whole} of {} usable tokens, ratio {} ({})",
                run + 1,
                used * 100.0,
                WINDOW - ANSWER,
                report["model"]["token_ratio"],
                if report["model"]["token_ratio_calibrated"] == true {
                    "calibrated"
                } else {
                    "estimate"
                },
            );
            if run == 0 {
                // Before calibration: today's estimate, which misses either way; a cut
                // prompt is still reported.
                let cut = *whole >= f64::from(WINDOW);
                let warned = report["warnings"]
                    .to_string()
                    .contains("prompt was probably cut");
                assert_eq!(cut, warned, "{}", report["warnings"]);
                continue;
            }
            // Once the server counted a whole prompt (the run before was not cut): at
            // least 95 % used. Always: never over the window less the answer reserve,
            // and no cut-prompt warning.
            if uses[run - 1].1 < f64::from(WINDOW) {
                assert!(*used >= 0.95, "{chars_per_token}: {uses:?}");
            }
            assert!(*whole <= f64::from(WINDOW - ANSWER), "run {run}: {whole}");
            assert!(
                !report["warnings"]
                    .to_string()
                    .contains("prompt was probably cut"),
                "{}",
                report["warnings"]
            );
        }
    }
}
