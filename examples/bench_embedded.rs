//! The embedded engine on a sequence of prompts in one process, for
//! `scripts/bench-embedded.py`: loads a GGUF file with ground's engine, writes one
//! reply per user message in turn (under the answer's JSON grammar unless
//! `--no-grammar`), the context kept between them as in `ground chat` or `ground mcp`,
//! and prints one JSON object: load time, peak RSS, and for each reply its prompt
//! tokens, how many of them were held from the reply before, prefill and decode speed.
//! Not a test: speeds depend on the machine.
//!
//!     cargo run --example bench_embedded -- MODEL.gguf THREADS MAX_TOKENS [--no-grammar] SYSTEM.txt USER.txt...

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ground::llm::embedded::engine::{self, GenerateRequest, LoadOptions};

const USAGE: &str =
    "usage: bench_embedded MODEL.gguf THREADS MAX_TOKENS [--no-grammar] SYSTEM.txt USER.txt...";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, threads, max_tokens, rest @ ..] = args.as_slice() else {
        return Err(USAGE.into());
    };
    let grammar = !rest.iter().any(|a| a == "--no-grammar");
    let files: Vec<&String> = rest.iter().filter(|a| *a != "--no-grammar").collect();
    let [system, users @ ..] = files.as_slice() else {
        return Err(USAGE.into());
    };
    if users.is_empty() {
        return Err(USAGE.into());
    }
    let system = std::fs::read_to_string(system)?;
    let options = LoadOptions {
        label: model.clone(),
        smaller: None,
        context_tokens: 4096,
        verbose: false,
        memory_available: None,
        gpu_layers: None,
    };
    let started = Instant::now();
    let loaded = engine::load(
        std::path::Path::new(model),
        &options,
        &Arc::new(AtomicBool::new(false)),
    )?;
    let load = started.elapsed();
    let per_sec = |n: u32, d: Duration| f64::from(n) / d.as_secs_f64().max(1e-9);
    let mut calls = Vec::new();
    for user in users {
        let user = std::fs::read_to_string(user)?;
        let sources = user.matches("\n[").count().max(1);
        let schema =
            ground::llm::answer_schema(sources, ground::llm::AnswerBounds::for_tokens(512));
        let request = GenerateRequest {
            system: system.clone(),
            user,
            schema: grammar.then_some(schema),
            context_tokens: 4096,
            max_tokens: max_tokens.parse()?,
            threads: threads.parse()?,
            parallel: 1,
            // Without the grammar this times a random-weight file, whose end token is
            // as likely as any: decode all MAX_TOKENS, as llama.cpp's server is asked to.
            stop_at_end_of_text: grammar,
            scope: None,
        };
        let out = engine::generate(&loaded, &request, &AtomicBool::new(false), &mut |_| {})?;
        calls.push(serde_json::json!({
            "prompt_tokens": out.prompt_tokens,
            "cached_prompt_tokens": out.cached_prompt_tokens,
            "prefill_s": out.prefill.as_secs_f64(),
            "prefill_tps": per_sec(out.evaluated_prompt_tokens(), out.prefill),
            "completion_tokens": out.completion_tokens,
            "decode_s": out.decode.as_secs_f64(),
            "decode_tps": per_sec(out.completion_tokens, out.decode),
            "done_reason": out.done_reason,
        }));
    }
    let peak_kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0);
    println!(
        "{}",
        serde_json::json!({
            "load_s": load.as_secs_f64(),
            "peak_rss_mb": peak_kb as f64 / 1024.0,
            "calls": calls,
        })
    );
    Ok(())
}
