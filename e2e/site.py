#!/usr/bin/env python3
"""The loopback web site of the end-to-end test: fixture pages plus a search endpoint.

    python3 e2e/site.py [--port N] --port-file FILE

Listens on 127.0.0.1 port N, or on a free port if N is 0 or taken, and writes the port
to FILE once listening. A fixed port keeps the page URLs, and so the model's prompt and
its (greedy, seeded) reply, the same from run to run. Serves
  GET /NAME.html             the fixture pages in e2e/site/ (text/html; charset=utf-8)
  GET /search?q=WORDS        JSON for searx's `json_engine`:
                             {"query": ..., "results": [{"url", "title", "content"}]}
                             pages matching any query word, best first (title words
                             count 3, body words 1; ties by file name)
  GET /health                "ok"
Anything else is 404. Standard library only: it runs on a fresh Debian with python3.
"""
import argparse
import html
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

SITE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")
STOP_WORDS = set(
    "a an and are as at be by did do does for from has have how in is it its of on or "
    "the to was were what when where which who why with".split()
)


def words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOP_WORDS]


def load_pages():
    pages = []
    for name in sorted(os.listdir(SITE_DIR)):
        if not name.endswith(".html"):
            continue
        with open(os.path.join(SITE_DIR, name), encoding="utf-8") as f:
            doc = f.read()
        title = html.unescape(re.search(r"<h1>(.*?)</h1>", doc, re.S).group(1))
        article = re.search(r"<article>(.*?)</article>", doc, re.S).group(1)
        paras = [
            html.unescape(re.sub(r"<[^>]+>", "", p))
            for p in re.findall(r"<p>(.*?)</p>", article, re.S)
        ]
        pages.append({"name": name, "title": title, "paras": paras, "body": doc.encode("utf-8")})
    return pages


def search(pages, base, query):
    terms = set(words(query))
    hits = []
    for page in pages:
        title_words = words(page["title"])
        body_words = words(" ".join(page["paras"]))
        score = sum(3 * title_words.count(t) + body_words.count(t) for t in terms)
        if score == 0:
            continue
        # snippet: the paragraph sharing most words with the query
        best = max(page["paras"], key=lambda p: len(terms & set(words(p))))
        hits.append((-score, page["name"], page["title"], best[:300]))
    hits.sort()
    return [{"url": f"{base}/{name}", "title": title, "content": snippet} for _, name, title, snippet in hits]


class Handler(BaseHTTPRequestHandler):
    server_version = "e2e-site/1"

    def do_GET(self):
        url = urlsplit(self.path)
        pages = self.server.pages
        if url.path == "/search":
            q = parse_qs(url.query).get("q", [""])[0]
            base = f"http://127.0.0.1:{self.server.server_address[1]}"
            body = json.dumps({"query": q, "results": search(pages, base, q)}).encode()
            return self.reply(200, "application/json", body)
        if url.path == "/health":
            return self.reply(200, "text/plain", b"ok\n")
        for page in pages:
            if url.path == "/" + page["name"]:
                return self.reply(200, "text/html; charset=utf-8", page["body"])
        self.reply(404, "text/plain", b"not found\n")

    def reply(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        sys.stderr.write("site: %s\n" % (fmt % args))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    except OSError as e:
        print(f"site: port {args.port} unavailable ({e}); using a free port", file=sys.stderr)
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.pages = load_pages()
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
