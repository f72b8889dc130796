//! The embedded engine's cache across a conversation's three model calls, for the
//! note of issue [P3] (not part of the product): an answer on sources, the follow-up's
//! rewrite call (another system prompt, a short message), then the follow-up's answer
//! on the same sources with the first turn as history, in one process, as `ground
//! chat` and `ground serve` make them. Prints one JSON object: for each call its
//! prompt tokens and how many of them the cache held.
//!
//!     cargo run --example followup_probe -- MODEL.gguf [SOURCES.txt]
//!
//! Without SOURCES.txt the sources are the e2e site's tardigrade page as text.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use ground::llm::embedded::engine::{self, GenerateRequest, LoadOptions};
use ground::llm::{SYSTEM_PROMPT, user_message, user_message_with_history};

const REWRITE: &str = "Rewrite the follow-up question so that it stands alone, as JSON.";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(model) = args.first() else {
        return Err("usage: followup_probe MODEL.gguf [SOURCES.txt]".into());
    };
    let sources = match args.get(1) {
        Some(file) => std::fs::read_to_string(file)?,
        None => {
            let page = std::fs::read(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/site/tardigrades.html"),
            )?;
            let text = ground::extract::extract_html(&String::from_utf8_lossy(&page), None).text;
            format!("<source id=\"1\" title=\"Tardigrades\">\n{text}\n</source>")
        }
    };
    let options = LoadOptions {
        label: model.clone(),
        smaller: None,
        context_tokens: 4096,
        verbose: false,
        memory_available: None,
        gpu_layers: None,
    };
    let loaded = engine::load(
        std::path::Path::new(model),
        &options,
        &Arc::new(AtomicBool::new(false)),
    )?;
    let request = |system: &str, user: String, max_tokens: u32| GenerateRequest {
        system: system.into(),
        user,
        schema: None,
        context_tokens: 4096,
        max_tokens,
        threads: 0,
        parallel: 1,
        stop_at_end_of_text: true,
        scope: None,
    };
    let first = "Do tardigrades survive in space?";
    let calls = [
        (
            "answer",
            request(SYSTEM_PROMPT, user_message(&sources, first), 48),
        ),
        (
            "rewrite",
            request(
                REWRITE,
                format!("Earlier question: {first}\nFollow-up: On which mission?"),
                24,
            ),
        ),
        (
            "follow_up",
            request(
                SYSTEM_PROMPT,
                user_message_with_history(
                    &sources,
                    &format!("<history>\nUser: {first}\nAssistant: Yes.\n</history>\n\n"),
                    "On which mission did tardigrades survive in space?",
                ),
                48,
            ),
        ),
    ];
    let mut out = serde_json::Map::new();
    for (name, call) in calls {
        let done = engine::generate(&loaded, &call, &AtomicBool::new(false), &mut |_| {})?;
        out.insert(
            name.into(),
            serde_json::json!({"prompt_tokens": done.prompt_tokens, "cached_prompt_tokens": done.cached_prompt_tokens}),
        );
    }
    println!("{}", serde_json::Value::Object(out));
    Ok(())
}
