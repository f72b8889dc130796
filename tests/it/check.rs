//! `ground check` as a user runs it: claims searched for on a SearXNG stand-in, the
//! pages served by three wiremock servers on loopback (three sites: a server on this
//! machine is told apart by its port), and each claim judged by the one matcher with
//! a verdict that counts sites. No model is involved: the model's URL points at a
//! closed port. Then `--cited`: another AI tool's answer with [n] markers and its
//! numbered URLs in the three list forms; hostile input refused at its cap; and MCP's
//! `check_claims` through the real `ground mcp`.

use crate::common::*;
use crate::cross_check::{SitePage, page, serve_page};
use crate::mcp::{Session, error_text, structured};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const LIT: &str = "The Quillfeather Lighthouse was first lit on 14 October 1911.";
const LIT_LATE: &str = "The Quillfeather Lighthouse was first lit on 2 March 1950.";
const FERRY: &str = "The Varnholm ferry carries 40 cars across the bay.";
const DESIGNED: &str = "The lighthouse was designed by the engineer Mara Lindqvist.";
const MUSEUM: &str = "The Varnholm museum opens at nine in the morning.";

/// `(number, url)` of each source of `check --json`'s output, in order.
fn numbered_sources(v: &Value) -> Vec<(u64, String)> {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["number"].as_u64().unwrap(),
                s["url"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Three sites and their pages: (site 0-2, path, title, paragraphs).
fn pages() -> Vec<SitePage> {
    vec![
        (
            0,
            "/cited.html",
            "Quillfeather Lighthouse",
            vec![
                "The Quillfeather Lighthouse stands on the northern cape of Varnholm, facing the open sea.",
                "The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building.",
                "The lighthouse was designed by the engineer Mara Lindqvist, who also drew the harbour.",
                "Its lens came from Paris and weighed about 5,000 kilograms, and the keepers lived in a cottage below the tower.",
            ],
        ),
    ]
    .into_iter()
    .chain(crate::cross_check::quillfeather_elsewhere())
    .chain(vec![
        (
            1,
            "/ferry-a.html",
            "The Varnholm ferry",
            vec![
                "The Varnholm ferry carries 40 cars across the bay every hour of the day.",
                "It was built in the town's own yard and first sailed in the spring.",
            ],
        ),
        (
            1,
            "/ferry-b.html",
            "Crossing the bay",
            vec![
                "On a calm day the Varnholm ferry carries 40 cars across the bay in twenty minutes.",
                "Tickets are sold at the harbour office beside the pier.",
            ],
        ),
        (
            2,
            "/ferry-c.html",
            "Ferries of the north",
            vec![
                "Since its refit the Varnholm ferry carries 60 cars across the bay at once.",
                "The northern ferries run all year, though storms stop them in winter.",
            ],
        ),
        (
            2,
            "/designer.html",
            "Quillfeather Lighthouse history",
            vec![
                "The lighthouse was designed by the engineer Ottilie Brannock, and built by the town.",
                "Her drawings are kept in the Varnholm archive.",
            ],
        ),
    ])
    .collect()
}

/// The three sites: the world's page server and two more.
struct Sites {
    servers: [MockServer; 2],
}

impl Sites {
    async fn new() -> Self {
        Sites {
            servers: [MockServer::start().await, MockServer::start().await],
        }
    }

    fn server<'a>(&'a self, world: &'a World, site: usize) -> &'a MockServer {
        match site {
            0 => &world.pages,
            n => &self.servers[n - 1],
        }
    }

    /// The URL of the page at `at`.
    fn url(&self, world: &World, at: &str) -> String {
        let (site, ..) = pages().into_iter().find(|p| p.1 == at).unwrap();
        format!("{}{at}", self.server(world, site).uri())
    }

    /// Serves every page on its site.
    async fn serve(&self, world: &World) {
        for (site, at, title, paragraphs) in pages() {
            serve_page(self.server(world, site), at, title, &paragraphs).await;
        }
    }

    /// SearXNG answers the search for `claim` with the pages at `paths`, in order.
    async fn search(&self, world: &World, claim: &str, paths: &[&str]) {
        let results: Vec<Value> = paths
            .iter()
            .map(|at| {
                json!({"url": self.url(world, at), "title": "A page", "content": "",
                    "engine": "local", "engines": ["local"], "score": 1.0, "category": "general"})
            })
            .collect();
        Mock::given(method("GET"))
            .and(path("/search"))
            .and(query_param("q", claim))
            .respond_with(ResponseTemplate::new(200).set_body_json(json!({
                "query": claim, "results": results, "answers": [], "corrections": [],
                "infoboxes": [], "suggestions": [], "unresponsive_engines": []})))
            .mount(&world.searx)
            .await;
    }
}

/// `ground` with the model's URL on a closed port: no check may need a model.
fn ground(world: &World) -> std::process::Command {
    let mut cmd = world.ground();
    cmd.env("GROUND_LLM_URL", closed_port_url());
    cmd
}

/// The claim whose text is `text`, from `--json`.
fn claim<'a>(v: &'a Value, text: &str) -> &'a Value {
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["text"] == text)
        .unwrap_or_else(|| panic!("no claim {text:?}: {v}"))
}

