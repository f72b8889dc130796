//! A conversation kept between runs: `ground chat`, and `ground answer --continue` /
//! `--session NAME` for scripts. Each turn's question, the standalone question it
//! was answered as, the answer, and the sources read (URL, title and the extracted
//! text the answers used; a search's short sources marked) are kept in one JSON file
//! per session under the state folder (`$XDG_STATE_HOME/ground/sessions/NAME.json`),
//! so the next turn can reuse the evidence and keep the source numbers. The sources
//! are the conversations' one record ([`Evidence`], with its one numbering rule),
//! the record a server keeps in memory (`service::Conversations`): this store keeps
//! it on disk, beside the turns.
//!
//! Design decisions:
//! - **A name is never a path.** Names are 1-64 letters, digits, `-` and `_`
//!   ([`check_name`]); the file is always `sessions/NAME.json` in the state folder.
//!   `ground chat` without a name starts a new conversation named for the time
//!   ([`new_chat_name`]), never silently continuing an old one.
//! - **Bounded.** A file holds at most [`MAX_TURNS`] turns and the run's
//!   [`MAX_SESSION_SOURCES`] sources, each text cut to [`MAX_SOURCE_CHARS`]; it is
//!   written under [`MAX_SESSION_BYTES`] (the oldest sources' texts are dropped
//!   first, their numbers kept) and read only up to it. A session unused for
//!   [`MAX_AGE`] is not continued: it starts afresh, and saving sweeps such files.
//! - **One run at a time.** A run holds the session ([`hold`]: an advisory lock on
//!   `sessions/NAME.lock`, a regular file never followed through a link) from before
//!   it reads the file until after it saves it, so concurrent runs of one session take
//!   turns instead of each writing over the others' turns. A second run waits for
//!   the first, within its own deadline (the wait counts against `--timeout`), and
//!   Ctrl-C ends the wait; past the deadline it is an [`Error::Session`] saying the
//!   session is in use. `ground chat` holds its session for the whole chat.
//! - **The user's alone.** The sessions folder is 0700 and every file in it 0600:
//!   they hold the questions asked.
//! - **Whole or not at all.** Written with the one atomic writer
//!   ([`crate::files::write_atomically`]) and read with the bounded state-file reader;
//!   a damaged, oversized or foreign file is an [`Error::Session`] (exit 2) naming the
//!   file and how to start anew, never a crash and never silently replaced.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::files;
use crate::pipeline::{Evidence, MAX_PRIOR_TURNS, MAX_SESSION_SOURCES, Prior, PriorTurn};
use crate::report::Report;

/// The file format's version; a file of another version is refused.
pub const FORMAT: u32 = 1;
/// Largest session file written or read, in bytes.
pub const MAX_SESSION_BYTES: u64 = 4 * 1024 * 1024;
/// Most turns a session keeps (the oldest go first).
pub const MAX_TURNS: usize = MAX_PRIOR_TURNS;
/// Most characters of one source's text kept.
pub const MAX_SOURCE_CHARS: usize = 60_000;
/// Most characters of one answer kept.
pub const MAX_ANSWER_CHARS: usize = 8_000;
/// A session unused for this long is started afresh.
pub const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);
/// Longest session name.
pub const MAX_NAME_CHARS: usize = 64;
/// The folder under the state folder that holds the sessions.
pub const FOLDER: &str = "sessions";
/// The name of a new `ground chat` conversation started without `--session`:
/// `chat-` and the UTC time, e.g. `chat-2026-11-24-213509`.
pub fn new_chat_name() -> String {
    let time = crate::search::state::rfc3339(files::unix_ms());
    format!("chat-{}", time.replace('T', "-").replace([':', 'Z'], ""))
}

/// One answered turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The question as asked.
    pub question: String,
    /// The question as answered (the follow-up rewritten to stand alone).
    pub standalone: String,
    /// The answer, each statement followed by the `[n]` markers of the sources that
    /// support it.
    pub answer: String,
    /// The statements of the answer that its sources support (a verified quote or a
    /// match), each followed by its markers: all a later turn is shown of this one.
    /// An unsupported statement (one a page may have put in the model's mouth) is
    /// never carried on. `None` in files written before it was kept: such a turn
    /// passes on its question only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported: Option<String>,
    /// The source numbers the answer cites.
    pub cited: Vec<usize>,
    /// Whether this turn searched (false: answered from the evidence already read).
    pub searched: bool,
}

