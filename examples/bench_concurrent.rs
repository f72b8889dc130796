//! Continuous batching, timed, for `scripts/bench-concurrent.py`: loads a GGUF file
//! with ground's engine and writes the same N replies twice, each on a context that
//! holds nothing: one at a time (`parallel` 1), then all at once from N threads
//! (`parallel` N, one batch per step). Prints one JSON object: the wall time of each
//! way, their ratio, and per reply its tokens and how many replies shared its steps.
//! The N prompts have sources of their own (only the instructions are shared), so the
//! figure is the batching's, not the prompt cache's. Not a test: speeds depend on the
//! machine.
//!
//!     cargo run --example bench_concurrent -- MODEL.gguf THREADS MAX_TOKENS N [--no-grammar]
//!     cargo run --example bench_concurrent -- --prompts N
//!
//! `--prompts N` prints the N replies' system and user messages and the answer's JSON
//! schema instead, so the script asks llama.cpp's server the very same.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ground::llm::embedded::engine::{self, GenerateRequest, Generated, LoadOptions, Model};

const USAGE: &str = "usage: bench_concurrent MODEL.gguf THREADS MAX_TOKENS N [--no-grammar]";

/// What each reply is asked about: a source of its own and a question on it.
const TOPICS: [(&str, &str); 8] = [
    (
        "Tardigrades are micro-animals. In 2007 tardigrades survived ten days in open space on the FOTON-M3 mission, exposed to vacuum and radiation.",
        "How long did tardigrades survive in open space?",
    ),
    (
        "A honey bee colony holds up to 60,000 bees. Forager bees dance to tell the others where flowers are, and keep the hive near 35 degrees Celsius.",
        "How do bees tell each other where flowers are?",
    ),
    (
        "The Rust compiler checks ownership and borrowing at compile time, so a program without unsafe code has no data races and no use after free.",
        "What does the Rust compiler check at compile time?",
    ),
    (
        "Mount Everest is 8,849 metres high. It was first climbed in 1953 by Tenzing Norgay and Edmund Hillary, from the south side in Nepal.",
        "Who first climbed Mount Everest, and when?",
    ),
    (
        "The Danube flows 2,850 kilometres from the Black Forest to the Black Sea, through ten countries and four capital cities.",
        "How long is the Danube?",
    ),
    (
        "Octopuses have three hearts and blue blood. Two hearts pump blood through the gills, the third through the rest of the body.",
        "How many hearts does an octopus have?",
    ),
    (
        "The first transatlantic telegraph cable was completed in 1858; it failed after three weeks. A lasting one followed in 1866.",
        "When was the first lasting transatlantic cable laid?",
    ),
    (
        "Sourdough bread rises with wild yeast and lactic acid bacteria kept in a starter of flour and water, fed every day.",
        "What makes sourdough bread rise?",
    ),
];

/// The system and user messages of reply `i`.
fn messages(i: usize) -> (String, String) {
    let (source, question) = TOPICS[i];
    let sources = format!("[1] Source (https://example.org/{i})\n{source}");
    (
        ground::llm::SYSTEM_PROMPT.to_string(),
        ground::llm::user_message(&sources, question),
    )
}

