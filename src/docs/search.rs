//! Searching collections (BM25 over passages and titles, English stemming), and a
//! hit's file read again when a run quotes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tantivy::TantivyDocument;
use tantivy::collector::TopDocs;
use tantivy::query::QueryParser;
use tantivy::schema::Value;
use tantivy::snippet::SnippetGenerator;

use super::formats::{self, DocText, Format};
use super::passages;
use super::store::Collection;
use super::{IndexError, IndexHome, walk};

/// Longest snippet shown for a hit, in characters.
pub const SNIPPET_CHARS: usize = 240;

/// One passage found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The collection it is in.
    pub collection: String,
    /// The file, absolute.
    pub path: PathBuf,
    /// The file's title (its first heading, else its name).
    pub title: String,
    /// The passage's first line.
    pub line_start: u64,
    /// The passage's last line.
    pub line_end: u64,
    /// The best-matching stretch of the passage.
    pub snippet: String,
    /// The passage's text: its lines in the file now (Markdown, text,
    /// reStructuredText), or as extracted when indexed (HTML, PDF).
    #[serde(skip)]
    pub text: String,
    /// BM25 score (higher is better; comparable within one query).
    pub score: f32,
    /// Why the passage's lines could not be read from its file now (gone, no longer
    /// text); the snippet is then empty, and `ground index add` brings the
    /// collection up to date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// The `n` best passages for `query` in `collections` (merged by score), each with
/// its text and snippet (read from its file, or from the index for extracted text).
/// Blocking: call it off the async runtime.
pub fn search(
    home: &IndexHome,
    collections: &[String],
    query: &str,
    n: usize,
) -> Result<Vec<Hit>, IndexError> {
    let (found, snippets) = best(home, collections, query, n)?;
    let mut roots = Roots::new(home);
    // Each file is read once for all its hits, and let go before the next is read.
    let mut texts: Vec<Option<Result<String, String>>> =
        found.iter().map(|f| f.kept.clone().map(Ok)).collect();
    for i in 0..found.len() {
        if texts[i].is_some() {
            continue;
        }
        let hit = &found[i].hit;
        let read = read_checked(&hit.path, &hit.collection, &mut roots);
        for (j, other) in found.iter().enumerate().skip(i) {
            if texts[j].is_none()
                && other.hit.path == hit.path
                && other.hit.collection == hit.collection
            {
                texts[j] = Some(passage_of(&read, &other.hit));
            }
        }
    }
    let mut hits = Vec::new();
    for (Found { mut hit, from, .. }, text) in found.into_iter().zip(texts) {
        let text = match text.unwrap_or_else(|| Ok(String::new())) {
            Ok(text) => text,
            Err(why) => {
                hit.unreadable = Some(why);
                String::new()
            }
        };
        let mut snippet = snippets[from].snippet(&text).fragment().to_string();
        if snippet.trim().is_empty() {
            snippet = crate::text::shorten(&text, SNIPPET_CHARS);
        }
        hit.snippet = crate::text::clean_inline(&snippet);
        hit.text = text;
        hits.push(hit);
    }
    Ok(hits)
}

/// The `n` best passages for `query` in `collections`, as [`search`] finds them but
/// without their text or snippet (empty): for a caller that reads the files itself,
/// as an answer does, so no file is read twice.
pub fn find(
    home: &IndexHome,
    collections: &[String],
    query: &str,
    n: usize,
) -> Result<Vec<Hit>, IndexError> {
    let (found, _) = best(home, collections, query, n)?;
    Ok(found.into_iter().map(|f| f.hit).collect())
}

/// A passage found, before its text is read.
struct Found {
    /// The hit, its text and snippet still empty.
    hit: Hit,
    /// Its text when the index keeps it (extracted text; every passage of a
    /// collection made before 2026-11-29).
    kept: Option<String>,
    /// Which collection's snippet maker cuts its snippet.
    from: usize,
}

