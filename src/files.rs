//! Small files that several `ground` processes share (the search rate limit, usage
//! counts, the token calibration): written whole or not at all, and the clock they
//! are stamped with.
//!
//! One writer for all of them, so none of them can be left half-written by a crash
//! or read half-written by another process. (The page cache keeps its own writer: its
//! temp names are part of how it recognises and sweeps its folder.)
//!
//! And one reader, because another process (or another user sharing the folder) can
//! put anything at a state file's name: a FIFO, whose plain `open` waits for a writer
//! forever; a device such as `/dev/zero`, which never ends; a file of gigabytes. A
//! state file is a small regular file or it is not used: [`read_small`] opens without
//! blocking, checks what it opened, and reads a bounded amount. Callers then go on
//! without the state and say so ([`StateFileError`] is that sentence).

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Why a shared state file (or its lock) was not used. Never fatal: the callers go on
/// without the state and show this as a warning.
#[derive(Debug, thiserror::Error)]
pub enum StateFileError {
    /// Something other than a regular file is at the state file's name.
    #[error("{} is not a regular file but {kind}", path.display())]
    NotAFile {
        /// The state file.
        path: PathBuf,
        /// What is there: "a FIFO", "a directory", "a character device", ...
        kind: &'static str,
    },
    /// The file is larger than any state file this program writes.
    #[error("{} is larger than {max} bytes", path.display())]
    TooLarge {
        /// The state file.
        path: PathBuf,
        /// The most read.
        max: u64,
    },
    /// The lock stayed held by another process for as long as a run may wait.
    #[error("{} stayed locked by another process for {} ms", path.display(), waited.as_millis())]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// How long this process waited.
        waited: std::time::Duration,
    },
    /// The file or its folder could not be opened, read or created.
    #[error("{} cannot be used: {source}", path.display())]
    Io {
        /// The state file or folder.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// What a file type is called in messages ("a FIFO", "a directory", ...).
fn kind_of(file_type: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_symlink() {
        "a symbolic link"
    } else if file_type.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Fails unless `metadata` is a regular file's.
fn check_regular(path: &Path, metadata: &fs::Metadata) -> Result<(), StateFileError> {
    if metadata.is_file() {
        Ok(())
    } else {
        Err(StateFileError::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(metadata.file_type()),
        })
    }
}

/// Whether [`open_regular`] follows a symbolic link at the file's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Follow it (reading a state file through a link is harmless).
    Follow,
    /// Refuse it (`O_NOFOLLOW`): a file appended to must be the one at its name,
    /// not wherever a planted link points.
    Refuse,
}

