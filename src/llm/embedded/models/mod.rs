//! The embedded model's files: the catalogue built into the binary, where models are
//! kept, and the download manager that fetches one once.
//!
//! Models live in `$XDG_DATA_HOME/ground/models` (by default
//! `~/.local/share/ground/models`), not in the cache folder: `ground cache clear`
//! must never delete a gigabyte the user waited for. A download is
//! `GET {hub}/{owner}/{repo}/resolve/main/{file}` (Hugging Face's layout; the hub's
//! base URL is a parameter for mirrors and tests), following redirects to the CDN,
//! and is careful in the ways a 1 GB file on a home connection needs:
//!
//! - it writes to `{file}.part` and resumes with an HTTP `Range` request, so a cut
//!   connection or Ctrl-C costs nothing already received;
//! - it checks the free disk space before writing (the check is injectable, for tests);
//! - it hashes while it writes and compares the SHA-256 pinned in the catalogue
//!   before the rename into place; a mismatch deletes the part and says so;
//! - it takes an exclusive lock on `{file}.lock`, so two `ground` processes never
//!   write one file: the second waits for the first and then uses its file;
//! - a server that sends nothing for the stall limit, or less than [`MIN_RATE`] over
//!   any stall-limit window (a byte every 25 s), ends it with an error (the part stays
//!   for the next try);
//! - it writes no byte beyond the file's size pinned in the catalogue (nor beyond the
//!   end of the range the server says it sends), and a resume must be answered with
//!   exactly the range asked for;
//! - redirects within the hub's own origin are followed freely; a redirect anywhere
//!   else (the CDN) must go to a public address, by the page fetcher's rules
//!   ([`crate::fetch`]): no loopback, private or link-local host, by IP or by name
//!   (a name is checked once resolved; through a configured proxy, which resolves
//!   names itself, only IP addresses are);
//! - the lock and the part are opened as state files are ([`crate::files`]): never
//!   through a symbolic link, never blocking on a FIFO, regular files only, and off
//!   the async runtime;
//! - progress goes to a callback: the binary draws a bar on a terminal, a line per
//!   10 % otherwise.
//!
//! Nothing here needs llama.cpp, so the manager builds and is tested without the
//! `embedded` feature too.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use sha2::{Digest, Sha256};
use url::Url;

use crate::error::Error;
use crate::files::{self, Links, StateFileError};

pub use crate::settings::{DEFAULT_EMBEDDED_MODEL, DEFAULT_MODEL_HUB};

/// Disk space kept free beyond the file itself.
const SPACE_MARGIN: u64 = 64 * 1024 * 1024;

/// The slowest a download may run, in bytes per second, averaged over each window
/// of the stall limit: 8 KiB/s is a 1.1 GB model in under two days, while a hub
/// dripping a byte at a time (which never trips a pure "sent nothing" rule) is
/// ended within one window.
pub const MIN_RATE: u64 = 8 * 1024;

/// Most redirects a download follows.
const MAX_REDIRECTS: usize = 10;

/// One file on the hub: where it is and what it must hash to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelFile {
    /// `owner/repo` on the hub, e.g. `unsloth/Qwen3-1.7B-GGUF`.
    pub repo: String,
    /// The file's name in the repository, also its name on disk.
    pub file: String,
    /// Its SHA-256, lowercase hex.
    pub sha256: String,
    /// Its size in bytes, when known in advance (else the server's
    /// `Content-Length` is used for the space check).
    pub size: Option<u64>,
}

/// A model in the catalogue built into the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueModel {
    /// The name used with `--model`.
    pub name: &'static str,
    /// `owner/repo` on Hugging Face.
    pub repo: &'static str,
    /// The GGUF file's name.
    pub file: &'static str,
    /// Its SHA-256.
    pub sha256: &'static str,
    /// Its size in bytes, when pinned.
    pub size: Option<u64>,
    /// About how many bytes the file has (for messages before the size is known).
    pub approx_bytes: u64,
    /// The next smaller model of the catalogue, suggested when memory is short.
    pub smaller: Option<&'static str>,
    /// One line for `ground model list`.
    pub about: &'static str,
}