/// The source number of the page at `at`.
fn number(v: &Value, at: &str) -> u64 {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["url"].as_str().is_some_and(|u| u.ends_with(at)))
        .and_then(|s| s["number"].as_u64())
        .unwrap_or_else(|| panic!("{at} is not a source: {v}"))
}

/// The sources of a claim's supports (or contradictions), as page paths.
fn paths(v: &Value, list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let n = s["source"].as_u64().unwrap();
            let source = v["sources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["number"] == n)
                .unwrap();
            let url = source["url"].as_str().unwrap();
            url[url.rfind('/').unwrap()..].to_string()
        })
        .collect()
}

#[tokio::test]
async fn every_verdict_of_check_counts_sites_not_pages() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    sites
        .search(
            &world,
            LIT,
            &[
                "/cited.html",
                "/dotted.html",
                "/unrelated.html",
                "/conflict.html",
            ],
        )
        .await;
    sites.search(&world, LIT_LATE, &["/cited.html"]).await;
    sites
        .search(
            &world,
            FERRY,
            &["/ferry-a.html", "/ferry-b.html", "/ferry-c.html"],
        )
        .await;
    sites.search(&world, DESIGNED, &["/designer.html"]).await;
    sites.search(&world, MUSEUM, &["/unrelated.html"]).await;
    // The claims as a file, one a sentence (two on one line).
    let file = world.home.path().join("claims.txt");
    std::fs::write(
        &file,
        format!("{LIT} {LIT_LATE}\n- {FERRY}\n{DESIGNED}\n\n{MUSEUM}\n"),
    )
    .unwrap();
    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "--pages", "4", "--file"])
        .arg(&file);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(6), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::CHECK_CLAIMS, &v);
    assert_eq!(v["mode"], "claims");
    assert_eq!(v["all_supported"], false);
    let texts: Vec<&str> = v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, [LIT, LIT_LATE, FERRY, DESIGNED, MUSEUM]);

    // Supported on two sites, so corroborated: the same date written 14.10.1911 is
    // support, not a conflict; the page about another lighthouse is neither; the
    // conflicting date is still listed.
    let lit = claim(&v, LIT);
    assert_eq!(lit["verdict"], "supported", "{lit}");
    assert_eq!(lit["corroborated"], true, "{lit}");
    assert_eq!(paths(&v, &lit["supports"]), ["/cited.html", "/dotted.html"]);
    assert_eq!(lit["supports"][1]["support"], "match", "{lit}");
    assert_eq!(
        lit["contradictions"],
        json!([{
            "source": number(&v, "/conflict.html"),
            "url": sites.url(&world, "/conflict.html"),
            "quote": "The Quillfeather Lighthouse was first lit on 9 June 1936, long after the harbour opened.",
            "kind": "date",
            "value": "9 June 1936",
        }])
    );
    // Every page read says another date: two sites against none.
    let late = claim(&v, LIT_LATE);
    assert_eq!(late["verdict"], "contradicted", "{late}");
    assert_eq!(late["supports"], json!([]));
    assert!(
        late["contradictions"].as_array().unwrap().len() >= 2,
        "{late}"
    );
    // Two pages of one site support it, one other site says 60 cars: one voice each.
    let ferry = claim(&v, FERRY);
    assert_eq!(
        paths(&v, &ferry["supports"]),
        ["/ferry-a.html", "/ferry-b.html"]
    );
    assert_eq!(paths(&v, &ferry["contradictions"]), ["/ferry-c.html"]);
    assert_eq!(ferry["contradictions"][0]["value"], "60", "{ferry}");
    assert_eq!(ferry["verdict"], "disputed", "{ferry}");
    assert_eq!(ferry["corroborated"], false, "{ferry}");
    // One site names Mara Lindqvist, another Ottilie Brannock.
    let designed = claim(&v, DESIGNED);
    assert_eq!(designed["verdict"], "disputed", "{designed}");
    assert_eq!(designed["contradictions"][0]["kind"], "name", "{designed}");
    // Nothing read speaks of the museum.
    let museum = claim(&v, MUSEUM);
    assert_eq!(museum["verdict"], "not_found", "{museum}");
    assert_eq!(museum["supports"], json!([]));
    assert_eq!(museum["contradictions"], json!([]));
    // Each page read once, though two searches found it.
    assert_eq!(v["sources"].as_array().unwrap().len(), 8, "{v}");
}

