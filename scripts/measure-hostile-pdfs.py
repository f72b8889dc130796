#!/usr/bin/env python3
"""Runs every PDF in fixtures/pdf/hostile/ (and the normal report.pdf, as a control)
through a `ground` binary and prints, per file: exit code, status, wall time and peak
memory (issue 24).

    cargo build --release
    python3 scripts/measure-hostile-pdfs.py [--bin target/release/ground]
        [--mode extract|fetch|both] [--limit SECONDS] [FILE...]

- extract: `/usr/bin/time -v ground extract FILE.pdf`; the status is `ok` or the
  first line of stderr.
- fetch: `/usr/bin/time -v ground fetch --json URL` against a loopback HTTP server
  serving the file as application/pdf; the status is the JSON's `status` and `error`.
Memory is measured twice: `max RSS` is GNU time's "Maximum resident set size" (the
largest single process: ground, or a child it waited for), `tree RSS` is the peak of
the summed RSS of ground and all its descendants, sampled from /proc every 10 ms (a
parser child process counts here). Runs longer than --limit (default 90 s) are
killed, process group and all, and shown as `killed`.
"""
import argparse
import functools
import http.server
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "fixtures" / "pdf" / "hostile"
CONTROL = ROOT / "fixtures" / "pdf" / "report.pdf"


def descendants(pid):
    """pid and every process below it (via /proc/PID/task/TID/children)."""
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return seen


def rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run(cmd, env, limit):
    """Runs cmd under /usr/bin/time -v; returns (code, stdout, stderr, wall, max_rss_kib, tree_kib)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        started = time.monotonic()
        proc = subprocess.Popen(
            ["/usr/bin/time", "-v", "-o", timing.name, *cmd],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        tree_peak = 0
        done = threading.Event()

        def sample():
            nonlocal tree_peak
            while not done.is_set():
                # Skip the time process itself (the root); sum ground and its children.
                total = sum(rss_kib(p) for p in descendants(proc.pid)[1:])
                tree_peak = max(tree_peak, total)
                time.sleep(0.01)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        killed = False
        try:
            out, err = proc.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            killed = True
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
        wall = time.monotonic() - started
        done.set()
        sampler.join()
        report = timing.read()
    code = re.search(r"Exit status: (\d+)", report)
    signalled = re.search(r"Command terminated by signal (\d+)", report)
    if killed:
        code = "killed"
    elif signalled:
        code = f"{128 + int(signalled.group(1))}/sig{signalled.group(1)}"
    else:
        code = int(code.group(1)) if code else proc.returncode
    max_rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", report)
    return code, out, err, wall, int(max_rss.group(1)) if max_rss else 0, tree_peak


def shorten(text, n=90):
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def extract_status(code, out, err):
    if code == 0:
        return f"ok ({len(out)} bytes of text)"
    line = err.decode("utf-8", "replace").strip().splitlines()
    line = line[-1] if line else "(no message)"
    # "error: cannot read /long/path/x.pdf as a PDF: reason" -> "error: reason"
    return shorten(re.sub(r"^error: cannot read .* as a PDF: ", "error: ", line))


def fetch_status(code, out, err):
    try:
        reply = json.loads(out)
    except ValueError:
        return "no JSON on stdout" + (f"; stderr: {shorten(err.decode('utf-8', 'replace'), 60)}" if err else "")
    return shorten(f"{reply.get('status')}: {reply.get('error') or 'ok'}")


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def guess_type(self, path):
        return "application/pdf"


def serve(folder):
    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "ground"))
    parser.add_argument("--mode", choices=["extract", "fetch", "both"], default="both")
    parser.add_argument("--limit", type=float, default=90.0)
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    files = args.files or [CONTROL, *sorted(HOSTILE.glob("*.pdf"))]
    modes = ["extract", "fetch"] if args.mode == "both" else [args.mode]
    home = tempfile.mkdtemp(prefix="ground-measure-")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "XDG_CACHE_HOME": os.path.join(home, "cache"),
        "XDG_CONFIG_HOME": os.path.join(home, "config"),
        "NO_COLOR": "1",
        "GROUND_ALLOW_PRIVATE_ADDRESSES": "true",
    }
    servers = {}
    print(f"binary: {args.bin}")
    print(f"{'mode':8} {'file':24} {'exit':>9} {'wall s':>7} {'max RSS MB':>10} {'tree RSS MB':>11}  status")
    for mode in modes:
        for path in files:
            path = path.resolve()
            if mode == "extract":
                cmd = [args.bin, "extract", str(path)]
            else:
                server = servers.get(path.parent) or serve(path.parent)
                servers[path.parent] = server
                port = server.server_address[1]
                cmd = [args.bin, "fetch", "--json", f"http://127.0.0.1:{port}/{path.name}"]
            code, out, err, wall, max_rss, tree = run(cmd, env, args.limit)
            status = (extract_status if mode == "extract" else fetch_status)(code, out, err)
            print(
                f"{mode:8} {path.name:24} {str(code):>9} {wall:7.2f} {max_rss / 1024:10.1f} {tree / 1024:11.1f}  {status}",
                flush=True,
            )
    for server in servers.values():
        server.shutdown()


if __name__ == "__main__":
    sys.exit(main())
