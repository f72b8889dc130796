//! `ground index add|list|remove|search`: the local document index ([`ground::docs`]),
//! for people and scripts. Each action is one library call; this file prints.

use std::io::IsTerminal;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;

use ground::docs::{self, IndexHome};
use ground::error::Error;
use ground::render::cache::human_bytes;
use ground::text::sanitize_line;

use crate::cli::{IndexAction, IndexArgs};
use crate::input::read_input;
use crate::output::{fail, print_json};

/// Runs `ground index`.
pub fn run(args: IndexArgs) -> ExitCode {
    let (json, input_name) = match &args.action {
        IndexAction::Add { json, .. } => (*json, "collection"),
        IndexAction::Remove { json, .. } => (*json, "collection"),
        IndexAction::List { json } => (*json, "collection"),
        IndexAction::Search { json, .. } => (*json, "query"),
    };
    let Some(home) = IndexHome::from_env() else {
        let e = Error::from(docs::IndexError::NoHome);
        return fail(json, input_name, "", &e);
    };
    match args.action {
        IndexAction::Add {
            paths,
            collection,
            hidden,
            json,
        } => add(&home, &collection, &paths, hidden, json),
        IndexAction::List { json } => list(&home, json),
        IndexAction::Remove {
            paths,
            collection,
            json,
        } => remove(&home, &collection, &paths, json),
        IndexAction::Search {
            query,
            collection,
            n,
            json,
        } => search(&home, &query, collection, usize::from(n), json),
    }
}

/// `ground index add`: the update, with a progress bar on a terminal.
fn add(
    home: &IndexHome,
    collection: &str,
    paths: &[std::path::PathBuf],
    hidden: bool,
    json: bool,
) -> ExitCode {
    let bar = std::io::stderr().is_terminal().then(|| {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} indexing {pos}/{len} files {wide_bar} {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar
    });
    let progress = |p: docs::Progress| {
        if let Some(bar) = &bar {
            bar.set_length(p.total as u64);
            bar.set_position(p.done as u64);
        }
    };
    let summary = docs::add(home, collection, paths, hidden, &progress);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let summary = match summary {
        Ok(summary) => summary,
        Err(e) => return fail(json, "collection", collection, &Error::from(e)),
    };
    if let Some(why) = &summary.rebuilt {
        eprintln!(
            "{}",
            ground::error::warning(&format!(
                "the index of collection {collection:?} could not be read ({why}); it was rebuilt"
            ))
        );
    }
    if json {
        let _ = print_json(&json!({
            "collection": summary.collection,
            "added": summary.added.len(),
            "updated": summary.updated.len(),
            "removed": summary.removed.len(),
            "unchanged": summary.unchanged,
            "skipped": summary.skipped.iter().map(|s| json!({"path": s.path, "reason": s.reason, "detail": s.detail})).collect::<Vec<_>>(),
            "files": summary.files,
            "passages": summary.passages,
            "not_documents": summary.not_documents,
            "rebuilt": summary.rebuilt.is_some(),
            "paths": {"added": summary.added, "updated": summary.updated, "removed": summary.removed},
            "dir": home.dir,
        }));
        return ExitCode::SUCCESS;
    }
    let mut out = String::new();
    for (word, paths) in [
        ("added", &summary.added),
        ("updated", &summary.updated),
        ("removed", &summary.removed),
    ] {
        if paths.len() <= 20 {
            for path in paths {
                out.push_str(&format!("{word:>8}  {}\n", shown(path)));
            }
        }
    }
    for skip in &summary.skipped {
        out.push_str(&format!(
            "{:>8}  {}: {}\n",
            "skipped",
            shown(&skip.path),
            sanitize_line(&skip.detail)
        ));
    }
    out.push_str(&format!(
        "Collection {}: {} added, {} updated, {} removed, {} unchanged, {} skipped; {} files, {} passages.\n",
        sanitize_line(collection),
        summary.added.len(),
        summary.updated.len(),
        summary.removed.len(),
        summary.unchanged,
        summary.skipped.len(),
        summary.files,
        summary.passages,
    ));
    print!("{out}");
    ExitCode::SUCCESS
}