/// A conversation: its turns and the sources read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// [`FORMAT`].
    pub format: u32,
    /// Its name (also the file's).
    pub name: String,
    /// When it began and was last saved, seconds since the Unix epoch.
    pub created: u64,
    /// When it was last saved.
    pub updated: u64,
    /// The turns, oldest first (the last [`MAX_TURNS`]).
    pub turns: Vec<Turn>,
    /// The sources read, numbered 1.. in order, and which were a search's short
    /// sources: the conversations' one record ([`Evidence`]), kept in the file as its
    /// `sources` and `short` keys. A source's text may be empty when the file's size
    /// bound dropped it; its number stays.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// Turns answered since the conversation began, those no longer kept included
    /// (0 in files written before it was counted: then the turns kept count).
    #[serde(default)]
    pub answered: u64,
}

/// How often a held session's lock is tried again while another run holds it.
const HOLD_RETRY: Duration = Duration::from_millis(50);

/// A session held by this run (see [`hold`]); dropping it lets the next run in.
#[derive(Debug)]
pub struct Hold {
    /// The lock file, locked; closing it releases the lock.
    _lock: std::fs::File,
    /// How long the run waited for it.
    pub waited: Duration,
}

/// Holds session `name` in `state_dir` for this run's read-modify-write: takes the
/// exclusive lock of its lock file (`sessions/NAME.lock`, created 0600, never through
/// a link, never anything but a regular file), waiting up to `wait` while another
/// run holds it. The wait is a timer, so a runtime's Ctrl-C ends it at once. Past
/// `wait`, an [`Error::Session`] saying the session is in use.
pub async fn hold(state_dir: &Path, name: &str, wait: Duration) -> Result<Hold, Error> {
    let path = path_of(state_dir, name)?.with_extension("lock");
    let cannot = |problem: &dyn std::fmt::Display| {
        Error::Session {
        message: format!(
            "cannot lock the session {name:?} ({}): {problem}",
            path.display()
        ),
        hint: "check that the state folder (GROUND_STATE_DIR or XDG_STATE_HOME) is writable, or use another --session name".into(),
    }
    };
    let dir = folder(state_dir);
    files::create_private_dir(&dir).map_err(|e| cannot(&e))?;
    keep_private(&dir);
    let lock = files::open_regular(
        &path,
        files::private(
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true),
        ),
        files::Links::Refuse,
    )
    .map_err(|e| cannot(&e))?;
    let started = tokio::time::Instant::now();
    loop {
        match lock.try_lock() {
            Ok(()) => {
                return Ok(Hold {
                    _lock: lock,
                    waited: started.elapsed(),
                });
            }
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                tokio::time::sleep(HOLD_RETRY.min(wait.saturating_sub(started.elapsed()))).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Session {
                    message: format!(
                        "the session {name:?} is in use by another ground run (waited {} s for it)",
                        started.elapsed().as_secs()
                    ),
                    hint: "wait for it to finish, or use another --session name (or a longer --timeout to wait longer)".into(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(cannot(&e)),
        }
    }
}

/// Takes group and other access away from the sessions folder when an older ground
/// left it open to them (it was 0755 before). Best effort: a folder that cannot be
/// changed stays as it is.
fn keep_private(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::symlink_metadata(dir)
            && meta.is_dir()
            && meta.permissions().mode() & 0o077 != 0
        {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// Refuses a name that is not 1-[`MAX_NAME_CHARS`] letters, digits, `-` or `_`
/// (so a name can never lead outside the sessions folder).
pub fn check_name(name: &str) -> Result<(), Error> {
    let plain = !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if plain {
        return Ok(());
    }
    Err(Error::Session {
        message: format!(
            "the session name {:?} is not a plain name",
            crate::text::shorten(&crate::text::sanitize_line(name), 80)
        ),
        hint: format!(
            "use 1-{MAX_NAME_CHARS} letters, digits, '-' or '_' (e.g. --session lighthouse-notes)"
        ),
    })
}

/// The sessions folder under `state_dir`.
pub fn folder(state_dir: &Path) -> PathBuf {
    state_dir.join(FOLDER)
}

/// The file of session `name` (checked with [`check_name`] first).
pub fn path_of(state_dir: &Path, name: &str) -> Result<PathBuf, Error> {
    check_name(name)?;
    Ok(folder(state_dir).join(format!("{name}.json")))
}

/// A damaged or unusable session file.
fn unusable(path: &Path, problem: impl std::fmt::Display) -> Error {
    Error::Session {
        message: format!(
            "the session file {} cannot be used: {problem}",
            path.display()
        ),
        hint:
            "delete it (or move it away) to start the session anew, or use another --session name"
                .into(),
    }
}

impl Session {
    /// A new, empty session.
    pub fn new(name: &str) -> Result<Self, Error> {
        check_name(name)?;
        let now = files::unix_secs();
        Ok(Session {
            format: FORMAT,
            name: name.to_string(),
            created: now,
            updated: now,
            turns: Vec::new(),
            evidence: Evidence::default(),
            answered: 0,
        })
    }

    /// Session `name` from `state_dir`: `Ok(None)` when there is none or it is older
    /// than [`MAX_AGE`] (a new one starts), an [`Error::Session`] when its file
    /// cannot be used.
    pub fn load(state_dir: &Path, name: &str) -> Result<Option<Self>, Error> {
        let path = path_of(state_dir, name)?;
        let Some(bytes) = files::read_small(&path, MAX_SESSION_BYTES).map_err(|e| match e {
            files::StateFileError::TooLarge { max, .. } => {
                unusable(&path, format!("it is larger than {max} bytes"))
            }
            other => unusable(&path, other),
        })?
        else {
            return Ok(None);
        };
        let session: Session = serde_json::from_slice(&bytes)
            .map_err(|e| unusable(&path, format!("it is not a session file ({e})")))?;
        session.check(&path, name)?;
        let age = files::unix_secs().saturating_sub(session.updated);
        if age > MAX_AGE.as_secs() {
            return Ok(None);
        }
        Ok(Some(session))
    }

    /// Session `name`, or a new one when there is none (or it expired).
    pub fn open(state_dir: &Path, name: &str) -> Result<Self, Error> {
        Ok(match Self::load(state_dir, name)? {
            Some(session) => session,
            None => Session::new(name)?,
        })
    }

    /// The name of the most recently saved session in `state_dir` that has not
    /// expired, if any (`--continue`). Files whose names are not session names are
    /// passed over.
    pub fn most_recent(state_dir: &Path) -> Option<String> {
        let entries = std::fs::read_dir(folder(state_dir)).ok()?;
        let now = std::time::SystemTime::now();
        entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let name = entry
                    .file_name()
                    .to_str()?
                    .strip_suffix(".json")?
                    .to_string();
                check_name(&name).ok()?;
                let meta = entry.metadata().ok().filter(std::fs::Metadata::is_file)?;
                let modified = meta.modified().ok()?;
                let age = now.duration_since(modified).unwrap_or_default();
                (age <= MAX_AGE).then_some((modified, name))
            })
            .max()
            .map(|(_, name)| name)
    }

    /// What a parsed file must be: this format, this name, sources numbered 1.. in
    /// order, within the bounds.
    fn check(&self, path: &Path, name: &str) -> Result<(), Error> {
        if self.format != FORMAT {
            return Err(unusable(
                path,
                format!("it is format {}, this ground reads {FORMAT}", self.format),
            ));
        }
        if self.name != name {
            return Err(unusable(
                path,
                format!(
                    "it names the session {:?}",
                    crate::text::shorten(&self.name, 80)
                ),
            ));
        }
        if self.turns.len() > MAX_TURNS || self.evidence.sources.len() > MAX_SESSION_SOURCES {
            return Err(unusable(
                path,
                "it holds more turns or sources than a session keeps",
            ));
        }
        if self
            .evidence
            .sources
            .iter()
            .enumerate()
            .any(|(i, s)| s.number != i + 1)
        {
            return Err(unusable(path, "its sources are not numbered 1, 2, 3, ..."));
        }
        Ok(())
    }

    /// What the next run takes from the session: its turns and sources.
    pub fn prior(&self) -> Prior {
        let turns = self
            .turns
            .iter()
            .map(|t| PriorTurn {
                question: t.question.clone(),
                answer: t.supported.clone().unwrap_or_default(),
            })
            .collect();
        self.evidence.prior(turns)
    }

    /// The number of the turn being answered: one after every turn answered since the
    /// conversation began, kept or not.
    pub fn turn_number(&self) -> u64 {
        // A count at the end of the range (a tampered file) stays there, never wraps.
        self.answered.max(self.turns.len() as u64).saturating_add(1)
    }

    /// Adds the turn `report` answered: its question, standalone question, answer and
    /// the new sources it read (numbered after the session's; sources the run was
    /// shown again are already here). Keeps the last [`MAX_TURNS`].
    pub fn record(&mut self, report: &Report) {
        let number = self.turn_number();
        let answer = &report.answer;
        let mut cited: Vec<usize> = Vec::new();
        let mut text = String::new();
        let mut supported = String::new();
        let add = |to: &mut String, said: &str| {
            if !to.is_empty() {
                to.push(' ');
            }
            to.push_str(said);
        };
        for statement in &answer.statements {
            let sources = statement.supporting_sources();
            let mut said = statement.text.clone();
            for (n, _) in &sources {
                said.push_str(&format!("[{n}]"));
                cited.push(*n);
            }
            add(&mut text, &said);
            if !sources.is_empty() {
                add(&mut supported, &said);
            }
        }
        if text.is_empty() || !answer.answerable {
            text = answer.answer.clone();
        }
        if !answer.answerable {
            supported.clear();
        }
        cited.sort_unstable();
        cited.dedup();
        let followup = report.followup.as_ref();
        self.turns.push(Turn {
            question: report.question.clone(),
            standalone: followup
                .map(|f| f.standalone.clone())
                .unwrap_or_else(|| report.question.clone()),
            answer: text.chars().take(MAX_ANSWER_CHARS).collect(),
            supported: Some(supported.chars().take(MAX_ANSWER_CHARS).collect()),
            cited,
            searched: followup.is_none_or(|f| f.searched),
        });
        self.answered = number;
        if self.turns.len() > MAX_TURNS {
            self.turns.drain(..self.turns.len() - MAX_TURNS);
        }
        // The conversations' one record and numbering rule: only sources numbered
        // after the session's are new (and only in order); short ones are marked.
        self.evidence.add(report, MAX_SOURCE_CHARS);
    }

    /// Forgets every turn and source (`/new`), keeping the name.
    pub fn clear(&mut self) {
        self.turns.clear();
        self.evidence = Evidence::default();
        self.answered = 0;
        self.created = files::unix_secs();
    }

    /// The file's bytes within [`MAX_SESSION_BYTES`]: the oldest sources' texts are
    /// dropped (their numbers and URLs kept) until it fits.
    fn bytes(&mut self) -> Vec<u8> {
        let mut dropped = 0;
        loop {
            let bytes = serde_json::to_vec(self).unwrap_or_default();
            if bytes.len() as u64 <= MAX_SESSION_BYTES || dropped >= self.evidence.sources.len() {
                return bytes;
            }
            self.evidence.sources[dropped].text.clear();
            dropped += 1;
        }
    }

    /// Writes the session to its file in `state_dir`, whole or not at all, and
    /// removes other sessions unused for [`MAX_AGE`].
    pub fn save(&mut self, state_dir: &Path) -> Result<(), Error> {
        let path = path_of(state_dir, &self.name)?;
        self.updated = files::unix_secs();
        let bytes = self.bytes();
        files::write_atomically(&path, &bytes).map_err(|e| Error::Session {
            message: format!("cannot save the session to {}: {e}", path.display()),
            hint: "check that the state folder (GROUND_STATE_DIR or XDG_STATE_HOME) is writable"
                .into(),
        })?;
        sweep_expired(state_dir);
        Ok(())
    }
}

/// Removes session files unused for [`MAX_AGE`] (regular files with session names
/// only); a file that cannot be removed stays.
fn sweep_expired(state_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(folder(state_dir)) else {
        return;
    };
    let now = std::time::SystemTime::now();
    for entry in entries.filter_map(Result::ok) {
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let plain = name
            .strip_suffix(".json")
            .is_some_and(|n| check_name(n).is_ok());
        let Ok(meta) = entry.metadata() else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .is_some_and(|age| age > MAX_AGE);
        if plain && meta.is_file() && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::context::SourceText;

    #[test]
    fn names_are_plain_never_paths() {
        let chat = new_chat_name();
        assert!(check_name(&chat).is_ok(), "{chat}");
        assert_eq!(chat.len(), "chat-2026-11-24-213509".len(), "{chat}");
        for good in ["chat", "lighthouse-notes", "a_1", &"x".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "../etc/passwd",
            "a/b",
            "..",
            ".hidden",
            "a b",
            "naïve",
            "x\u{1b}[31m",
            &"x".repeat(65),
        ] {
            let err = check_name(bad).unwrap_err();
            assert_eq!(err.exit_code(), crate::error::exit::USAGE, "{bad}");
            assert!(!err.to_string().contains('\u{1b}'));
        }
    }

    fn source(n: usize, chars: usize) -> SourceText {
        SourceText {
            number: n,
            url: format!("https://example.org/{n}"),
            title: format!("Page {n}"),
            text: "word ".repeat(chars / 5),
        }
    }

    /// A run's report that was shown the session's `known` sources again and read
    /// `pages` more pages, then sent `snippets` search snippets.
    pub(crate) fn report_reading(known: usize, pages: usize, snippets: usize) -> Report {
        let mut report = Report::default();
        for n in 1..=known + pages + snippets {
            report.sources.push(SourceText {
                number: n,
                url: format!("https://example.org/{n}"),
                title: format!("Page {n}"),
                text: format!("text of {n}"),
            });
        }
        report.short_kinds = vec![crate::context::SourceKind::Snippet; snippets];
        report
    }

    #[test]
    fn a_snippet_keeps_its_number_but_its_page_counts_as_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new("snippets").unwrap();
        session.record(&report_reading(0, 1, 0));
        // The follow-up was shown source 1 again, read page 2 and sent snippet 3.
        session.record(&report_reading(1, 1, 1));
        assert_eq!(
            session.evidence.sources.len(),
            3,
            "numbered after the earlier ones"
        );
        assert_eq!(
            session.prior().short,
            vec![3],
            "the snippet is marked short"
        );
        session.save(dir.path()).unwrap();
        let loaded = Session::open(dir.path(), "snippets").unwrap();
        assert_eq!(
            loaded.prior().short,
            vec![3],
            "kept on disk for the next run"
        );
        assert_eq!(loaded.prior().sources.len(), 3);
    }

    #[test]
    fn saved_sessions_load_back_and_stay_under_the_size_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = Session::new("big").unwrap();
        session.evidence.sources = (1..=MAX_SESSION_SOURCES)
            .map(|n| source(n, 3 * MAX_SOURCE_CHARS))
            .collect();
        session.save(dir.path()).unwrap();
        let path = path_of(dir.path(), "big").unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size <= MAX_SESSION_BYTES, "{size}");
        let loaded = Session::load(dir.path(), "big").unwrap().unwrap();
        assert_eq!(loaded.evidence.sources.len(), MAX_SESSION_SOURCES);
        assert!(
            loaded.evidence.sources[0].text.is_empty(),
            "the oldest text goes first"
        );
        assert!(!loaded.evidence.sources.last().unwrap().text.is_empty());
        assert_eq!(
            loaded.evidence.sources[0].url, "https://example.org/1",
            "numbers stay"
        );
    }

    #[test]
    fn damaged_foreign_and_oversized_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(dir.path(), "s").unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (b"{\"format\": 1, \"name\": \"s\", \"tur".to_vec(), "not a session file"),
            (b"\xff\xfe garbage".to_vec(), "not a session file"),
            (
                br#"{"format":9,"name":"s","created":0,"updated":0,"turns":[],"sources":[]}"#.to_vec(),
                "format 9",
            ),
            (
                br#"{"format":1,"name":"other","created":0,"updated":99999999999,"turns":[],"sources":[]}"#.to_vec(),
                "names the session",
            ),
            (
                br#"{"format":1,"name":"s","created":0,"updated":99999999999,"turns":[],"sources":[{"number":2,"url":"u","title":"t","text":""}]}"#.to_vec(),
                "numbered",
            ),
            (vec![b' '; MAX_SESSION_BYTES as usize + 1], "larger than"),
        ];
        for (bytes, expected) in cases {
            std::fs::write(&path, &bytes).unwrap();
            let err = Session::load(dir.path(), "s").unwrap_err();
            assert_eq!(err.kind(), "session");
            assert_eq!(err.exit_code(), crate::error::exit::USAGE);
            assert!(err.to_string().contains(expected), "{err}");
            assert!(err.hint().unwrap().contains("start the session anew"));
        }
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_held_session_is_waited_for_and_its_lock_is_never_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        // An older ground's 0755 folder becomes the user's alone.
        std::fs::create_dir(folder(dir.path())).unwrap();
        std::fs::set_permissions(folder(dir.path()), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        let first = hold(dir.path(), "s", Duration::from_secs(1)).await.unwrap();
        let mode = std::fs::metadata(folder(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let busy = hold(dir.path(), "s", Duration::from_millis(200))
            .await
            .unwrap_err();
        assert_eq!(busy.exit_code(), crate::error::exit::USAGE);
        assert!(
            busy.to_string().contains("is in use by another ground run"),
            "{busy}"
        );
        // Another session is not held up.
        hold(dir.path(), "other", Duration::ZERO).await.unwrap();
        // Released a little later: the waiting run gets it.
        let release = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            drop(first);
        });
        let second = hold(dir.path(), "s", Duration::from_secs(5)).await.unwrap();
        assert!(
            second.waited >= Duration::from_millis(100),
            "{:?}",
            second.waited
        );
        release.await.unwrap();
        // A link at the lock's name is refused, never followed.
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, folder(dir.path()).join("linked.lock")).unwrap();
        let refused = hold(dir.path(), "linked", Duration::ZERO)
            .await
            .unwrap_err();
        assert!(refused.to_string().contains("symbolic link"), "{refused}");
        assert!(!target.exists());
    }

    #[test]
    fn a_tampered_turn_count_neither_wraps_nor_panics() {
        let mut session = Session::new("tampered").unwrap();
        session.answered = u64::MAX;
        assert_eq!(session.turn_number(), u64::MAX, "never wraps to 0");
        session.answered = u64::MAX - 1;
        assert_eq!(session.turn_number(), u64::MAX);
    }

    #[test]
    fn an_expired_session_starts_afresh_and_the_newest_is_continued() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = Session::new("old").unwrap();
        old.turns.push(Turn {
            question: "q".into(),
            standalone: "q".into(),
            answer: "a".into(),
            supported: None,
            cited: vec![],
            searched: true,
        });
        old.save(dir.path()).unwrap();
        let mut text: Session = old.clone();
        text.updated = 1; // 1970
        std::fs::write(
            path_of(dir.path(), "old").unwrap(),
            serde_json::to_vec(&text).unwrap(),
        )
        .unwrap();
        assert_eq!(Session::load(dir.path(), "old").unwrap(), None);
        assert!(Session::open(dir.path(), "old").unwrap().turns.is_empty());
        std::thread::sleep(Duration::from_millis(20));
        Session::new("newer").unwrap().save(dir.path()).unwrap();
        assert_eq!(Session::most_recent(dir.path()).as_deref(), Some("newer"));
    }
}
