//! The `--out` file a batch appends to, and what an earlier run left in it.
//!
//! One JSON record a line, appended and flushed as each question ends, so a run
//! killed at any moment (even `kill -9`) loses at most the questions in flight, and
//! at most one line is left cut short. Opening the file again ([`Resumed::open`])
//! cuts that partial line off (its question is asked again, never recorded twice),
//! and reads which ids have an answer (skipped) and which a failure (skipped, or with
//! `--retry-failed` removed from the file, atomically, and asked again).
//!
//! What `--out` may be, decided before a byte of it is changed:
//!
//! - **A regular file**, new or an earlier run's output. Anything else is refused
//!   before it is opened ([`crate::files::open_regular`]): a FIFO's open would wait
//!   for a reader, `/dev/zero` never ends. A symbolic link is followed: the file it
//!   names is the output (a repair rewrites that file, the link stays a link).
//! - **Not the questions file** (the same device and inode): appending records to
//!   the questions a run is reading ends in nothing asked and a line lost.
//! - **Made of batch records**: every whole line is a JSON object with an `id` (a
//!   string or a number) and a `line`. A file with any other line is refused as it
//!   is, so a mistyped `--out` never loses the last line of an unrelated file; the
//!   one repair, cutting a last line short of its newline, is made only when that
//!   line is the start of a record.
//! - **One run's at a time**: [`Lock`], an exclusive lock on `<out>.lock` that names
//!   its holder. Two runs on one output would ask every question twice.
//!
//! The file is read as a stream, a line at a time; what is kept is each record's id.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::input::Id;
use crate::error::Error;
use crate::files::{Links, StateFileError, open_regular};

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

/// The longest record line read (an answer's record is tens of kilobytes): a longer
/// line is not a record, and is never held whole.
const MAX_RECORD_BYTES: u64 = 64 << 20;

/// A file's identity, its device and inode: two names of one file have the same.
pub type FileId = (u64, u64);

/// The identity of the file `metadata` describes (`None` where there is no inode).
pub fn file_id(metadata: &fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// What an earlier run's records say, and the file opened for appending.
#[derive(Debug)]
pub struct Resumed {
    /// Ids with an answer record.
    answered: HashSet<Box<str>>,
    /// Ids with only a failure record (empty with `--retry-failed`).
    failed: HashSet<Box<str>>,
    /// Bytes of a partial last line cut off (0 when the file ended cleanly).
    pub repaired: u64,
    /// Failure records removed by `--retry-failed`.
    pub dropped: usize,
    /// The file, opened to append.
    pub file: File,
    /// Why no lock keeps a second run off this output, when none does (a filesystem
    /// without locks, a folder where the lock file cannot be made): a warning.
    pub unlocked: Option<String>,
    /// The lock, held while this value lives.
    _lock: Option<Lock>,
}

fn cannot(path: &Path, what: &str, e: impl std::fmt::Display) -> Error {
    Error::Usage {
        message: format!("cannot {what} the output file {}: {e}", path.display()),
        hint: "pass --out a file in a folder you can write to".into(),
    }
}

/// The refusal of an `--out` that is not a batch's output.
fn not_records(path: &Path, number: usize, what: &str) -> Error {
    Error::Usage {
        message: format!(
            "--out {} is not a batch's output: its line {number} {what}",
            path.display()
        ),
        hint: "pass --out a new file, or the output of an earlier `ground batch` (one JSON record a line, each with an \"id\" and a \"line\"); nothing in this one was changed".into(),
    }
}

/// What the file a symbolic link at `path` names, or `path` itself.
fn resolve(path: &Path) -> Result<PathBuf, Error> {
    match fs::symlink_metadata(path) {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            fs::canonicalize(path).map_err(|e| Error::Usage {
                message: format!(
                    "--out {} is a symbolic link that cannot be followed: {e}",
                    path.display()
                ),
                hint: "pass --out a regular file, or a link to one that exists".into(),
            })
        }
        _ => Ok(path.to_path_buf()),
    }
}

/// A record line as far as resumption reads it: its id and whether it is a failure.
#[derive(Deserialize)]
struct OnFile<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(rename = "line")]
    _line: IgnoredAny,
    error: Option<IgnoredAny>,
}

/// The id (its string form) of a record line and whether it is a failure; `None`
/// when the line is not a batch record.
fn record(line: &[u8]) -> Option<(String, bool)> {
    let record: OnFile = serde_json::from_slice(line).ok()?;
    let id = Id::from_raw(record.id)?;
    Some((id.key(), record.error.is_some()))
}

