#!/usr/bin/env python3
"""Load on `ground serve`: concurrent streaming clients against paced stand-ins.

    python3 scripts/load-serve.py [--bin target/debug/ground] [--clients 16] [--rounds 3]
        [--model-ms 1000] [--queue Q] [--concurrency C] [--client-timeout 120]
        [--no-answer-runs]

Stands up on 127.0.0.1 (standard library only): a SearXNG stand-in answering any search
with the capture fixtures/searxng/searxng/normal.body.json (its page URLs pointed at
us), the fixture pages (fixtures/pages/, plus an allow-all robots.txt), and an
OpenAI-compatible model stand-in that answers every chat completion with the
three-statement tardigrade answer whose quotes are in those pages, after --model-ms: as
one body, or streamed (SSE) in pieces spread over that time. The model stand-in runs
every request at once (an endless GPU): what is measured is ground's own queueing and
overhead, not a model's.

Then starts `ground serve --queue Q --concurrency C` (both only when given: else the
server's defaults) on a free port with an API key, waits for /health, and fires
--clients concurrent streaming `POST /v1/chat/completions` (model "ground",
stream_options.include_usage) for --rounds rounds, each question its own text (no cache
hits on searches). Every request is, within --client-timeout:
  answered  200, SSE chunks that parse, content, then `data: [DONE]`
  refused   429 with a Retry-After header
  error     anything else (other status, a cut or malformed stream)
  hung      no end within the client timeout
and the report gives those counts, requests/s (answered per wall second of the rounds),
p50/p99 latency (request to [DONE]) and time to first content, and the server's RSS
(/proc/PID/status VmRSS) before and after, with its peak (VmHWM). Then, unless
--no-answer-runs, the same questions as `ground answer --json` processes (one per
question, --clients at a time, the same rounds) for comparison.

Exit 0 when no request was lost (error or hung) and every process run exited 0; else 1.
"""
import argparse
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "fixtures")
CAPTURED_PAGES_URL = "http://127.0.0.1:8899"
KEY = "load-test-key"
MODEL = "stand-in"