/// Opens `options` at `path` without ever blocking in `open` (`O_NONBLOCK`: a FIFO
/// with no writer opens at once instead of waiting for one), then checks that what
/// was opened is a regular file. A name that is not one is refused before it is
/// opened, so a device is never opened at all; the check after the open catches a
/// swap in between.
pub fn open_regular(
    path: &Path,
    options: &mut fs::OpenOptions,
    links: Links,
) -> Result<fs::File, StateFileError> {
    let io = |source| StateFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let before = match links {
        Links::Follow => fs::metadata(path),
        Links::Refuse => fs::symlink_metadata(path),
    };
    match before {
        Ok(metadata) => check_regular(path, &metadata)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = match links {
            Links::Follow => 0,
            Links::Refuse => libc::O_NOFOLLOW,
        };
        options.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    let file = options.open(path).map_err(io)?;
    check_regular(path, &file.metadata().map_err(io)?)?;
    Ok(file)
}

/// Reads a small state file: `Ok(None)` when there is none, its bytes when it is a
/// regular file of at most `max` bytes, else the reason it is not used. Never blocks
/// (see [`open_regular`]).
pub fn read_small(path: &Path, max: u64) -> Result<Option<Vec<u8>>, StateFileError> {
    let file = match open_regular(path, fs::OpenOptions::new().read(true), Links::Follow) {
        Err(StateFileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None);
        }
        other => other?,
    };
    let too_large = || StateFileError::TooLarge {
        path: path.to_path_buf(),
        max,
    };
    if file.metadata().map(|m| m.len()).unwrap_or(0) > max {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| StateFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(Some(bytes))
}

/// Creates `dir` and any missing parent as the user's alone (mode 0700 on Unix, less
/// what the umask takes away): the folders of the state and the cache hold questions
/// (sessions, search keys), so no other user may list or read them. A folder that is
/// already there keeps its mode.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Makes `options` create a file as the user's alone (mode 0600 on Unix, less what
/// the umask takes away), like the search log.
pub fn private(options: &mut fs::OpenOptions) -> &mut fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Creates a new file at `path` (an error when something is there already, a link
/// included) as the user's alone (see [`private`]).
pub fn create_private_new(path: &Path) -> std::io::Result<fs::File> {
    private(fs::OpenOptions::new().write(true).create_new(true)).open(path)
}

/// Writes `bytes` to a new temp file beside `path` (named for this process and
/// write, so concurrent writers never share one), then renames it over `path`. The
/// folder is created when missing; on failure the temp file is removed. The file and
/// any folder created are the user's alone ([`create_private_new`],
/// [`create_private_dir`]).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("state");
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = create_private_new(&temp)
        .and_then(|mut file| file.write_all(bytes))
        .and_then(|()| fs::rename(&temp, path));
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The calendar month (UTC) of `unix_ms`, as `YYYY-MM`.
pub fn month_of(unix_ms: u64) -> String {
    let (year, month, _) = civil_from_days((unix_ms / 86_400_000) as i64);
    format!("{year:04}-{month:02}")
}

/// The UTC time of `unix_ms` as RFC 3339 (`2026-11-23T16:05:09Z`).
pub fn rfc3339(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let rest = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn unix_secs() -> u64 {
    unix_ms() / 1000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temp_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested/state.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<String> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["state.json"]);
        assert!(unix_secs() > 1_700_000_000);
    }

    #[test]
    fn small_regular_files_are_read_and_nothing_else_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert!(matches!(read_small(&path, 10), Ok(None)));
        fs::write(&path, b"12345").unwrap();
        assert_eq!(read_small(&path, 10).unwrap().unwrap(), b"12345");
        assert!(matches!(
            read_small(&path, 4),
            Err(StateFileError::TooLarge { max: 4, .. })
        ));
        let err = read_small(dir.path(), 10).unwrap_err();
        assert!(matches!(
            err,
            StateFileError::NotAFile {
                kind: "a directory",
                ..
            }
        ));
        // A device never ends: refused before it is opened.
        let err = read_small(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(
            err.to_string()
                .ends_with("is not a regular file but a character device"),
            "{err}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_at_once_instead_of_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("calibration.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let started = std::time::Instant::now();
        let err = read_small(&fifo, 1024).unwrap_err();
        assert!(
            matches!(err, StateFileError::NotAFile { kind: "a FIFO", .. }),
            "{err}"
        );
        // Opened for writing too (a lock file, the search log), it never blocks.
        let err =
            open_regular(&fifo, fs::OpenOptions::new().append(true), Links::Follow).unwrap_err();
        assert!(matches!(err, StateFileError::NotAFile { .. }), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_is_refused_where_links_are() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        fs::write(&target, "x").unwrap();
        let link = dir.path().join("searches.jsonl");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut append = fs::OpenOptions::new();
        append.append(true);
        let err = open_regular(&link, &mut append, Links::Refuse).unwrap_err();
        assert!(
            matches!(
                err,
                StateFileError::NotAFile {
                    kind: "a symbolic link",
                    ..
                }
            ),
            "{err}"
        );
        assert!(open_regular(&link, &mut append, Links::Follow).is_ok());
    }
}