impl CatalogueModel {
    /// The file to fetch for this model.
    pub fn model_file(&self) -> ModelFile {
        ModelFile {
            repo: self.repo.to_string(),
            file: self.file.to_string(),
            sha256: self.sha256.to_string(),
            size: self.size,
        }
    }
}

/// The models `--model` can name with the embedded engine. All Apache-2.0 (Qwen3, in
/// unsloth's GGUF conversions; the checksums and byte sizes are the ones independent
/// projects pin beside them). Every size is pinned: a download is cut at it.
pub const CATALOGUE: &[CatalogueModel] = &[
    CatalogueModel {
        name: "qwen3-1.7b",
        repo: "unsloth/Qwen3-1.7B-GGUF",
        file: "Qwen3-1.7B-Q4_K_M.gguf",
        sha256: "b139949c5bd74937ad8ed8c8cf3d9ffb1e99c866c823204dc42c0d91fa181897",
        size: Some(1_107_409_472),
        approx_bytes: 1_107_409_472,
        smaller: Some("qwen3-0.6b"),
        about: "the default: good citations at CPU speed (1.1 GB)",
    },
    CatalogueModel {
        name: "qwen3-0.6b",
        repo: "unsloth/Qwen3-0.6B-GGUF",
        file: "Qwen3-0.6B-Q8_0.gguf",
        sha256: "e150ed544dfe6016930c026a93913a5e3184181ebfe6ab2223ae01dd0491784c",
        size: Some(639_447_744),
        approx_bytes: 640_000_000,
        smaller: None,
        about: "the smallest: for little memory or slow CPUs (0.6 GB)",
    },
    CatalogueModel {
        name: "qwen3-4b",
        repo: "unsloth/Qwen3-4B-GGUF",
        file: "Qwen3-4B-Q4_K_M.gguf",
        sha256: "f6f851777709861056efcdad3af01da38b31223a3ba26e61a4f8bf3a2195813a",
        size: Some(2_497_281_312),
        approx_bytes: 2_500_000_000,
        smaller: Some("qwen3-1.7b"),
        about: "the largest: better answers, needs about 4 GB of memory (2.5 GB)",
    },
];

/// The catalogue model called `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static CatalogueModel> {
    let name = name.trim();
    CATALOGUE.iter().find(|m| m.name.eq_ignore_ascii_case(name))
}

/// The catalogue's names, comma-separated, for messages.
pub fn names() -> String {
    CATALOGUE
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The URL of `file` on `hub`: `{hub}/{owner}/{repo}/resolve/main/{file}`.
pub fn file_url(hub: &Url, file: &ModelFile) -> Result<Url, Error> {
    let base = hub.as_str().trim_end_matches('/');
    let url = format!("{base}/{}/resolve/main/{}", file.repo, file.file);
    Url::parse(&url).map_err(|e| Error::Config {
        message: format!("the model hub URL {url:?} is not valid: {e}"),
        hint:
            "set [llm] hub_url (or GROUND_MODEL_HUB) to a base URL such as https://huggingface.co"
                .into(),
    })
}

/// What is on disk for one catalogue model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// The catalogue entry.
    pub model: &'static CatalogueModel,
    /// The complete file's path (whether or not it exists).
    pub path: PathBuf,
    /// Its size when it is there.
    pub bytes: Option<u64>,
    /// Bytes of an unfinished download (`.part`), resumable.
    pub partial: Option<u64>,
}

/// The catalogue with what of it is in `dir`.
pub fn list(dir: &Path) -> Vec<Installed> {
    CATALOGUE
        .iter()
        .map(|model| {
            let path = dir.join(model.file);
            let size = |p: &Path| std::fs::metadata(p).ok().map(|m| m.len());
            Installed {
                model,
                bytes: size(&path),
                partial: size(&part_path(&path)),
                path,
            }
        })
        .collect()
}

/// Deletes a catalogue model's file, its unfinished part and its lock from `dir`;
/// says whether there was anything to delete.
pub fn remove(dir: &Path, model: &CatalogueModel) -> Result<bool, Error> {
    let path = dir.join(model.file);
    let mut removed = false;
    for p in [path.clone(), part_path(&path), lock_path(&path)] {
        match std::fs::remove_file(&p) {
            Ok(()) => removed |= p == path || p == part_path(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Usage {
                    message: format!("cannot delete {}: {e}", p.display()),
                    hint: "check the file's permissions".into(),
                });
            }
        }
    }
    Ok(removed)
}

