//! The charset decoder and the main-text extractor on arbitrary bytes, charsets and tag
//! soup: they never panic, their text is clean, and pages built from formatting
//! elements (up to 2 MiB) are extracted quickly. The example pages are in the `it`
//! binary's `extract`.

use std::time::Duration;

use ground::extract::{
    self, Extracted, clean_inline, decode_body, extract_html, extract_plain_text,
};
use ground::text::sanitize_text;
use proptest::prelude::*;

use crate::strategies::*;

/// Tag soup: real tag names, attributes that the extractor looks at, broken nesting,
/// comments, scripts, entities and nasty text.
fn html_soup() -> impl Strategy<Value = String> {
    let tag = prop::sample::select(vec![
        "div",
        "p",
        "span",
        "a",
        "article",
        "main",
        "section",
        "nav",
        "footer",
        "header",
        "aside",
        "ul",
        "ol",
        "li",
        "table",
        "tr",
        "td",
        "th",
        "pre",
        "code",
        "blockquote",
        "h1",
        "h2",
        "br",
        "hr",
        "img",
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "title",
        "head",
        "body",
        "html",
        "form",
        "figure",
        "figcaption",
        "iframe",
        "select",
        "option",
        "textarea",
        "b",
        "i",
        "sup",
    ]);
    let attr = prop::sample::select(vec![
        "",
        " class=\"article-body content\"",
        " class=\"comment related sidebar\"",
        " id=\"main\"",
        " hidden",
        " style=\"display:none\"",
        " aria-hidden=\"true\"",
        " role=\"navigation\"",
        " href=\"http://x.test/a\"",
        " property=\"og:title\" content=\"Og \u{1b}[31mtitle\"",
        " class=\"",
        " =\"\"",
    ]);
    let piece = prop_oneof![
        4 => (tag.clone(), attr).prop_map(|(t, a)| format!("<{t}{a}>")),
        3 => tag.clone().prop_map(|t| format!("</{t}>")),
        4 => nasty_text(6),
        1 => Just("The quick brown fox, a regular reader, jumps over the lazy dog. ".repeat(3)),
        1 => prop::sample::select(vec![
            "<!--", "-->", "<!-- c -->", "<![CDATA[x]]>", "<!doctype html>", "<?xml ?>",
            "&amp;", "&#x1b;", "&#27;", "&#0;", "&#x202E;", "&nbsp;", "&", "&#99999999;",
            "<meta charset=\"shift_jis\">", "<meta http-equiv=\"content-type\" content=\"text/html; charset=koi8-r\">",
            "</script", "</STYLE >", "<", ">", "<<", "</", "<a", "<div <p>",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn decode_body_takes_any_bytes_and_content_type(
        body in prop::collection::vec(any::<u8>(), 0..600),
        content_type in prop::option::of(prop_oneof![
            any::<String>(),
            prop::sample::select(vec![
                "text/html", "text/html; charset=utf-8", "text/html; charset=\"windows-1252\"",
                "text/html;charset=shift_jis", "text/plain; charset=utf-16le", "text/html; charset=utf-16",
                "text/html; charset=", "text/html; charset=bogus", "text/html; charset=x-user-defined",
                "text/html; charset=replacement", "text/html; charset=iso-2022-jp", "text/html; charset=gb18030",
                ";;;=;charset==", "charset=utf-8",
            ]).prop_map(str::to_string),
        ]),
        prefix in prop::sample::select(vec![
            &b""[..], b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff",
            b"<meta charset=\"windows-1251\">", b"<meta charset=", b"<META CHARSET='euc-kr'>",
        ]),
    ) {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(&body);
        let text = decode_body(&bytes, content_type.as_deref());
        // UTF-8 without BOM or declaration comes back unchanged.
        if let (None, true, Ok(s)) = (&content_type, prefix.is_empty(), std::str::from_utf8(&bytes))
            && !s.to_ascii_lowercase().contains("charset=")
        {
            prop_assert_eq!(text.as_str(), s);
        }
        // And whatever it decoded to, extraction takes it.
        let plain = extract_plain_text(&text);
        assert_clean(&plain.text)?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn extractor_never_panics_and_its_text_is_clean(
        html in prop_oneof![3 => html_soup(), 1 => nasty_text(60), 1 => any::<String>()],
    ) {
        let (out, took) = timed(&html);
        prop_assert!(took.as_secs() < 10, "took {:?}", took);
        if let Some(title) = &out.title {
            prop_assert!(!title.is_empty());
            assert_clean(title)?;
            prop_assert!(!title.contains(['\n', '\t']), "title {:?}", title);
            prop_assert_eq!(title.trim(), title.as_str());
        }
        assert_clean(&out.text)?;
        prop_assert!(!out.text.contains('\r'));
        // What the terminal shows of it is clean, whatever the page held.
        assert_clean(&sanitize_text(&out.text))?;
    }

    #[test]
    fn extractor_takes_decoded_arbitrary_bytes(
        body in prop::collection::vec(any::<u8>(), 0..2000),
        content_type in prop::option::of(any::<String>()),
    ) {
        let text = decode_body(&body, content_type.as_deref());
        let out = extract_html(&text, None);
        assert_clean(&out.text)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_arbitrary_text(input in any::<String>()) {
        let page = extract_html(&input, None);
        prop_assert!(!page.text.chars().any(|c| c.is_control() && c != '\n' && c != '\t'));
        let _ = extract_plain_text(&input);
        let _ = clean_inline(&input);
    }

    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..512),
                                       ct in proptest::option::of("[ -~]{0,40}")) {
        let html = decode_body(&bytes, ct.as_deref());
        let _ = extract_html(&html, None);
    }

    #[test]
    fn never_panics_on_tag_soup(parts in proptest::collection::vec(
        prop_oneof![
            Just("<div>".to_string()), Just("</div>".to_string()), Just("<p>".to_string()),
            Just("</p>".to_string()), Just("<pre>".to_string()), Just("</pre>".to_string()),
            Just("<a href=x>".to_string()), Just("</a>".to_string()), Just("<table><tr><td>".to_string()),
            Just("<nav class=menu>".to_string()), Just("<!--".to_string()), Just("-->".to_string()),
            Just("<script>".to_string()), Just("</script>".to_string()), Just("<br>".to_string()),
            Just("<article class='post-content'>".to_string()), Just("&shy;".to_string()),
            "[a-zA-Z ,.]{0,80}",
        ],
        0..200,
    )) {
        let html = parts.concat();
        let page = extract_html(&html, None);
        let _ = extract::is_substantial(&page);
    }
}

// Formatting soup, against the bound on the parser's work (`it`'s `extract` has the
// worst pages themselves).

/// The most time one page of up to 2 MiB may take.
fn limit() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(20)
    } else {
        Duration::from_secs(3)
    }
}

/// The extraction of `html` and the CPU time this thread spent on it (not wall time:
/// builds beside the tests must not make a linear parse look slow).
fn timed(html: &str) -> (Extracted, Duration) {
    let started = thread_cpu_time();
    let page = extract_html(html, None);
    (page, thread_cpu_time().saturating_sub(started))
}

/// CPU time the calling thread has used (extraction runs on the caller's thread).
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
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
