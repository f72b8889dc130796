//! What the properties share: the case count (`PROPTEST_CASES` overrides it), the
//! generators of nasty text and arbitrary JSON, and the check that text is clean.

use proptest::prelude::*;
use serde_json::{Value, json};

/// Cases for the expensive properties (HTML parsing); `PROPTEST_CASES` overrides.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub fn config(default: u32) -> ProptestConfig {
    ProptestConfig {
        cases: cases(default),
        // Shrinking long inputs can take minutes; a found case is minimised by hand.
        max_shrink_iters: 2_000,
        // Found cases become plain tests below, not files in the work tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------------
// Generators

/// Characters that break byte/char arithmetic, terminals or our delimiters.
pub const NASTY: &[&str] = &[
    "\u{1b}[31m",
    "\u{1b}]8;;http://evil\u{7}",
    "\u{1b}]0;title\u{7}",
    "\u{1b}[2J",
    "\u{7}",
    "\u{0}",
    "\r",
    "\r\n",
    "\u{85}",
    "\u{9b}",
    "\u{202E}",
    "\u{2066}",
    "\u{200F}",
    "\u{200B}",
    "\u{FEFF}",
    "\u{AD}",
    "\u{A0}",
    "\u{2028}",
    "\u{2029}",
    "</source>",
    "<SOURCE id=\"9\">",
    "<source",
    "</",
    "<",
    "é",
    "e\u{301}",
    "İ",
    "ẞ",
    "ﬁ",
    "Σ",
    "東京",
    "🐻",
    "👩\u{200D}🔬",
    "🇸🇪",
    "…",
    "...",
    "—",
    "\u{201C}",
    "\u{2019}",
    "\"",
    "\\",
    "{",
    "}",
    "[",
    "]",
    ".",
    "!",
    "?",
    "。",
    " ",
    "\t",
    "\n",
];

pub fn nasty_text(max_pieces: usize) -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-zA-Z0-9 ]{1,12}",
        3 => prop::sample::select(NASTY).prop_map(str::to_string),
        1 => any::<char>().prop_map(String::from),
        1 => any::<String>(),
    ];
    prop::collection::vec(piece, 0..max_pieces).prop_map(|v| v.concat())
}

/// Arbitrary JSON values of bounded size, with nasty strings.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        nasty_text(6).prop_map(Value::String),
        prop::sample::select(vec![
            "http://x.test/a",
            "https://x.test/a",
            "HTTPS://X.TEST/a",
            "ftp://x.test/",
            "javascript:alert(1)",
            "http://",
            "http://[::1",
            "data:text/html,hi",
            "",
            "1",
            "[2]",
            "source 3",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec![
                        "url",
                        "title",
                        "content",
                        "engine",
                        "engines",
                        "publishedDate",
                        "pubdate",
                        "results",
                        "query",
                        "unresponsive_engines",
                        "answers",
                        "web",
                        "description",
                        "age",
                        "page_age",
                        "published_date",
                        "error",
                        "detail",
                        "message",
                        "x",
                    ]),
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(
                kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
            )),
        ]
    })
}

// ---------------------------------------------------------------------------------
// Invariant checks

/// Sanitised text: no control characters but `\n` and `\t`, no bidi overrides.
pub fn assert_clean(text: &str) -> Result<(), TestCaseError> {
    for c in text.chars() {
        prop_assert!(
            c == '\n' || c == '\t' || !c.is_control(),
            "control char {:?} in {:?}",
            c,
            text
        );
        prop_assert!(
            !matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}'),
            "bidi char {:?} in {:?}",
            c,
            text
        );
    }
    Ok(())
}
