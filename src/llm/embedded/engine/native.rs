//! What llama.cpp is given once per process: its backend, its log (kept quiet, its
//! last errors remembered for messages) and ggml's abort callback (one `error:` line
//! naming the model file instead of a core dump). Kept apart from the engine, which
//! only loads models and writes replies, because these are process-wide hooks into C.

use std::collections::VecDeque;
use std::ffi::{CStr, c_char, c_void};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use llama_cpp_2::llama_backend::LlamaBackend;

use crate::error::Error;

/// The llama.cpp backend, initialised once per process (llama.cpp allows only one).
pub(super) fn backend() -> Result<&'static LlamaBackend, Error> {
    static BACKEND: OnceLock<LlamaBackend> = OnceLock::new();
    static INIT: Mutex<()> = Mutex::new(());
    if let Some(b) = BACKEND.get() {
        return Ok(b);
    }
    let _guard = INIT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = BACKEND.get() {
        return Ok(b);
    }
    install_log();
    install_abort();
    let b = LlamaBackend::init().map_err(|e| Error::ModelEngine {
        message: format!("cannot start llama.cpp: {e}"),
    })?;
    Ok(BACKEND.get_or_init(|| b))
}

/// Makes OpenMP's threads (llama.cpp's) sleep soon when they wait for each other
/// (`GOMP_SPINCOUNT` 1000, tens of microseconds of spinning, instead of libgomp's
/// 300,000), unless the environment already says how they wait (`OMP_WAIT_POLICY`
/// or `GOMP_SPINCOUNT`): by running the program again, at once, with the variable set.
/// Returns when the variable was already set, or the program cannot be run again
/// (then libgomp's own default holds). A binary calls it early in `main`, before
/// any thread exists, for a command that may write with the model (the others
/// need not start twice).
///
/// Why: ggml's threads meet at a barrier after every operation of a decode step
/// (hundreds a step). When another process holds a core, the thread that arrived
/// first spins through its whole count for one that is not running: measured with
/// `perf record` on a busy 2-core machine (load average 5), 83% of the engine's time
/// went to libgomp's spin loop and 0.1% to sampling, and SmolLM2 wrote its replies
/// several times faster with a count of 1000 (the book's Measurements page). A short
/// count still covers a barrier's usual wait on a quiet machine.
///
/// Why a new run: libgomp reads its settings once, in its initialiser, before `main`;
/// and glibc resets the environment from the original block before that, so not even
/// a `.preinit_array` function can set it in the same run.
#[cfg(target_os = "linux")]
pub fn brief_openmp_spin() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os("OMP_WAIT_POLICY").is_some() || std::env::var_os("GOMP_SPINCOUNT").is_some()
    {
        return;
    }
    let Ok(program) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let mut again = std::process::Command::new(program);
    if let Some(name) = args.next() {
        again.arg0(name);
    }
    // `exec` returns only when it failed: this run goes on as it is.
    let _ = again.args(args).env("GOMP_SPINCOUNT", "1000").exec();
}

/// Whether llama.cpp's log goes to stderr (`verbose`).
pub(super) static LOG_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// llama.cpp's last error lines, for the message when it refuses a file.
static LAST_ERRORS: Mutex<VecDeque<String>> = Mutex::new(VecDeque::new());

/// Routes llama.cpp's and ggml's log through [`on_log`].
pub(super) fn install_log() {
    // SAFETY: `on_log` is a plain function that lives for the whole program and
    // ignores its user data.
    unsafe { llama_cpp_sys_2::llama_log_set(Some(on_log), std::ptr::null_mut()) };
}

unsafe extern "C" fn on_log(
    level: llama_cpp_sys_2::ggml_log_level,
    text: *const c_char,
    _data: *mut c_void,
) {
    if text.is_null() {
        return;
    }
    // SAFETY: llama.cpp passes a NUL-terminated string valid for this call.
    let text = unsafe { CStr::from_ptr(text) }.to_string_lossy();
    if LOG_TO_STDERR.load(Ordering::Relaxed) {
        let _ = std::io::stderr().write_all(text.as_bytes());
    }
    if let Some(placement) = PLACEMENT.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        placement.note(&text);
    }
    if level == llama_cpp_sys_2::GGML_LOG_LEVEL_ERROR {
        let line = crate::text::sanitize_line(&crate::text::shorten(text.trim(), 300));
        let mut errors = LAST_ERRORS.lock().unwrap_or_else(|e| e.into_inner());
        if errors.len() >= 4 {
            errors.pop_front();
        }
        errors.push_back(line);
    }
}

/// Where a load put the model, gathered from llama.cpp's log while it runs (llama.cpp
/// has no call that says it): `Some` between [`watch_placement`] and
/// [`take_placement`]. Loads are serialised, so one is enough.
static PLACEMENT: Mutex<Option<Placement>> = Mutex::new(None);

