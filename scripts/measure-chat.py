#!/usr/bin/env python3
"""Measures follow-up questions (issue 25): a scripted 5-turn conversation on the
end-to-end fixture site, with the session's evidence reuse and without it.

    python3 scripts/measure-chat.py [--bin target/debug/ground] [--search-ms 300]
                                    [--page-ms 200] [--model-ms 500]

Stands up three servers on 127.0.0.1 (standard library only): a SearXNG stand-in
whose /search ranks the pages of e2e/site/ by the query's words (e2e/site.py's own
ranking), a page server for those pages, and an Ollama /api/chat stand-in. Each
stand-in waits its --*-ms before replying, so the figures weigh a search, a page and
a model call as a slow network and a local model would (set them to 0 for the bare
machine). The model stand-in answers the follow-up rewrite from the script below
(standalone question + must-have phrases), and the answer call by quoting the
sentence of the sources shown that shares most words with the question.

Two runs, each with the cache off (--no-cache) so that every page is really read:

  with reuse     `ground chat --session measure` with the five questions on stdin:
                 follow-ups rewritten, pages already read tried first;
  without reuse  five `ground answer` runs, each asked the standalone question the
                 rewrite gives (the best a session-less user can do).

Prints, for each run: searches made, pages fetched, model calls and wall time.
"""
import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# e2e/site.py: the fixture pages and their search (loaded by path: `site` is also a
# standard module's name).
_spec = importlib.util.spec_from_file_location("e2e_site", os.path.join(ROOT, "e2e", "site.py"))
e2e_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e_site)

# The conversation: (question as asked, standalone question, must-have phrases).
SCRIPT = [
    ("How many people live on Varnholm?", None, None),
    ("When was its lighthouse built?", "When was the Varnholm lighthouse at Kell Point built?",
     ["Varnholm lighthouse", "built in 1871"]),
    ("And who built it?", "Who built the Varnholm lighthouse at Kell Point?",
     ["built", "engineer Maren Osk"]),
    ("How does a Fresnel lens make a lighthouse beam?",
     "How does a Fresnel lens make a lighthouse beam?", ["Fresnel lens", "narrow powerful beam"]),
    ("Who presented it first, and when?", "Who first presented the Fresnel lens, and when?",
     ["Augustin Fresnel", "1822"]),
]

STOP = e2e_site.STOP_WORDS


def words(text):
    return set(w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP)


class Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


class Counts:
    def __init__(self):
        self.lock = threading.Lock()
        self.searches = self.pages = self.model = 0

    def add(self, name):
        with self.lock:
            setattr(self, name, getattr(self, name) + 1)

    def take(self):
        with self.lock:
            out = (self.searches, self.pages, self.model)
            self.searches = self.pages = self.model = 0
            return out


def serve(handler):
    server = Quiet(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return "http://127.0.0.1:%d" % server.server_address[1]


def reply(handler, status, ctype, body):
    handler.send_response(status)
    handler.send_header("content-type", ctype)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def answer_for(prompt):
    """An answer quoting the source sentence that shares most words with the question."""
    question = prompt.rsplit("Question:", 1)[-1]
    wanted = words(question)
    best = (0, 1, "The sources do not say.")
    for number, body in re.findall(r'<source id="(\d+)"[^>]*>\n(.*?)\n</source>', prompt, re.S):
        text = body.split("\n\n", 1)[-1]
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            score = len(wanted & words(sentence))
            if score > best[0] and len(sentence) > 20:
                best = (score, int(number), sentence.strip())
    score, number, sentence = best
    return {
        "answerable": score > 0,
        "statements": [{"text": sentence, "citations": [{"source": number, "quote": sentence}]}] if score else [],
        "unknowns": [] if score else ["the sources do not say"],
    }


def start_servers(counts, search_ms, page_ms, model_ms):
    pages = e2e_site.load_pages()
    site = {}

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self):
            name = urlsplit(self.path).path.lstrip("/")
            page = next((p for p in pages if p["name"] == name), None)
            if page is None:
                return reply(self, 404, "text/plain", b"not found\n")
            counts.add("pages")
            time.sleep(page_ms / 1000)
            reply(self, 200, "text/html; charset=utf-8", page["body"])

        def log_message(self, *args):
            pass

    site["pages"] = serve(Pages)

    class Searx(BaseHTTPRequestHandler):
        def do_GET(self):
            url = urlsplit(self.path)
            if url.path != "/search":
                return reply(self, 404, "text/plain", b"not found\n")
            counts.add("searches")
            time.sleep(search_ms / 1000)
            q = parse_qs(url.query).get("q", [""])[0]
            results = [
                dict(hit, engine="site", engines=["site"], score=1.0, category="general")
                for hit in e2e_site.search(pages, site["pages"], q)
            ]
            body = {"query": q, "results": results, "answers": [], "corrections": [],
                    "infoboxes": [], "suggestions": [], "unresponsive_engines": []}
            reply(self, 200, "application/json", json.dumps(body).encode())

        def log_message(self, *args):
            pass

    class Model(BaseHTTPRequestHandler):
        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["content-length"])))
            counts.add("model")
            time.sleep(model_ms / 1000)
            system = request["messages"][0]["content"]
            user = request["messages"][-1]["content"]
            if system.startswith("You rewrite the last question"):
                last = user.rsplit("Last question:", 1)[-1].strip()
                row = next((r for r in SCRIPT if r[0] == last), None)
                content = {"question": row[1] if row and row[1] else last,
                           "must_have_evidence": row[2] if row and row[2] else []}
            else:
                content = answer_for(user)
            message = {"model": "llama3.2", "created_at": "2026-11-24T21:00:00Z",
                       "message": {"role": "assistant", "content": json.dumps(content)},
                       "done": True, "done_reason": "stop", "prompt_eval_count": 900, "eval_count": 80}
            ctype = "application/x-ndjson" if request.get("stream") else "application/json"
            reply(self, 200, ctype, (json.dumps(message) + "\n").encode())

        def log_message(self, *args):
            pass

    return serve(Searx), serve(Model)


