//! Measurement helper (not part of the product): times `extract_html` on generated
//! tag-soup pages that drive an HTML parser to its worst case, to check that the
//! extraction stage stays bounded. Run in a release build:
//!
//!     cargo run --release --example extract_worst_case            # every page
//!     cargo run --release --example extract_worst_case -- b-id    # names containing "b-id"
//!     cargo run --release --example extract_worst_case -- file:PAGE.html
//!
//! Each line: page name, size in bytes, wall and CPU seconds, bytes of text extracted,
//! and what the extractor left out of the page (its `truncated` report).
use std::time::Instant;

/// One generated page: a name and its HTML.
fn pages() -> Vec<(String, String)> {
    let mut pages = Vec::new();
    for n in [5_000, 10_000, 20_000, 40_000, 150_000] {
        let body: String = (0..n).map(|i| format!("<b id={i}>x")).collect();
        pages.push((format!("b-id-{n}"), body));
    }
    for tag in ["b", "i", "a href=x", "font", "nobr", "em", "strong", "u"] {
        let name = tag.split(' ').next().unwrap();
        let n = 20_000;
        pages.push((
            format!("{name}-unclosed-{n}"),
            format!("<{tag}>x").repeat(n),
        ));
    }
    let mixed: String = (0..20_000)
        .map(|i| match i % 5 {
            0 => "<b>x",
            1 => "<i>y",
            2 => "<font color=red>z",
            3 => "<nobr>w",
            _ => "<a href=x>v",
        })
        .collect();
    pages.push(("mixed-formatting-20000".into(), mixed));
    pages.push((
        "misnested-a-p-a-20000".into(),
        "<a href=x><p>text<a href=y>".repeat(20_000),
    ));
    pages.push((
        "formatting-then-block-20000".into(),
        "<b>x<div>y".repeat(20_000),
    ));
    pages.push((
        "b-then-close-p-20000".into(),
        "<b>x<p>y</b>z".repeat(20_000),
    ));
    pages.push((
        "nested-tables-20000".into(),
        "<table><tr><td>x".repeat(20_000),
    ));
    pages.push(("div-100000".into(), "<div>".repeat(100_000)));
    pages.push((
        "span-deep-then-hr-50000".into(),
        format!("{}{}", "<span>x".repeat(50_000), "<hr>".repeat(50_000)),
    ));
    pages.push((
        "b-deep-then-stray-close-50000".into(),
        format!("{}{}", "<b>x".repeat(50_000), "</zz>".repeat(50_000)),
    ));
    pages.push((
        "div-table-misclose-20000".into(),
        "<div><table></div></table>".repeat(20_000),
    ));
    pages.push((
        "b-table-misclose-20000".into(),
        (0..20_000)
            .map(|i| format!("<b id={i}><table></b></table>"))
            .collect(),
    ));
    pages.push((
        "p-b-id-reopen-5000".into(),
        (0..5_000).map(|i| format!("<p><b id={i}>x</p>")).collect(),
    ));
    pages.push(("span-100000".into(), "<span>x".repeat(100_000)));
    pages.push(("closing-b-only-200000".into(), "</b>x".repeat(200_000)));
    pages.push((
        "span-999-then-hr-400000".into(),
        format!("{}{}", "<span>".repeat(999), "<hr>".repeat(400_000)),
    ));
    pages.push((
        "span-255-then-stray-close-400000".into(),
        format!("{}{}", "<span>".repeat(255), "</zz>".repeat(400_000)),
    ));
    pages.push(("noahs-ark-32-attributes".into(), {
        let attrs: String = (0..32).map(|i| format!(" a{i}")).collect();
        let open = format!("<b{attrs}>x");
        format!(
            "{}{}",
            open.repeat(31),
            format!("{open}</b>").repeat(15_000)
        )
    }));
    pages.push((
        "one-tag-200000-attributes".into(),
        format!(
            "<b {}>x",
            (0..200_000).map(|i| format!("a{i} ")).collect::<String>()
        ),
    ));
    pages.push((
        "article-30000-paragraphs".into(),
        format!(
            "<html><body><article>{}</article></body></html>",
            "<p>Some <b>bold</b> and <i>italic</i> words, <a href=x>a link</a>.</p>\n"
                .repeat(30_000)
        ),
    ));
    pages
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    if let Some(path) = filter.strip_prefix("file:") {
        let html = std::fs::read_to_string(path).expect("read the page");
        let started = Instant::now();
        let cpu = cpu_seconds();
        let page = ground::extract::extract_html(&html, None);
        println!(
            "{path} {} B {:.3} s wall {:.3} s cpu  text {} B  {}",
            html.len(),
            started.elapsed().as_secs_f64(),
            cpu_seconds() - cpu,
            page.text.len(),
            describe(&page)
        );
        return;
    }
    for (name, html) in pages() {
        if !name.contains(&filter) {
            continue;
        }
        let started = Instant::now();
        let cpu = cpu_seconds();
        let page = ground::extract::extract_html(&html, None);
        let seconds = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu;
        println!(
            "{name:32} {:>9} B {seconds:>8.3} s wall {cpu:>8.3} s cpu  text {:>8} B  {}",
            html.len(),
            page.text.len(),
            describe(&page)
        );
    }
}

/// CPU time of this process so far, from Linux's /proc/self/schedstat (0 elsewhere):
/// steadier than wall time on a machine shared with other builds.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(0.0, |ns| ns / 1e9)
}

fn describe(page: &ground::extract::Extracted) -> String {
    page.truncated.map(|t| t.to_string()).unwrap_or_default()
}