/// `{path}.part`.
pub fn part_path(path: &Path) -> PathBuf {
    with_suffix(path, ".part")
}

/// `{path}.lock`.
pub fn lock_path(path: &Path) -> PathBuf {
    with_suffix(path, ".lock")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// How far a download is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes of the file on disk so far (a resumed part included).
    pub done: u64,
    /// The file's size, when known.
    pub total: Option<u64>,
    /// Bytes that were already there when this download started (resumed).
    pub resumed_from: u64,
}

/// Where and how to download.
pub struct Download<'a> {
    /// The hub's base URL.
    pub hub: Url,
    /// The models folder (created when missing).
    pub dir: PathBuf,
    /// How long the server may send nothing before the download gives up.
    pub stall: Duration,
    /// Free bytes on the folder's file system: `None` asks the OS (statvfs); tests
    /// pass a number.
    pub free_space: Option<u64>,
    /// Hears progress after every chunk written (throttle in the callback).
    pub progress: &'a mut (dyn FnMut(Progress) + Send),
    /// Model name for messages.
    pub name: String,
}

/// The complete file for `file` in `download.dir`: there already, or fetched now.
/// Only one process writes it: a second one waits for the first's lock and then uses
/// the file it finished (or, when the first gave up, resumes its part).
pub async fn fetch(file: &ModelFile, download: &mut Download<'_>) -> Result<PathBuf, Error> {
    let path = download.dir.join(&file.file);
    if path.is_file() {
        return Ok(path);
    }
    std::fs::create_dir_all(&download.dir).map_err(|e| Error::ModelDownload {
        name: download.name.clone(),
        reason: format!("cannot create {}: {e}", download.dir.display()),
    })?;
    let _lock = lock(&path, &download.name, download.stall).await?;
    if path.is_file() {
        return Ok(path); // another process finished it while we waited
    }
    transfer(file, &path, download).await?;
    Ok(path)
}

/// Opens a file of the models folder by the state files' rules ([`files::open_regular`]:
/// no symbolic link, no blocking open, regular files only), on a blocking thread.
async fn open_model_file(
    path: &Path,
    options: std::fs::OpenOptions,
    name: &str,
) -> Result<std::fs::File, Error> {
    let owned = path.to_path_buf();
    let opened = tokio::task::spawn_blocking(move || {
        let mut options = options;
        files::open_regular(&owned, &mut options, Links::Refuse)
    })
    .await
    .map_err(|e| Error::Internal {
        message: format!("the file opener stopped: {e}"),
    })?;
    opened.map_err(|e| match e {
        StateFileError::NotAFile { path, kind } => Error::Usage {
            message: format!(
                "cannot download the model {name}: {} is not a regular file but {kind}",
                path.display()
            ),
            hint: format!(
                "delete {} (ground keeps only regular files in its models folder), then run again",
                path.display()
            ),
        },
        other => Error::ModelDownload {
            name: name.into(),
            reason: other.to_string(),
        },
    })
}

/// An exclusive lock on `{path}.lock`, released when dropped (the file stays). While
/// another process holds it, waits, giving up only when its part stops growing for
/// the stall limit.
async fn lock(path: &Path, name: &str, stall: Duration) -> Result<std::fs::File, Error> {
    let lock_file = lock_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    let file = open_model_file(&lock_file, options, name).await?;
    let part = part_path(path);
    let mut last = (
        std::fs::metadata(&part).map(|m| m.len()).ok(),
        std::time::Instant::now(),
    );
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(Error::ModelDownload {
                    name: name.into(),
                    reason: format!("cannot lock {}: {e}", lock_file.display()),
                });
            }
        }
        let size = std::fs::metadata(&part).map(|m| m.len()).ok();
        if size != last.0 {
            last = (size, std::time::Instant::now());
        } else if last.1.elapsed() > stall {
            return Err(Error::ModelDownload {
                name: name.into(),
                reason: format!(
                    "another ground process is downloading {} and has written nothing for {} s",
                    path.display(),
                    stall.as_secs()
                ),
            });
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The two clients of a download: one for the hub's own origin (the user's
/// configured server, reached as configured), one for where the hub redirects,
/// which reaches public addresses only.
struct Clients {
    hub: reqwest::Client,
    elsewhere: reqwest::Client,
}

impl Clients {
    fn new() -> Result<Self, String> {
        let build = |builder: reqwest::ClientBuilder| {
            builder
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("cannot build the HTTP client: {e}"))
        };
        let base = || crate::http::client_builder(Duration::from_secs(10), None);
        Ok(Self {
            hub: build(base())?,
            elsewhere: build(
                base().dns_resolver(std::sync::Arc::new(crate::fetch::PublicOnlyResolver)),
            )?,
        })
    }
}

