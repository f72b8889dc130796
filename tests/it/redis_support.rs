//! A real `redis-server` (Debian's) for the tests of shared state: started by the test
//! on a free loopback port in a temp dir, nothing saved to disk, stopped (and
//! restarted on the same port) by the test, killed when dropped.
//!
//! Where `redis-server` is missing the tests that need it print a loud message and
//! pass without checking anything, except where it must be there: with `CI` or
//! `GROUND_REQUIRE_REDIS=1` set (`.ci/test` sets it and installs the package) a
//! missing `redis-server` fails the test.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running (or stopped) `redis-server`.
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    /// The password clients must give (`--requirepass`), if any.
    password: Option<String>,
}

/// Whether the environment says Redis must be there (CI).
fn required() -> bool {
    let set =
        |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
    set("CI") || set("GROUND_REQUIRE_REDIS")
}

impl RedisServer {
    /// Starts one, or `None` (after a loud message) where `redis-server` is missing
    /// and not required; panics where it is required.
    pub fn start(test: &str) -> Option<RedisServer> {
        Self::start_with(test, None)
    }

    /// [`RedisServer::start`] with `--requirepass password` when given: a client
    /// must authenticate before any other command.
    pub fn start_with(test: &str, password: Option<&str>) -> Option<RedisServer> {
        let found = Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !found {
            let message = format!(
                "\n!!!!! {test}: redis-server is not installed, so this test of shared state CHECKED NOTHING.\n!!!!! Install it (Debian: apt-get install redis-server) to run it.\n"
            );
            if required() {
                panic!(
                    "{message}!!!!! CI or GROUND_REQUIRE_REDIS is set: redis-server must be there."
                );
            }
            eprintln!("{message}");
            return None;
        }
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free port");
        let mut server = RedisServer {
            child: None,
            port,
            dir: tempfile::tempdir().unwrap(),
            password: password.map(str::to_string),
        };
        server.restart();
        Some(server)
    }

    /// Its URL.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    /// Stops it (SIGKILL: as a crash would) and waits until the port is closed.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it (again) on the same port and waits until it answers PING.
    pub fn restart(&mut self) {
        self.stop();
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(self.dir.path());
        if let Some(password) = &self.password {
            command.args(["--requirepass", password]);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        self.child = Some(child);
        let start = Instant::now();
        while !self.answers() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "redis-server did not answer PING on port {} within 10 s",
                self.port
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether it answers `PING` now.
    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if !self.authenticate(&mut stream) {
            return false;
        }
        let mut reply = [0u8; 7];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+PONG\r\n"
    }

    /// Sends `AUTH` when the server wants a password: whether it was taken (or none
    /// was needed).
    fn authenticate(&self, stream: &mut TcpStream) -> bool {
        let Some(password) = &self.password else {
            return true;
        };
        let mut reply = [0u8; 5];
        stream
            .write_all(format!("AUTH {password}\r\n").as_bytes())
            .is_ok()
            && stream.read_exact(&mut reply).is_ok()
            && &reply == b"+OK\r\n"
    }

    /// Runs one command (inline form) and returns the raw reply's first line.
    pub fn command(&self, line: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connect to redis");
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        assert!(self.authenticate(&mut stream), "AUTH refused");
        stream.write_all(format!("{line}\r\n").as_bytes()).unwrap();
        let mut reply = Vec::new();
        let mut byte = [0u8; 1];
        while stream.read_exact(&mut byte).is_ok() {
            reply.push(byte[0]);
            if reply.ends_with(b"\r\n") {
                break;
            }
        }
        String::from_utf8_lossy(&reply).trim_end().to_string()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
