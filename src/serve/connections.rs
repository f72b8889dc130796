//! How `ground serve` takes connections, bounds them, and lets them go on shutdown.
//!
//! An accept loop in the style of tokio's mini-redis, over hyper's HTTP/1 connection
//! (`axum::serve` set no limit at all: a silent socket stayed open for ever, so a
//! thousand of them used up the process's file descriptors and nobody else was
//! answered):
//!
//! - **Headers in time.** A new connection must have sent its first request's
//!   headers within `header_timeout` of connecting; a kept-alive one, within
//!   `header_timeout` of the first byte of its next request. Otherwise it is closed
//!   (a slowloris client sending a byte every few seconds included).
//! - **Idle kept-alive connections** (no request under way, no byte of the next one)
//!   are closed after `idle_timeout`, and so is a connection whose client takes none
//!   of a reply for that long.
//! - **At most `max_connections` at once.** When all are open and another client
//!   connects, the open connection that has waited longest for a request (a silent
//!   socket, or an idle kept-alive one) is closed to make room: a request under way
//!   is never cut, and a flood of silent sockets cannot keep a real client (which
//!   sends its headers at once) waiting. When every connection has a request under
//!   way, the newcomer waits for the first to end, and the connections after it
//!   wait in the system's listen queue, which costs the process no file descriptor
//!   (so the process never holds more than `max_connections` + 1 sockets). The two
//!   simpler choices were worse: waiting in the queue alone makes a real client wait
//!   behind every silent socket queued before it (measured with 1,100 of them and
//!   512 places: `/health` answered 20 s after the flood began, two header
//!   timeouts, against 0.03 s with the eviction), and accepting and closing at once
//!   fails every client while the places are held.
//! - **Shutdown**: on the signal, no more connections are accepted, those with no
//!   request under way (idle, or still sending a head) are closed, the requests
//!   under way get `shutdown_grace` to finish, then every connection still open is
//!   closed.
//!
//! The timeouts are [`Deadlines`] around the socket, which know from [`Activity`]
//! whether a request is under way: from the moment hyper hands its headers to the
//! routes until its response body has been sent (or dropped). hyper's own
//! `header_read_timeout` is not used: it starts counting as soon as a kept-alive
//! connection waits for its next request, so it could not give the idle wait a
//! limit of its own. As with `axum::serve`, only HTTP/1.1 (and 1.0) is spoken, and
//! a failed accept (out of file descriptors) is retried after a second; unlike it,
//! `TCP_NODELAY` is set, so streamed events are not held back by Nagle's algorithm.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use futures_util::task::AtomicWaker;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};

/// The limits on connections (`[serve]`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Time for a request's headers.
    pub header_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Time the requests under way get to finish on shutdown.
    pub shutdown_grace: Duration,
}

/// Serves `routes` on `listener` within `limits` until `shutdown` completes, then
/// stops as the module says. Returns once every connection is closed.
pub(crate) async fn run(
    listener: TcpListener,
    routes: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let places = Arc::new(Semaphore::new(limits.max_connections));
    let open = Arc::new(Open::default());
    let epoch = Instant::now();
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    // The limits are `Deadlines`' (no hyper timer: its 30 s default never applies).
    http.header_read_timeout(None);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        while connections.try_join_next().is_some() {}
        // A place first, if one is free; when none is, the next connection from the
        // listen queue makes room by closing the one that has waited longest for a
        // request (or waits for a request to end); the others wait in the queue.
        let free = Arc::clone(&places).try_acquire_owned().ok();
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) if connection_error(&e) => continue,
                Err(e) => {
                    // Most likely out of file descriptors: wait for some to close.
                    crate::error::log_line(&format!("ground serve: cannot accept a connection: {e} (trying again in 1 s)"));
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                        () = &mut shutdown => break,
                    }
                }
            },
            () = &mut shutdown => break,
        };
        let mut place = free.or_else(|| Arc::clone(&places).try_acquire_owned().ok());
        while place.is_none() {
            // Again every 0.1 s, in case the one asked began a request meanwhile
            // (and kept its place), or every connection had one under way.
            open.close_longest_waiting();
            tokio::select! {
                freed = Arc::clone(&places).acquire_owned() => {
                    place = Some(freed.expect("the semaphore is never closed"));
                }
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
                () = &mut shutdown => break,
            }
        }
        let Some(place) = place else { break };
        let _ = stream.set_nodelay(true);
        let activity = Arc::new(Activity::new(epoch));
        let registered = open.register(&activity);
        let io = TokioIo::new(Deadlines::new(stream, Arc::clone(&activity), limits));
        let service = Tracked {
            routes: TowerToHyperService::new(routes.clone()),
            activity: Arc::clone(&activity),
        };
        let connection = graceful.watch(http.serve_connection(io, service));
        connections.spawn(async move {
            let mut connection = std::pin::pin!(connection);
            loop {
                tokio::select! {
                    // An error is the client's (gone, too slow, not HTTP): nothing
                    // to log.
                    _ = &mut connection => break,
                    // Asked to close (to make room, or on shutdown): dropped
                    // unless a request has begun since.
                    () = activity.close.notified() => {
                        if !activity.under_way() {
                            break;
                        }
                        activity.closing.store(false, Ordering::Release);
                    }
                }
            }
            drop(registered);
            drop(place);
        });
    }
    drop(listener);
    // Connections with no request under way (idle, or still sending a head) close
    // now; hyper lets the others finish their request and then closes them.
    open.close_waiting();
    let grace = limits.shutdown_grace;
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        while connections.try_join_next().is_some() {}
        crate::error::log_line(&format!(
            "ground serve: {} connection(s) still busy after {} s: closing them",
            connections.len(),
            grace.as_secs()
        ));
    }
    connections.shutdown().await;
}