/// Sends the GET for `url` (with a `Range` from `have` on), following redirects
/// itself: within the hub's origin freely, anywhere else only to public addresses.
async fn send(
    clients: &Clients,
    url: &Url,
    have: u64,
    stall: Duration,
    failed: &(dyn Fn(String) -> Error + Sync),
) -> Result<reqwest::Response, Error> {
    let shown = crate::http::display_url(url);
    let mut next = url.clone();
    for _ in 0..=MAX_REDIRECTS {
        let client = if next.origin() == url.origin() {
            &clients.hub
        } else {
            crate::fetch::check_url(&next, false).map_err(|reason| {
                failed(format!(
                    "{shown} redirected the download to {}, which is refused: {reason}",
                    shown_target(&next)
                ))
            })?;
            &clients.elsewhere
        };
        let mut request = client.get(next.clone());
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let response = tokio::time::timeout(stall, request.send())
            .await
            .map_err(|_| {
                failed(format!(
                    "{shown} sent nothing for {} s (what arrived is kept; run again to resume)",
                    stall.as_secs()
                ))
            })?
            .map_err(|e| {
                let target = if next.origin() == url.origin() {
                    shown.clone()
                } else {
                    format!("{shown}, redirected to {},", shown_target(&next))
                };
                failed(format!("{target}: {}", crate::http::describe_error(&e)))
            })?;
        if !response.status().is_redirection() {
            return Ok(response);
        }
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| {
                failed(format!(
                    "{shown} answered HTTP {} without a usable Location",
                    response.status().as_u16()
                ))
            })?;
        next = next
            .join(location)
            .map_err(|e| failed(format!("{shown} redirected to an invalid URL: {e}")))?;
    }
    Err(failed(format!(
        "{shown} redirected more than {MAX_REDIRECTS} times"
    )))
}

/// A redirect target as a message may quote it (it comes from the server).
fn shown_target(url: &Url) -> String {
    crate::text::shorten(
        &crate::text::sanitize_line(&crate::http::display_url(url)),
        120,
    )
}

/// What a `206` reply says it sends: `Content-Range: bytes START-END/TOTAL`, checked
/// against the resume (`START` must be what we have) and the pinned size (`END` its
/// last byte, `TOTAL` it). The most bytes the part may then reach.
fn check_range(value: Option<&str>, have: u64, size: Option<u64>) -> Result<u64, String> {
    let (start, end, total) = value.and_then(content_range).ok_or_else(|| {
        format!(
            "an unreadable Content-Range ({:?})",
            value.map(shorten_header)
        )
    })?;
    if start != have || end < start {
        return Err(format!(
            "the range {start}-{end} instead of the rest from byte {have}"
        ));
    }
    if let Some(size) = size
        && (end + 1 != size || total.is_some_and(|t| t != size))
    {
        return Err(format!(
            "the range {start}-{end}/{} of a file of {size} bytes",
            total.map_or("*".to_string(), |t| t.to_string())
        ));
    }
    Ok(end + 1)
}

fn shorten_header(value: &str) -> String {
    crate::text::shorten(&crate::text::sanitize_line(value), 80)
}