#[tokio::test]
async fn a_supported_claim_exits_0_with_no_model_and_its_quotes_for_a_person() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    sites
        .search(
            &world,
            LIT,
            &["/cited.html", "/dotted.html", "/unrelated.html"],
        )
        .await;
    let mut cmd = ground(&world);
    cmd.args(["check", LIT]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let person = stdout(&out);
    assert!(
        person.starts_with(&format!(
            "1. supported, corroborated\n   \"{LIT}\"\n   [1] supports it (quote): \"The Quillfeather Lighthouse was first lit on 14 October 1911, after four years of building.\"\n   [2] supports it (match): \"The Quillfeather Lighthouse was first lit on 14.10.1911 by its first keeper.\"\n\nSources:\n  [1] Quillfeather Lighthouse\n      {}\n",
            sites.url(&world, "/cited.html")
        )),
        "{person}"
    );
    assert!(person.ends_with("\n1 of 1 claims supported.\n"), "{person}");
    // The model was never asked (its port is closed, and nothing said so).
    assert!(!stderr(&out).contains("model"), "{}", stderr(&out));
}

/// An answer from another AI tool: the three list forms, a marker before and after
/// a sentence's end.
fn cited_answer(world: &World, sites: &Sites) -> String {
    format!(
        "Here is what I found about the lighthouse.\n\n\
         The Quillfeather Lighthouse was first lit on 14 October 1911 [1]. \
         The Quillfeather Lighthouse was first lit on 14 October 1911.[2]\n\
         - Its lens came from Paris and weighed about 5,000 kilograms [3].\n\n\
         Sources:\n\
         [1] {}\n\
         2. Lighthouses of the north - {}\n\
         [3]({}) Varnholm Lighthouse\n",
        sites.url(world, "/cited.html"),
        sites.url(world, "/conflict.html"),
        sites.url(world, "/unrelated.html"),
    )
}

#[tokio::test]
async fn a_cited_answer_is_checked_against_its_own_sources_first() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    let file = world.home.path().join("answer.txt");
    std::fs::write(&file, cited_answer(&world, &sites)).unwrap();
    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "--cited"]).arg(&file);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_eq!(out.status.code(), Some(6), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::CHECK_CLAIMS, &v);
    assert_eq!(v["mode"], "cited");
    // The answer's own numbers, from the three list forms.
    let listed = numbered_sources(&v);
    assert_eq!(
        listed,
        [
            (1, sites.url(&world, "/cited.html")),
            (2, sites.url(&world, "/conflict.html")),
            (3, sites.url(&world, "/unrelated.html")),
        ]
    );
    let claims = v["claims"].as_array().unwrap();
    // Only the cited sentences are claims.
    assert_eq!(claims.len(), 3, "{v}");
    let verdicts: Vec<(&str, &Value, &Value)> = claims
        .iter()
        .map(|c| {
            (
                c["verdict"].as_str().unwrap(),
                &c["cited"],
                &c["supported_elsewhere"],
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("supported", &json!([1]), &json!([])),
            // Its source says 9 June 1936; source 1 says what it says.
            ("contradicted", &json!([2]), &json!([1])),
            // Source 3 is about another lighthouse; source 1 has the lens.
            ("not_supported_by_cited", &json!([3]), &json!([1])),
        ]
    );
    assert_eq!(claims[1]["text"], LIT);
    assert_eq!(claims[1]["contradictions"][0]["value"], "9 June 1936");

    // The same answer for a person, from stdin.
    let mut cmd = ground(&world);
    cmd.args(["check", "--cited", "-"]);
    let child_input = cited_answer(&world, &sites);
    let out = run_with_stdin(cmd, &child_input).await;
    assert_eq!(out.status.code(), Some(6), "stderr: {}", stderr(&out));
    let person = stdout(&out);
    assert!(person.contains("2. contradicted (cites [2])\n"), "{person}");
    assert!(person.contains("   [2] says 9 June 1936: \""), "{person}");
    assert!(
        person.contains("3. not supported by the sources it cites (cites [3])\n"),
        "{person}"
    );
    assert!(person.contains("   supported elsewhere: [1]\n"), "{person}");
}