/// The open connections, to find the one to close when another needs its place.
#[derive(Default)]
struct Open {
    next: AtomicU64,
    connections: Mutex<HashMap<u64, Arc<Activity>>>,
}

impl Open {
    /// Adds a connection until the returned value is dropped.
    fn register(self: &Arc<Self>, activity: &Arc<Activity>) -> Registered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.list().insert(id, Arc::clone(activity));
        Registered {
            open: Arc::clone(self),
            id,
        }
    }

    /// Asks the connection that has waited longest for a request (none under way,
    /// not already asked) to close; none if every connection has a request under way.
    fn close_longest_waiting(&self) {
        if let Some(longest) = self
            .list()
            .values()
            .filter(|a| !a.under_way() && !a.closing.load(Ordering::Acquire))
            .min_by_key(|a| a.waiting_since.load(Ordering::Acquire))
        {
            longest.closing.store(true, Ordering::Release);
            longest.close.notify_one();
        }
    }

    /// Asks every connection with no request under way to close.
    fn close_waiting(&self) {
        for activity in self.list().values().filter(|a| !a.under_way()) {
            activity.close.notify_one();
        }
    }

    fn list(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.connections.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A connection in [`Open`], removed when dropped.
struct Registered {
    open: Arc<Open>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.open.list().remove(&self.id);
    }
}

/// Whether an accept failed for this one connection only (the client gave up).
fn connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// One connection's requests: how many have started and how many have ended
/// (response sent, or dropped), a request being under way while they differ; when
/// its current wait for a request began; and the call to close it.
#[derive(Debug)]
struct Activity {
    started: AtomicU64,
    ended: AtomicU64,
    /// When the server started (the same for every connection).
    epoch: Instant,
    /// Milliseconds from `epoch` to when the current wait for a request began.
    waiting_since: AtomicU64,
    /// Asks the connection to close (if no request is under way).
    close: Notify,
    /// Whether it has been asked and has not yet answered.
    closing: AtomicBool,
    /// The connection's task while it waits to read, woken when a request ends so
    /// that the wait for the next one starts its timer (hyper may drop the response
    /// body after its last read).
    reader: AtomicWaker,
}

impl Activity {
    fn new(epoch: Instant) -> Activity {
        Activity {
            started: AtomicU64::new(0),
            ended: AtomicU64::new(0),
            waiting_since: AtomicU64::new(millis_since(epoch)),
            epoch,
            close: Notify::new(),
            closing: AtomicBool::new(false),
            reader: AtomicWaker::new(),
        }
    }

    fn under_way(&self) -> bool {
        self.started.load(Ordering::Acquire) != self.ended.load(Ordering::Acquire)
    }
}

/// Milliseconds from `epoch` to now.
fn millis_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// A request under way: counted as started when made, as ended when dropped.
struct UnderWay(Arc<Activity>);