fn schema() -> serde_json::Value {
    ground::llm::answer_schema(1, ground::llm::AnswerBounds::for_tokens(512))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // OpenMP's threads sleep soon when they wait, as in the `ground` binary (unless
    // GOMP_SPINCOUNT or OMP_WAIT_POLICY is set: `bench-concurrent.py --spincount`).
    #[cfg(target_os = "linux")]
    ground::llm::embedded::engine::brief_openmp_spin();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, n] = args.as_slice()
        && flag == "--prompts"
    {
        let n: usize = n.parse()?;
        let prompts: Vec<_> = (0..n.min(TOPICS.len()))
            .map(|i| {
                let (system, user) = messages(i);
                serde_json::json!({"system": system, "user": user})
            })
            .collect();
        println!(
            "{}",
            serde_json::json!({"prompts": prompts, "schema": schema()})
        );
        return Ok(());
    }
    let [model, threads, max_tokens, n, rest @ ..] = args.as_slice() else {
        return Err(USAGE.into());
    };
    let grammar = !rest.iter().any(|a| a == "--no-grammar");
    let (threads, max_tokens, n): (usize, u32, usize) =
        (threads.parse()?, max_tokens.parse()?, n.parse()?);
    if n == 0 || n > TOPICS.len() {
        return Err(format!("N is 1 to {}", TOPICS.len()).into());
    }
    let options = LoadOptions {
        label: model.clone(),
        smaller: None,
        context_tokens: 2048,
        verbose: false,
        memory_available: None,
        gpu_layers: None,
    };
    let loaded = engine::load(
        std::path::Path::new(model),
        &options,
        &Arc::new(AtomicBool::new(false)),
    )?;
    let request = |i: usize, parallel: usize| {
        let (source, question) = TOPICS[i];
        let sources = format!("[1] Source (https://example.org/{i})\n{source}");
        GenerateRequest {
            system: ground::llm::SYSTEM_PROMPT.into(),
            user: ground::llm::user_message(&sources, question),
            schema: grammar
                .then(|| ground::llm::answer_schema(1, ground::llm::AnswerBounds::for_tokens(512))),
            context_tokens: 2048,
            max_tokens,
            threads,
            parallel,
            // Without the grammar every reply writes all MAX_TOKENS (a random-weight
            // file's end token is as likely as any).
            stop_at_end_of_text: grammar,
            scope: None,
        }
    };
    // A first reply with another shape warms the engine (its thread, the model's
    // pages) and leaves a context that the next shape replaces: both ways start cold.
    engine::generate(
        &loaded,
        &request(0, n + 1),
        &AtomicBool::new(false),
        &mut |_| {},
    )?;

    let started = Instant::now();
    let mut alone = Vec::new();
    for i in 0..n {
        // Only the instructions are a prefix of the reply before (as in the
        // concurrent run, where a later reply copies them from an earlier one's).
        alone.push(engine::generate(
            &loaded,
            &request(i, 1),
            &AtomicBool::new(false),
            &mut |_| {},
        )?);
    }
    let one_at_a_time = started.elapsed();

    // Another shape: the context is made anew, holding nothing.
    let started = Instant::now();
    let together = written_together(&loaded, (0..n).map(|i| request(i, n)).collect())?;
    let at_once = started.elapsed();

    let same = alone
        .iter()
        .zip(&together)
        .filter(|(a, b)| a.text == b.text)
        .count();
    // Where each reply written together first differs from the one written alone.
    let differ_at: Vec<Option<usize>> = alone
        .iter()
        .zip(&together)
        .map(|(a, b)| {
            (a.text != b.text).then(|| {
                a.text
                    .chars()
                    .zip(b.text.chars())
                    .take_while(|(x, y)| x == y)
                    .count()
            })
        })
        .collect();
    let calls = |g: &[Generated]| -> Vec<serde_json::Value> {
        g.iter()
            .map(|g| {
                serde_json::json!({
                    "prompt_tokens": g.prompt_tokens,
                    "cached_prompt_tokens": g.cached_prompt_tokens,
                    "completion_tokens": g.completion_tokens,
                    "prefill_s": g.prefill.as_secs_f64(),
                    "decode_s": g.decode.as_secs_f64(),
                    "alongside": g.alongside,
                })
            })
            .collect()
    };
    println!(
        "{}",
        serde_json::json!({
            "n": n,
            "threads": threads,
            "one_at_a_time_s": secs(one_at_a_time),
            "at_once_s": secs(at_once),
            "ratio": secs(at_once) / secs(one_at_a_time).max(1e-9),
            "same_replies": same,
            "differ_at_char": differ_at,
            "alone": calls(&alone),
            "together": calls(&together),
        })
    );
    Ok(())
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// `requests` from threads of their own, started together.
fn written_together(
    model: &Arc<Model>,
    requests: Vec<GenerateRequest>,
) -> Result<Vec<Generated>, ground::Error> {
    let start = Arc::new(std::sync::Barrier::new(requests.len()));
    let workers: Vec<_> = requests
        .into_iter()
        .map(|request| {
            let (model, start) = (model.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                engine::generate(&model, &request, &AtomicBool::new(false), &mut |_| {})
            })
        })
        .collect();
    workers
        .into_iter()
        .map(|w| w.join().expect("a reply's thread panicked"))
        .collect()
}
