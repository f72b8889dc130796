//! The embedded engine on one prompt, for `scripts/bench-embedded.py`: loads a GGUF
//! file with ground's engine, writes one reply (under the answer's JSON grammar unless
//! `--no-grammar`) and prints one JSON line: load time, prompt tokens, prefill and
//! decode speed, peak RSS. Not a test: speeds depend on the machine.
//!
//!     cargo run --example bench_embedded -- MODEL.gguf PROMPT.txt THREADS MAX_TOKENS [--no-grammar]
//!
//! PROMPT.txt holds the system message, a line `---`, then the user message.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use ground::llm::embedded::engine::{self, GenerateRequest, LoadOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, prompt, threads, max_tokens, rest @ ..] = args.as_slice() else {
        return Err(
            "usage: bench_embedded MODEL.gguf PROMPT.txt THREADS MAX_TOKENS [--no-grammar]".into(),
        );
    };
    let text = std::fs::read_to_string(prompt)?;
    let (system, user) = text
        .split_once("\n---\n")
        .ok_or("PROMPT.txt needs a --- line")?;
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
    let sources = user.matches("\n[").count().max(1);
    let schema = ground::llm::answer_schema(sources, ground::llm::AnswerBounds::for_tokens(512));
    let request = GenerateRequest {
        system: system.to_string(),
        user: user.to_string(),
        schema: (!rest.iter().any(|a| a == "--no-grammar")).then_some(schema),
        context_tokens: 4096,
        max_tokens: max_tokens.parse()?,
        threads: threads.parse()?,
    };
    let out = engine::generate(&loaded, &request, &AtomicBool::new(false), &mut |_| {})?;
    let peak_kb = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0);
    let per_sec = |n: u32, d: std::time::Duration| f64::from(n) / d.as_secs_f64().max(1e-9);
    println!(
        "{}",
        serde_json::json!({
            "load_s": load.as_secs_f64(),
            "prompt_tokens": out.prompt_tokens,
            "prefill_s": out.prefill.as_secs_f64(),
            "prefill_tps": per_sec(out.prompt_tokens, out.prefill),
            "completion_tokens": out.completion_tokens,
            "decode_s": out.decode.as_secs_f64(),
            "decode_tps": per_sec(out.completion_tokens, out.decode),
            "done_reason": out.done_reason,
            "peak_rss_mb": peak_kb as f64 / 1024.0,
            "text": out.text,
        })
    );
    Ok(())
}
