//! Tests of the bounding pass: the bombs it defuses, real markup it leaves alone,
//! and the parse time on random tag soup.

use super::*;
use proptest::prelude::*;

/// `<b id=0>x<b id=1>x...`: unclosed formatting elements that all differ, so the
/// parser's duplicate check keeps every one.
fn b_bomb(n: usize) -> String {
    (0..n).map(|i| format!("<b id={i}>x")).collect()
}

fn unchanged(html: &str) {
    let bounded = bound(html);
    assert!(
        matches!(bounded.html, Cow::Borrowed(_)),
        "copied: {html:.200}"
    );
    assert_eq!(bounded.html, html);
    assert_eq!(bounded.truncation, None, "{html:.200}");
}

fn reason(html: &str) -> Option<TruncationReason> {
    bound(html).truncation.map(|t| t.reason)
}

#[test]
fn real_pages_pass_unchanged_and_uncopied() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/extract");
    for entry in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        unchanged(&crate::extract::decode_body(&bytes, None));
    }
}

#[test]
fn well_formed_and_sloppy_markup_passes_unchanged() {
    unchanged(
        &"<p>Some <b>bold</b>, <i>italic</i> and <a href=x>linked</a> words.</p>\n".repeat(20_000),
    );
    unchanged(&format!(
        "<ul>{}</ul>",
        "<li>item <b>one</b>".repeat(20_000)
    ));
    unchanged(&"<p>unclosed paragraph <font face=x>with font".repeat(20_000));
    unchanged(&"<table><tr><td>a<td>b<tr><td>c</table>".repeat(5_000));
    unchanged(&"<dl><dt>term<dd>definition</dl>".repeat(5_000));
    unchanged(&"<div><p>text<div>nested</div></div>".repeat(5_000));
    unchanged(&"<svg><path d=x/><g><rect/></g></svg><math><mi>x</mi></math>".repeat(5_000));
    unchanged(&"<select><option>a<option>b<optgroup><option>c</select>".repeat(5_000));
    unchanged(&"<h1>a<h2>b</h2><p>c</p>".repeat(5_000));
    // Misnested formatting: the parser closes it by the adoption agency.
    unchanged(&"<p><b>bold <i>both</b> italic</i></p>".repeat(20_000));
    unchanged(&"<b><p>para in bold</b> more</p>".repeat(20_000));
    unchanged(&"<a href=1>one<a href=2>two".repeat(20_000));
}

#[test]
fn a_formatting_bomb_keeps_its_text_and_drops_the_excess_tags() {
    let n = 150_000;
    let html = b_bomb(n);
    let bounded = bound(&html);
    let t = bounded.truncation.expect("bounded");
    assert_eq!(t.reason, TruncationReason::Formatting);
    assert_eq!(t.cut_at, None);
    assert_eq!(t.dropped, n - MAX_FORMATTING);
    assert_eq!(bounded.html.matches("<b ").count(), MAX_FORMATTING);
    assert_eq!(bounded.html.matches('x').count(), n);
    assert!(bounded.html.starts_with("<b id=0>x<b id=1>x"));
}

#[test]
fn every_formatting_tag_is_capped() {
    for tag in [
        "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt",
        "u",
    ] {
        // Each inside its own table cell, so that even <a> and <nobr> stay open.
        let html: String = (0..2_000)
            .map(|i| format!("<table><tr><td><{tag} id={i}>x"))
            .collect();
        assert!(reason(&html).is_some(), "{tag}");
        let html: String = (0..2_000)
            .map(|i| format!("<div><{tag} id={i}>x"))
            .collect();
        assert!(reason(&html).is_some(), "{tag}");
    }
}

#[test]
fn a_dropped_start_tag_takes_its_end_tag_along() {
    let opens: String = (0..40).map(|i| format!("<i id={i}>")).collect();
    let html = format!("{opens}x{}after", "</i>".repeat(40));
    let bounded = bound(&html);
    assert_eq!(bounded.html.matches("<i ").count(), MAX_FORMATTING);
    assert_eq!(bounded.html.matches("</i>").count(), MAX_FORMATTING);
    assert!(
        bounded
            .html
            .ends_with(&format!("x{}after", "</i>".repeat(MAX_FORMATTING)))
    );
    assert_eq!(bounded.truncation.unwrap().dropped, 40 - MAX_FORMATTING);
}

#[test]
fn closed_formatting_elements_do_not_count() {
    unchanged(&b_bomb(1).replace("x", "x</b>").repeat(50_000));
    unchanged(
        &(0..20_000)
            .map(|i| format!("<b id={i}>x</b>"))
            .collect::<String>(),
    );
}

