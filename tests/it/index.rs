//! `ground index`: the local document index, run as a person and a script would:
//! incremental updates (touch, change, delete, rename), skip reasons, links out of
//! the folder, `.gitignore`, HTML and PDF, a damaged index, and private modes.

use std::fs;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common::{World, fixtures, json_stdout, run, run_within, stderr, stdout};

/// Runs `ground index ARGS... --json` in `world` and returns its JSON.
async fn index_json(world: &World, args: &[&str]) -> (Output, Value) {
    let mut cmd = world.ground();
    cmd.arg("index").args(args).arg("--json");
    let out = run(cmd).await;
    let value = if out.stdout.is_empty() {
        Value::Null
    } else {
        json_stdout(&out)
    };
    (out, value)
}

/// `ground index add PATH --json`, which must succeed.
async fn add(world: &World, path: &Path) -> Value {
    let (out, value) = index_json(world, &["add", path.to_str().unwrap()]).await;
    assert!(out.status.success(), "add failed: {}", stderr(&out));
    value
}

/// The paths of one change list of `add --json`, as file names.
fn names(value: &Value, list: &str) -> Vec<String> {
    let mut names: Vec<String> = value["paths"][list]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Path::new(p.as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A folder of notes: Markdown, text and reStructuredText.
fn notes(dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    fs::write(
        dir.join("lighthouse.md"),
        "# The Quillfeather Lighthouse\n\nThe lighthouse was first lit in 1871.\n\nIts lamp burned whale oil until 1902, then kerosene.\n",
    )
    .unwrap();
    fs::write(
        dir.join("garden.txt"),
        "Tomatoes want six hours of sun.\nWater them at the root, never the leaves.\n",
    )
    .unwrap();
    fs::write(
        dir.join("setup.rst"),
        "Setup guide\n===========\n\nRun the installer with the --quiet flag.\n",
    )
    .unwrap();
}

/// Sets a file's modification time a minute later, its content unchanged (a touch
/// that a coarse clock could not miss).
fn touch(path: &Path) {
    let file = fs::File::options().write(true).open(path).unwrap();
    let later =
        fs::metadata(path).unwrap().modified().unwrap() + std::time::Duration::from_secs(60);
    file.set_modified(later).unwrap();
}

#[tokio::test]
async fn a_rerun_reads_only_what_changed_and_drops_what_is_gone() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    let first = add(&world, &dir).await;
    assert_eq!(first["added"], 3);
    assert_eq!(first["files"], 3);
    assert_eq!(
        names(&first, "added"),
        ["garden.txt", "lighthouse.md", "setup.rst"]
    );

    // Nothing changed: nothing read.
    let again = add(&world, &dir).await;
    assert_eq!(
        (
            again["added"].as_u64(),
            again["updated"].as_u64(),
            again["removed"].as_u64()
        ),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(again["unchanged"], 3);

    // Touched (same content): not indexed again. Changed: updated. Deleted: removed.
    // Renamed: the old name removed, the new one added.
    touch(&dir.join("garden.txt"));
    fs::write(
        dir.join("lighthouse.md"),
        "# The Quillfeather Lighthouse\n\nIt was automated in 1967.\n",
    )
    .unwrap();
    fs::remove_file(dir.join("setup.rst")).unwrap();
    fs::write(dir.join("extra.md"), "# Extra\n\nsomething new\n").unwrap();
    let third = add(&world, &dir).await;
    assert_eq!(names(&third, "updated"), ["lighthouse.md"]);
    assert_eq!(names(&third, "removed"), ["setup.rst"]);
    assert_eq!(names(&third, "added"), ["extra.md"]);
    assert_eq!(
        third["unchanged"], 1,
        "the touched file is not read again: {third}"
    );

    fs::rename(dir.join("extra.md"), dir.join("renamed.md")).unwrap();
    let fourth = add(&world, &dir).await;
    assert_eq!(names(&fourth, "removed"), ["extra.md"]);
    assert_eq!(names(&fourth, "added"), ["renamed.md"]);
    assert_eq!(fourth["files"], 3);

    // The search sees the new text, not the old.
    let (_, found) = index_json(&world, &["search", "automated"]).await;
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{found}");
    assert!(
        results[0]["path"]
            .as_str()
            .unwrap()
            .ends_with("lighthouse.md")
    );
    assert_eq!(results[0]["title"], "The Quillfeather Lighthouse");
    assert_eq!(
        (
            results[0]["line_start"].as_u64(),
            results[0]["line_end"].as_u64()
        ),
        (Some(1), Some(3))
    );
    assert!(
        results[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("automated")
    );
    assert!(results[0]["score"].as_f64().unwrap() > 0.0);
    let (_, old) = index_json(&world, &["search", "kerosene"]).await;
    assert_eq!(
        old["results"],
        Value::Array(vec![]),
        "the old text is gone: {old}"
    );
}

/// The files of each result of `ground index search QUERY --json`, by name.
async fn found(world: &World, query: &str) -> Vec<String> {
    let (out, value) = index_json(world, &["search", query]).await;
    assert!(
        out.status.success(),
        "search {query:?} failed: {}",
        stderr(&out)
    );
    value["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            Path::new(r["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

#[tokio::test]
async fn words_are_stemmed_stop_words_left_out_and_phrases_still_match() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    add(&world, &dir).await;
    // Stems: "lamps" and "burning" find "lamp burned"; "watering" finds "Water".
    assert_eq!(found(&world, "lamps burning").await, ["lighthouse.md"]);
    assert_eq!(found(&world, "watering").await, ["garden.txt"]);
    // A phrase with stop words in it matches where its words stand as written...
    assert_eq!(
        found(&world, "\"the lighthouse was first lit\"").await,
        ["lighthouse.md"]
    );
    // ...and not where they stand otherwise.
    assert_eq!(
        found(&world, "\"lighthouse first was lit\"").await,
        [] as [String; 0]
    );
    // Stop words alone find nothing (they are not in the index).
    assert_eq!(found(&world, "the of and was").await, [] as [String; 0]);
}

#[tokio::test]
async fn files_not_read_are_listed_with_their_reason() {
    let world = World::new().await;
    let dir = world.home.path().join("mixed");
    notes(&dir);
    fs::write(dir.join("blob.txt"), b"PK\x03\x04\0\0binary").unwrap();
    fs::write(dir.join("empty.md"), b"").unwrap();
    fs::write(dir.join("blank.md"), b"\n\n   \n").unwrap();
    let big = fs::File::create(dir.join("huge.txt")).unwrap();
    big.set_len(17 * 1024 * 1024).unwrap();
    fs::write(dir.join("code.rs"), "fn main() {}\n").unwrap();
    let outside = world.home.path().join("secret.md");
    fs::write(&outside, "# Secret\n\nthe vault code is 4711\n").unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link-out.md")).unwrap();
    std::os::unix::fs::symlink(dir.join("garden.txt"), dir.join("link-in.txt")).unwrap();

    let summary = add(&world, &dir).await;
    let mut skipped: Vec<(String, String)> = summary["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = Path::new(s["path"].as_str().unwrap())
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, s["reason"].as_str().unwrap().to_string())
        })
        .collect();
    skipped.sort();
    assert_eq!(
        skipped,
        [
            ("blank.md".into(), "empty".into()),
            ("blob.txt".into(), "binary".into()),
            ("empty.md".into(), "empty".into()),
            ("huge.txt".into(), "too_large".into()),
            ("link-out.md".into(), "link_outside".into()),
        ]
    );
    assert_eq!(
        summary["not_documents"], 1,
        "code.rs is passed over quietly"
    );
    // The link inside the folder is read; the one out of it never is.
    assert_eq!(summary["files"], 4);
    let (_, found) = index_json(&world, &["search", "vault code"]).await;
    assert_eq!(found["results"], Value::Array(vec![]), "{found}");

    // The person output says the same, one line a file.
    let mut cmd = world.ground();
    cmd.args(["index", "add"]).arg(&dir);
    let out = run(cmd).await;
    let text = stdout(&out);
    assert!(
        text.contains("skipped  ")
            && text.contains("link-out.md: a symbolic link leading out of the folder"),
        "{text}"
    );
    assert!(
        text.contains("huge.txt: over the size limit (16 MiB)"),
        "{text}"
    );
}

#[tokio::test]
async fn gitignore_and_hidden_files_are_honoured() {
    let world = World::new().await;
    let dir = world.home.path().join("project");
    notes(&dir);
    fs::write(dir.join(".gitignore"), "build/\n*.log.md\n").unwrap();
    fs::create_dir_all(dir.join("build")).unwrap();
    fs::write(dir.join("build/out.md"), "# Built\n\ngenerated text\n").unwrap();
    fs::write(dir.join("debug.log.md"), "# Log\n\ngenerated text\n").unwrap();
    fs::create_dir_all(dir.join(".private")).unwrap();
    fs::write(dir.join(".private/diary.md"), "# Diary\n\ngenerated text\n").unwrap();
    let summary = add(&world, &dir).await;
    assert_eq!(
        names(&summary, "added"),
        ["garden.txt", "lighthouse.md", "setup.rst"]
    );

    let (out, with_hidden) = index_json(
        &world,
        &[
            "add",
            dir.to_str().unwrap(),
            "--hidden",
            "--collection",
            "all",
        ],
    )
    .await;
    assert!(out.status.success());
    assert!(names(&with_hidden, "added").contains(&"diary.md".to_string()));
    assert!(!names(&with_hidden, "added").contains(&"out.md".to_string()));
}

#[tokio::test]
async fn html_and_pdf_are_read_through_the_extractor_and_the_pdf_reader() {
    let world = World::new().await;
    let dir = world.home.path().join("docs");
    fs::create_dir_all(&dir).unwrap();
    fs::copy(
        fixtures().join("extract/news-article.html"),
        dir.join("article.html"),
    )
    .unwrap();
    fs::copy(fixtures().join("pdf/report.pdf"), dir.join("report.pdf")).unwrap();
    let summary = add(&world, &dir).await;
    assert_eq!(
        names(&summary, "added"),
        ["article.html", "report.pdf"],
        "{summary}"
    );

    // The PDF's text layer says (as `ground extract` prints it): "... dried
    // tardigrades were exposed to open space for ten days on the FOTON-M3 mission".
    let word = "rehydration";
    let (_, found) = index_json(&world, &["search", word]).await;
    let paths: Vec<&str> = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.iter().any(|p| p.ends_with("report.pdf")),
        "{word}: {found}"
    );
    let pdf = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"].as_str().unwrap().ends_with("report.pdf"))
        .unwrap();
    assert_eq!(pdf["title"], "Tardigrades in Space: A Field Report");

    let html = fs::read_to_string(fixtures().join("extract/news-article.html")).unwrap();
    let extracted = ground::extract::extract_html(&html, None);
    let (_, found) = index_json(&world, &["search", extracted.title.as_deref().unwrap()]).await;
    let first = &found["results"][0];
    assert!(
        first["path"].as_str().unwrap().ends_with("article.html"),
        "{found}"
    );
    assert_eq!(first["title"].as_str(), extracted.title.as_deref());
    // No markup reaches the index.
    assert!(!first["snippet"].as_str().unwrap().contains('<'), "{found}");

    // Extracted text is kept in the index (it is not the file's own lines): the
    // snippets stay while the files are gone, until the next `add`.
    let snippet = first["snippet"].clone();
    fs::remove_file(dir.join("article.html")).unwrap();
    fs::remove_file(dir.join("report.pdf")).unwrap();
    let (_, again) = index_json(&world, &["search", extracted.title.as_deref().unwrap()]).await;
    assert_eq!(again["results"][0]["snippet"], snippet, "{again}");
    assert!(again["results"][0].get("unreadable").is_none(), "{again}");
    let (_, pdf) = index_json(&world, &["search", word]).await;
    assert!(
        pdf["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("rehydration"),
        "{pdf}"
    );
}

#[tokio::test]
async fn a_passage_whose_lines_are_gone_from_the_changed_file_is_said() {
    let world = World::new().await;
    let dir = world.home.path().join("log");
    fs::create_dir_all(&dir).unwrap();
    let first = "The first entry goes on about the weather. ".repeat(16);
    let log = dir.join("log.md");
    fs::write(
        &log,
        format!("# Log\n\n{first}\n\nThe zeppelin landed at noon.\n"),
    )
    .unwrap();
    let (out, _) = index_json(
        &world,
        &["add", "--collection", "journal", dir.to_str().unwrap()],
    )
    .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (_, hits) = index_json(&world, &["search", "zeppelin", "--collection", "journal"]).await;
    assert_eq!(hits["results"][0]["line_start"], 5, "{hits}");
    assert!(hits["results"][0].get("unreadable").is_none(), "{hits}");
    // The file is cut short: line 5 is gone. Not a blank snippet that looks like a
    // hit: why, and the command for this collection.
    fs::write(&log, "# Log\n\nStarted afresh.\n").unwrap();
    let (out, hits) = index_json(&world, &["search", "zeppelin", "--collection", "journal"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let why = hits["results"][0]["unreadable"].as_str().unwrap();
    assert!(why.contains("lines 5-5 are no longer in it"), "{why}");
    assert!(
        why.contains("`ground index add --collection journal`"),
        "{why}"
    );
}

/// `ground index search tomatoes` finds notes/garden.txt and shows its lines.
async fn the_garden_note_is_shown(world: &World) {
    let (_, hits) = index_json(world, &["search", "tomatoes"]).await;
    let hit = &hits["results"][0];
    let path = hit["path"].as_str().unwrap();
    assert!(path.ends_with("notes/garden.txt"), "{hits}");
    let snippet = hit["snippet"].as_str().unwrap();
    assert!(snippet.contains("six hours of sun"), "{hits}");
    assert!(hit.get("unreadable").is_none(), "{hits}");
}

#[cfg(unix)]
#[tokio::test]
async fn a_folder_moved_and_linked_back_is_still_read() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    add(&world, &dir).await;
    let moved = world.home.path().join("synced-notes");
    fs::rename(&dir, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &dir).unwrap();
    the_garden_note_is_shown(&world).await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_link_inside_the_folder_is_read_again_through_the_link() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    fs::create_dir_all(dir.join("archive")).unwrap();
    fs::rename(dir.join("garden.txt"), dir.join("archive/garden.txt")).unwrap();
    std::os::unix::fs::symlink(dir.join("archive/garden.txt"), dir.join("garden.txt")).unwrap();
    fs::write(dir.join(".ignore"), "archive/\n").unwrap();
    add(&world, &dir).await;
    the_garden_note_is_shown(&world).await;
}

#[tokio::test]
async fn a_hit_s_lines_are_read_from_its_file_and_a_file_gone_is_said() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    add(&world, &dir).await;
    let (_, hits) = index_json(&world, &["search", "lamp oil"]).await;
    let snippet = hits["results"][0]["snippet"].as_str().unwrap().to_string();
    assert!(snippet.contains("whale oil"), "{hits}");

    // The index keeps no Markdown or text passage: a hit shows its lines as the file
    // says them now (as an answer quotes them), same line numbers.
    let lighthouse = dir.join("lighthouse.md");
    let now = fs::read_to_string(&lighthouse)
        .unwrap()
        .replace("whale oil", "seal oil");
    fs::write(&lighthouse, now).unwrap();
    let (_, hits) = index_json(&world, &["search", "lamp"]).await;
    let hit = &hits["results"][0];
    assert!(
        hit["snippet"].as_str().unwrap().contains("seal oil"),
        "{hits}"
    );
    assert_eq!(
        (hit["line_start"].as_u64(), hit["line_end"].as_u64()),
        (Some(1), Some(5))
    );

    // A file gone since the last `add` is still found, with why it cannot be shown
    // and the fix; the search succeeds.
    fs::remove_file(dir.join("garden.txt")).unwrap();
    let (out, hits) = index_json(&world, &["search", "tomatoes"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let hit = &hits["results"][0];
    assert!(
        hit["path"].as_str().unwrap().ends_with("garden.txt"),
        "{hits}"
    );
    assert_eq!(hit["snippet"], "", "{hits}");
    let why = hit["unreadable"].as_str().unwrap();
    assert!(why.contains("ground index add"), "{why}");
    // The shape MCP's document_search declares.
    crate::common::assert_matches_schema(ground::mcp::schemas::DOCUMENT_SEARCH, &hits);
    let mut cmd = world.ground();
    cmd.args(["index", "search", "tomatoes"]);
    let out = run(cmd).await;
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("garden.txt:1-2"), "{text}");
    assert!(text.contains("cannot be read now"), "{text}");

    // A file replaced by a FIFO is not waited on, and a link inside the folder to a
    // file inside it is read as the index read it.
    #[cfg(unix)]
    {
        let setup = dir.join("setup.rst");
        fs::remove_file(&setup).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&setup)
            .status()
            .unwrap();
        assert!(made.success());
        let mut cmd = world.ground();
        cmd.args(["index", "search", "installer", "--json"]);
        // A FIFO in a file's place must not hang the search.
        let out = run_within(cmd, std::time::Duration::from_secs(30)).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("unreadable"), "{text}");
        fs::remove_file(&setup).unwrap();
    }
    // The next `add` drops it.
    add(&world, &dir).await;
    assert_eq!(found(&world, "tomatoes").await, [] as [String; 0]);
}

#[tokio::test]
async fn a_damaged_index_is_a_clear_error_and_add_rebuilds_it() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    add(&world, &dir).await;
    let index_dir = world.home.path().join(".local/share/ground/index/default");
    // Every file of the tantivy index cut to nothing.
    for entry in fs::read_dir(index_dir.join("index")).unwrap() {
        let path = entry.unwrap().path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with(".json")
        {
            fs::write(&path, b"{ not json").unwrap();
        }
    }
    let (out, value) = index_json(&world, &["search", "lighthouse"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(value["error"]["kind"], "index_corrupt");
    let err = stderr(&out);
    assert!(
        err.contains("error: the index of collection \"default\" cannot be read"),
        "{err}"
    );
    assert!(
        err.contains("hint: rebuild it: ground index add --collection default"),
        "{err}"
    );

    // `add` with no path reads the collection's folders again into a new index.
    let mut cmd = world.ground();
    cmd.args(["index", "add", "--json"]);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let rebuilt = json_stdout(&out);
    assert_eq!(rebuilt["rebuilt"], true);
    assert_eq!(rebuilt["added"], 3);
    assert!(
        stderr(&out).contains("warning: the index of collection \"default\" could not be read")
    );
    let (out, hits) = index_json(&world, &["search", "lighthouse"]).await;
    assert!(out.status.success());
    assert_eq!(hits["results"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_index_is_private_and_listed_and_removed() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    notes(&dir);
    let index_home = world.home.path().join("elsewhere");
    let mut cmd = world.ground();
    cmd.env("GROUND_INDEX_DIR", &index_home)
        .args(["index", "add", "--collection", "notes", "--json"])
        .arg(&dir);
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let collection = index_home.join("notes");
    let mut checked = 0;
    let mut stack = vec![collection.clone()];
    while let Some(path) = stack.pop() {
        let meta = fs::metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o777;
        if meta.is_dir() {
            assert_eq!(mode, 0o700, "{}", path.display());
            stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            assert_eq!(mode, 0o600, "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked > 3);

    let mut cmd = world.ground();
    cmd.env("GROUND_INDEX_DIR", &index_home)
        .args(["index", "list", "--json"]);
    let listed = json_stdout(&run(cmd).await);
    let first = &listed["collections"][0];
    assert_eq!(first["name"], "notes");
    assert_eq!(first["files"], 3);
    assert_eq!(
        first["folders"][0],
        dir.canonicalize().unwrap().to_str().unwrap()
    );

    let mut cmd = world.ground();
    cmd.env("GROUND_INDEX_DIR", &index_home)
        .args(["index", "remove", "--collection", "notes", "--json"])
        .arg(dir.join("garden.txt"));
    let removed = json_stdout(&run(cmd).await);
    assert_eq!(
        (removed["removed"].as_u64(), removed["files"].as_u64()),
        (Some(1), Some(2))
    );

    // A collection never made is an error with the way out.
    let mut cmd = world.ground();
    cmd.env("GROUND_INDEX_DIR", &index_home).args([
        "index",
        "search",
        "tomato",
        "--collection",
        "nope",
    ]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("hint: index a folder first: ground index add PATH --collection nope"),
        "{}",
        stderr(&out)
    );
}

#[tokio::test]
async fn person_output_escapes_what_files_say() {
    let world = World::new().await;
    let dir = world.home.path().join("notes");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("evil.md"),
        "# Title \x1b[31mred\x1b[0m\n\nthe beacon \x1b]0;pwned\x07 shines\n",
    )
    .unwrap();
    add(&world, &dir).await;
    let mut cmd = world.ground();
    cmd.args(["index", "search", "beacon"]);
    let out = run(cmd).await;
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("evil.md:1-3"), "{text}");
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
}
