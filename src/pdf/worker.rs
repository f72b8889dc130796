//! The worker: the child side of the PDF sandbox, run as `ground pdf-worker` (a
//! hidden command) by [`super::sandbox`].
//!
//! It reads one request from stdin, reads the PDF (`parse`) and writes one
//! reply to stdout ([`super::protocol`]), then exits. It runs under the limits its
//! parent set before it started (memory, CPU time, no core file, no file writes);
//! it adds the one that would have stopped it from starting: once running, it
//! cannot open a single file descriptor beyond stdin, stdout and stderr. It is
//! single-threaded on purpose: every thread would reserve its own stack and malloc
//! arena against the address-space limit. Whatever goes wrong inside (a panic, an
//! abort, a signal) ends this process only; the parent turns the way it ended into
//! the page's reason.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use super::protocol::{self, Reply};

/// Serves one request on stdin/stdout. Exit 0 with a reply (text or refusal), 2 when
/// the request could not be read (nothing is written to stdout then).
pub fn run() -> ExitCode {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        eprintln!(
            "{}",
            crate::error::report(
                "`ground pdf-worker` is internal: ground starts it to read a PDF in a sandbox",
                Some("to read a PDF, run `ground extract FILE.pdf`"),
            )
        );
        return ExitCode::from(2);
    }
    lock_file_descriptors();
    // A panic is the PDF's fault and becomes a refusal: nothing for stderr.
    std::panic::set_hook(Box::new(|_| {}));
    let pdf = match protocol::read_request(stdin.lock()) {
        Ok(pdf) => pdf,
        Err(e) => {
            eprintln!("ground pdf-worker: the request could not be read: {e}");
            return ExitCode::from(2);
        }
    };
    let reply = match super::parse::extract(&pdf) {
        Ok(text) => Reply::Text(text),
        Err(reason) => Reply::Refused(reason),
    };
    drop(pdf);
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(&protocol::encode_reply(&reply))
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}

/// Nothing open but stdin, stdout and stderr, and no new file descriptor from here
/// on: any descriptor above 2 that leaked in (from a parent that is not `ground`) is
/// closed, then the soft and hard limit become 3. Set here, not by the parent,
/// because the dynamic loader opens the shared libraries before `main` (the
/// parent's limit, [`super::sandbox::WORKER_FILES`], leaves room for that).
#[cfg(unix)]
fn lock_file_descriptors() {
    // SAFETY: these calls take plain integers and structs we own, and change only
    // this process, which holds no descriptor above 2 that Rust code owns yet.
    unsafe {
        #[cfg(target_os = "linux")]
        let closed = libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) == 0;
        #[cfg(not(target_os = "linux"))]
        let closed = false;
        if !closed {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            let highest = limit.rlim_cur.min(65_536 as libc::rlim_t) as libc::c_int;
            for fd in 3..highest {
                libc::close(fd);
            }
        }
        let limit = libc::rlimit {
            rlim_cur: 3,
            rlim_max: 3,
        };
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
}

#[cfg(not(unix))]
fn lock_file_descriptors() {}