#[test]
fn deep_nesting_drops_the_deeper_tags_and_keeps_the_text() {
    let html = format!(
        "{}deep{}after",
        "<div>".repeat(1_000),
        "</div>".repeat(1_000)
    );
    let bounded = bound(&html);
    let t = bounded.truncation.unwrap();
    assert_eq!(t.reason, TruncationReason::Nesting);
    assert_eq!(t.dropped, 1_000 - MAX_NESTING);
    assert_eq!(bounded.html.matches("<div>").count(), MAX_NESTING);
    assert_eq!(bounded.html.matches("</div>").count(), MAX_NESTING);
    assert!(bounded.html.contains("deep</div>"));
    assert!(bounded.html.ends_with("after"));
    // Inline nesting too, and the same page again after it is closed.
    let spans = format!("{}x{}", "<span>".repeat(300), "</span>".repeat(300));
    let spans = spans.repeat(3);
    let bounded = bound(&spans);
    assert_eq!(bounded.truncation.unwrap().dropped, 3 * (300 - MAX_NESTING));
}

#[test]
fn misnesting_that_keeps_elements_open_counts_them() {
    // The parser ignores </div> and </b> here (a table is in the way), so each
    // round leaves a <div> or a <b> open.
    assert_eq!(
        reason(&"<div><table></div></table>".repeat(2_000)),
        Some(TruncationReason::Nesting)
    );
    let soup: String = (0..2_000)
        .map(|i| format!("<b id={i}><table></b></table>"))
        .collect();
    assert_eq!(reason(&soup), Some(TruncationReason::Formatting));
    // A formatting element closed across a block is re-opened after it.
    let soup: String = (0..2_000).map(|i| format!("<p><b id={i}>x</p>")).collect();
    assert_eq!(reason(&soup), Some(TruncationReason::Formatting));
}

#[test]
fn too_many_elements_cut_the_page() {
    // Each stray </p> makes the parser create an empty <p>.
    let html = "</p>".repeat(MAX_ELEMENTS + 10);
    let t = bound(&html).truncation.unwrap();
    assert_eq!(t.reason, TruncationReason::Elements);
    assert_eq!(t.cut_at, Some(4 * MAX_ELEMENTS));
    assert_eq!(bound(&html).html.len(), 4 * MAX_ELEMENTS);
}

#[test]
fn too_much_work_cuts_the_page() {
    let html = format!("{}{}", "<span>".repeat(255), "</zz>".repeat(400_000));
    let t = bound(&html).truncation.unwrap();
    assert_eq!(t.reason, TruncationReason::Work);
    let at = t.cut_at.unwrap();
    assert!(at > 6 * 255 && at < html.len(), "{at}");
    assert!(html[at..].starts_with("</zz>"));
}

#[test]
fn excess_attributes_are_dropped_and_the_tag_kept() {
    let attrs: String = (0..1_000).map(|i| format!(" a{i}=\"v>{i}\"")).collect();
    for (open, close) in [("<div", ">"), ("<br", "/>")] {
        let html = format!("{open}{attrs}{close}text");
        let bounded = bound(&html);
        assert_eq!(
            bounded.truncation.unwrap().reason,
            TruncationReason::Attributes
        );
        let expected: String = (0..MAX_ATTRIBUTES)
            .map(|i| format!(" a{i}=\"v>{i}\""))
            .collect();
        // The whitespace before the first dropped attribute stays.
        assert_eq!(bounded.html, format!("{open}{expected} {close}text"));
    }
    let attrs: String = (0..100).map(|i| format!(" a{i}")).collect();
    let html = format!("<b{attrs}>x</b>");
    let bounded = bound(&html);
    assert_eq!(
        bounded.html.matches(" a").count(),
        MAX_FORMATTING_ATTRIBUTES
    );
    unchanged(&format!("<div{}>x</div>", &attrs[..]));
}

/// Markup that hides the bomb from the parser must hide it from the pass too.
#[test]
fn comments_raw_text_and_quoted_attributes_hide_tags() {
    let bomb = b_bomb(100);
    for (before, after) in [
        ("<!--", "-->"),
        ("<!-- a -- b - ", "--!>"),
        ("<script>", "</script>"),
        ("<script type=x>if (a</b) {", "}</script >"),
        ("<SCRIPT>", "</Script>"),
        ("<style>", "</style>"),
        ("<textarea>", "</textarea>"),
        ("<title>", "</title>"),
        ("<noscript>", "</noscript>"),
        ("<iframe>", "</iframe>"),
        ("<xmp>", "</xmp>"),
        ("<noembed>", "</noembed>"),
        ("<noframes>", "</noframes>"),
        ("<div title=\"", "\">"),
        ("<div title='", "'>"),
        ("<div a=1 title = '", "' b>"),
        ("<plaintext>", ""),
        ("<script>", ""),
        ("<!--", ""),
    ] {
        unchanged(&format!("<p>x{before}{bomb}{after}y</p>"));
    }
}

