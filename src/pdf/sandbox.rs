//! The parent side of the PDF sandbox: start a worker process, give it the PDF,
//! read its reply back, and turn however it ended into a result.
//!
//! Why a process: a PDF is a program as much as a document, and the parser
//! (`pdf-extract` on lopdf) has no limits of its own. In a thread of ours, a
//! drawing that draws itself overflowed the stack and aborted the whole `ground`
//! (an MCP server included), a filter chain or a `q` flood took gigabytes, and a
//! page tree that loops kept a core busy after its deadline, because a thread
//! cannot be stopped. A child process can: the operating system bounds it and we
//! can kill it.
//!
//! What each worker runs under (Unix; set between fork and exec):
//! - **address space** ([`Sandbox::memory_bytes`], default [`WORKER_MEMORY`]):
//!   allocation past it fails and the worker aborts; reported as "ran out of its
//!   256 MiB memory limit";
//! - **CPU time** ([`Sandbox::cpu_seconds`]): the page deadline plus one second,
//!   then SIGXCPU (and SIGKILL a second later): the backstop if the parent cannot
//!   kill it;
//! - **no core file, no file writes** (RLIMIT_CORE and RLIMIT_FSIZE 0), and no
//!   file descriptors beyond its pipes (RLIMIT_NOFILE; the worker lowers it to 3
//!   once started);
//! - **killed with its parent** (Linux: PR_SET_PDEATHSIG), so it is never orphaned;
//! - an empty environment and `/` as its working directory.
//!
//! And from here: the PDF goes in over stdin, at most
//! [`super::protocol::MAX_REPLY_BYTES`] come back over stdout and 8 KiB of stderr are
//! kept (the rest is drained), and the worker is killed at the page's deadline
//! ([`Sandbox::deadline`]) or when the caller stops waiting (the child is killed on
//! drop; tokio reaps it), so no worker outlives its page. At most one worker per core
//! runs at once (`WORKERS`); waiting for one counts against the deadline.

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use super::{EXTRACT_TIMEOUT, PdfError, PdfText};

/// The environment variable naming the worker binary (default: this executable).
pub const WORKER_ENV: &str = "GROUND_PDF_WORKER";

/// The hidden subcommand that makes `ground` a worker.
pub const WORKER_COMMAND: &str = "pdf-worker";

/// Address space of one worker. The largest PDF read (16 MiB) is held twice by the
/// parser (the bytes and its objects), plus one stream inflated to at most 64 MiB
/// and what the parser builds from it; normal PDFs peak far lower (the 2-page report
/// fixture at about 10 MB). 256 MiB leaves room for that, and keeps `ground` with a
/// worker under 300 MB.
pub const WORKER_MEMORY: u64 = 256 * 1024 * 1024;

/// File descriptors a worker may have while it starts (the dynamic loader opens
/// the shared libraries); the worker lowers this to 3 itself.
pub const WORKER_FILES: u64 = 32;

/// Bytes of a worker's stderr kept for the reason (a Rust abort's message).
#[cfg(unix)]
const STDERR_KEPT: usize = 8 * 1024;

/// Workers running at once, at most: one per core, like HTML extraction.
static WORKERS: LazyLock<Arc<Semaphore>> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    Arc::new(Semaphore::new(cores))
});

/// How PDFs are read: which worker binary, and its limits.
#[derive(Debug, Clone)]
pub struct Sandbox {
    /// The worker binary, or why there is none.
    pub worker: Result<PathBuf, String>,
    /// Wall-clock time for one PDF, waiting for a free worker included.
    pub deadline: Duration,
    /// The worker's address-space limit.
    pub memory_bytes: u64,
    /// The worker's CPU-time limit.
    pub cpu_seconds: u64,
}

impl Sandbox {
    /// The sandbox with `worker` as the worker binary and the default limits.
    pub fn new(worker: impl Into<PathBuf>) -> Self {
        Self::with(Ok(worker.into()))
    }

    fn with(worker: Result<PathBuf, String>) -> Self {
        Sandbox {
            worker,
            deadline: EXTRACT_TIMEOUT,
            memory_bytes: WORKER_MEMORY,
            cpu_seconds: EXTRACT_TIMEOUT.as_secs() + 1,
        }
    }