def environment(home, searx, model):
    return {
        "HOME": home, "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1",
        "GROUND_SEARXNG_URL": searx, "GROUND_LLM_URL": model, "GROUND_LLM": "ollama",
        "GROUND_MODEL": "llama3.2", "GROUND_SEARCH": "searxng", "GROUND_MAX_PER_MINUTE": "0",
        "GROUND_ALLOW_PRIVATE_ADDRESSES": "true",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "ground"))
    ap.add_argument("--search-ms", type=int, default=300)
    ap.add_argument("--page-ms", type=int, default=200)
    ap.add_argument("--model-ms", type=int, default=500)
    args = ap.parse_args()
    counts = Counts()
    searx, model = start_servers(counts, args.search_ms, args.page_ms, args.model_ms)
    common = ["--no-cache", "--pages", "2"]

    with tempfile.TemporaryDirectory() as home:
        env = environment(home, searx, model)
        questions = "".join(q + "\n" for q, _, _ in SCRIPT)
        t = time.monotonic()
        run = subprocess.run([args.bin, "chat", "--session", "measure", *common], input=questions,
                             env=env, capture_output=True, text=True, timeout=600)
        with_reuse = (*counts.take(), time.monotonic() - t)
        if run.returncode != 0:
            sys.exit(f"ground chat failed ({run.returncode}):\n{run.stderr}")
        rewrites = [l for l in run.stderr.splitlines() if "searching for:" in l]
        session = json.load(open(os.path.join(home, ".local/state/ground/sessions/measure.json")))

    with tempfile.TemporaryDirectory() as home:
        env = environment(home, searx, model)
        t = time.monotonic()
        for question, standalone, _ in SCRIPT:
            run = subprocess.run([args.bin, "answer", *common, standalone or question],
                                 env=env, capture_output=True, text=True, timeout=600)
            if run.returncode != 0:
                sys.exit(f"ground answer failed ({run.returncode}):\n{run.stderr}")
        without = (*counts.take(), time.monotonic() - t)

    print(f"5-turn conversation on e2e/site (stand-in delays: search {args.search_ms} ms, "
          f"page {args.page_ms} ms, model call {args.model_ms} ms; --pages 2, cache off)")
    print(f"{'':16}{'searches':>10}{'pages':>8}{'model calls':>13}{'wall s':>9}")
    for name, (s, p, m, wall) in [("with reuse", with_reuse), ("without reuse", without)]:
        print(f"{name:16}{s:>10}{p:>8}{m:>13}{wall:>9.2f}")
    searched = [t["searched"] for t in session["turns"]]
    print(f"turns that searched (with reuse): {searched}")
    print(f"sources in the session: {len(session['sources'])}; rewrites shown: {len(rewrites)}")


if __name__ == "__main__":
    main()