/// The download proper, with the lock held: resume the part, stream, hash, check,
/// rename.
async fn transfer(file: &ModelFile, path: &Path, download: &mut Download<'_>) -> Result<(), Error> {
    let url = file_url(&download.hub, file)?;
    let shown = crate::http::display_url(&url);
    let name = download.name.clone();
    let failed = |reason: String| Error::ModelDownload {
        name: name.clone(),
        reason,
    };
    let part = part_path(path);
    // What is already there is hashed first (off the runtime: it can be a gigabyte).
    let (mut hasher, mut have) = hash_existing(&part, &name).await?;
    if let Some(size) = file.size
        && have > size
    {
        // Longer than the file can be: not ours to trust.
        have = 0;
        hasher = Sha256::new();
    }
    let clients = Clients::new().map_err(&failed)?;
    let stall = download.stall;
    let response = send(&clients, &url, have, stall, &failed).await?;
    let status = response.status().as_u16();
    let length = response.content_length();
    // The most bytes the part may hold when this reply has been written.
    let (resumed, limit) = match status {
        206 if have > 0 => {
            let range = response
                .headers()
                .get(reqwest::header::CONTENT_RANGE)
                .and_then(|v| v.to_str().ok());
            let end = check_range(range, have, file.size).map_err(|what| {
                failed(format!("{shown} answered the resume request with {what}"))
            })?;
            (true, Some(end))
        }
        200 => (false, file.size),
        416 if have > 0 => {
            // Nothing after what we have: the part is the whole file, or garbage.
            return finish(file, path, &part, hasher, have, &name, &shown);
        }
        404 => {
            return Err(failed(format!(
                "{shown} answered HTTP 404: the hub has no such file (is [llm] hub_url a Hugging Face mirror?)"
            )));
        }
        other => return Err(failed(format!("{shown} answered HTTP {other}"))),
    };
    if !resumed {
        have = 0;
        hasher = Sha256::new();
    }
    if let (Some(limit), Some(length)) = (limit, length)
        && have.saturating_add(length) > limit
    {
        return Err(failed(format!(
            "{shown} announced {length} bytes, more than the {limit} bytes the file has (nothing was written)"
        )));
    }
    let total = file.size.or(length.map(|l| l + have));
    if let Some(total) = total {
        let needed = total.saturating_sub(have) + SPACE_MARGIN;
        let free = match download.free_space {
            Some(free) => Some(free),
            None => free_space(&download.dir),
        };
        if let Some(free) = free
            && free < needed
        {
            return Err(Error::ModelDiskSpace {
                dir: download.dir.clone(),
                needed,
                available: free,
            });
        }
    }
    let mut options = std::fs::OpenOptions::new();
    options
        .create(true)
        .append(resumed)
        .write(true)
        .truncate(!resumed);
    let mut out = open_model_file(&part, options, &name).await?;
    (download.progress)(Progress {
        done: have,
        total,
        resumed_from: have,
    });
    let resumed_from = have;
    let mut response = response;
    // The rate rule: each window of the stall limit must bring MIN_RATE's worth.
    let window_bytes = MIN_RATE.saturating_mul(stall.as_millis() as u64) / 1000;
    let mut window_end = tokio::time::Instant::now() + stall;
    let mut in_window = 0u64;
    loop {
        let chunk = match tokio::time::timeout_at(window_end, response.chunk()).await {
            // The window ended first: judged below.
            Err(_) => None,
            Ok(Ok(Some(bytes))) => Some(bytes),
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                return Err(failed(format!(
                    "the download from {shown} broke off at {have} bytes: {} (run again to resume)",
                    crate::http::describe_error(&e)
                )));
            }
        };
        if let Some(chunk) = chunk {
            if let Some(limit) = limit
                && have + chunk.len() as u64 > limit
            {
                drop(out);
                let _ = std::fs::remove_file(&part);
                return Err(failed(format!(
                    "{shown} sent more than the {limit} bytes the file has; the part was deleted"
                )));
            }
            out.write_all(&chunk)
                .map_err(|e| failed(format!("cannot write {}: {e}", part.display())))?;
            hasher.update(&chunk);
            have += chunk.len() as u64;
            in_window += chunk.len() as u64;
            (download.progress)(Progress {
                done: have,
                total,
                resumed_from,
            });
        }
        if tokio::time::Instant::now() >= window_end {
            if in_window == 0 {
                return Err(failed(format!(
                    "{shown} sent nothing for {} s (what arrived is kept; run again to resume)",
                    stall.as_secs()
                )));
            }
            if in_window < window_bytes {
                return Err(failed(format!(
                    "{shown} sent only {in_window} bytes in {} s, slower than the {} KiB/s a download needs (what arrived is kept; run again to resume)",
                    stall.as_secs(),
                    MIN_RATE / 1024
                )));
            }
            window_end = tokio::time::Instant::now() + stall;
            in_window = 0;
        }
    }
    out.sync_all()
        .map_err(|e| failed(format!("cannot write {}: {e}", part.display())))?;
    drop(out);
    finish(file, path, &part, hasher, have, &name, &shown)
}

