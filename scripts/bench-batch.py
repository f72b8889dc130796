#!/usr/bin/env python3
"""`ground batch -j 4` against a shell loop of `ground answer`, on stand-ins.

    scripts/bench-batch.py [--questions N] [--pause SECS] [--jobs J] [--binary PATH]

Starts three stand-ins on loopback (a SearXNG serving the repository's capture
fixtures/searxng/searxng/normal.body.json, the fixture pages, and an Ollama whose
/api/chat answers the well-cited tardigrade answer after --pause seconds: a paced
model), writes N questions, then times

- the loop: `for q in ...; do ground answer --json "$q"; done` (one process per
  question, as scripts do without a batch mode), and
- the batch: `ground batch questions.jsonl -j J`,

each with a fresh cache folder, and prints both wall times and their ratio. Not a
test: the figures depend on the machine and the pause. Nothing leaves loopback.
"""
import argparse
import json
import os
import shlex
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CAPTURED_PAGES_URL = "http://127.0.0.1:8899"
ANSWER = json.dumps({
    "answerable": True,
    "statements": [
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
    ],
    "unknowns": [],
})


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, kind):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def stand_ins(pause):
    class Pages(Quiet):
        def do_GET(self):
            name = self.path.rsplit("/", 1)[-1]
            page = FIXTURES / "pages" / name
            if self.path.startswith("/pages/") and page.is_file():
                self.reply(200, page.read_bytes(), "text/html; charset=utf-8")
            else:
                self.reply(404, "", "text/plain")

    pages, pages_url = serve(Pages)
    capture = (FIXTURES / "searxng/searxng/normal.body.json").read_text().replace(
        CAPTURED_PAGES_URL, pages_url)
    config = (FIXTURES / "searxng/searxng/config.body.json").read_text()

    class Searx(Quiet):
        def do_GET(self):
            if self.path.startswith("/search"):
                self.reply(200, capture, "application/json")
            elif self.path.startswith("/config"):
                self.reply(200, config, "application/json")
            else:
                self.reply(404, "", "text/plain")

    class Ollama(Quiet):
        def do_POST(self):
            length = int(self.headers.get("content-length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            time.sleep(pause)
            if not self.path.startswith("/api/chat"):
                return self.reply(404, "", "text/plain")
            done = {"model": "llama3.2", "message": {"role": "assistant", "content": ""},
                    "done": True, "done_reason": "stop", "prompt_eval_count": 912,
                    "eval_count": 121}
            if request.get("stream"):
                lines = [json.dumps({"model": "llama3.2", "done": False,
                                     "message": {"role": "assistant", "content": ANSWER}}),
                         json.dumps(done)]
                self.reply(200, "\n".join(lines) + "\n", "application/x-ndjson")
            else:
                done["message"]["content"] = ANSWER
                self.reply(200, json.dumps(done), "application/json")

    _, searx_url = serve(Searx)
    _, ollama_url = serve(Ollama)
    return searx_url, ollama_url


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--pause", type=float, default=0.5, help="the model's pause per request, s")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--binary", default=str(ROOT / "target/debug/ground"))
    args = parser.parse_args()
    searx_url, ollama_url = stand_ins(args.pause)
    work = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    questions = [f"How do tardigrades survive in space? (take {n})" for n in range(1, args.questions + 1)]
    (work / "questions.jsonl").write_text(
        "".join(json.dumps({"id": n, "question": q}) + "\n" for n, q in enumerate(questions, 1)))

    def env(name):
        return {"HOME": str(work), "XDG_CACHE_HOME": str(work / f"cache-{name}"),
                "NO_COLOR": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "GROUND_SEARXNG_URL": searx_url, "GROUND_SEARCH": "searxng",
                "GROUND_LLM": "ollama", "GROUND_LLM_URL": ollama_url, "GROUND_MODEL": "llama3.2",
                "GROUND_ALLOW_PRIVATE_ADDRESSES": "true", "GROUND_MAX_PER_MINUTE": "0"}

    loop = "\n".join(f"{shlex.quote(args.binary)} answer --json -q {shlex.quote(q)} >> loop.jsonl || true"
                     for q in questions)
    started = time.monotonic()
    subprocess.run(["sh", "-c", loop], cwd=work, env=env("loop"), check=True)
    loop_secs = time.monotonic() - started

    started = time.monotonic()
    batch = subprocess.run([args.binary, "batch", "questions.jsonl", "-j", str(args.jobs), "-q",
                            "--out", "batch.jsonl"], cwd=work, env=env("batch"),
                           stderr=subprocess.PIPE, text=True)
    batch_secs = time.monotonic() - started
    records = (work / "batch.jsonl").read_text().splitlines()
    answered = sum(1 for r in records if "error" not in json.loads(r))
    loop_answered = sum(1 for r in (work / "loop.jsonl").read_text().splitlines()
                        if "error" not in json.loads(r))
    print(f"{args.questions} questions, model pause {args.pause} s per request")
    print(f"  shell loop of `ground answer`: {loop_secs:6.2f} s ({loop_answered} answered)")
    print(f"  ground batch -j {args.jobs}:            {batch_secs:6.2f} s ({answered} answered, exit {batch.returncode})")
    print(f"  ratio (loop / batch):         {loop_secs / batch_secs:6.2f}x")
    summary = [line for line in batch.stderr.splitlines() if line.startswith("ground batch:")]
    print("  " + (summary[-1] if summary else "(no summary)"), flush=True)


if __name__ == "__main__":
    main()
