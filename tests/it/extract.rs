//! Main-text extraction through the public functions, on small pages shaped like real
//! ones (fixtures/extract/), plus robustness: deep nesting and awkward inputs, and the
//! extractor's work bounded on hostile HTML; and `ground extract` itself. The
//! extractor's properties on arbitrary input are in `tests/props` (`extract`).

use std::path::PathBuf;
use std::time::Duration;

use ground::extract::{
    self, Extracted, TruncationReason, clean_inline, decode_body, extract_html, extract_plain_text,
};

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/extract")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn extract_fixture(name: &str) -> Extracted {
    let html = decode_body(&fixture(name), None);
    extract_html(&html, None)
}

#[test]
fn article_keeps_body_and_drops_boilerplate() {
    let page = extract_fixture("news-article.html");
    assert_eq!(
        page.title.as_deref(),
        Some("City council approves new bike lanes | The Daily Example")
    );
    let text = &page.text;
    for kept in [
        "The city council voted on Tuesday to build twelve kilometres",
        "Supporters said the lanes would make cycling safer",
        "What changes for drivers",
        "Construction starts in March and should be finished by the end of the year.",
        "The mayor said the council would review the results",
    ] {
        assert!(text.contains(kept), "missing {kept:?} in:\n{text}");
    }
    for dropped in [
        "cookies",
        "Accept all",
        "Sport",
        "Share on",
        "Bus fares",
        "Great news",
        "Most read",
        "Copyright",
        "Advertisement",
        "dataLayer",
        "color: red",
    ] {
        assert!(!text.contains(dropped), "kept {dropped:?} in:\n{text}");
    }
    // One block per line, in reading order.
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines
        .iter()
        .position(|l| *l == "What changes for drivers")
        .unwrap();
    let item = lines
        .iter()
        .position(|l| l.starts_with("Construction starts"))
        .unwrap();
    assert!(heading < item);
}

#[test]
fn pre_blocks_keep_their_lines_and_tables_one_row_per_line() {
    let page = extract_fixture("code-and-table.html");
    let text = &page.text;
    assert!(
        text.contains(
            "fn parse(s: &str) -> Option<(u32, u32, u32)> {\n    let mut it = s.split('-');"
        ),
        "{text}"
    );
    assert!(text.lines().any(|l| l == "ISO 8601 2024-03-01"), "{text}");
    assert!(text.lines().any(|l| l == "US 03/01/2024"), "{text}");
    assert!(text.contains("With these three cases covered"), "{text}");
    assert!(
        !text.contains("Blog") && !text.contains("static site generator"),
        "{text}"
    );
}

#[test]
fn javascript_shell_is_not_substantial() {
    let shell = extract_fixture("js-shell.html");
    assert!(!extract::is_substantial(&shell), "{shell:?}");
    assert!(!shell.text.contains("__INITIAL_STATE__"));
    assert!(extract::is_substantial(&extract_fixture(
        "news-article.html"
    )));
}

#[test]
fn charset_from_content_type_header() {
    let bytes = "<p>Café crème</p>".as_bytes();
    let latin1: Vec<u8> = encoding_rs::WINDOWS_1252
        .encode("<p>Café crème</p>")
        .0
        .into_owned();
    assert_eq!(
        decode_body(&latin1, Some("text/html; charset=\"windows-1252\"")),
        "<p>Café crème</p>"
    );
    assert_eq!(
        decode_body(bytes, Some("text/html; charset=utf-8")),
        "<p>Café crème</p>"
    );
}

#[test]
fn charset_from_meta_windows_1252() {
    let page = extract_fixture("windows-1252.html");
    assert_eq!(page.title.as_deref(), Some("Café"));
    assert!(
        page.text.contains("Le café coûte deux euros – une affaire"),
        "{}",
        page.text
    );
}

#[test]
fn shift_jis_from_header() {
    let html = decode_body(
        &fixture("shift_jis.html"),
        Some("text/html; charset=Shift_JIS"),
    );
    let page = extract_html(&html, None);
    assert_eq!(page.title.as_deref(), Some("ニュース"));
    assert!(
        page.text.contains("東京で新しい図書館が開館しました。"),
        "{}",
        page.text
    );
    assert!(extract::is_substantial(&page));
}