/// The part is complete: check its size and hash, then rename it into place (or
/// delete it and say why).
fn finish(
    file: &ModelFile,
    path: &Path,
    part: &Path,
    hasher: Sha256,
    have: u64,
    name: &str,
    shown: &str,
) -> Result<(), Error> {
    if let Some(size) = file.size
        && have < size
    {
        return Err(Error::ModelDownload {
            name: name.into(),
            reason: format!(
                "{shown} ended the file at {have} of {size} bytes (what arrived is kept; run again to resume)"
            ),
        });
    }
    let actual = hex(&hasher.finalize());
    if !actual.eq_ignore_ascii_case(&file.sha256) {
        let _ = std::fs::remove_file(part);
        return Err(Error::ModelChecksum {
            name: name.into(),
            expected: file.sha256.to_ascii_lowercase(),
            actual,
            deleted: part.to_path_buf(),
        });
    }
    std::fs::rename(part, path).map_err(|e| Error::ModelDownload {
        name: name.into(),
        reason: format!("cannot move {} into place: {e}", part.display()),
    })?;
    if let Some(dir) = path.parent()
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// The SHA-256 of the part's bytes and their count; an empty hash when there is no
/// part. Opened by the state files' rules and read off the runtime (it can be a
/// gigabyte).
async fn hash_existing(part: &Path, name: &str) -> Result<(Sha256, u64), Error> {
    let file = match open_model_file(part, read_only(), name).await {
        Ok(file) => file,
        Err(Error::ModelDownload { .. }) if !part.exists() => return Ok((Sha256::new(), 0)),
        Err(e) => return Err(e),
    };
    tokio::task::spawn_blocking(move || hash_file(file))
        .await
        .map_err(|e| Error::Internal {
            message: format!("the hasher stopped: {e}"),
        })?
        .map_err(|e| Error::ModelDownload {
            name: name.into(),
            reason: format!("cannot read {}: {e}", part.display()),
        })
}

fn read_only() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    options
}

/// Whether the file at `path` has the SHA-256 `expected` (blocking: reads it all).
pub fn verify(path: &Path, expected: &str) -> std::io::Result<bool> {
    let (hasher, _) = hash_file(std::fs::File::open(path)?)?;
    Ok(hex(&hasher.finalize()).eq_ignore_ascii_case(expected))
}

/// The SHA-256 of all of `file` so far and its length, read a MiB at a time
/// (blocking).
fn hash_file(mut file: std::fs::File) -> std::io::Result<(Sha256, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok((hasher, total));
        }
        hasher.update(&buf[..n]);
        total += n as u64;
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first and last byte and the total of a `Content-Range: bytes START-END/TOTAL`
/// header (`TOTAL` may be `*`: unknown).
fn content_range(value: &str) -> Option<(u64, u64, Option<u64>)> {
    let rest = value.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (start, end) = range.split_once('-')?;
    let total = match total.trim() {
        "*" => None,
        t => Some(t.parse().ok()?),
    };
    Some((start.trim().parse().ok()?, end.trim().parse().ok()?, total))
}

/// Free bytes for an unprivileged user on the file system holding `dir`.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // statvfs's field types differ between platforms
pub fn free_space(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `stat` a writable statvfs.
    let rc = unsafe { libc::statvfs(path.as_ptr(), &mut stat) };
    if rc != 0 {
        return None;
    }
    Some((stat.f_bavail as u64).saturating_mul(stat.f_frsize as u64))
}

/// Free bytes on the file system holding `dir`: unknown here, so not checked.
#[cfg(not(unix))]
pub fn free_space(_dir: &Path) -> Option<u64> {
    None
}

#[cfg(test)]
mod tests;