    /// The sandbox `ground` uses: the worker named by `GROUND_PDF_WORKER`, else this
    /// executable (right when the library runs inside the `ground` binary; tests
    /// that call the library in-process set the variable or use [`Sandbox::new`]).
    pub fn from_env() -> Self {
        let worker = match std::env::var_os(WORKER_ENV).filter(|v| !v.is_empty()) {
            Some(path) => Ok(PathBuf::from(path)),
            None => std::env::current_exe()
                .map_err(|e| format!("the path of the running program is unknown ({e})")),
        };
        Self::with(worker)
    }

    /// Reads a PDF in a worker within [`Sandbox::deadline`].
    pub async fn read(&self, bytes: Vec<u8>) -> Result<PdfText, PdfError> {
        let started = tokio::time::Instant::now();
        let deadline = started + self.deadline;
        let Ok(Ok(permit)) =
            tokio::time::timeout_at(deadline, WORKERS.clone().acquire_owned()).await
        else {
            return Err(PdfError::Busy(self.deadline));
        };
        let result = self.run(bytes, deadline).await;
        drop(permit);
        result
    }

    /// [`Sandbox::read`] for code that is not async (`ground extract`): on a
    /// runtime of its own, on this thread.
    pub fn read_blocking(&self, bytes: Vec<u8>) -> Result<PdfText, PdfError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| PdfError::Worker {
                reason: format!("no runtime to wait for it ({e})"),
            })?;
        runtime.block_on(self.read(bytes))
    }

    #[cfg(unix)]
    async fn run(
        &self,
        bytes: Vec<u8>,
        deadline: tokio::time::Instant,
    ) -> Result<PdfText, PdfError> {
        use std::os::unix::process::ExitStatusExt;
        use std::process::Stdio;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        use super::protocol::{self, Reply};

        let worker = self
            .worker
            .clone()
            .map_err(|reason| PdfError::Worker { reason })?;
        let mut command = tokio::process::Command::new(&worker);
        command
            .arg(WORKER_COMMAND)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let limits = Limits {
            memory: self.memory_bytes,
            cpu: self.cpu_seconds,
            parent: std::process::id(),
        };
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe calls are allowed: it makes setrlimit and prctl system
        // calls on values copied in beforehand, and allocates nothing.
        unsafe {
            command.pre_exec(move || limits.apply());
        }
        let mut child = command.spawn().map_err(|e| PdfError::Worker {
            reason: format!("{} could not be started ({e})", worker.display()),
        })?;
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(PdfError::Worker {
                reason: "its pipes could not be opened".into(),
            });
        };

        let exchange = async {
            let feed = async move {
                // A worker that dies early closes the pipe: its exit says why.
                let _ = stdin
                    .write_all(&protocol::request_header(bytes.len()))
                    .await;
                let _ = stdin.write_all(&bytes).await;
                let _ = stdin.shutdown().await;
            };
            let reply = async {
                let mut reply = Vec::new();
                let _ = stdout
                    .take(protocol::MAX_REPLY_BYTES as u64 + 1)
                    .read_to_end(&mut reply)
                    .await;
                if reply.len() > protocol::MAX_REPLY_BYTES {
                    // Longer than any reply can be: it is not one. Stop it now.
                    let _ = child.start_kill();
                }
                reply
            };
            let log = async move {
                let mut kept = Vec::new();
                let mut stderr = stderr;
                let _ = (&mut stderr)
                    .take(STDERR_KEPT as u64)
                    .read_to_end(&mut kept)
                    .await;
                let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
                kept
            };
            let ((), reply, log) = tokio::join!(feed, reply, log);
            (reply, log)
        };
        let Ok((reply, log)) = tokio::time::timeout_at(deadline, exchange).await else {
            let _ = child.kill().await;
            return Err(PdfError::Deadline(self.deadline));
        };
        let status = match tokio::time::timeout_at(deadline, child.wait()).await {
            Ok(Ok(status)) => status,
            Ok(Err(e)) => {
                return Err(PdfError::Crashed(format!(
                    "its exit could not be read: {e}"
                )));
            }
            Err(_) => {
                let _ = child.kill().await;
                return Err(PdfError::Deadline(self.deadline));
            }
        };
        if reply.len() > protocol::MAX_REPLY_BYTES {
            return Err(PdfError::Protocol(protocol::ProtocolError::TooLong {
                field: "reply",
                len: reply.len() as u64,
                max: protocol::MAX_REPLY_BYTES,
            }));
        }
        let log = String::from_utf8_lossy(&log);
        if status.success() {
            return match protocol::decode_reply(&reply)? {
                Reply::Text(text) => Ok(text),
                Reply::Refused(reason) => Err(PdfError::Refused(reason)),
            };
        }
        Err(self.why_it_ended(status.signal(), status.code(), &log))
    }

    /// The reason for a worker that did not exit 0: an abort's message on stderr
    /// says which limit, else the signal or exit code.
    #[cfg(unix)]
    fn why_it_ended(&self, signal: Option<i32>, code: Option<i32>, log: &str) -> PdfError {
        if log.contains("memory allocation of") && log.contains("failed") {
            return PdfError::Memory(self.memory_bytes);
        }
        if log.contains("has overflowed its stack") {
            return PdfError::Stack;
        }
        match (signal, code) {
            (Some(libc::SIGXCPU), _) => PdfError::Cpu(self.cpu_seconds),
            (Some(signal), _) => {
                PdfError::Crashed(format!("signal {signal}{}", signal_name(signal)))
            }
            (None, Some(code)) => {
                let said = log.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                let said = crate::text::shorten(&crate::text::sanitize_line(said), 160);
                if said.is_empty() {
                    PdfError::Crashed(format!("exit code {code}"))
                } else {
                    PdfError::Crashed(format!("exit code {code}: {said}"))
                }
            }
            (None, None) => PdfError::Crashed("it ended without an exit code".into()),
        }
    }

    /// Without Unix process limits, the PDF is read on a thread of this process
    /// with the pre-scan's limits only; the thread is left behind at the deadline.
    #[cfg(not(unix))]
    async fn run(
        &self,
        bytes: Vec<u8>,
        deadline: tokio::time::Instant,
    ) -> Result<PdfText, PdfError> {
        let work = tokio::task::spawn_blocking(move || super::parse::extract(&bytes));
        match tokio::time::timeout_at(deadline, work).await {
            Err(_) => Err(PdfError::Deadline(self.deadline)),
            Ok(Err(_)) => Err(PdfError::Crashed("the reading thread panicked".into())),
            Ok(Ok(result)) => result.map_err(PdfError::Refused),
        }
    }
}