impl UnderWay {
    fn new(activity: &Arc<Activity>) -> UnderWay {
        activity.started.fetch_add(1, Ordering::AcqRel);
        UnderWay(Arc::clone(activity))
    }
}

impl Drop for UnderWay {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::AcqRel);
        self.0.reader.wake();
    }
}

/// The routes as hyper's service, each request counted in [`Activity`] until its
/// response body is done.
struct Tracked {
    routes: TowerToHyperService<Router>,
    activity: Arc<Activity>,
}

type Reply = Pin<Box<dyn Future<Output = Result<hyper::Response<Counted>, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<Incoming>> for Tracked {
    type Response = hyper::Response<Counted>;
    type Error = Infallible;
    type Future = Reply;

    fn call(&self, request: hyper::Request<Incoming>) -> Reply {
        let under_way = UnderWay::new(&self.activity);
        let reply = self.routes.call(request);
        Box::pin(async move {
            let response = reply.await?;
            Ok(response.map(|body| Counted {
                body,
                _under_way: under_way,
            }))
        })
    }
}

/// A response body that keeps its request under way until hyper drops it (sent
/// whole, or the connection lost).
struct Counted {
    body: Body,
    _under_way: UnderWay,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// What a connection is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// A request's headers, due when the timer fires.
    Headers,
    /// The first byte of the next request on a kept-alive connection, until the
    /// timer fires.
    Idle,
    /// Nothing: a request is under way (its run has a deadline of its own).
    UnderWay,
}

/// A connection's socket with the header and idle timeouts: a read that would wait
/// past the timer fails with `TimedOut`, and hyper closes the connection.
struct Deadlines {
    stream: TcpStream,
    activity: Arc<Activity>,
    limits: Limits,
    wait: Wait,
    /// Requests ended when the current wait began.
    ended: u64,
    timer: Pin<Box<Sleep>>,
    /// Since when a write has been waiting for the client to take in what was sent.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl Deadlines {
    /// A new connection: its first request's headers are due within the header
    /// timeout.
    fn new(stream: TcpStream, activity: Arc<Activity>, limits: Limits) -> Deadlines {
        Deadlines {
            stream,
            activity,
            limits,
            wait: Wait::Headers,
            ended: 0,
            timer: Box::pin(tokio::time::sleep(limits.header_timeout)),
            stalled: None,
        }
    }

    /// A write's outcome, failing with `TimedOut` once writes have waited
    /// `idle_timeout` for the client to read.
    fn written<T>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if result.is_ready() {
            self.stalled = None;
            return result;
        }
        let limit = self.limits.idle_timeout;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match stalled.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the client takes in none of the reply",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    /// Brings `wait` up to date with the connection's requests.
    fn update(&mut self) {
        let ended = self.activity.ended.load(Ordering::Acquire);
        let started = self.activity.started.load(Ordering::Acquire);
        if started != ended {
            self.wait = Wait::UnderWay;
        } else if ended != self.ended {
            // A response has been sent since: wait for the next request.
            self.ended = ended;
            self.wait = Wait::Idle;
            self.activity
                .waiting_since
                .store(millis_since(self.activity.epoch), Ordering::Release);
            self.timer
                .as_mut()
                .reset(Instant::now() + self.limits.idle_timeout);
        }
    }
}

impl AsyncRead for Deadlines {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.update();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if this.wait == Wait::Idle && buf.filled().len() > before {
                    // The next request has begun: its headers are due.
                    this.wait = Wait::Headers;
                    this.timer
                        .as_mut()
                        .reset(Instant::now() + this.limits.header_timeout);
                }
                Poll::Ready(Ok(()))
            }
            Poll::Pending if this.wait == Wait::UnderWay => {
                this.activity.reader.register(cx.waker());
                if !this.activity.under_way() {
                    // Ended meanwhile: read again, now with the idle timer.
                    cx.waker().wake_by_ref();
                }
                Poll::Pending
            }
            Poll::Pending => match this.timer.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    if this.wait == Wait::Idle {
                        "idle connection"
                    } else {
                        "request headers too slow"
                    },
                ))),
                Poll::Pending => Poll::Pending,
            },
            other => other,
        }
    }
}

impl AsyncWrite for Deadlines {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.written(cx, result)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.written(cx, result)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_flush(cx);
        this.written(cx, result)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