/// Runs `cmd` with `input` on its stdin, within the run deadline.
async fn run_with_stdin(mut cmd: std::process::Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let input = input.to_string();
    tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        out
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_fully_supported_cited_answer_exits_0() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    let answer = format!(
        "The Quillfeather Lighthouse was first lit on 14 October 1911 [1]({}).\n",
        sites.url(&world, "/cited.html")
    );
    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "--cited", "-"]);
    let out = run_with_stdin(cmd, &answer).await;
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_eq!(v["all_supported"], true);
    assert_eq!(v["claims"][0]["verdict"], "supported");
    assert_eq!(v["claims"][0]["supports"][0]["support"], "quote", "{v}");
}

#[tokio::test]
async fn hostile_cited_input_is_refused_at_its_cap_before_any_fetch() {
    let world = World::new().await;
    let url = format!("{}/cited.html", world.pages.uri());
    let many_urls: String = (1..=5000).map(|n| format!("[{n}] {url}?{n}\n")).collect();
    let cases = [
        (
            format!("The tower is white {}.\n[1] {url}\n", "[1]".repeat(5000)),
            "error: sentence 1 has more than 16 [n] citation markers",
        ),
        (
            format!("The tower is white [1].\n{many_urls}"),
            "error: the answer lists more than 30 source URLs",
        ),
        (
            format!("{}\n[1] {url}\n", "The tower is white [1]. ".repeat(3000)),
            "error: more than 100 claims in one run",
        ),
        (
            "x".repeat(2 * 1024 * 1024),
            "error: the text is larger than 262144 bytes, the most checked in one run",
        ),
        (
            "No marker in this answer at all.\n".to_string(),
            "error: the answer has no sentence with a [n] citation marker",
        ),
    ];
    for (text, error) in cases {
        let file = world.home.path().join("hostile.txt");
        std::fs::write(&file, &text).unwrap();
        let mut cmd = ground(&world);
        cmd.args(["check", "--cited"]).arg(&file);
        let started = std::time::Instant::now();
        let out = run_within(cmd, RUN_DEADLINE).await;
        let (line, _) = assert_error_report(&out, 2, &[], "");
        assert_eq!(line, error);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }
    assert!(
        world.pages.received_requests().await.unwrap().is_empty(),
        "a refused input fetched a page"
    );
}

#[tokio::test]
async fn usage_errors_and_private_addresses() {
    let world = World::new().await;
    let mut cmd = ground(&world);
    cmd.args(["check"]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(&out, 2, &["nothing to check"], "ground check \"CLAIM\"");

    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "a claim", "--file", "x.txt"]);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(&out, 2, &["not several"], "--cited");
    assert_eq!(json_stdout(&out)["error"]["exit_code"], 2);

    let many: Vec<String> = (0..21).map(|n| format!("claim number {n}")).collect();
    let mut cmd = ground(&world);
    cmd.arg("check").args(&many);
    let out = run_within(cmd, RUN_DEADLINE).await;
    assert_error_report(
        &out,
        2,
        &["more than 20 claims in one run"],
        "runs of at most 20",
    );

    // Without --allow-private-addresses a page on loopback is refused, never fetched:
    // no source could be read.
    let sites = Sites::new().await;
    sites.serve(&world).await;
    let mut cmd = ground(&world);
    cmd.env_remove("GROUND_ALLOW_PRIVATE_ADDRESSES");
    cmd.args(["check", "--json", "--cited", "-"]);
    let answer = format!(
        "The Quillfeather Lighthouse was first lit on 14 October 1911 [1].\n[1] {}\n",
        sites.url(&world, "/cited.html")
    );
    let out = run_with_stdin(cmd, &answer).await;
    assert_eq!(out.status.code(), Some(4), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("1 BLOCKED"), "{}", stderr(&out));
    assert!(world.pages.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn mcp_check_claims_gives_the_same_object() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    sites
        .search(&world, LIT, &["/cited.html", "/dotted.html"])
        .await;
    let (mut mcp, _) = Session::start(ground(&world), &[]).await;
    let list = mcp.request("tools/list", json!({})).await;
    let tool = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "check_claims")
        .expect("check_claims is listed")
        .clone();
    assert_eq!(
        tool["outputSchema"],
        serde_json::from_str::<Value>(ground::mcp::schemas::CHECK_CLAIMS).unwrap()
    );

    let checked = structured(&mcp.call("check_claims", json!({"claims": [LIT]})).await);
    assert_eq!(checked["mode"], "claims");
    assert_eq!(checked["claims"][0]["verdict"], "supported");
    assert_eq!(checked["claims"][0]["corroborated"], true);

    let cited = structured(
        &mcp.call(
            "check_claims",
            json!({"cited_text": cited_answer(&world, &sites)}),
        )
        .await,
    );
    let verdicts: Vec<&str> = cited["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["supported", "contradicted", "not_supported_by_cited"]
    );

    // Held to `sites`: the answer's pages on loopback are outside it, so refused.
    let narrowed = mcp
        .call(
            "check_claims",
            json!({"cited_text": cited_answer(&world, &sites), "sites": ["example.org"]}),
        )
        .await;
    let text = error_text(&narrowed);
    assert!(
        text.starts_with("error: none of the 3 result pages could be used (3 BLOCKED)"),
        "{text}"
    );
    let both = mcp
        .call(
            "check_claims",
            json!({"claims": [LIT], "cited_text": "x [1]."}),
        )
        .await;
    assert!(
        error_text(&both).starts_with("error: give either claims or cited_text, exactly one"),
        "{both}"
    );
    let hostile = mcp
        .call(
            "check_claims",
            json!({"cited_text": format!("A claim {}.", "[1]".repeat(100))}),
        )
        .await;
    assert!(
        error_text(&hostile).starts_with("error: sentence 1 has more than 16 [n] citation markers"),
        "{hostile}"
    );
    let (code, _) = mcp.close().await;
    assert_eq!(code, Some(0));
}

