#!/usr/bin/env python3
"""Issue 16, measured on a held-out loopback site (not the tests' fixtures):
an MCP web_fetch of a page robots.txt disallows is refused without the page being
requested, and a burst of searches is limited to the configured rate (since issue 22
over the limit a search waits for a slot; the burst here has a 2-second deadline, so
the searches past it exit 8).

Usage: scripts/measure-good-citizen.py [path/to/ground]   (default target/debug/ground)
Starts one loopback HTTP server that is both the site and a SearXNG stand-in, logs
every path it is asked for, and runs the real binary against it."""

import http.server, json, os, subprocess, sys, tempfile, threading
from concurrent.futures import ThreadPoolExecutor

GROUND = sys.argv[1] if len(sys.argv) > 1 else "target/debug/ground"
ASKED = []
ROBOTS = b"User-agent: *\nAllow: /\n\nUser-agent: ground\nDisallow: /members/\n"
PAGE = b"<html><head><title>Held-out</title></head><body><main><p>" + b"A held-out page about otters and rivers. " * 20 + b"</p></main></body></html>"


class Site(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ASKED.append(self.path.split("?")[0])
        if self.path == "/robots.txt":
            body, kind = ROBOTS, "text/plain"
        elif self.path.startswith("/search"):
            port = self.server.server_address[1]
            body = json.dumps({"results": [{"url": f"http://127.0.0.1:{port}/open/otters.html", "title": "Otters", "content": "otters", "engines": ["x"]}], "unresponsive_engines": []}).encode()
            kind = "application/json"
        else:
            body, kind = PAGE, "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    home = tempfile.mkdtemp()
    env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "GROUND_SEARXNG_URL": base,
           "GROUND_ALLOW_PRIVATE_ADDRESSES": "true", "NO_COLOR": "1"}

    # 1. MCP web_fetch of a disallowed page, then an allowed one.
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "m", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "web_fetch", "arguments": {"url": base + "/members/private.html"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "web_fetch", "arguments": {"url": base + "/open/otters.html"}}},
    ]
    out = subprocess.run([GROUND, "mcp"], input="".join(json.dumps(l) + "\n" for l in lines), env=env, capture_output=True, text=True, timeout=60).stdout
    replies = {r.get("id"): r for r in map(json.loads, out.splitlines())}
    refused = replies[2]["result"]
    print("web_fetch /members/private.html:", refused["structuredContent"]["status"], "-", refused["structuredContent"].get("error"))
    print("web_fetch /open/otters.html:", replies[3]["result"]["structuredContent"]["status"])
    print("paths the site was asked for:", ASKED)
    ok1 = refused["isError"] and "/members/private.html" not in ASKED

    # 2. A burst of 15 concurrent searches limited to 10 a minute. Since issue 22 a
    # SearXNG on loopback has no client limit by default (it has its own limiter) and
    # a search over the limit waits for a slot within its deadline: the limit is set
    # here, and a 2-second deadline makes the five over it exit 8 instead of waiting
    # a minute (scripts/measure-pacing.py measures the waiting).
    ASKED.clear()
    burst = [GROUND, "search", "otters", "--search", "searxng", "--max-per-minute", "10", "--timeout", "2"]
    with ThreadPoolExecutor(15) as pool:
        codes = list(pool.map(lambda _: subprocess.run(burst, env=env, capture_output=True).returncode, range(15)))
    sent = ASKED.count("/search")
    print(f"burst of 15: exit codes {sorted(codes)}; searches that reached the server: {sent}")
    ok2 = sent == 10 and codes.count(8) == 5
    print("PASS" if ok1 and ok2 else "FAIL")
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