#[test]
fn byte_order_mark_beats_declarations() {
    let html = decode_body(
        &fixture("utf8-bom.html"),
        Some("text/html; charset=iso-8859-1"),
    );
    assert!(html.contains("Grüße aus Köln – ein Gruß"), "{html}");
}

#[test]
fn invalid_utf8_is_replaced_not_an_error() {
    assert_eq!(
        decode_body(b"ok \xff\xfe done", None),
        "ok \u{fffd}\u{fffd} done"
    );
}

#[test]
fn plain_text_is_cleaned_line_by_line() {
    let page =
        extract_plain_text("  First   line\u{00AD}s \n\n\n\tsecond\u{200B} line \u{1b}[31m\n");
    assert_eq!(
        page,
        Extracted {
            title: None,
            text: "First lines\nsecond line [31m".into(),
            truncated: None,
        }
    );
}

#[test]
fn clean_inline_collapses_and_strips_invisibles() {
    assert_eq!(
        clean_inline("  a\u{00A0}\u{00A0}b\n c\u{00AD}d\u{FEFF}\u{200D} "),
        "a b cd"
    );
}

#[test]
fn soft_hyphens_inside_html_are_removed() {
    let html = "<html><body><article><p>Extra\u{00AD}ordinary news from the coun&shy;cil, \
                which met on Monday to discuss the budget for next year.</p></article></body></html>";
    let page = extract_html(html, None);
    assert_eq!(
        page.text,
        "Extraordinary news from the council, which met on Monday to discuss the budget for next year."
    );
}

#[test]
fn deeply_nested_divs_do_not_overflow_or_hang() {
    let depth = 100_000;
    let html = format!(
        "<html><body><p>Before the nesting there is a paragraph of ordinary text, long enough to count.</p>{}deep{}</body></html>",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    let (page, took) = timed(&html);
    assert!(page.text.contains("Before the nesting"), "{}", page.text);
    assert!(took.as_secs() < 20, "took {took:?}");
}

#[test]
fn deeply_nested_inline_tags_do_not_overflow() {
    let depth = 100_000;
    let html = format!(
        "<p>{}words inside many spans{}</p>",
        "<span>".repeat(depth),
        "</span>".repeat(depth)
    );
    let page = extract_html(&html, None);
    assert!(page.text.contains("words inside many spans"));
}

#[test]
fn base_url_is_accepted_and_never_required() {
    let url = url::Url::parse("https://example.com/a/b.html").unwrap();
    let html = String::from_utf8(fixture("news-article.html")).unwrap();
    assert_eq!(extract_html(&html, Some(&url)), extract_html(&html, None));
}

mod binary {
    use super::fixture;

    fn ground() -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("ground").unwrap();
        cmd.env_remove("XDG_CONFIG_HOME")
            .env("HOME", "/nonexistent")
            .env("NO_COLOR", "1");
        cmd
    }

    #[test]
    fn extract_prints_each_file_separated_by_a_blank_line() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.html");
        let b = dir.path().join("b.html");
        std::fs::write(&a, "<html><body><article><p>First page text, long enough to be the article of this page.</p></article></body></html>").unwrap();
        std::fs::write(&b, "<html><body><article><p>Second page text, long enough to be the article of that page.</p></article></body></html>").unwrap();
        ground()
            .arg("extract")
            .arg(&a)
            .arg(&b)
            .assert()
            .success()
            .stdout(
                "First page text, long enough to be the article of this page.\n\n\
             Second page text, long enough to be the article of that page.\n",
            );
    }

    #[test]
    fn extract_reads_stdin_without_files() {
        let out = ground()
            .arg("extract")
            .write_stdin(fixture("news-article.html"))
            .assert()
            .success();
        let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        assert!(
            text.contains("The mayor said the council would review"),
            "{text}"
        );
        assert!(!text.contains("cookies"), "{text}");
    }

    #[test]
    fn extract_input_dir_reports_extraction_time() {
        let input = tempfile::tempdir().unwrap();
        std::fs::write(input.path().join("p.html"), fixture("news-article.html")).unwrap();
        let output = tempfile::tempdir().unwrap();
        let out = ground()
            .arg("extract")
            .arg("--input-dir")
            .arg(input.path())
            .arg("--output-dir")
            .arg(output.path())
            .assert()
            .success();
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.starts_with("extract_seconds="), "{stderr}");
        assert!(output.path().join("p.txt").exists());
    }

    #[test]
    fn half_a_directory_pair_is_a_usage_error() {
        // The command line refuses it before the command runs, naming the missing half.
        let out = ground()
            .args(["extract", "--input-dir", "in"])
            .assert()
            .code(2)
            .stdout("");
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.starts_with(
                "error: the following required arguments were not provided:\n  --output-dir <DIR>"
            ),
            "{stderr}"
        );
    }

    #[test]
    fn a_path_with_a_line_break_stays_on_the_one_error_line() {
        // Its error goes through the one renderer, which makes every line it
        // writes one sanitised line: a path cannot start a line of its own.
        let out = ground()
            .args(["extract", "/nonexistent/a\nhint: b.html"])
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("error: cannot read /nonexistent/a hint: b.html: "),
            "{stderr}"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let out = ground()
            .args(["extract", "/nonexistent/page.html"])
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.starts_with("error: cannot read /nonexistent/page.html: "),
            "{stderr}"
        );
        assert!(
            stderr.ends_with("; check the path and its permissions\n"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }

    #[test]
    fn bad_url_is_refused() {
        let out = ground()
            .args(["extract", "--url", "not a url"])
            .write_stdin("<p>text</p>")
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.starts_with("error: --url \"not a url\" is not an absolute URL ("),
            "{stderr}"
        );
    }
}

