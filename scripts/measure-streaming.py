#!/usr/bin/env python3
"""Measures the streamed answer (issue 12) with a paced stand-in model, on pseudo-terminals.

    python3 scripts/measure-streaming.py [--bin target/debug/ground] [--read S] [--write S]

Stands up three servers on 127.0.0.1 (standard library only): a SearXNG stand-in that
returns the fixture capture fixtures/searxng/searxng/normal.body.json, a page server
for fixtures/pages/, and a model stand-in for Ollama's /api/chat that waits --read
seconds (reading the prompt), then writes a 3-statement answer evenly over --write
seconds: in small NDJSON pieces when asked to stream, as one JSON body after the same
time when not. Then runs `ground answer` with stdout and stderr each on its own
pseudo-terminal, time-stamping every byte, and prints:

  - wall time of the run and when the first statement (its first `[n]` or
    `[unsupported]` marker) reached stdout, also as a share of the wall time;
  - how many times the stderr progress line changed while the model was writing;
  - whether `--json` (also on a pseudo-terminal) printed exactly one JSON object.

Run it against two binaries for a before/after comparison.
"""
import argparse
import json
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
CAPTURED_PAGES_URL = "http://127.0.0.1:8899"

ANSWER = json.dumps({
    "answerable": True,
    "statements": [
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
        {"text": "They survive by entering a dormant tun state in which their metabolism almost stops.",
         "citations": [{"source": 2, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"}]},
        {"text": "In that state their metabolism falls below a hundredth of a percent of normal.",
         "citations": [{"source": 2, "quote": "less than 0.01 percent of its normal rate"}]},
    ],
    "unknowns": [],
})


class Quiet(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that hung up early (ground stops reading once it has enough)


def serve(handler):
    server = Quiet(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


def servers(read_s, write_s):
    pages_server, pages_url = None, None

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self):
            name = os.path.basename(urlsplit(self.path).path)
            file = os.path.join(FIXTURES, "pages", name)
            if not name.endswith(".html") or not os.path.isfile(file):
                self.send_error(404)
                return
            body = open(file, "rb").read()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    pages_server, pages_url = serve(Pages)
    capture = open(os.path.join(FIXTURES, "searxng", "searxng", "normal.body.json")).read()
    capture = capture.replace(CAPTURED_PAGES_URL, pages_url).encode()

    class Searx(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(capture)))
            self.end_headers()
            self.wfile.write(capture)

        def log_message(self, *args):
            pass

    class Model(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(read_s)
            pieces = [ANSWER[i:i + 4] for i in range(0, len(ANSWER), 4)]
            gap = write_s / len(pieces)
            done = {"model": "stand-in", "message": {"role": "assistant", "content": ""}, "done": True,
                    "done_reason": "stop", "prompt_eval_count": 900, "eval_count": len(pieces)}
            if not request.get("stream", True):
                time.sleep(write_s)
                done["message"]["content"] = ANSWER
                body = json.dumps(done).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("content-type", "application/x-ndjson")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

            def chunk(obj):
                data = (json.dumps(obj) + "\n").encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            for piece in pieces:
                chunk({"model": "stand-in", "message": {"role": "assistant", "content": piece}, "done": False})
                time.sleep(gap)
            chunk(done)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args):
            pass

    _, searx_url = serve(Searx)
    _, model_url = serve(Model)
    return searx_url, model_url


def run_on_ptys(argv, env):
    """Runs argv with stdout and stderr on two pseudo-terminals; returns the wall time
    and the time-stamped chunks [(t, bytes)] of each."""
    out_master, out_slave = pty.openpty()
    err_master, err_slave = pty.openpty()
    started = time.monotonic()
    child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out_slave, stderr=err_slave)
    os.close(out_slave)
    os.close(err_slave)
    chunks = {out_master: [], err_master: []}
    open_fds = [out_master, err_master]
    while open_fds:
        ready, _, _ = select.select(open_fds, [], [], 0.05)
        for fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                data = b""
            if not data:
                open_fds.remove(fd)
                os.close(fd)
            else:
                chunks[fd].append((time.monotonic() - started, data))
        if child.poll() is not None and not ready:
            # Drain what is left, then stop.
            for fd in list(open_fds):
                try:
                    while True:
                        r, _, _ = select.select([fd], [], [], 0.05)
                        if not r:
                            break
                        data = os.read(fd, 65536)
                        if not data:
                            break
                        chunks[fd].append((time.monotonic() - started, data))
                except OSError:
                    pass
                open_fds.remove(fd)
                os.close(fd)
    child.wait()
    wall = time.monotonic() - started
    return child.returncode, wall, chunks[out_master], chunks[err_master]


def measure(binary, read_s, write_s):
    searx_url, model_url = servers(read_s, write_s)
    home = tempfile.mkdtemp(prefix="ground-measure-")
    env = {
        "HOME": home, "XDG_CACHE_HOME": os.path.join(home, "cache"), "PATH": os.environ.get("PATH", ""),
        "TERM": "xterm", "NO_COLOR": "1", "GROUND_SEARXNG_URL": searx_url, "GROUND_LLM_URL": model_url,
        "GROUND_ALLOW_PRIVATE_ADDRESSES": "true", "GROUND_MODEL": "stand-in",
    }
    question = "do tardigrades survive in space"
    code, wall, out, err = run_on_ptys([binary, "answer", question], env)
    marker = re.compile(rb"\[(\d+|unsupported)\]")
    first = None
    seen = b""
    for t, data in out:
        seen += data
        if first is None and marker.search(seen):
            first = t
    # Progress lines: each redraw starts with "\r\x1b[K"; count the distinct
    # successive renders that say the model is writing.
    renders = []
    text = b"".join(d for _, d in err).decode("utf-8", "replace")
    for piece in re.split(r"\r\x1b\[K|\n", text):
        if "writing" in piece and (not renders or renders[-1] != piece):
            renders.append(piece)
    changes = max(len(renders) - 1, 0) if renders else 0
    code_json, wall_json, out_json, _ = run_on_ptys([binary, "answer", "--json", question], env)
    raw = b"".join(d for _, d in out_json).decode("utf-8", "replace").replace("\r\n", "\n")
    try:
        decoder = json.JSONDecoder()
        obj, end = decoder.raw_decode(raw.strip())
        one_object = isinstance(obj, dict) and raw.strip()[end:].strip() == ""
    except ValueError:
        one_object = False
    print("binary: %s" % binary)
    print("model stand-in: reads %.1f s, writes %.1f s" % (read_s, write_s))
    print("exit code: %s; wall time: %.2f s" % (code, wall))
    if first is None:
        print("first statement on stdout: never")
    else:
        print("first statement on stdout: %.2f s = %.0f%% of the wall time" % (first, 100 * first / wall))
    print("stderr progress line changes while the model writes: %d" % changes)
    if renders:
        print("  last writing line: %r" % renders[-1].strip())
    print("--json (exit %s, %.2f s): exactly one JSON object on stdout: %s" % (code_json, wall_json, one_object))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    parser.add_argument("--read", type=float, default=1.0, help="seconds the model reads the prompt")
    parser.add_argument("--write", type=float, default=5.0, help="seconds the model writes")
    args = parser.parse_args()
    return measure(args.bin, args.read, args.write)


if __name__ == "__main__":
    sys.exit(main())