# ground's strict answer format; every quote is in fixtures/pages/tardigrades-*.html
# (source 1 is tardigrades-space, source 2 tardigrades-cryptobiosis: the capture's order)
ANSWER = json.dumps({
    "answerable": True,
    "statements": [
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
        {"text": "They survive by entering a dormant tun state in which their metabolism almost stops.",
         "citations": [{"source": 2, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"},
                       {"source": 2, "quote": "their metabolism falls to less than 0.01 percent"}]},
    ],
    "unknowns": [],
})


# ---------------------------------------------------------------------------
# stand-ins


class Quiet(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # a burst of clients must not meet a full listen backlog

    def handle_error(self, request, client_address):
        pass  # a client that hung up early


def serve(handler):
    server = Quiet(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.model_calls = 0
        self.model_in_flight = 0
        self.model_peak = 0
        self.searches = 0
        self.pages = 0

    def add(self, name, n=1):
        with self.lock:
            setattr(self, name, getattr(self, name) + n)
            if name == "model_in_flight":
                self.model_peak = max(self.model_peak, self.model_in_flight)


def stand_ins(model_ms, counts):
    class Pages(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            path = urlsplit(self.path).path
            if path == "/robots.txt":
                return self.reply(200, b"User-agent: *\nAllow: /\n", "text/plain")
            name = os.path.basename(path)
            file = os.path.join(FIXTURES, "pages", name)
            if not name.endswith(".html") or not os.path.isfile(file):
                return self.reply(404, b"not found", "text/plain")
            counts.add("pages")
            with open(file, "rb") as f:
                self.reply(200, f.read(), "text/html; charset=utf-8")

        def reply(self, status, body, ctype):
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    _, pages_url = serve(Pages)
    with open(os.path.join(FIXTURES, "searxng", "searxng", "normal.body.json"), encoding="utf-8") as f:
        capture = f.read().replace(CAPTURED_PAGES_URL, pages_url).encode()

    class Searx(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            path = urlsplit(self.path).path
            if path == "/search":
                counts.add("searches")
                body, ctype, status = capture, "application/json", 200
            elif path in ("/", "/config", "/healthz"):
                body, ctype, status = b"{}", "application/json", 200
            else:
                body, ctype, status = b"not found", "text/plain", 404
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    _, searx_url = serve(Searx)

    class Model(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):  # /v1/models, should ground ask
            body = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "load"}]}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            request = json.loads(self.rfile.read(length) or b"{}")
            counts.add("model_calls")
            counts.add("model_in_flight")
            try:
                self.answer(request)
            finally:
                counts.add("model_in_flight", -1)

        def answer(self, request):
            usage = {"prompt_tokens": 734, "completion_tokens": 88, "total_tokens": 822}
            if not request.get("stream"):
                time.sleep(model_ms / 1000)
                body = json.dumps({
                    "id": "chatcmpl-load", "object": "chat.completion", "created": int(time.time()), "model": MODEL,
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}],
                    "usage": usage}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()

            def event(obj):
                data = b"data: " + (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()

            pieces = [ANSWER[i:i + 24] for i in range(0, len(ANSWER), 24)]
            gap = model_ms / 1000 / len(pieces)
            base = {"id": "chatcmpl-load", "object": "chat.completion.chunk", "created": int(time.time()), "model": MODEL}
            for piece in pieces:
                time.sleep(gap)
                event({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
            event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
            if (request.get("stream_options") or {}).get("include_usage"):
                event({**base, "choices": [], "usage": usage})
            event(b"[DONE]")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args):
            pass

    _, model_url = serve(Model)
    return searx_url, model_url


# ---------------------------------------------------------------------------
# the server under load


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def rss_kib(pid):
    """(VmRSS, VmHWM) in KiB from /proc/PID/status, or (None, None)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0])
    except OSError:
        pass
    return out.get("VmRSS"), out.get("VmHWM")


def wait_health(port, proc, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return True
        except OSError:
            pass
        time.sleep(0.1)
    return False


def stream_request(port, question, timeout):
    """One streaming chat completion. Returns a dict: outcome, status, seconds, first."""
    t0 = time.monotonic()
    res = {"outcome": "error", "status": None, "seconds": None, "first": None, "why": ""}
    body = json.dumps({"model": "ground", "stream": True, "stream_options": {"include_usage": True},
                       "messages": [{"role": "user", "content": question}]})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/v1/chat/completions", body=body,
                     headers={"content-type": "application/json", "authorization": f"Bearer {KEY}"})
        resp = conn.getresponse()
        res["status"] = resp.status
        if resp.status == 429:
            resp.read()
            retry = resp.getheader("retry-after")
            ok = retry is not None and retry.strip().isdigit()
            res.update(outcome="refused" if ok else "error", why="" if ok else f"429 without Retry-After: {retry!r}")
            return res
        if resp.status != 200:
            res["why"] = f"HTTP {resp.status}: {resp.read()[:200]!r}"
            return res
        content, done, usage, annotations = [], False, False, False
        while True:
            if time.monotonic() - t0 > timeout:
                res.update(outcome="hung", why="no [DONE] within the client timeout")
                return res
            line = resp.readline()
            if not line:
                break
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                done = True
                continue
            chunk = json.loads(data)
            if "error" in chunk:
                res["why"] = f"error chunk: {data[:200]!r}"
                return res
            if chunk.get("usage") and not chunk.get("choices"):
                usage = True
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    if res["first"] is None:
                        res["first"] = time.monotonic() - t0
                    content.append(delta["content"])
                if delta.get("annotations"):
                    annotations = True
        res["seconds"] = time.monotonic() - t0
        if done and "".join(content).strip() and usage:
            res["outcome"] = "answered"
            res["annotations"] = annotations
        else:
            res["why"] = f"stream ended: [DONE] {done}, content {len(''.join(content))} chars, usage chunk {usage}"
    except socket.timeout:
        res.update(outcome="hung", why="socket timeout")
    except (OSError, http.client.HTTPException, ValueError) as e:
        res["why"] = f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    return res


def pct(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, max(0, round(p / 100 * len(values) + 0.5) - 1))]


def fmt_s(v):
    return "-" if v is None else f"{v:.2f}s"


def question(k):
    return f"do tardigrades survive in space (question {k})"


def run_serve(args, searx_url, model_url, flags, home):
    port = free_port()
    argv = [args.bin, "serve", "--listen", f"127.0.0.1:{port}"] + flags
    if args.queue is not None:
        argv += ["--queue", str(args.queue)]
    if args.concurrency is not None:
        argv += ["--concurrency", str(args.concurrency)]
    env = clean_env(home, "serve")
    env["GROUND_SERVE_API_KEY"] = KEY
    log = open(os.path.join(home, "serve.err"), "wb")
    print("$ " + " ".join(argv), flush=True)
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        if not wait_health(port, proc, 30):
            print(f"load-serve: ground serve did not answer /health within 30 s (exit {proc.poll()})", file=sys.stderr)
            with open(os.path.join(home, "serve.err"), errors="replace") as f:
                sys.stderr.write(f.read()[-2000:])
            return None
        rss0, _ = rss_kib(proc.pid)
        results, walls = [], []
        for r in range(args.rounds):
            t = time.monotonic()
            with ThreadPoolExecutor(args.clients) as pool:
                futs = [pool.submit(stream_request, port, question(r * args.clients + i), args.client_timeout)
                        for i in range(args.clients)]
                round_results = [f.result(timeout=args.client_timeout + 30) for f in futs]
            walls.append(time.monotonic() - t)
            results += round_results
            tally = {o: sum(1 for x in round_results if x["outcome"] == o) for o in ("answered", "refused", "error", "hung")}
            print(f"  round {r + 1}: {walls[-1]:.2f}s wall, {tally}", flush=True)
        rss1, hwm = rss_kib(proc.pid)
        alive = proc.poll() is None
        return {"results": results, "wall": sum(walls), "rss0": rss0, "rss1": rss1, "hwm": hwm, "alive": alive}
    finally:
        stop(proc)
        log.close()


def stop(proc):
    """Ends proc: SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def clean_env(home, name):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUND_") and k != "OLLAMA_HOST"}
    env.update({"XDG_CONFIG_HOME": os.path.join(home, "config"), "XDG_CACHE_HOME": os.path.join(home, f"cache-{name}"),
                "XDG_STATE_HOME": os.path.join(home, f"state-{name}"), "NO_COLOR": "1",
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    return env


def run_answers(args, flags, home):
    env = clean_env(home, "answer")

    def one(k):
        t = time.monotonic()
        try:
            p = subprocess.run([args.bin, "answer", "--json"] + flags + [question(k)], env=env,
                               stdin=subprocess.DEVNULL, capture_output=True, timeout=args.client_timeout)
            code = p.returncode
            grounded = code == 0 and json.loads(p.stdout).get("grounded") is True
        except subprocess.TimeoutExpired:
            code, grounded = "timeout", False
        except ValueError:
            grounded = False
        return {"code": code, "grounded": grounded, "seconds": time.monotonic() - t}

    results, walls = [], []
    for r in range(args.rounds):
        t = time.monotonic()
        with ThreadPoolExecutor(args.clients) as pool:
            round_results = list(pool.map(one, [r * args.clients + i for i in range(args.clients)]))
        walls.append(time.monotonic() - t)
        results += round_results
        print(f"  round {r + 1}: {walls[-1]:.2f}s wall, exits {sorted(set(str(x['code']) for x in round_results))}",
              flush=True)
    return {"results": results, "wall": sum(walls)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--clients", type=int, default=16, help="concurrent streaming clients per round (16-32)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--model-ms", type=int, default=1000, help="the stand-in model's time per answer")
    ap.add_argument("--queue", type=int, help="ground serve --queue (default: the server's)")
    ap.add_argument("--concurrency", type=int, help="ground serve --concurrency (default: the server's)")
    ap.add_argument("--client-timeout", type=float, default=120.0, help="seconds a request may take in all")
    ap.add_argument("--no-answer-runs", action="store_true", help="skip the `ground answer` comparison")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (the server's stderr)")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"load-serve: no executable at {args.bin} (give --bin)")

    counts = Counts()
    searx_url, model_url = stand_ins(args.model_ms, counts)
    home = tempfile.mkdtemp(prefix="ground-load-")
    flags = ["--allow-private-addresses", "--search", "searxng", "--searxng-url", searx_url,
             "--llm", "openai", "--llm-url", model_url, "--model", MODEL]
    print(f"stand-ins: search {searx_url}, model {model_url} ({args.model_ms} ms per answer); work dir {home}")
    print(f"== ground serve: {args.clients} streaming clients x {args.rounds} rounds", flush=True)
    served = run_serve(args, searx_url, model_url, flags, home)
    lost = True
    if served is not None:
        res = served["results"]
        by = {o: [x for x in res if x["outcome"] == o] for o in ("answered", "refused", "error", "hung")}
        lat = [x["seconds"] for x in by["answered"]]
        first = [x["first"] for x in by["answered"] if x["first"] is not None]
        statuses = sorted({str(x["status"]) for x in res})
        print(f"requests: {len(res)}; answered {len(by['answered'])}, refused (429 + Retry-After) "
              f"{len(by['refused'])}, error {len(by['error'])}, hung {len(by['hung'])}; statuses {statuses}")
        for x in (by["error"] + by["hung"])[:5]:
            print(f"  {x['outcome']}: {x['why']}")
        no_ann = sum(1 for x in by["answered"] if not x.get("annotations"))
        if no_ann:
            print(f"  note: {no_ann} answered streams carried no delta.annotations")
        print(f"answered/s: {len(by['answered']) / served['wall']:.2f} over {served['wall']:.2f}s of rounds; "
              f"latency p50 {fmt_s(pct(lat, 50))} p99 {fmt_s(pct(lat, 99))}; "
              f"first content p50 {fmt_s(pct(first, 50))} p99 {fmt_s(pct(first, 99))}")
        print(f"server RSS: {served['rss0']} KiB before, {served['rss1']} KiB after (peak {served['hwm']} KiB); "
              f"still running after the rounds: {served['alive']}")
        print(f"stand-ins saw: {counts.model_calls} model calls (at most {counts.model_peak} at once), "
              f"{counts.searches} searches, {counts.pages} page fetches")
        lost = bool(by["error"] or by["hung"]) or not served["alive"]
    ok_answers = True
    if not args.no_answer_runs:
        print(f"== ground answer processes: {args.clients} at a time x {args.rounds} rounds", flush=True)
        ran = run_answers(args, flags, home)
        res = ran["results"]
        good = [x for x in res if x["code"] == 0]
        lat = [x["seconds"] for x in good]
        print(f"runs: {len(res)}; exit 0 {len(good)} (grounded {sum(x['grounded'] for x in res)}), "
              f"other {len(res) - len(good)} {sorted({str(x['code']) for x in res if x['code'] != 0})}")
        print(f"answered/s: {len(good) / ran['wall']:.2f} over {ran['wall']:.2f}s of rounds; "
              f"latency p50 {fmt_s(pct(lat, 50))} p99 {fmt_s(pct(lat, 99))}")
        ok_answers = len(good) == len(res)
    if args.keep or lost:
        print(f"work dir kept: {home}")
    else:
        shutil.rmtree(home, ignore_errors=True)
    return 0 if served is not None and not lost and ok_answers else 1


if __name__ == "__main__":
    sys.exit(main())