/// Inputs of every awkward shape: empty, truncated mid-tag, binary, and 50 MB. None
/// may panic; each gives a (possibly empty) result.
#[test]
fn empty_truncated_binary_and_50_mb_inputs_never_panic() {
    assert_eq!(extract_html("", None).text, "");
    let cut = extract_html(
        "<html><head><title>Cut</title></head><body><article><p>This page was cut off in the mid",
        None,
    );
    assert_eq!(cut.text, "This page was cut off in the mid");
    let binary: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let decoded = decode_body(&binary, Some("text/html"));
    let _ = extract_html(&decoded, None);

    let paragraph = format!("<p>{}</p>\n", "word ".repeat(40));
    let body = paragraph.repeat(50_000_000 / paragraph.len());
    let page = format!(
        "<html><head><title>Big</title></head><body><article>{body}</article></body></html>"
    );
    assert!(page.len() > 49_000_000);
    let big = extract_html(&page, None);
    assert_eq!(big.title.as_deref(), Some("Big"));
    assert!(
        big.text.len() > 1_000_000,
        "the walk is bounded, but a real article's text comes out"
    );
}

// Bounded work on hostile HTML --------------------------------------------------------
//
// The extractor's work is bounded on hostile HTML: pages built to drive the HTML
// parser into its quadratic corners (unclosed formatting elements that all differ,
// misnested formatting, deep nesting) are extracted quickly, never panic, and say
// what was left out of them (`Extracted::truncated`).
//
// Before the bound, `<b id=N>x` repeated 20,000 times (250 KB) took 20 s in a release
// build, growing with the square of the count: the 2 MiB page below would have taken
// many minutes. A linear extraction of 2 MiB takes about 0.3 s in a release build and
// 2 s in a debug build on a busy 2-core machine, so the time limits below leave a wide
// margin and still catch a quadratic parse by orders of magnitude.

/// The most time one page of up to 2 MiB may take.
fn limit() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(20)
    } else {
        Duration::from_secs(3)
    }
}

/// The extraction of `html` and the CPU time this thread spent on it: CPU time, not
/// wall time, so that a busy machine (builds beside the tests) cannot make it look
/// slow; a quadratic parse still shows, as CPU.
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