/// Whether `tail`, a last line with no newline, is a record cut short (or a whole
/// one whose newline was not written).
fn cut_record(tail: &[u8]) -> bool {
    match serde_json::from_slice::<OnFile>(tail) {
        Ok(record) => Id::from_raw(record.id).is_some(),
        Err(e) => e.is_eof(),
    }
}

/// The next line of `reader` into `line` (its newline kept), at most
/// [`MAX_RECORD_BYTES`] of it: the bytes read, 0 at the end.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<usize> {
    line.clear();
    Read::take(&mut *reader, MAX_RECORD_BYTES + 1).read_until(b'\n', line)
}

/// What a reading of the whole file found.
struct Scan {
    answered: HashSet<Box<str>>,
    failed: HashSet<Box<str>>,
    /// Bytes of whole lines (those ending in a newline).
    whole: u64,
    /// Bytes of a last line cut short.
    tail: u64,
}

/// Reads every line of `file` (from its start): each whole line must be a record,
/// and a last line cut short the start of one.
fn scan(file: &File, path: &Path) -> Result<Scan, Error> {
    let mut found = Scan {
        answered: HashSet::new(),
        failed: HashSet::new(),
        whole: 0,
        tail: 0,
    };
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        let read = next_line(&mut reader, &mut line).map_err(|e| cannot(path, "read", e))?;
        if read == 0 {
            return Ok(found);
        }
        number += 1;
        if line.last() != Some(&b'\n') {
            if read as u64 > MAX_RECORD_BYTES {
                return Err(not_records(path, number, "is longer than any record"));
            }
            if !cut_record(&line) {
                return Err(not_records(path, number, "is not a batch record"));
            }
            found.tail = read as u64;
            return Ok(found);
        }
        found.whole += read as u64;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let Some((key, failure)) = record(&line) else {
            return Err(not_records(path, number, "is not a batch record"));
        };
        if failure {
            found.failed.insert(key.into());
        } else {
            found.answered.insert(key.into());
        }
    }
}

