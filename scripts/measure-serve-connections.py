#!/usr/bin/env python3
"""Silent sockets, a slowloris client and a stalled shutdown against `ground serve`.

    python3 scripts/measure-serve-connections.py [--bin target/debug/ground]
        [--silent 1100] [--fd-limit 1024] [--settle 15] [--watch 40] [-- SERVE_ARGS...]

Starts the real binary, `ground serve --listen 127.0.0.1:PORT SERVE_ARGS` on a free
loopback port, under a file-descriptor limit of --fd-limit (`ulimit -n`), with empty
config, cache and state folders (no model or search is ever asked: only /health).
Then, on 127.0.0.1 only (standard library only):

1. times `GET /health` on a fresh connection (the baseline);
2. opens --silent TCP connections that send nothing (each connect waits 1 s at most);
3. times `GET /health` on a fresh connection while they are open (30 s at most);
4. --settle seconds after step 2 began, counts the silent sockets the server has
   closed, times `GET /health` again, and closes them all;
5. opens a slowloris connection (`GET /health HTTP/1.1`, then one header byte every
   2 s, never the blank line) and says, --watch seconds later, whether it is still
   open or when the server closed it;
6. opens a connection sending half a request head, sends SIGTERM, and times the
   exit (15 s at most); if still running, a second SIGTERM (5 s at most); then
   SIGKILL.

Also reports the most file descriptors the server held (/proc/PID/fd, sampled every
0.2 s) and how many "cannot accept" lines it wrote. Prints the figures; stops by
itself in about --settle + --watch + 25 s. Not a test: run it on two binaries and compare.
"""
import argparse
import os
import re
import resource
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def health(port, timeout):
    """Seconds for `GET /health` on a fresh connection, or the reason it failed."""
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(max(0.1, timeout - (time.monotonic() - start)))
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            reply = b""
            while b"\r\n\r\n" not in reply:
                s.settimeout(max(0.1, timeout - (time.monotonic() - start)))
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
        status = reply.split(b"\r\n", 1)[0].decode(errors="replace")
        if " 200 " not in status + " ":
            return None, f"status {status!r}"
        return time.monotonic() - start, None
    except OSError as e:
        return None, f"{type(e).__name__} after {time.monotonic() - start:.1f} s"


def closed_by_peer(sock):
    """Whether the server has closed `sock` (EOF or reset), without blocking."""
    try:
        poller = select.poll()  # select() cannot watch descriptors over 1023
        poller.register(sock, select.POLLIN)
        if not poller.poll(0):
            return False
        return sock.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


class Slowloris(threading.Thread):
    """A request head sent one byte every 2 s, never finished."""

    def __init__(self, port, seconds):
        super().__init__(daemon=True)
        self.port, self.seconds = port, seconds
        self.started = None
        self.closed_after = None
        self.bytes_sent = 0

    def run(self):
        self.started = time.monotonic()
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            self.closed_after = 0.0
            return
        trickle = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
        try:
            s.sendall(trickle[:22])
            self.bytes_sent = 22
            for byte in trickle[22:]:
                deadline = time.monotonic() + 2
                while time.monotonic() < deadline:
                    if closed_by_peer(s):
                        raise ConnectionResetError
                    time.sleep(0.05)
                if time.monotonic() - self.started > self.seconds:
                    return
                s.send(bytes([byte]))
                self.bytes_sent += 1
        except OSError:
            self.closed_after = time.monotonic() - self.started
        finally:
            s.close()


class FdSampler(threading.Thread):
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.stop = pid, 0, False

    def run(self):
        while not self.stop:
            try:
                self.peak = max(self.peak, len(os.listdir(f"/proc/{self.pid}/fd")))
            except OSError:
                return
            time.sleep(0.2)


