//! Property tests, the second test binary (the slow one): every parser that reads bytes
//! from the network or a model (the HTML extractor and charset decoder, the SearXNG,
//! Brave and Tavily reply parsers, the model-reply parser), the sanitisers and the
//! prompt builder, and the citation verifier are fed arbitrary and mutated input. None
//! may panic, and each output keeps its invariants (sanitised text has no control
//! characters but `\n`/`\t`, offsets are char boundaries, search hits are unique
//! http(s) URLs within the limit, `groundingMetadata` follows Gemini's rules, ...).
//!
//! `cargo test` runs a moderate number of cases per property. For a long fuzzing run,
//! raise the count (proptest reads `PROPTEST_CASES`) in release mode, leaving out two
//! properties that read it too but were never part of that run (each formatting-soup
//! case is a page of up to 2 MiB):
//!
//! ```sh
//! PROPTEST_CASES=200000 cargo test --release --test props -- --skip formatting_soup --skip scraps_joined
//! ```
//!
//! A crash found this way becomes a plain `#[test]` in the module of the code it broke
//! (as `search::searxng_result_urls_must_be_written_with_scheme_and_slashes`).

mod strategies;

mod answer;
mod extract;
mod grounding;
mod pdf;
mod search;
mod text;