/// The limits a worker gets, applied in the child between fork and exec.
#[cfg(unix)]
#[derive(Debug, Clone, Copy)]
struct Limits {
    memory: u64,
    cpu: u64,
    /// This process: if it is gone by the time the death signal is armed, the
    /// child was orphaned in between and must not run.
    parent: u32,
}

#[cfg(unix)]
impl Limits {
    /// Applies the limits to the calling process. Async-signal-safe: system calls
    /// only, no allocation.
    fn apply(self) -> std::io::Result<()> {
        set_limit(libc::RLIMIT_AS, self.memory, self.memory)?;
        set_limit(libc::RLIMIT_CPU, self.cpu, self.cpu + 1)?;
        set_limit(libc::RLIMIT_CORE, 0, 0)?;
        set_limit(libc::RLIMIT_FSIZE, 0, 0)?;
        set_limit(libc::RLIMIT_NOFILE, WORKER_FILES, WORKER_FILES)?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // SAFETY: prctl with PR_SET_PDEATHSIG takes a signal number and changes
            // only this process.
            if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: getppid has no arguments and cannot fail.
            if unsafe { libc::getppid() } as u32 != self.parent {
                return Err(std::io::Error::other(
                    "the parent ended before the worker started",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(unix)]
fn set_limit(resource: LimitResource, soft: u64, hard: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: soft as libc::rlim_t,
        rlim_max: hard as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct we pass and changes only this process.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The type of setrlimit's first argument (it differs between C libraries).
#[cfg(all(unix, target_os = "linux", target_env = "gnu"))]
type LimitResource = libc::__rlimit_resource_t;
#[cfg(all(unix, not(all(target_os = "linux", target_env = "gnu"))))]
type LimitResource = libc::c_int;

#[cfg(unix)]
fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGSEGV => ": segmentation fault",
        libc::SIGBUS => ": bus error",
        libc::SIGABRT => ": abort",
        libc::SIGILL => ": illegal instruction",
        libc::SIGFPE => ": arithmetic error",
        libc::SIGKILL => ": killed",
        libc::SIGTERM => ": terminated",
        libc::SIGINT => ": interrupted",
        libc::SIGXFSZ => ": tried to write a file",
        _ => "",
    }
}