/// The `n` best passages in `collections` merged by score, and each collection's
/// snippet maker (the query as that collection analyses it), in order.
fn best(
    home: &IndexHome,
    collections: &[String],
    query: &str,
    n: usize,
) -> Result<(Vec<Found>, Vec<SnippetGenerator>), IndexError> {
    let mut found = Vec::new();
    let mut snippets = Vec::new();
    for (from, name) in collections.iter().enumerate() {
        let collection = Collection::at(home, name)?;
        let (one, snippet) = search_one(&collection, query, n, from)?;
        found.extend(one);
        snippets.push(snippet);
    }
    found.sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score));
    found.truncate(n);
    Ok((found, snippets))
}

fn search_one(
    collection: &Collection,
    query: &str,
    n: usize,
    from: usize,
) -> Result<(Vec<Found>, SnippetGenerator), IndexError> {
    let (index, reader, f) = collection.reader()?;
    let corrupt = |e: tantivy::TantivyError| IndexError::Corrupt {
        collection: collection.name.clone(),
        reason: e.to_string(),
    };
    let searcher = reader.searcher();
    let parser = QueryParser::for_index(&index, vec![f.title, f.body]);
    // A person's words, not a query language: what does not parse is read as text.
    let (query, _) = parser.parse_query_lenient(query);
    let mut snippets = SnippetGenerator::create(&searcher, &*query, f.body).map_err(corrupt)?;
    snippets.set_max_num_chars(SNIPPET_CHARS);
    // A query with no word left to look for (stop words alone, punctuation) would be
    // read as "every passage": it finds nothing instead.
    let mut has_words = false;
    query.query_terms(&mut |_, _| has_words = true);
    if !has_words {
        return Ok((Vec::new(), snippets));
    }
    let top = searcher
        .search(&query, &TopDocs::with_limit(n.max(1)).order_by_score())
        .map_err(corrupt)?;
    let mut found = Vec::new();
    for (score, address) in top {
        let doc: TantivyDocument = searcher.doc(address).map_err(corrupt)?;
        let stored = |field| doc.get_first(field).and_then(|v| v.as_str());
        let text_of = |field| stored(field).unwrap_or_default().to_string();
        let number_of = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
        // An extracted passage's text is in the index (a collection made before
        // 2026-11-29 keeps every passage's, as `body`); the others are read from the file.
        let kept = [Some(f.body), f.text]
            .into_iter()
            .flatten()
            .find_map(stored)
            .map(str::to_string);
        let hit = Hit {
            collection: collection.name.clone(),
            path: PathBuf::from(text_of(f.path)),
            title: text_of(f.title),
            line_start: number_of(f.line_start),
            line_end: number_of(f.line_end),
            snippet: String::new(),
            text: String::new(),
            score,
            unreadable: None,
        };
        found.push(Found { hit, kept, from });
    }
    Ok((found, snippets))
}

/// The lines of `hit`'s passage as the index cut them, from its file as `read` now,
/// or why they cannot be shown (with the command that brings the index up to date).
fn passage_of(read: &ReadAgain, hit: &Hit) -> Result<String, String> {
    let why = match read {
        ReadAgain::Text(doc) => {
            let text = passages::passage_text(&doc.text, hit.line_start, hit.line_end);
            if !text.trim().is_empty() {
                return Ok(text);
            }
            format!(
                "lines {}-{} are no longer in it (it changed since it was indexed)",
                hit.line_start, hit.line_end
            )
        }
        ReadAgain::Gone(why) => why.clone(),
    };
    Err(format!(
        "{why}; {} brings the collection up to date",
        update_hint(&hit.collection)
    ))
}

/// The command that reads collection `name`'s folders again (as the index errors
/// give it).
pub fn update_hint(name: &str) -> String {
    format!("`ground index add --collection {name}`")
}

/// Each collection's folders, read from its manifest the first time a file reached
/// through a link needs them.
struct Roots<'a> {
    home: &'a IndexHome,
    known: HashMap<String, Result<Vec<PathBuf>, String>>,
}