/// What llama.cpp's log said about where a model's weights went.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Placement {
    /// "offloaded X/Y layers to GPU": X and Y (said only when a GPU device exists).
    pub offloaded: Option<(u32, u32)>,
    /// The buffers holding weights, by name ("Vulkan0", "CPU_Mapped"), from its
    /// "NAME model buffer size = ..." lines.
    pub buffers: Vec<String>,
}

impl Placement {
    /// Notes what one of llama.cpp's log lines says about placement, if anything.
    fn note(&mut self, line: &str) {
        let Some(said) = line.trim().strip_prefix("load_tensors:") else {
            return;
        };
        let said = said.trim();
        if let Some(counts) = said
            .strip_prefix("offloaded ")
            .and_then(|s| s.strip_suffix(" layers to GPU"))
            && let Some((on, of)) = counts.split_once('/')
            && let (Ok(on), Ok(of)) = (on.parse(), of.parse())
        {
            self.offloaded = Some((on, of));
        } else if let Some((name, _)) = said.split_once(" model buffer size")
            && !name.is_empty()
        {
            self.buffers.push(name.trim().to_string());
        }
    }
}

/// Starts gathering what llama.cpp's log says about where a model goes.
pub(super) fn watch_placement() {
    *PLACEMENT.lock().unwrap_or_else(|e| e.into_inner()) = Some(Placement::default());
}

/// What llama.cpp's log said since [`watch_placement`]; stops gathering.
pub(super) fn take_placement() -> Placement {
    PLACEMENT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default()
}

/// The model file llama.cpp is working on, for the last words of an abort.
static CURRENT_FILE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Remembers `path` as the file llama.cpp works on until the guard is dropped.
pub(super) struct WorkingOn;

impl WorkingOn {
    pub(super) fn file(path: &Path) -> Self {
        *CURRENT_FILE.lock().unwrap_or_else(|e| e.into_inner()) = Some(path.to_path_buf());
        WorkingOn
    }
}

impl Drop for WorkingOn {
    fn drop(&mut self) {
        *CURRENT_FILE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Makes an abort inside ggml (a `GGML_ASSERT` the header checks did not foresee)
/// end the process the way a model failure does: one `error:` line naming the file,
/// a `hint:`, and the model's exit code, instead of a core dump after ggml has run
/// `gdb` against the process. (ggml aborts right after this callback returns, so the
/// process cannot go on; [`gguf::check_runnable`] is what keeps it alive.)
pub(super) fn install_abort() {
    // SAFETY: `on_abort` is a plain function that lives for the whole program.
    unsafe { llama_cpp_sys_2::ggml_set_abort_callback(Some(on_abort)) };
}

unsafe extern "C" fn on_abort(message: *const c_char) {
    let message = if message.is_null() {
        String::new()
    } else {
        // SAFETY: ggml passes a NUL-terminated string valid for this call.
        unsafe { CStr::from_ptr(message) }
            .to_string_lossy()
            .into_owned()
    };
    let message = crate::text::shorten(&crate::text::sanitize_line(&message), 300);
    // try_lock: never wait in an abort (the lock is only ever held for an instant).
    let file = CURRENT_FILE
        .try_lock()
        .ok()
        .and_then(|f| f.as_ref().map(|p| p.display().to_string()))
        .unwrap_or_else(|| "the model file".into());
    let error = Error::ModelFileInvalid {
        path: PathBuf::from(&file),
        reason: format!("llama.cpp stopped on it ({message})"),
    };
    let _ = std::io::stderr().write_all(format!("{}\n", error.report()).as_bytes());
    let _ = std::io::stderr().flush();
    // SAFETY: _exit ends the process at once, without unwinding into C.
    unsafe { libc::_exit(crate::error::exit::MODEL) };
}

/// llama.cpp's error lines since the last call, joined.
pub(super) fn take_errors() -> Option<String> {
    let mut errors = LAST_ERRORS.lock().unwrap_or_else(|e| e.into_inner());
    let joined = errors.drain(..).collect::<Vec<_>>().join("; ");
    (!joined.is_empty()).then_some(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_is_read_from_llama_cpp_s_load_lines() {
        let mut p = Placement::default();
        for line in [
            "load_tensors: loading model tensors, this can take a while... (mmap = true)\n",
            "load_tensors: offloading output layer to GPU\n",
            "load_tensors: offloading 30 repeating layers to GPU\n",
            "load_tensors: offloaded 31/31 layers to GPU\n",
            "load_tensors:   CPU_Mapped model buffer size =    23.44 MiB\n",
            "load_tensors:      Vulkan0 model buffer size =    63.93 MiB\n",
            "llama_context: Vulkan0 compute buffer size = 1.0 MiB\n",
        ] {
            p.note(line);
        }
        assert_eq!(p.offloaded, Some((31, 31)));
        assert_eq!(p.buffers, ["CPU_Mapped", "Vulkan0"]);
        let mut none = Placement::default();
        none.note("load_tensors: offloaded x/31 layers to GPU");
        assert_eq!(none, Placement::default());
    }
}
