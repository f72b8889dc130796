//! The extractor's work is bounded on hostile HTML: pages built to drive the HTML
//! parser into its quadratic corners (unclosed formatting elements that all differ,
//! misnested formatting, deep nesting) are extracted quickly, never panic, and say
//! what was left out of them (`Extracted::truncated`).
//!
//! Before the bound, `<b id=N>x` repeated 20,000 times (250 KB) took 20 s in a release
//! build, growing with the square of the count: the 2 MiB page below would have taken
//! many minutes. A linear extraction of 2 MiB takes about 0.3 s in a release build and
//! 2 s in a debug build on a busy 2-core machine, so the time limits below leave a wide
//! margin and still catch a quadratic parse by orders of magnitude.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use ground::extract::{Extracted, TruncationReason, extract_html};
use proptest::prelude::*;

/// The most time one page of up to 2 MiB may take.
fn limit() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(20)
    } else {
        Duration::from_secs(3)
    }
}

fn timed(html: &str) -> (Extracted, Duration) {
    let started = Instant::now();
    let page = extract_html(html, None);
    (page, started.elapsed())
}

#[test]
fn the_b_id_page_at_150000_elements_is_quick_and_keeps_its_text() {
    let html: String = (0..150_000).map(|i| format!("<b id={i}>x")).collect();
    assert!(html.len() < 2 * 1024 * 1024, "fits the fetch cap");
    let (page, took) = timed(&html);
    assert!(took < limit(), "took {took:?}");
    assert_eq!(page.text, "x".repeat(150_000));
    let truncated = page.truncated.expect("reported");
    assert_eq!(truncated.reason, TruncationReason::Formatting);
    assert_eq!(truncated.cut_at, None);
    assert!(truncated.dropped > 149_000, "{truncated:?}");
    assert!(truncated.to_string().contains("formatting"), "{truncated}");
}

#[test]
fn other_parser_bombs_are_quick_and_reported() {
    let bombs = [
        (0..20_000)
            .map(|i| format!("<p><b id={i}>x</p>"))
            .collect::<String>(),
        (0..20_000)
            .map(|i| format!("<b id={i}><table></b></table>"))
            .collect(),
        "<div><table></div></table>".repeat(20_000),
        format!("{}{}", "<span>x".repeat(50_000), "<hr>".repeat(50_000)),
        format!("{}{}", "<span>".repeat(999), "</zz>".repeat(400_000)),
        format!(
            "<b {}>x",
            (0..200_000).map(|i| format!("a{i} ")).collect::<String>()
        ),
        "</p>".repeat(500_000),
    ];
    for html in bombs {
        let (page, took) = timed(&html);
        assert!(took < limit(), "took {took:?} on {:.60}", html);
        assert!(page.truncated.is_some(), "{:.60}", html);
    }
}

#[test]
fn real_pages_are_not_truncated() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/extract");
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let html = ground::extract::decode_body(&bytes, None);
        assert_eq!(extract_html(&html, None).truncated, None);
    }
}

/// Tag soup of formatting elements, as `(piece, repeat)` runs: the same tags closed
/// and unclosed, alike and all different, with text and a few block and table tags
/// between them.
fn formatting_soup() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "<b>",
        "<b id=#>",
        "<i>",
        "<i class=#>",
        "<a href=x>",
        "<a href=#>",
        "<font>",
        "<font color=#>",
        "<nobr>",
        "<nobr title=#>",
        "<em>",
        "<strong id=#>",
        "</b>",
        "</i>",
        "</a>",
        "</font>",
        "</nobr>",
        "</em>",
        "</strong>",
        "text ",
        "x",
        "<p>",
        "</p>",
        "<div>",
        "</div>",
        "<table><td>",
        "</table>",
    ]);
    prop::collection::vec((piece, 1usize..6_000), 1..400).prop_map(|runs| {
        let mut html = String::new();
        let mut n = 0usize;
        'fill: for (piece, times) in runs {
            for _ in 0..times {
                if html.len() > 2 * 1024 * 1024 {
                    break 'fill;
                }
                // `#` becomes a number that differs each time, so that the parser's
                // duplicate check keeps every element.
                n += 1;
                html.push_str(&piece.replace('#', &n.to_string()));
            }
        }
        html
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        // Shrinking 2 MB inputs takes long; a found case is minimised by hand.
        max_shrink_iters: 200,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn formatting_soup_up_to_2_mib_extracts_quickly(html in formatting_soup()) {
        let (page, took) = timed(&html);
        prop_assert!(took < limit(), "took {:?} for {} bytes", took, html.len());
        prop_assert!(page.text.len() <= html.len());
    }
}
