//! Local documents as sources: the collections named for the run (`--docs`) searched
//! with the question, and the best files read again now, each becoming a source like a
//! page (its URL the file's `file://` URI) that competes for the window with the pages
//! in the same context selection and is checked by the same quote verification.
//!
//! Only the question is searched, locally; no text of a document ever goes into a web
//! query (the queries are planned before, from the question alone). A file is read
//! again at answer time, so quotes are checked against what it says now; a file that
//! is gone or unreadable is a warning, not a source.

use serde_json::json;

use super::Run;
use crate::docs::{self, IndexHome, ReadAgain};
use crate::error::Error;
use crate::events::Stage;
use crate::fetch::{RetrievalStatus, elapsed_ms};
use crate::page::PageAttempt;

/// Passages asked of the index; their files, best first, are the candidates.
pub const LOCAL_HITS: usize = 40;
/// Most files of the collections read as sources in one run.
pub const LOCAL_FILES: usize = 5;
/// A file's text above this many bytes is sent as the lines around its passages
/// found (the other lines left blank, so line numbers stay the file's).
pub const MAX_LOCAL_BYTES: usize = 256 * 1024;
/// Lines kept before and after each passage found, in a file over [`MAX_LOCAL_BYTES`].
const AROUND_LINES: u64 = 40;

impl Run<'_> {
    /// Searches the run's collections for `question` and reads the best files again,
    /// as successful page attempts ranked from `first_rank`. None when the run names
    /// no collection. A collection that cannot be searched is the run's error.
    pub(super) async fn read_local(
        &mut self,
        question: &str,
        first_rank: usize,
    ) -> Result<Vec<PageAttempt>, Error> {
        let settings = &self.settings.docs;
        if settings.collections.is_empty() {
            return Ok(Vec::new());
        }
        let home: IndexHome = settings.home.clone().ok_or(docs::IndexError::NoHome)?;
        let collections = settings.collections.clone();
        self.events.stage(
            Stage::Fetching,
            &format!("searching local documents ({})", collections.join(", ")),
        );
        let started = std::time::Instant::now();
        let query = question.to_string();
        let hits = tokio::task::spawn_blocking(move || {
            let hits = docs::find(&home, &collections, &query, LOCAL_HITS)?;
            Ok::<_, docs::IndexError>(read_files(&home, hits))
        })
        .await
        .map_err(|e| Error::Internal {
            message: format!("the local search stopped: {e}"),
        })??;
        let mut pages = Vec::new();
        for (i, file) in hits.into_iter().enumerate() {
            let shown = crate::text::sanitize_line(&file.path.to_string_lossy());
            let text = match file.read {
                ReadAgain::Text(doc) => (doc.title, doc.text),
                ReadAgain::Gone(why) => {
                    self.warn(format!(
                        "{shown} is in the index but cannot be read now ({why}); not used ({} updates the index)",
                        docs::update_hint(&file.collection)
                    ));
                    continue;
                }
            };
            let Ok(url) = url::Url::from_file_path(&file.path) else {
                continue;
            };
            let (title, text) = text;
            let text = around(&text, &file.ranges);
            pages.push(PageAttempt {
                rank: first_rank + i,
                index: None,
                url: url.to_string(),
                final_url: None,
                title,
                status: RetrievalStatus::Success,
                http_status: None,
                content_type: None,
                chars_fetched: text.chars().count(),
                chars: text.chars().count(),
                body_truncated: false,
                error: None,
                ms: 0,
                cached: false,
                text,
                collection: Some(file.collection),
            });
        }
        let ms = elapsed_ms(started);
        self.so_far.timings.fetch += ms;
        self.events.emit(
            "local_documents",
            json!({"collections": self.settings.docs.collections, "files": pages.iter().map(|p| &p.url).collect::<Vec<_>>(), "ms": ms}),
        );
        Ok(pages)
    }
}

/// One file found: its passages' line ranges, and its text read again now.
struct FileFound {
    path: std::path::PathBuf,
    /// The collection it was found in (the best passage's, when in several).
    collection: String,
    ranges: Vec<(u64, u64)>,
    read: ReadAgain,
}

/// Groups `hits` by file (best first, at most [`LOCAL_FILES`]) and reads each again.
/// Blocking.
fn read_files(home: &IndexHome, hits: Vec<docs::Hit>) -> Vec<FileFound> {
    // The files of the best passages, best first: (path, collection, line ranges).
    type Found = (std::path::PathBuf, String, Vec<(u64, u64)>);
    let mut files: Vec<Found> = Vec::new();
    for hit in hits {
        let range = (hit.line_start, hit.line_end);
        if let Some((_, _, ranges)) = files.iter_mut().find(|(p, _, _)| *p == hit.path) {
            ranges.push(range);
        } else if files.len() < LOCAL_FILES {
            files.push((hit.path, hit.collection, vec![range]));
        }
    }
    files
        .into_iter()
        .map(|(path, collection, ranges)| {
            let read = docs::read_again(home, &collection, &path);
            FileFound {
                path,
                collection,
                ranges,
                read,
            }
        })
        .collect()
}

/// `text` whole when small; else only the lines within [`AROUND_LINES`] of the
/// `ranges` found, the others left empty so every line keeps its number.
fn around(text: &str, ranges: &[(u64, u64)]) -> String {
    if text.len() <= MAX_LOCAL_BYTES {
        return text.to_string();
    }
    let keep = |n: u64| {
        ranges
            .iter()
            .any(|&(s, e)| n + AROUND_LINES >= s && n <= e + AROUND_LINES)
    };
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        if keep(i as u64 + 1) && out.len() < MAX_LOCAL_BYTES {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_file_keeps_its_line_numbers() {
        let text: String = (1..=20_000).map(|n| format!("line number {n}\n")).collect();
        let cut = around(&text, &[(10_000, 10_002)]);
        let lines: Vec<&str> = cut.lines().collect();
        assert_eq!(lines[9_999], "line number 10000");
        assert_eq!(lines[0], "");
        assert!(cut.len() < 20_000 + 100 * 20);
    }
}