#[tokio::test]
async fn with_search_a_cited_sentence_is_supported_elsewhere_by_a_page_found() {
    let world = World::new().await;
    let sites = Sites::new().await;
    sites.serve(&world).await;
    let lens = "Its lens came from Paris and weighed about 5,000 kilograms.";
    // The sentence cites a page about another lighthouse; a search finds the right one.
    sites
        .search(&world, lens, &["/cited.html", "/unrelated.html"])
        .await;
    let answer = format!(
        "Its lens came from Paris and weighed about 5,000 kilograms [1].\n\n1. {}\n",
        sites.url(&world, "/unrelated.html")
    );
    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "--also-search", "--cited", "-"]);
    let out = run_with_stdin(cmd, &answer).await;
    assert_eq!(out.status.code(), Some(6), "stderr: {}", stderr(&out));
    let v = json_stdout(&out);
    assert_matches_schema(ground::mcp::schemas::CHECK_CLAIMS, &v);
    // The page found is numbered after the answer's own; the one it already lists is
    // read once.
    let listed = numbered_sources(&v);
    assert_eq!(
        listed,
        [
            (1, sites.url(&world, "/unrelated.html")),
            (2, sites.url(&world, "/cited.html")),
        ]
    );
    let claim = &v["claims"][0];
    assert_eq!(claim["verdict"], "not_supported_by_cited", "{claim}");
    assert_eq!(claim["supported_elsewhere"], json!([2]), "{claim}");

    // Without --also-search nothing is searched.
    let mut cmd = ground(&world);
    cmd.args(["check", "--json", "--cited", "-"]);
    let searches = world.searx.received_requests().await.unwrap().len();
    let out = run_with_stdin(cmd, &answer).await;
    assert_eq!(out.status.code(), Some(6), "stderr: {}", stderr(&out));
    assert_eq!(
        json_stdout(&out)["claims"][0]["supported_elsewhere"],
        json!([])
    );
    assert_eq!(
        world.searx.received_requests().await.unwrap().len(),
        searches
    );
}

#[tokio::test]
async fn page_text_reaches_the_terminal_escaped() {
    let world = World::new().await;
    let evil = page(
        "Quillfeather\u{1b}]0;owned\u{7} Lighthouse",
        &[
            "The Quillfeather Lighthouse was first lit on 14 October 1911\u{1b}[2J, after four years of building.",
            "The Quillfeather Lighthouse was first lit on 9 June 1936\u{1b}]0;owned\u{7}, say the old guides of the town.",
        ],
    );
    Mock::given(method("GET"))
        .and(path("/evil.html"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(evil, "text/html; charset=utf-8"))
        .mount(&world.pages)
        .await;
    let answer = format!(
        "The Quillfeather Lighthouse was first lit on 14 October 1911 [1].\n[1] {}/evil.html\n",
        world.pages.uri()
    );
    let mut cmd = ground(&world);
    cmd.args(["check", "--cited", "-"]);
    let out = run_with_stdin(cmd, &answer).await;
    let person = stdout(&out);
    assert!(!person.contains('\u{1b}'), "{person:?}");
    assert!(!person.contains('\u{7}'), "{person:?}");
    assert!(person.contains("[1] Quillfeather"), "{person}");
    assert!(person.contains("supports it"), "{person}");
}
