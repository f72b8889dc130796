//! `ground serve`'s connections (issue R5): the header and idle timeouts, the cap on
//! connections, and shutdown, on the real binary over raw sockets on loopback (no
//! model or search is ever asked: only `/health`, and requests left unfinished).

use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::Child;

use crate::common::*;

/// A running `ground serve` and its address.
struct Server {
    child: Child,
    addr: String,
    stderr: tokio::task::JoinHandle<String>,
    _world: World,
}

impl Server {
    /// Starts `ground serve --listen 127.0.0.1:0 FLAGS` and waits for its line.
    async fn start(flags: &[&str]) -> Server {
        let world = World::new().await;
        let mut cmd = tokio::process::Command::from(world.ground());
        cmd.args(["serve", "--listen", "127.0.0.1:0"])
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("start ground serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let addr = tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = lines.next_line().await.unwrap() {
                if let Some(rest) = line.split("listening on http://").nth(1) {
                    return rest.split_whitespace().next().unwrap().to_string();
                }
            }
            panic!("ground serve ended without listening");
        })
        .await
        .expect("ground serve did not start");
        let stderr = tokio::spawn(async move {
            let mut text = String::new();
            while let Ok(Some(line)) = lines.next_line().await {
                text.push_str(&line);
                text.push('\n');
            }
            text
        });
        Server {
            child,
            addr,
            stderr,
            _world: world,
        }
    }

    async fn connect(&self) -> TcpStream {
        TcpStream::connect(&self.addr).await.expect("connect")
    }

    /// Sends `signal` to the server.
    fn signal(&self, signal: i32) {
        let pid = self.child.id().expect("still running") as i32;
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    }

    /// The exit code and how long the exit took, if it came within `limit`.
    async fn exit_within(&mut self, limit: Duration) -> Option<(i32, Duration)> {
        let start = Instant::now();
        let status = tokio::time::timeout(limit, self.child.wait()).await.ok()?;
        Some((status.unwrap().code().unwrap_or(-1), start.elapsed()))
    }

    /// Stops the server (if still running) and returns its stderr.
    async fn stop(mut self) -> String {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
        self.stderr.await.unwrap()
    }
}

/// How long until the server closes `stream` (end of stream or reset), reading and
/// dropping whatever it sends; `None` if it is still open after `limit`.
async fn closed_within(stream: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return start.elapsed(),
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
}

/// `GET /health` on `stream` (kept alive): the reply's status line, or `None` if the
/// connection closed first.
async fn health_on(stream: &mut TcpStream) -> Option<String> {
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .ok()?;
    let mut reply = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = reply.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&reply[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map(|v| v.trim().parse().unwrap())
        .expect("a content-length");
    while reply.len() < head_end + length {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => reply.extend_from_slice(&buf[..n]),
        }
    }
    Some(head.lines().next().unwrap().to_string())
}