/// ... and markup that ends before the bomb must not hide it.
#[test]
fn tags_after_comments_raw_text_and_attributes_are_seen() {
    let bomb = b_bomb(100);
    for before in [
        "<!---->",
        "<!-->",
        "<!--->",
        "<!-- --!>",
        "<!-- <script> -->",
        "<!DOCTYPE html>",
        "<![CDATA[ x ]]>",
        "<?xml version=1?>",
        "</>",
        "</ x>",
        "<script></script>",
        "<script>\"</script>\"",
        "<script></scriptx></script>",
        "<style>a{}</style\n>",
        "<title>t</title/>",
        "<textarea><b></textarea>",
        "<div title=\"a>b\" x='<script>'>",
        "<div title=a>b>",
        "<div a\"b>",
        "<div =x>",
        "< b>",
        "<svg><style>",
        "<math><style></style></math>",
        "<svg><title>",
        "<svg><script>",
    ] {
        assert_eq!(
            reason(&format!("{before}{bomb}")),
            Some(TruncationReason::Formatting),
            "{before}"
        );
    }
}

#[test]
fn odd_input_never_panics() {
    for html in [
        "",
        "<",
        "</",
        "<!",
        "<!-",
        "<!--",
        "<a",
        "<a ",
        "<a b",
        "<a b=",
        "<a b='",
        "<a b=c",
        "<a/",
        "</a",
        "</a ",
        "<é>",
        "<aé b=é>é</aé>",
        "<\u{0}>",
        "<a\u{0}b>",
        "<svg><p/>",
        "<svg></p>",
        "<table><td><table><td>",
        "</br></p></li></form>",
        "<form><div></form></div>",
        "<select></select></select>",
        "<nobr><nobr>",
    ] {
        let _ = bound(html);
        let _ = bound(&html.repeat(1_000));
    }
}

/// The depth of the deepest element of the parsed page (`<html>` is 1) and the
/// number of elements.
fn dom_depth(html: &str) -> (usize, usize) {
    let doc = scraper::Html::parse_document(html);
    let mut deepest = 0;
    let mut elements = 0;
    for node in doc.tree.nodes() {
        if node.value().is_element() {
            elements += 1;
            // Template contents hang under a fragment node: count elements only.
            let depth = node.ancestors().filter(|a| a.value().is_element()).count();
            deepest = deepest.max(depth + 1);
        }
    }
    (deepest, elements)
}

fn soup() -> impl Strategy<Value = String> {
    let unit = prop::sample::select(vec![
        "<b>",
        "<b id=1>",
        "<i class=x>",
        "<a href=x>",
        "<font color=red>",
        "<nobr>",
        "<em>",
        "<u>",
        "</b>",
        "</i>",
        "</a>",
        "</font>",
        "</nobr>",
        "</em>",
        "x",
        " ",
        "<div>",
        "</div>",
        "<p>",
        "</p>",
        "<span>",
        "</span>",
        "<table>",
        "</table>",
        "<tr>",
        "<td>",
        "</td>",
        "<th>",
        "<caption>",
        "<tbody>",
        "<li>",
        "</li>",
        "<ul>",
        "</ul>",
        "<dd>",
        "<dt>",
        "<h1>",
        "</h2>",
        "<br>",
        "</br>",
        "<hr>",
        "<svg>",
        "</svg>",
        "<math>",
        "<mi>",
        "<foreignObject>",
        "<path/>",
        "<span/>",
        "<form>",
        "</form>",
        "<select>",
        "<option>",
        "</select>",
        "<button>",
        "<object>",
        "</object>",
        "<template>",
        "</template>",
        "<marquee>",
        "</zz>",
        "<zz>",
        "<applet>",
        "<script>",
        "</script>",
        "<!--",
        "-->",
        "<title>",
        "</title>",
    ]);
    prop::collection::vec((unit, 1usize..40), 1..400).prop_map(|parts| {
        let mut html = String::new();
        for (i, (unit, times)) in parts.into_iter().enumerate() {
            for k in 0..times {
                // Distinct attributes defeat the parser's duplicate check.
                html.push_str(&unit.replacen("<b id=1>", &format!("<b id={i}-{k}>"), 1));
            }
        }
        html
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The model errs on the safe side: the parser creates no more elements than
    /// the cap allows, and a page that passes unchanged was not copied.
    #[test]
    fn the_parser_stays_within_the_caps(html in soup()) {
        let bounded = bound(&html);
        let (_, elements) = dom_depth(&bounded.html);
        prop_assert!(elements <= MAX_ELEMENTS + 8, "{} elements", elements);
        if bounded.truncation.is_none() {
            prop_assert_eq!(&bounded.html, &html);
        }
    }
}
