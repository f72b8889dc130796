#!/usr/bin/env python3
"""How long one slow page holds up `ground answer` (issue 15, hedged fetching).

    python3 scripts/measure-slow-page.py [--bin target/debug/ground] [--runs 3] [--pages 3,10]

Stands up, on 127.0.0.1 with the standard library only: a SearXNG stand-in returning
the fixture capture fixtures/searxng/searxng/normal.body.json (4 results) and, after
them, 10 more results that are copies of the same pages under /pages/copyN/, each on
a loopback address of its own (127.0.0.2, ...: different sites, as a search's results
are; so that the wide mode, `--pages 10`, has ten pages and spares to read), a page server for
fixtures/pages/ on which the third result (only the original, not its copies) sends
its headers and then one byte a second (a trickle that never finishes within the 15 s
page timeout), and an instant Ollama stand-in whose answer cites the first two pages.
Runs `ground answer --json --no-cache --pages N` against them for each N of --pages
and prints, per run, the wall time, each source's status and whether the answer is
grounded, then the median wall time per N and its ratio to the first N's. Run it
against two binaries for a before/after.
"""
import argparse
import json
import os
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
SLOW_PAGE = "tardigrades-overview.html"
ANSWER = json.dumps({
    "answerable": True,
    "statements": [
        {"text": "Dried tardigrades survived ten days of exposure to open space on the FOTON-M3 mission in 2007.",
         "citations": [{"source": 1, "quote": "dried tardigrades were exposed to open space for ten days on the FOTON-M3 mission"}]},
        {"text": "They survive by entering a dormant tun state.",
         "citations": [{"source": 2, "quote": "tardigrades enter a dormant tun state called anhydrobiosis"}]},
    ],
    "unknowns": [],
})


class Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # ground hung up on the trickling page: expected


def serve(handler, host="127.0.0.1"):
    server = Quiet((host, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return "http://%s:%d" % (host, server.server_address[1])


class Pages(BaseHTTPRequestHandler):
    def do_GET(self):
        url_path = urlsplit(self.path).path
        name = os.path.basename(url_path)
        file = os.path.join(FIXTURES, "pages", name)
        if not os.path.isfile(file):
            self.send_error(404)
            return
        body = open(file, "rb").read()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if url_path != "/pages/" + SLOW_PAGE:
            self.wfile.write(body)
            return
        for i in range(len(body)):  # one byte a second
            self.wfile.write(body[i:i + 1])
            self.wfile.flush()
            time.sleep(1)

    def log_message(self, *args):
        pass


class Model(BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", "0")))
        done = {"model": "stand-in", "message": {"role": "assistant", "content": ANSWER},
                "done": True, "done_reason": "stop", "prompt_eval_count": 900, "eval_count": 60}
        body = (json.dumps(done) + "\n").encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pages", default="3,10", help="page counts to run with, comma-separated")
    ap.add_argument("--copies", type=int, default=10, help="more results, copies of the fixture pages")
    args = ap.parse_args()
    pages_url = serve(Pages)
    capture = open(os.path.join(FIXTURES, "searxng", "searxng", "normal.body.json")).read()
    capture = json.loads(capture.replace(CAPTURED_PAGES_URL, pages_url))
    originals = list(capture["results"])
    for n in range(args.copies):
        # Each copy on a site of its own (127.0.0.2, .3, ...), as a search's results are.
        copy = dict(originals[n % len(originals)])
        site = serve(Pages, "127.0.0.%d" % (n + 2))
        copy["url"] = copy["url"].replace(pages_url, site).replace("/pages/", "/pages/copy%d/" % n)
        capture["results"].append(copy)
    capture = json.dumps(capture).encode()

    class Searx(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(capture)))
            self.end_headers()
            self.wfile.write(capture)

        def log_message(self, *args):
            pass

    searx_url = serve(Searx)
    model_url = serve(Model)
    medians = {}
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "NO_COLOR": "1",
               "GROUND_SEARXNG_URL": searx_url, "GROUND_LLM_URL": model_url,
               "GROUND_ALLOW_PRIVATE_ADDRESSES": "true", "GROUND_MODEL": "stand-in",
               "GROUND_LLM": "ollama"}
        for pages in [int(p) for p in args.pages.split(",")]:
            walls = []
            for run in range(args.runs):
                started = time.monotonic()
                out = subprocess.run([args.bin, "answer", "--json", "--no-cache", "--pages", str(pages),
                                      "Can tardigrades survive in space?"],
                                     env=env, capture_output=True, timeout=120)
                wall = time.monotonic() - started
                walls.append(wall)
                try:
                    report = json.loads(out.stdout)
                    read = [s for s in report.get("sources", []) if s.get("index") and s.get("kind", "page") == "page"]
                    statuses = ", ".join("%s %s %d ms%s" % (s["url"].split("/pages/", 1)[-1], s["status"], s["ms"],
                                                      " (read, unused)" if s["status"] == "SUCCESS" and s.get("used") is False else "")
                                         for s in report.get("sources", []) if s.get("kind") is None)
                    grounded = report.get("grounded")
                except ValueError:
                    read, statuses, grounded = [], "no JSON (exit %d)" % out.returncode, None
                fetch = report.get("timings_ms", {}).get("fetch") if grounded is not None else None
                print("--pages %d run %d: wall %.2f s (fetching %s ms), exit %d, grounded %s, %d read; %s"
                      % (pages, run + 1, wall, fetch, out.returncode, grounded, len(read), statuses))
            walls.sort()
            medians[pages] = walls[len(walls) // 2]
    first = next(iter(medians.values()))
    for pages, median in medians.items():
        print("slow page, --pages %d: median wall %.2f s over %d runs, %.2fx the --pages %d run (%s)"
              % (pages, median, args.runs, median / first, next(iter(medians)), args.bin))
    return 0


if __name__ == "__main__":
    sys.exit(main())