def wait_exit(proc, seconds):
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--silent", type=int, default=1100)
    ap.add_argument("--fd-limit", type=int, default=1024)
    ap.add_argument("--watch", type=float, default=40)
    ap.add_argument("--settle", type=float, default=15)
    ap.add_argument("serve_args", nargs="*")
    args = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, args.silent + 256) if hard != resource.RLIM_INFINITY else args.silent + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    def limit_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (args.fd_limit, args.fd_limit))

    tmp = tempfile.mkdtemp(prefix="ground-conn-")
    env = dict(os.environ)
    for var, sub in [("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"),
                     ("XDG_STATE_HOME", "state"), ("XDG_DATA_HOME", "data"), ("HOME", "home")]:
        os.makedirs(os.path.join(tmp, sub), exist_ok=True)
        env[var] = os.path.join(tmp, sub)
    env = {k: v for k, v in env.items() if not k.startswith("GROUND_")}
    port = free_port()
    cmd = [args.bin, "serve", "--listen", f"127.0.0.1:{port}", *args.serve_args]
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=limit_fds)
    lines = []
    listening = threading.Event()

    def read_stderr():
        for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            lines.append(line)
            if "listening on" in line:
                listening.set()

    threading.Thread(target=read_stderr, daemon=True).start()
    if not listening.wait(20):
        proc.kill()
        sys.exit("ground serve did not start:\n" + "\n".join(lines))
    sampler = FdSampler(proc.pid)
    sampler.start()
    report = {}

    def timed(took_why):
        took, why = took_why
        return f"{took:.3f} s" if took is not None else f"no answer ({why})"

    try:
        report["baseline /health"] = timed(health(port, 10))

        silent, refused = [], 0
        flood = time.monotonic()
        for _ in range(args.silent):
            s = socket.socket()
            s.settimeout(1)
            try:
                s.connect(("127.0.0.1", port))
                silent.append(s)
            except OSError:
                refused += 1
                s.close()
        report["silent sockets connected"] = f"{len(silent)} of {args.silent} ({refused} failed) in {time.monotonic() - flood:.1f} s"
        report["/health during the flood"] = timed(health(port, 30))
        while time.monotonic() < flood + args.settle and proc.poll() is None:
            time.sleep(0.2)
        report[f"silent sockets closed by the server after {args.settle:.0f} s"] = f"{sum(closed_by_peer(s) for s in silent)} of {len(silent)}"
        report["/health then"] = timed(health(port, 10))
        for s in silent:
            s.close()
        time.sleep(1)

        slow = Slowloris(port, args.watch + 5)
        slow.start()
        time.sleep(0.5)
        end = slow.started + args.watch
        while time.monotonic() < end and proc.poll() is None:
            time.sleep(0.2)
        if slow.closed_after is None:
            report[f"slowloris after {args.watch:.0f} s"] = f"still connected ({slow.bytes_sent} bytes sent)"
        else:
            report[f"slowloris after {args.watch:.0f} s"] = f"closed by the server after {slow.closed_after:.1f} s ({slow.bytes_sent} bytes sent)"

        half = socket.create_connection(("127.0.0.1", port), timeout=5)
        half.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Half: ")
        time.sleep(0.5)
        t = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        if wait_exit(proc, 15):
            report["SIGTERM with a half-sent head open"] = f"exited in {time.monotonic() - t:.1f} s, code {proc.returncode}"
        else:
            report["SIGTERM with a half-sent head open"] = "still running after 15 s"
            t = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            if wait_exit(proc, 5):
                report["second SIGTERM"] = f"exited in {time.monotonic() - t:.1f} s, code {proc.returncode}"
            else:
                report["second SIGTERM"] = "still running after 5 s: SIGKILL"
        half.close()
    finally:
        sampler.stop = True
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    report["server's most file descriptors"] = f"{sampler.peak} (limit {args.fd_limit})"
    report["'cannot accept' lines on stderr"] = sum(1 for l in lines if re.search(r"cannot accept|accept error", l))
    print(f"{' '.join(cmd[:1])} serve {' '.join(args.serve_args)}".rstrip())
    for key, value in report.items():
        if isinstance(value, float):
            value = f"{value:.3f} s"
        print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
