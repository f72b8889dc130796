//! `./dev` (the README's quick start) as a newcomer meets it: one line per step, the
//! package manager's output in a log file and not on the terminal, and a line before
//! cargo saying what the first build costs. The package manager, cargo and the build
//! tools are stand-ins on a PATH of their own (cmake missing until the fake apt-get
//! "installs" it), so the test needs no root, no network and no real install.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

/// Noise as apt-get prints it while installing: hundreds of lines nobody reads.
const NOISE: &str = "Selecting previously unselected package cmake-data.";

/// A PATH folder with the few real tools `./dev` runs and stand-ins for the rest.
struct FakeBin {
    dir: tempfile::TempDir,
}

impl FakeBin {
    /// The real `bash`, `env`, `dirname`, `uname`, `id`, `mktemp`, `tail` and `sed`;
    /// a `c++`, `cargo` and `sudo` stand-in; no cmake.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        for tool in [
            "bash", "env", "dirname", "uname", "id", "mktemp", "tail", "sed",
        ] {
            let real = ["/usr/bin", "/bin", "/usr/local/bin"]
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.exists())
                .unwrap_or_else(|| panic!("no {tool} on this machine"));
            std::os::unix::fs::symlink(real, dir.path().join(tool)).unwrap();
        }
        let bin = FakeBin { dir };
        bin.script("c++", "echo 'c++ (stand-in)'");
        bin.script("sudo", r#"exec "$@""#);
        // cargo says what it was asked to do, and does nothing.
        bin.script("cargo", r#"echo "cargo stand-in: $*""#);
        bin
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes an executable bash script `name` with `body`.
    fn script(&self, name: &str, body: &str) {
        let file = self.path().join(name);
        std::fs::write(&file, format!("#!/bin/bash\n{body}\n")).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// An apt-get that prints a screenful of noise on stdout and stderr for each call
    /// and, for `install`, puts a cmake on the PATH, or fails (`works` false) as
    /// apt-get does when a package cannot be found.
    fn apt_get(&self, works: bool) {
        let cmake = self.path().join("cmake");
        let install = if works {
            format!(
                "printf '#!/bin/bash\\necho cmake version 3.25.1\\n' > '{0}'; command -p chmod +x '{0}'",
                cmake.display()
            )
        } else {
            "echo 'E: Unable to locate package libclang-dev' >&2; exit 100".to_string()
        };
        self.script(
            "apt-get",
            &format!(
                r#"echo "apt-get stand-in: $*"
for ((i = 0; i < 100; i++)); do echo "{NOISE}"; echo "Unpacking cmake-data ($i) ..."; done
echo "debconf: delaying package configuration, since apt-utils is not installed" >&2
case " $* " in *" install "*) {install} ;; esac"#
            ),
        );
    }
}

/// Runs `./dev ARGS` with only `bin` on PATH (and LIBCLANG_PATH set, so libclang is
/// found whatever this machine has), its temporary files under `tmp`.
fn dev(bin: &FakeBin, tmp: &Path, args: &[&str]) -> Output {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("dev");
    std::process::Command::new(&script)
        .args(args)
        .env_clear()
        .env("PATH", bin.path())
        .env("HOME", tmp)
        .env("TMPDIR", tmp)
        .env("LIBCLANG_PATH", "/usr/lib/llvm/lib")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run ./dev")
}

/// The log file named in a `dev:` line ("... goes to PATH").
fn log_named(err: &str) -> PathBuf {
    let line = err
        .lines()
        .find(|l| l.contains("its output goes to "))
        .unwrap_or_else(|| panic!("no line names the log: {err}"));
    PathBuf::from(line.rsplit("its output goes to ").next().unwrap())
}

#[test]
fn setup_installs_quietly_with_one_line_and_the_output_in_a_log() {
    let bin = FakeBin::new();
    bin.apt_get(true);
    let tmp = tempfile::tempdir().unwrap();
    let out = dev(&bin, tmp.path(), &["setup"]);
    let (all, err) = (format!("{}{}", stdout(&out), stderr(&out)), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(
        !all.contains(NOISE) && !all.contains("Unpacking") && !all.contains("debconf"),
        "the package manager's output is not on the terminal:\n{all}"
    );
    let lines: Vec<&str> = all.lines().collect();
    assert_eq!(lines.len(), 2, "one line per step:\n{all}");
    assert!(
        lines[0].starts_with(
            "dev: installing cmake, clang, libclang-dev and g++ with apt-get (once; llama.cpp's build needs cmake)"
        ),
        "{all}"
    );
    assert_eq!(
        lines[1],
        "dev: llama.cpp's build tools are there: cmake, a C++ compiler, libclang"
    );
    let log = log_named(&err);
    assert!(log.starts_with(tmp.path()), "{}", log.display());
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(logged.contains("apt-get stand-in: update"), "{logged}");
    assert!(
        logged.contains("apt-get stand-in: install -y -q cmake clang libclang-dev g++"),
        "{logged}"
    );
    assert_eq!(
        logged.matches(NOISE).count(),
        200,
        "all of it, stdout and stderr"
    );
    assert!(logged.contains("debconf: delaying"), "{logged}");

    // Installed: the next run installs nothing and says so in one line.
    let again = dev(&bin, tmp.path(), &["setup"]);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(
        stderr(&again),
        "dev: llama.cpp's build tools are there: cmake, a C++ compiler, libclang\n"
    );
}

#[test]
fn a_failed_install_names_the_log_and_stops() {
    let bin = FakeBin::new();
    bin.apt_get(false);
    let tmp = tempfile::tempdir().unwrap();
    let out = dev(
        &bin,
        tmp.path(),
        &["answer", "do tardigrades survive in space"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let log = log_named(&err);
    let last = err.lines().last().unwrap();
    assert!(
        last.starts_with("dev: apt-get could not install cmake, clang, libclang-dev and g++")
            && last.contains(&format!("its whole output is in {}", log.display())),
        "{err}"
    );
    // The cause is shown (the last lines), the screenful before it is not.
    assert!(
        err.contains("E: Unable to locate package libclang-dev"),
        "{err}"
    );
    assert!(err.matches(NOISE).count() <= 5, "{err}");
    assert!(!err.contains("cargo stand-in"), "cargo does not run: {err}");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        logged.matches(NOISE).count(),
        200,
        "update and install: {logged}"
    );
    assert!(logged.contains("E: Unable to locate package"), "{logged}");
}

#[test]
fn before_cargo_a_line_says_what_the_first_build_costs() {
    let bin = FakeBin::new();
    bin.script("cmake", "echo cmake version 3.25.1");
    let tmp = tempfile::tempdir().unwrap();
    let out = dev(&bin, tmp.path(), &["answer", "why"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "dev: building ground and llama.cpp (first build about 10 minutes on 2 cores; later builds seconds)\n"
    );
    assert_eq!(
        stdout(&out),
        "cargo stand-in: run --release --locked -- answer why\n"
    );
}
