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

/// The `n` best passages for `query` in `collections` (merged by score). Blocking:
/// call it off the async runtime.
pub fn search(
    home: &IndexHome,
    collections: &[String],
    query: &str,
    n: usize,
) -> Result<Vec<Hit>, IndexError> {
    let mut hits = Vec::new();
    for name in collections {
        let collection = Collection::at(home, name)?;
        hits.extend(search_one(home, &collection, query, n)?);
    }
    hits.sort_by(|a, b| b.score.total_cmp(&a.score));
    hits.truncate(n);
    Ok(hits)
}

fn search_one(
    home: &IndexHome,
    collection: &Collection,
    query: &str,
    n: usize,
) -> Result<Vec<Hit>, IndexError> {
    let (index, reader, f) = collection.reader()?;
    let corrupt = |e: tantivy::TantivyError| IndexError::Corrupt {
        collection: collection.name.clone(),
        reason: e.to_string(),
    };
    let searcher = reader.searcher();
    let parser = QueryParser::for_index(&index, vec![f.title, f.body]);
    // A person's words, not a query language: what does not parse is read as text.
    let (query, _) = parser.parse_query_lenient(query);
    // A query with no word left to look for (stop words alone, punctuation) would be
    // read as "every passage": it finds nothing instead.
    let mut has_words = false;
    query.query_terms(&mut |_, _| has_words = true);
    if !has_words {
        return Ok(Vec::new());
    }
    let top = searcher
        .search(&query, &TopDocs::with_limit(n.max(1)).order_by_score())
        .map_err(corrupt)?;
    let mut snippets = SnippetGenerator::create(&searcher, &*query, f.body).map_err(corrupt)?;
    snippets.set_max_num_chars(SNIPPET_CHARS);
    let mut files = FilesRead {
        home,
        collection: &collection.name,
        read: HashMap::new(),
    };
    let mut hits = Vec::new();
    for (score, address) in top {
        let doc: TantivyDocument = searcher.doc(address).map_err(corrupt)?;
        let stored = |field| doc.get_first(field).and_then(|v| v.as_str());
        let text_of = |field| stored(field).unwrap_or_default().to_string();
        let number_of = |field| doc.get_first(field).and_then(|v| v.as_u64()).unwrap_or(0);
        let path = PathBuf::from(text_of(f.path));
        let (line_start, line_end) = (number_of(f.line_start), number_of(f.line_end));
        // An extracted passage's text is in the index (a collection made before
        // 2026-11-29 keeps every passage's, as `body`); the others are read from the file.
        let kept = [Some(f.body), f.text]
            .into_iter()
            .flatten()
            .find_map(stored);
        let (text, unreadable) = match kept {
            Some(text) => (text.to_string(), None),
            None => match files.lines(&path, line_start, line_end) {
                Ok(text) => (text, None),
                Err(why) => (String::new(), Some(why)),
            },
        };
        let mut snippet = snippets.snippet(&text).fragment().to_string();
        if snippet.trim().is_empty() {
            snippet = crate::text::shorten(&text, SNIPPET_CHARS);
        }
        hits.push(Hit {
            collection: collection.name.clone(),
            path,
            title: text_of(f.title),
            line_start,
            line_end,
            snippet: crate::text::clean_inline(&snippet),
            text,
            score,
            unreadable,
        });
    }
    Ok(hits)
}

/// The files read again for one search's hits in one collection, each read at most
/// once.
struct FilesRead<'a> {
    home: &'a IndexHome,
    collection: &'a str,
    read: HashMap<PathBuf, ReadAgain>,
}

impl FilesRead<'_> {
    /// Lines `start..=end` (1-based) of `path` as the index cut them, or why the
    /// file cannot be read now.
    fn lines(&mut self, path: &Path, start: u64, end: u64) -> Result<String, String> {
        let read = self
            .read
            .entry(path.to_path_buf())
            .or_insert_with(|| read_again(self.home, self.collection, path));
        match read {
            ReadAgain::Text(doc) => Ok(passages::passage_text(&doc.text, start, end)),
            ReadAgain::Gone(why) => Err(format!(
                "{why}; `ground index add` brings the collection up to date"
            )),
        }
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
    let target = match std::fs::canonicalize(path) {
        Ok(target) => target,
        Err(e) => return ReadAgain::Gone(e.to_string()),
    };
    // A path as indexed is canonical unless a link inside the folder led to it; only
    // then are the folders read (from the manifest) to check where it leads now.
    if target != path {
        let roots = Collection::at(home, collection)
            .and_then(|c| c.manifest())
            .map(|m| m.roots)
            .unwrap_or_default();
        if !roots.iter().any(|root| walk::is_under(&target, root)) {
            return ReadAgain::Gone(format!("it is now {}", walk::LINK_OUT));
        }
    }
    match std::fs::metadata(&target) {
        Ok(m) if m.len() > formats::MAX_FILE_BYTES => {
            return ReadAgain::Gone("it is now over the size limit".into());
        }
        Ok(_) => {}
        Err(e) => return ReadAgain::Gone(e.to_string()),
    }
    let bytes = match formats::read_file(&target) {
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
