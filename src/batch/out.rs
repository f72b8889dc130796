//! The `--out` file a batch appends to, and what an earlier run left in it.
//!
//! One JSON record a line, appended and flushed as each question ends, so a run
//! killed at any moment (even `kill -9`) loses at most the questions in flight, and
//! at most one line is left cut short. Opening the file again ([`Resumed::open`])
//! cuts that partial line off (its question is asked again, never recorded twice),
//! and reads which ids have an answer (skipped) and which a failure (skipped, or with
//! `--retry-failed` removed from the file, atomically, and asked again).

use std::collections::HashSet;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::input::key_of;
use crate::error::Error;

/// An id's record from an earlier run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Earlier {
    /// An answer: never asked again.
    Answered,
    /// A failure: asked again only with `--retry-failed` (which removes it first).
    Failed,
}

/// Finds an id's earlier record by its string form: what [`super::run`] skips by.
pub type Lookup = dyn Fn(&str) -> Option<Earlier> + Sync;

/// One record's id (its string form) and whether it is a failure.
type OnFile = (String, bool);

/// What an earlier run's records say, and the file opened for appending.
#[derive(Debug)]
pub struct Resumed {
    /// Ids with an answer record.
    pub answered: HashSet<String>,
    /// Ids with only a failure record (empty with `--retry-failed`).
    pub failed: HashSet<String>,
    /// Bytes of a partial last line cut off (0 when the file ended cleanly).
    pub repaired: usize,
    /// The file, opened to append.
    pub file: std::fs::File,
}

fn cannot(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::Usage {
        message: format!("cannot {what} the output file {}: {e}", path.display()),
        hint: "pass --out a file in a folder you can write to".into(),
    }
}

impl Resumed {
    /// Opens `path` to append, reading (and repairing) what is in it already.
    pub fn open(path: &Path, retry_failed: bool) -> Result<Resumed, Error> {
        let mut answered = HashSet::new();
        let mut failed = HashSet::new();
        let mut repaired = 0;
        match std::fs::read(path) {
            Ok(bytes) => {
                let whole = bytes
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |end| end + 1);
                repaired = bytes.len() - whole;
                let records: Vec<(&[u8], Option<OnFile>)> = bytes[..whole]
                    .split_inclusive(|&b| b == b'\n')
                    .map(|line| {
                        let id = match serde_json::from_slice::<Value>(line) {
                            Ok(Value::Object(record)) => record
                                .get("id")
                                .map(|id| (key_of(id), record.contains_key("error"))),
                            _ => None,
                        };
                        (line, id)
                    })
                    .collect();
                for (_, id) in &records {
                    if let Some((key, false)) = id {
                        answered.insert(key.clone());
                    }
                }
                // A failure record of an id with no answer is dropped when retried
                // (the id is asked again); one beside an answer (a duplicate line's)
                // stays, as its line is not asked again.
                let mut kept = Vec::with_capacity(whole);
                for (line, id) in records {
                    if let Some((key, true)) = id
                        && !answered.contains(&key)
                    {
                        if retry_failed {
                            continue;
                        }
                        failed.insert(key);
                    }
                    kept.extend_from_slice(line);
                }
                if kept.len() != bytes.len() {
                    crate::files::write_atomically(path, &kept)
                        .map_err(|e| cannot(path, "repair", e))?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(cannot(path, "read", e)),
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| cannot(path, "open", e))?;
        Ok(Resumed {
            answered,
            failed,
            repaired,
            file,
        })
    }

    /// The record the output has already for the id with string form `key`.
    pub fn earlier(&self, key: &str) -> Option<Earlier> {
        if self.answered.contains(key) {
            Some(Earlier::Answered)
        } else if self.failed.contains(key) {
            Some(Earlier::Failed)
        } else {
            None
        }
    }
}

/// Writes `record` as one line, as `--json` writes it ([`crate::text::json_line`]),
/// and flushes it.
pub fn append(out: &mut dyn Write, record: &Value) -> std::io::Result<()> {
    let mut line = crate::text::json_line(record);
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partial_line_is_cut_and_failures_can_be_retried() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(
            &path,
            "{\"id\":\"a\",\"answer\":\"x\"}\n{\"id\":2,\"error\":{\"kind\":\"model\"}}\n{\"id\":\"c\",\"ans",
        )
        .unwrap();
        let kept = Resumed::open(&path, false).unwrap();
        assert_eq!(kept.repaired, 14);
        assert_eq!(kept.earlier("a"), Some(Earlier::Answered));
        assert_eq!(kept.earlier("2"), Some(Earlier::Failed));
        assert_eq!(kept.earlier("c"), None);
        drop(kept);
        let retried = Resumed::open(&path, true).unwrap();
        assert_eq!(retried.earlier("2"), None);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "{\"id\":\"a\",\"answer\":\"x\"}\n");
    }
}