impl<'a> Roots<'a> {
    fn new(home: &'a IndexHome) -> Self {
        Roots {
            home,
            known: HashMap::new(),
        }
    }

    /// Whether `target` (canonical) lies in one of `collection`'s folders, as they
    /// were given or where they lead now (a folder moved and linked back).
    fn contain(&mut self, collection: &str, target: &Path) -> Result<bool, String> {
        let home = self.home;
        let roots = self.known.entry(collection.to_string()).or_insert_with(|| {
            Collection::at(home, collection)
                .and_then(|c| c.manifest())
                .map(|m| m.roots)
                .map_err(|e| e.to_string())
        });
        let roots = roots.as_ref().map_err(Clone::clone)?;
        Ok(roots.iter().any(|root| {
            walk::is_under(target, root)
                || std::fs::canonicalize(root).is_ok_and(|now| walk::is_under(target, &now))
        }))
    }
}

/// A file read again at answer time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadAgain {
    /// Its text now (changed or not since it was indexed).
    Text(DocText),
    /// It cannot be read now (gone, unreadable, no longer text): why.
    Gone(String),
}

/// Reads `path`, a file of collection `collection`, again, as the index read it, when
/// it is still something the index would read: a regular file (a FIFO put in its place
/// would block, a device is never opened) of at most [`formats::MAX_FILE_BYTES`],
/// which, when it is reached through a symbolic link now, leads to a file inside the
/// collection's folders (the walk skips a link leading out; a file turned into one
/// since must not be read either). Blocking (a PDF goes through the sandboxed reader):
/// call it off the async runtime.
pub fn read_again(home: &IndexHome, collection: &str, path: &Path) -> ReadAgain {
    read_checked(path, collection, &mut Roots::new(home))
}

/// [`read_again`], with the collections' folders read once for many files.
fn read_checked(path: &Path, collection: &str, roots: &mut Roots) -> ReadAgain {
    let target = match std::fs::canonicalize(path) {
        Ok(target) => target,
        Err(e) => return ReadAgain::Gone(e.to_string()),
    };
    // A path as indexed is canonical unless a link inside the folder led to it; only
    // then are the folders read (from the manifest) to check where it leads now.
    if target != path {
        match roots.contain(collection, &target) {
            Ok(true) => {}
            Ok(false) => return ReadAgain::Gone(format!("it is now {}", walk::LINK_OUT)),
            Err(why) => {
                return ReadAgain::Gone(format!(
                    "it is reached through a link, and the collection's folders cannot be read to check where it leads ({why})"
                ));
            }
        }
    }
    // `target` has no link in it: one at its name now was put there since, and is
    // not followed; one put above it is caught by where the file opened really is.
    let file = match crate::files::open_regular(
        &target,
        std::fs::OpenOptions::new().read(true),
        crate::files::Links::Refuse,
    ) {
        Ok(file) => file,
        Err(e) => return ReadAgain::Gone(e.to_string()),
    };
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let opened = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()));
        if opened.is_ok_and(|opened| opened != target) {
            return ReadAgain::Gone("it was moved while it was read; ask again".into());
        }
    }
    if file
        .metadata()
        .is_ok_and(|m| m.len() > formats::MAX_FILE_BYTES)
    {
        return ReadAgain::Gone("it is now over the size limit".into());
    }
    let bytes = match formats::read_open(file) {
        Ok(bytes) => bytes,
        Err(e) => return ReadAgain::Gone(e.to_string()),
    };
    let format = Format::of(path).unwrap_or(Format::Text);
    match formats::read(path, format, bytes) {
        Ok(doc) => ReadAgain::Text(doc),
        Err(formats::Unreadable::Binary) => ReadAgain::Gone("it is no longer text".into()),
        Err(formats::Unreadable::Empty) => ReadAgain::Gone("it is now empty".into()),
        Err(formats::Unreadable::Failed(why)) => ReadAgain::Gone(why),
    }
}