/// `ground index list`.
fn list(home: &IndexHome, json: bool) -> ExitCode {
    let collections = docs::list(home);
    if json {
        let _ = print_json(&json!({"dir": home.dir, "collections": collections}));
        return ExitCode::SUCCESS;
    }
    if collections.is_empty() {
        println!(
            "No collection in {} yet: ground index add PATH indexes a folder.",
            shown(&home.dir)
        );
        return ExitCode::SUCCESS;
    }
    let mut out = String::new();
    for c in &collections {
        match &c.error {
            Some(error) => out.push_str(&format!(
                "{}  cannot be read: {} (ground index add --collection {} rebuilds it)\n",
                sanitize_line(&c.name),
                sanitize_line(error),
                sanitize_line(&c.name)
            )),
            None => out.push_str(&format!(
                "{}  {} files, {} passages, {}, updated {}\n",
                sanitize_line(&c.name),
                c.files,
                c.passages,
                human_bytes(c.size),
                c.updated_at
            )),
        }
        for folder in &c.folders {
            out.push_str(&format!("  {}\n", shown(folder)));
        }
    }
    out.push_str(&format!("Index folder: {}\n", shown(&home.dir)));
    print!("{out}");
    ExitCode::SUCCESS
}

/// `ground index remove`.
fn remove(
    home: &IndexHome,
    collection: &str,
    paths: &[std::path::PathBuf],
    json: bool,
) -> ExitCode {
    let removed = match docs::remove(home, collection, paths) {
        Ok(removed) => removed,
        Err(e) => return fail(json, "collection", collection, &Error::from(e)),
    };
    if removed.removed.is_empty() {
        eprintln!(
            "{}",
            ground::error::warning("no file indexed in the collection is under the paths given")
        );
    }
    if json {
        let _ = print_json(&json!({
            "collection": removed.collection,
            "removed": removed.removed.len(),
            "files": removed.files,
            "paths": {"removed": removed.removed},
        }));
        return ExitCode::SUCCESS;
    }
    println!(
        "Collection {}: {} files removed, {} left.",
        sanitize_line(collection),
        removed.removed.len(),
        removed.files
    );
    ExitCode::SUCCESS
}

/// `ground index search`.
fn search(
    home: &IndexHome,
    words: &[String],
    collections: Vec<String>,
    n: usize,
    json: bool,
) -> ExitCode {
    let query = match read_input(words, "query") {
        Ok(q) => q,
        Err(e) => return fail(json, "query", "", &e),
    };
    if query.trim().is_empty() {
        return fail(json, "query", &query, &Error::EmptyQuestion);
    }
    let collections = if collections.is_empty() {
        vec![docs::DEFAULT_COLLECTION.to_string()]
    } else {
        collections
    };
    let hits = match docs::search(home, &collections, &query, n) {
        Ok(hits) => hits,
        Err(e) => return fail(json, "query", &query, &Error::from(e)),
    };
    if json {
        let _ = print_json(&ground::render::documents::json(&query, &hits));
        return ExitCode::SUCCESS;
    }
    if hits.is_empty() {
        println!("No passage matches.");
        return ExitCode::SUCCESS;
    }
    let mut out = String::new();
    for (i, hit) in hits.iter().enumerate() {
        let snippet = match &hit.unreadable {
            Some(why) => format!("(its file cannot be read now: {why})"),
            None => hit.snippet.clone(),
        };
        out.push_str(&format!(
            "{}. {}\n   {}:{}-{}\n   {}\n",
            i + 1,
            sanitize_line(&hit.title),
            shown(&hit.path),
            hit.line_start,
            hit.line_end,
            sanitize_line(&snippet)
        ));
    }
    print!("{out}");
    ExitCode::SUCCESS
}

/// A path for a person: control characters made visible.
fn shown(path: &std::path::Path) -> String {
    sanitize_line(&path.to_string_lossy())
}