/// `GET /health` on a fresh connection within `limit`: its status line, or why not.
async fn health(server: &Server, limit: Duration) -> Result<String, String> {
    tokio::time::timeout(limit, async {
        let mut stream = TcpStream::connect(&server.addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        health_on(&mut stream).await.ok_or("closed".to_string())
    })
    .await
    .map_err(|_| format!("no answer within {limit:?}"))?
}

/// A connection with a request under way that never ends: a chat completion whose
/// body is announced and never sent whole.
async fn under_way(server: &Server) -> TcpStream {
    let mut stream = server.connect().await;
    stream
        .write_all(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\": ",
        )
        .await
        .unwrap();
    stream
}

const OK: &str = "http/1.1 200 ok";

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_timeout() {
    let server = Server::start(&["--header-timeout", "1"]).await;
    let mut silent = server.connect().await;
    let closed = closed_within(&mut silent, Duration::from_secs(10))
        .await
        .expect("the silent connection is still open after 10 s");
    assert!(
        closed >= Duration::from_millis(900),
        "closed before the timeout: {closed:?}"
    );
    assert_eq!(health(&server, Duration::from_secs(10)).await.unwrap(), OK);
    server.stop().await;
}

#[tokio::test]
async fn a_head_sent_a_byte_at_a_time_is_cut_at_the_header_timeout() {
    let server = Server::start(&["--header-timeout", "2"]).await;
    let mut slow = server.connect().await;
    let start = Instant::now();
    let head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let mut closed = None;
    for byte in head {
        // A byte every 0.3 s: each one would reset a timer that restarts on data.
        if slow.write_all(&[*byte]).await.is_err() {
            closed = Some(start.elapsed());
            break;
        }
        if closed_within(&mut slow, Duration::from_millis(300))
            .await
            .is_some()
        {
            closed = Some(start.elapsed());
            break;
        }
    }
    let closed = closed.expect("the slow head was never cut");
    assert!(
        closed >= Duration::from_millis(1900) && closed < Duration::from_secs(6),
        "cut after {closed:?}, not about 2 s"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_kept_alive_connection_waits_the_idle_timeout_for_its_next_request() {
    let server = Server::start(&["--header-timeout", "1", "--idle-timeout", "4"]).await;
    // Idle for longer than the header timeout, then a second request: answered.
    let mut kept = server.connect().await;
    assert_eq!(health_on(&mut kept).await.as_deref(), Some(OK));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(health_on(&mut kept).await.as_deref(), Some(OK));
    // Then idle for good: closed about the idle timeout after the last reply.
    let closed = closed_within(&mut kept, Duration::from_secs(15))
        .await
        .expect("the idle connection is still open after 15 s");
    assert!(
        closed >= Duration::from_millis(3500) && closed < Duration::from_secs(10),
        "closed after {closed:?}, not about 4 s"
    );
    // Its next request's head, once begun, has the header timeout.
    let mut begun = server.connect().await;
    assert_eq!(health_on(&mut begun).await.as_deref(), Some(OK));
    begun.write_all(b"GET /hea").await.unwrap();
    let closed = closed_within(&mut begun, Duration::from_secs(10))
        .await
        .expect("a begun head is still open after 10 s");
    assert!(
        closed < Duration::from_millis(3500),
        "a begun head waited {closed:?}: the idle timeout, not the header timeout"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_client_that_reads_no_reply_is_cut_after_the_idle_timeout() {
    let server = Server::start(&["--idle-timeout", "2"]).await;
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(server.addr.parse().unwrap()).await.unwrap();
    // Requests pipelined without ever reading a reply, until the replies fill the
    // buffers and the server can write no more: it gives up 2 s later.
    let started = Instant::now();
    // (A 404 for a long path: its reply, naming the path, fills them sooner.)
    let request = format!(
        "GET /{} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "x".repeat(200)
    )
    .repeat(50);
    let cut = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if stream.write_all(request.as_bytes()).await.is_err() {
                return started.elapsed();
            }
        }
    })
    .await
    .expect("still writing after 60 s: the server never gave up");
    assert!(cut >= Duration::from_millis(1900), "cut after {cut:?}");
    assert_eq!(health(&server, Duration::from_secs(10)).await.unwrap(), OK);
    server.stop().await;
}

#[tokio::test]
async fn silent_sockets_holding_every_place_make_room_for_a_new_client() {
    let server = Server::start(&["--max-connections", "4", "--header-timeout", "60"]).await;
    let mut silent = Vec::new();
    for _ in 0..4 {
        silent.push(server.connect().await);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Far sooner than the header timeout would free a place.
    let started = Instant::now();
    assert_eq!(health(&server, Duration::from_secs(10)).await.unwrap(), OK);
    assert!(started.elapsed() < Duration::from_secs(5));
    // The oldest silent socket gave up its place.
    assert!(
        closed_within(&mut silent[0], Duration::from_secs(2))
            .await
            .is_some(),
        "the oldest silent socket is still open"
    );
    // Again and again: no more than four are ever open, and each newcomer is served.
    for _ in 0..6 {
        silent.push(server.connect().await);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(health(&server, Duration::from_secs(10)).await.unwrap(), OK);
    let mut open = 0;
    for stream in &mut silent {
        if closed_within(stream, Duration::from_millis(50))
            .await
            .is_none()
        {
            open += 1;
        }
    }
    assert!(open <= 4, "{open} silent sockets open with a cap of 4");
    server.stop().await;
}

#[tokio::test]
async fn with_every_place_under_way_a_new_client_waits_for_one() {
    let server = Server::start(&["--max-connections", "2", "--header-timeout", "60"]).await;
    let first = under_way(&server).await;
    let _second = under_way(&server).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Requests under way are never cut to make room: the newcomer waits...
    let waiting = tokio::spawn({
        let addr = server.addr.clone();
        async move {
            let mut stream = TcpStream::connect(&addr).await.unwrap();
            let asked = Instant::now();
            let status = health_on(&mut stream).await;
            (status, asked.elapsed())
        }
    });
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!waiting.is_finished(), "answered with every place taken");
    // ...until one ends (its client leaves), and is then served.
    drop(first);
    let (status, waited) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("still waiting 10 s after a place freed")
        .unwrap();
    assert_eq!(status.as_deref(), Some(OK));
    assert!(waited >= Duration::from_millis(1400), "{waited:?}");
    server.stop().await;
}

#[tokio::test]
async fn sigterm_with_a_half_sent_head_open_exits_at_once() {
    let mut server = Server::start(&["--header-timeout", "60"]).await;
    let mut half = server.connect().await;
    half.write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Hal")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal(libc::SIGTERM);
    let (code, took) = server
        .exit_within(Duration::from_secs(10))
        .await
        .expect("ground serve still running 10 s after SIGTERM");
    assert_eq!(code, 0);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let stderr = server.stop().await;
    assert!(stderr.contains("stopping"), "{stderr}");
}

#[tokio::test]
async fn sigterm_gives_a_request_under_way_the_grace_then_cuts_it() {
    let mut server = Server::start(&["--shutdown-grace", "2"]).await;
    let mut busy = under_way(&server).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal(libc::SIGTERM);
    // No new connection is accepted meanwhile.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(health(&server, Duration::from_secs(1)).await.is_err());
    let (code, took) = server
        .exit_within(Duration::from_secs(20))
        .await
        .expect("ground serve still running 20 s after SIGTERM");
    assert_eq!(code, 0);
    assert!(
        took >= Duration::from_millis(1200),
        "did not wait for the request: {took:?}"
    );
    assert!(
        closed_within(&mut busy, Duration::from_secs(2))
            .await
            .is_some()
    );
    let stderr = server.stop().await;
    assert!(
        stderr.contains("1 connection(s) still busy after 2 s: closing them"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_second_signal_stops_at_once_with_exit_code_130() {
    let mut server = Server::start(&["--shutdown-grace", "600"]).await;
    let _busy = under_way(&server).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.signal(libc::SIGTERM);
    assert!(
        server.exit_within(Duration::from_secs(1)).await.is_none(),
        "exited without waiting for the request under way"
    );
    server.signal(libc::SIGINT);
    let (code, took) = server
        .exit_within(Duration::from_secs(10))
        .await
        .expect("ground serve still running 10 s after a second signal");
    assert_eq!(code, 130);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let stderr = server.stop().await;
    assert!(stderr.contains("second signal"), "{stderr}");
}
