#!/usr/bin/env python3
"""`ground mcp` at start-up with no model to be had, and its memory over many calls
(issue R4, findings 1 and 13).

    python3 scripts/measure-mcp.py [--bin target/debug/ground] [--calls 200]

Stands up on 127.0.0.1 (standard library only): a SearXNG stand-in answering every
search with the capture fixtures/searxng/searxng/normal.body.json (its page URLs
pointed at us), the fixture pages each padded with about 60,000 characters of
article text (so a run keeps four long pages, as real news pages are), and an
OpenAI-compatible model stand-in answering ground's strict JSON.

1. Start-up: `ground mcp --llm auto` with no Ollama (a closed port) and the model hub
   (a) refusing (closed port), (b) silent (accepts, never answers) and (c) dripping
   one byte a second. For each: seconds until `initialize` is answered (or the process
   exits, with its code), then whether `web_search` answers, and what the first
   `grounded_answer` says.
2. Memory: `ground mcp --llm openai` (the model stand-in) answering --calls
   grounded_answer calls, each a different question (each run kept for reuse); the
   server's RSS (VmRSS) before the first call, every 50 calls and after, and its peak
   (VmHWM).
"""
import argparse
import json
import os
import socket
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
    ],
    "unknowns": [],
})
PADDING = " ".join(
    f"<p>Paragraph {i} of the long report: the committee reviewed the survey results of "
    f"district {i}, noting the rainfall, harvest figures and the road works planned for "
    f"the coming season in the valley.</p>" for i in range(400))


class Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def serve(handler):
    server = Quiet(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def reply(h, status, body, ctype):
    h.send_response(status)
    h.send_header("content-type", ctype)
    h.send_header("content-length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def stand_ins():
    class Pages(BaseHTTPRequestHandler):
        def do_GET(self):
            name = os.path.basename(urlsplit(self.path).path)
            file = os.path.join(FIXTURES, "pages", name)
            if self.path == "/robots.txt" or not os.path.isfile(file):
                return reply(self, 404, b"", "text/plain")
            with open(file, encoding="utf-8") as f:
                page = f.read().replace("</body>", PADDING + "</body>")
            reply(self, 200, page.encode(), "text/html; charset=utf-8")

        def log_message(self, *a):
            pass

    _, pages = serve(Pages)
    with open(os.path.join(FIXTURES, "searxng", "searxng", "normal.body.json"), encoding="utf-8") as f:
        capture = f.read().replace(CAPTURED_PAGES_URL, pages).encode()

    class Searx(BaseHTTPRequestHandler):
        def do_GET(self):
            path = urlsplit(self.path).path
            if path == "/search":
                reply(self, 200, capture, "application/json")
            elif path == "/config":
                reply(self, 200, b'{"engines": [], "categories": ["general"]}', "application/json")
            else:
                reply(self, 404, b"", "text/plain")

        def log_message(self, *a):
            pass

    _, searx = serve(Searx)

    class Model(BaseHTTPRequestHandler):
        def do_GET(self):
            reply(self, 200, json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}).encode(), "application/json")

        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}],
                    "usage": {"prompt_tokens": 700, "completion_tokens": 60, "total_tokens": 760}}
            if request.get("stream"):
                base = {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m"}
                events = [{**base, "choices": [{"index": 0, "delta": {"content": ANSWER}, "finish_reason": None}]},
                          {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}]
                data = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"
                return reply(self, 200, data, "text/event-stream")
            reply(self, 200, json.dumps(body).encode(), "application/json")

        def log_message(self, *a):
            pass

    _, model = serve(Model)
    return searx, model


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def silent_hub():
    """Accepts connections and never answers."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    held = []
    threading.Thread(target=lambda: [held.append(s.accept()) for _ in iter(int, 1)], daemon=True).start()
    return f"http://127.0.0.1:{s.getsockname()[1]}"


def dripping_hub():
    """Answers 200 with a 1 GB body, one byte a second."""
    class Drip(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-length", str(1 << 30))
            self.end_headers()
            try:
                while True:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(1)
            except OSError:
                pass

        def log_message(self, *a):
            pass

    _, url = serve(Drip)
    return url


class Mcp:
    def __init__(self, argv, env):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env)
        self.lines = []
        self.cv = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 1

    def _read(self):
        for line in self.proc.stdout:
            with self.cv:
                self.lines.append(json.loads(line))
                self.cv.notify_all()
        with self.cv:
            self.lines.append(None)
            self.cv.notify_all()

    def request(self, method, params, timeout):
        rid = self.next_id
        self.next_id += 1
        try:
            self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}) + "\n").encode())
            self.proc.stdin.flush()
        except OSError:
            return None
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for m in self.lines:
                    if m is None:
                        return None
                    if m.get("id") == rid:
                        return m
                left = end - time.monotonic()
                if left <= 0:
                    return "timeout"
                self.cv.wait(left)

    def notify(self, method):
        self.proc.stdin.write((json.dumps({"jsonrpc": "2.0", "method": method}) + "\n").encode())
        self.proc.stdin.flush()

    def rss_kib(self, field="VmRSS"):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        return 0

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()


def env_for(home, **extra):
    env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1",
           "XDG_CACHE_HOME": os.path.join(home, "cache"), "GROUND_MAX_PER_MINUTE": "0",
           "GROUND_ALLOW_PRIVATE_ADDRESSES": "true", "GROUND_SEARCH": "searxng",
           "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"}
    env.update(extra)
    return env


def start_up(args, searx):
    print("== 1. start-up with no model to be had (no Ollama; the hub as below)")
    for name, hub in [("refusing hub", closed_port()), ("silent hub", silent_hub()), ("dripping hub, 1 byte/s", dripping_hub())]:
        with tempfile.TemporaryDirectory() as home:
            env = env_for(home, GROUND_SEARXNG_URL=searx, GROUND_LLM="auto", GROUND_LLM_URL=closed_port(),
                          GROUND_MODEL_HUB=hub)
            started = time.monotonic()
            mcp = Mcp([args.bin, "mcp"], env)
            init = mcp.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                              "clientInfo": {"name": "measure", "version": "0"}}, 45)
            took = time.monotonic() - started
            if init is None:
                mcp.proc.wait(timeout=5)
                print(f"   {name}: no initialize reply; the process exited {mcp.proc.returncode} after {took:.1f} s")
                continue
            if init == "timeout":
                print(f"   {name}: initialize unanswered at {took:.1f} s")
                mcp.proc.kill()
                continue
            mcp.notify("notifications/initialized")
            t = time.monotonic()
            found = mcp.request("tools/call", {"name": "web_search", "arguments": {"query": "tardigrades"}}, 30)
            search_ok = isinstance(found, dict) and not found.get("result", {}).get("isError", True)
            search_s = time.monotonic() - t
            t = time.monotonic()
            answer = mcp.request("tools/call", {"name": "grounded_answer", "arguments": {"question": "Can tardigrades survive in space?"}}, 90)
            answer_s = time.monotonic() - t
            said = "no reply"
            if isinstance(answer, dict):
                text = (answer.get("result", {}).get("content") or [{}])[0].get("text", "")
                said = text.splitlines()[0][:110] if text else json.dumps(answer)[:110]
            print(f"   {name}: initialize answered in {took:.2f} s; web_search {'ok' if search_ok else 'FAILED'} in {search_s:.2f} s; "
                  f"grounded_answer in {answer_s:.1f} s: {said}")
            mcp.close()


def memory(args, searx, model):
    print(f"== 2. memory over {args.calls} grounded_answer calls (four ~60,000-character pages each)")
    with tempfile.TemporaryDirectory() as home:
        env = env_for(home, GROUND_SEARXNG_URL=searx, GROUND_LLM="openai", GROUND_LLM_URL=model + "/v1",
                      GROUND_MODEL="m")
        mcp = Mcp([args.bin, "mcp", "--session-searches", str(args.calls * 4)], env)
        mcp.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                   "clientInfo": {"name": "measure", "version": "0"}}, 30)
        mcp.notify("notifications/initialized")
        before = mcp.rss_kib()
        print(f"   before: RSS {before / 1024:.0f} MiB")
        failed = 0
        for i in range(1, args.calls + 1):
            r = mcp.request("tools/call", {"name": "grounded_answer", "arguments": {"question": f"Can tardigrades survive in space, case {i}?"}}, 60)
            if not isinstance(r, dict) or r.get("result", {}).get("isError"):
                failed += 1
            if i % 50 == 0:
                print(f"   after {i} calls: RSS {mcp.rss_kib() / 1024:.0f} MiB")
        peak = mcp.rss_kib("VmHWM")
        after = mcp.rss_kib()
        mcp.close()
        print(f"   RSS {before / 1024:.0f} -> {after / 1024:.0f} MiB (peak {peak / 1024:.0f} MiB); {failed} of {args.calls} calls failed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--skip-start-up", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    searx, model = stand_ins()
    if not args.skip_start_up:
        start_up(args, searx)
    if not args.skip_memory:
        memory(args, searx, model)


if __name__ == "__main__":
    sys.exit(main())