/// Writes the first `whole` bytes of `file` beside `target` without the failure
/// records of the ids in `dropping`, then renames that over `target` (with `file`'s
/// permissions): the file is the old one or the new one, never half of either.
fn rewrite(
    target: &Path,
    file: &File,
    whole: u64,
    dropping: &HashSet<Box<str>>,
) -> std::io::Result<usize> {
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let name = target.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    // One of ours left by a run that died in the middle: we hold the lock, so no
    // run is writing it now.
    let _ = fs::remove_file(&temp);
    let written = (|| {
        let new = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        new.set_permissions(file.metadata()?.permissions())?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        reader.seek(SeekFrom::Start(0))?;
        let mut reader = reader.take(whole);
        let mut writer = BufWriter::with_capacity(1 << 16, &new);
        let mut line = Vec::new();
        let mut dropped = 0;
        while next_line(&mut reader, &mut line)? > 0 {
            if let Some((key, true)) = record(&line)
                && dropping.contains(key.as_str())
            {
                dropped += 1;
                continue;
            }
            writer.write_all(&line)?;
        }
        writer.flush()?;
        new.sync_all()?;
        fs::rename(&temp, target)?;
        Ok(dropped)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

impl Resumed {
    /// Opens `path` to append, reading (and repairing) what is in it already, and
    /// locks it for this run. `input` is the questions file's identity, refused as
    /// the output.
    pub fn open(path: &Path, retry_failed: bool, input: Option<FileId>) -> Result<Resumed, Error> {
        let target = resolve(path)?;
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        let file = open_regular(&target, &mut options, Links::Follow).map_err(|e| match e {
            StateFileError::NotAFile { kind, .. } => Error::Usage {
                message: format!("--out {} is {kind}, not a regular file", path.display()),
                hint: "pass --out a regular file (a new one, or an earlier run's output); to have the records on stdout, leave --out out".into(),
            },
            other => cannot(path, "open", other),
        })?;
        let metadata = file.metadata().map_err(|e| cannot(path, "open", e))?;
        if input.is_some() && input == file_id(&metadata) {
            return Err(Error::Usage {
                message: format!("--out {} is the questions file itself", path.display()),
                hint: "pass --out another file: the records are appended to it".into(),
            });
        }
        let (lock, unlocked) = match Lock::take(&target) {
            Ok(lock) => (Some(lock), None),
            Err(Locking::Held(e)) => return Err(e),
            Err(Locking::Unavailable(why)) => (None, Some(why)),
        };

        let Scan {
            answered,
            mut failed,
            whole,
            tail,
        } = scan(&file, path)?;
        // A failure record of an id with no answer is dropped when retried (the id
        // is asked again); one beside an answer (a duplicate line's) stays, as its
        // line is not asked again.
        failed.retain(|key| !answered.contains(key));
        let mut resumed = Resumed {
            answered,
            failed,
            repaired: tail,
            dropped: 0,
            file,
            unlocked,
            _lock: lock,
        };
        if retry_failed && !resumed.failed.is_empty() {
            resumed.dropped = rewrite(&target, &resumed.file, whole, &resumed.failed)
                .map_err(|e| cannot(path, "rewrite", e))?;
            resumed.failed.clear();
            resumed.file = open_regular(&target, &mut options, Links::Follow)
                .map_err(|e| cannot(path, "open", e))?;
        } else if tail > 0 {
            resumed
                .file
                .set_len(whole)
                .map_err(|e| cannot(path, "repair", e))?;
        }
        Ok(resumed)
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

/// Writes `record`, one JSON line without its end, with a newline, and flushes it.
pub fn append(out: &mut dyn Write, record: &str) -> std::io::Result<()> {
    let mut line = String::with_capacity(record.len() + 1);
    line.push_str(record);
    line.push('\n');
    out.write_all(line.as_bytes())?;
    out.flush()
}

/// Why [`Lock::take`] did not lock.
enum Locking {
    /// Another run holds the lock: the error names it.
    Held(Error),
    /// No lock can be had here (why): the run goes on without one, and says so.
    Unavailable(String),
}

/// Who holds a lock, as its file says.
#[derive(serde::Serialize, Deserialize)]
struct Holder {
    pid: u32,
    host: String,
    /// When it took the lock, in Unix seconds.
    since: u64,
}

/// This machine's name.
fn host_name() -> String {
    #[cfg(unix)]
    {
        let mut buffer = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that.
        let got = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
        if got == 0 {
            let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
            return String::from_utf8_lossy(&buffer[..end]).into_owned();
        }
    }
    "this machine".into()
}

/// The lock that keeps a second run off an output: an exclusive lock (`flock`, via
/// std's [`File::try_lock`]) on `<out>.lock` beside the output, holding the holder's
/// pid, host and start. The lock, not the file, is what counts: the system drops it
/// when its process ends, however it ends, so a killed run's file is simply taken
/// over. The holder removes the file when it is done.
///
/// A separate file, not the output itself, because `--retry-failed` replaces the
/// output with a new file (and a lock belongs to a file, not to its name). The lock
/// is only tried, never waited for: a second run is refused at once with the
/// holder's name.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
    _file: File,
}

impl Lock {
    /// The lock file of the output `target`.
    pub fn path_for(target: &Path) -> PathBuf {
        let mut name = target.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        target.with_file_name(name)
    }

    /// Locks `target` for this process, or says who holds it.
    fn take(target: &Path) -> Result<Lock, Locking> {
        let path = Lock::path_for(target);
        let unavailable = |e: &dyn std::fmt::Display| {
            Locking::Unavailable(format!("cannot lock {}: {e}", path.display()))
        };
        // A holder that ends removes the file after we opened it: then the lock we
        // get is on a file no longer at its name, and we try again.
        for _ in 0..5 {
            let mut options = OpenOptions::new();
            options.read(true).write(true).create(true);
            let mut file =
                open_regular(&path, &mut options, Links::Refuse).map_err(|e| unavailable(&e))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(Locking::Held(held(target, &path, &mut file)));
                }
                Err(fs::TryLockError::Error(e)) => return Err(unavailable(&e)),
            }
            let ours = file.metadata().ok().and_then(|m| file_id(&m));
            let named = fs::symlink_metadata(&path).ok().and_then(|m| file_id(&m));
            if ours.is_some() && ours != named {
                continue;
            }
            let holder = Holder {
                pid: std::process::id(),
                host: host_name(),
                since: crate::files::unix_secs(),
            };
            let text = serde_json::to_string(&holder).unwrap_or_default() + "\n";
            // Who holds it is for the message of the run refused; not writing it
            // does not make the lock any less held.
            let _ = file
                .set_len(0)
                .and_then(|()| file.write_all(text.as_bytes()));
            return Ok(Lock { path, _file: file });
        }
        Err(unavailable(&"its file kept being replaced"))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // Removed while still locked, so no other run can have it yet; the lock
        // goes with the file's closing, just after.
        let _ = fs::remove_file(&self.path);
    }
}

/// The refusal of a run whose output another run holds, naming that run.
fn held(target: &Path, path: &Path, file: &mut File) -> Error {
    let mut text = String::new();
    let _ = Read::take(&mut *file, 4096).read_to_string(&mut text);
    let holder = serde_json::from_str::<Holder>(text.trim()).ok();
    let (who, stop) = match &holder {
        Some(h) => {
            let here = h.host == host_name();
            let host = if here {
                "this machine".to_string()
            } else {
                format!("host {}", h.host)
            };
            let ago = crate::files::unix_secs().saturating_sub(h.since);
            let stop = if here {
                format!("stop it (kill {})", h.pid)
            } else {
                format!("stop it (kill {} on {})", h.pid, h.host)
            };
            (
                format!("pid {} on {host}, started {ago} s ago", h.pid),
                stop,
            )
        }
        None => (
            "a process that has not yet said which".to_string(),
            "stop it".to_string(),
        ),
    };
    Error::Usage {
        message: format!(
            "another `ground batch` is writing to {} ({who}; its lock is {})",
            target.display(),
            path.display()
        ),
        hint: format!(
            "wait for it to end or {stop}, then run this again to resume: two runs on one output would ask every question twice. To split the work, give each run its own --shard and --out"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSWER: &str = "{\"id\":\"a\",\"line\":1,\"answer\":\"x\"}\n";
    const FAILURE: &str = "{\"id\":2,\"line\":2,\"error\":{\"kind\":\"model\"}}\n";

    #[test]
    fn a_partial_line_is_cut_and_failures_can_be_retried() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(&path, format!("{ANSWER}{FAILURE}{{\"id\":\"c\",\"ans")).unwrap();
        let kept = Resumed::open(&path, false, None).unwrap();
        assert_eq!(kept.repaired, 14);
        assert_eq!(kept.earlier("a"), Some(Earlier::Answered));
        assert_eq!(kept.earlier("2"), Some(Earlier::Failed));
        assert_eq!(kept.earlier("c"), None);
        assert!(kept.unlocked.is_none());
        drop(kept);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("{ANSWER}{FAILURE}")
        );
        let retried = Resumed::open(&path, true, None).unwrap();
        assert_eq!(retried.earlier("2"), None);
        assert_eq!(retried.dropped, 1);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, ANSWER);
        drop(retried);
        // The lock file goes with the run.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_file_of_other_lines_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes.txt");
        for text in [
            "first line\nsecond line, no newline",
            "{\"a\": 1}\n",
            "{\"a\": 1}",
            "hello",
            &format!("{ANSWER}{{\"id\":[1],\"line\":2}}\n"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = Resumed::open(&path, true, None).unwrap_err();
            assert!(
                err.to_string().contains("is not a batch's output"),
                "{text}: {err}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_stays_a_link_and_the_input_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.jsonl");
        std::fs::write(&target, format!("{ANSWER}{FAILURE}")).unwrap();
        let link = dir.path().join("out.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let resumed = Resumed::open(&link, true, None).unwrap();
        assert_eq!(resumed.dropped, 1);
        drop(resumed);
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), ANSWER);

        let input = file_id(&fs::metadata(&target).unwrap());
        let err = Resumed::open(&link, false, input).unwrap_err();
        assert!(
            err.to_string().contains("is the questions file itself"),
            "{err}"
        );
    }

    #[test]
    fn a_second_run_is_refused_with_the_holders_pid() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        let first = Resumed::open(&path, false, None).unwrap();
        let err = Resumed::open(&path, false, None).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("another `ground batch` is writing to")
                && text.contains(&format!("pid {} on this machine", std::process::id())),
            "{text}"
        );
        assert_eq!(err.exit_code(), crate::error::exit::USAGE);
        drop(first);
        Resumed::open(&path, false, None).unwrap();
    }

    #[test]
    fn big_ids_on_file_are_kept_exact() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(
            &path,
            "{\"id\":18446744073709551616,\"line\":1}\n{\"id\":18446744073709551617,\"line\":2,\"error\":{}}\n",
        )
        .unwrap();
        let resumed = Resumed::open(&path, false, None).unwrap();
        assert_eq!(
            resumed.earlier("18446744073709551616"),
            Some(Earlier::Answered)
        );
        assert_eq!(
            resumed.earlier("18446744073709551617"),
            Some(Earlier::Failed)
        );
    }
}
