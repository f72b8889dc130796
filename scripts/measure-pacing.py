#!/usr/bin/env python3
"""Issue 22, measured: a shell loop of `ground search` runs, the way scripts and CI use
ground, against loopback stand-ins, counting the runs that exit 8 (the local rate
limit) before and after pacing.

Usage: scripts/measure-pacing.py [--runs N] [--window-ms MS] BEFORE [AFTER]

BEFORE and AFTER are two `ground` binaries (say, one built from main before issue 22
and target/debug/ground after it). Each scenario gets a fresh HOME, so a fresh state
folder, and runs N searches one after another (default 25):

  1. SearXNG on loopback, default limit;
  2. SearXNG on loopback, --max-per-minute 10;
  3. Wikipedia (a public service: the default limit applies), only for a binary that
     has `--search wikipedia`.

Time is scaled for the binary that paces: GROUND_TEST_RATE_WINDOW_MS (default 6000)
makes its minute 6 s, so 25 searches at 10 a minute take about 12 s instead of two
minutes; a binary that does not pace ignores the variable (its minute stays a minute,
and it never waits). Printed per scenario: exit codes, searches that reached the
stand-in, the time the loop took, and the shortest time in which 11 searches reached
it (at 10 a minute, paced, that is about one scaled minute; a search's slot is taken
just before it is sent, so arrivals may come a few milliseconds closer)."""

import argparse, http.server, json, os, subprocess, sys, tempfile, threading, time

ARRIVALS = []
LOCK = threading.Lock()


class StandIn(http.server.BaseHTTPRequestHandler):
    """SearXNG's JSON API at /search and MediaWiki's Action API at /en/w/api.php."""

    def do_GET(self):
        with LOCK:
            ARRIVALS.append(time.monotonic())
        port = self.server.server_address[1]
        page = f"http://127.0.0.1:{port}/pages/otters.html"
        if self.path.startswith("/search"):
            body = {"query": "otters", "results": [{"url": page, "title": "Otters", "content": "Otters swim.", "engine": "x", "engines": ["x"]}], "unresponsive_engines": []}
        else:
            body = {"batchcomplete": True, "query": {"pages": [{"pageid": 1, "ns": 0, "title": "Otter", "index": 1, "fullurl": page, "canonicalurl": page, "extract": "Otters are semiaquatic mammals."}]}}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def shortest_span(times, count):
    """The shortest time in which `count` searches arrived (None: fewer arrived)."""
    spans = [times[i + count - 1] - times[i] for i in range(len(times) - count + 1)]
    return min(spans) if spans else None


def scenario(ground, base, args, runs, window_ms):
    home = tempfile.mkdtemp()
    env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1",
           "GROUND_SEARCH": "searxng", "GROUND_SEARXNG_URL": base,
           "GROUND_WIKIPEDIA_URL": base + "/{lang}",
           "GROUND_TEST_RATE_WINDOW_MS": str(window_ms),
           # No session bus: the OS keyring is never asked.
           "DBUS_SESSION_BUS_ADDRESS": f"unix:path={home}/no-bus"}
    with LOCK:
        ARRIVALS.clear()
    codes = []
    started = time.monotonic()
    for _ in range(runs):
        done = subprocess.run([ground, "search", "otters", *args], env=env, capture_output=True, timeout=600)
        codes.append(done.returncode)
    elapsed = time.monotonic() - started
    with LOCK:
        arrivals = sorted(ARRIVALS)
    return codes, len(arrivals), elapsed, shortest_span(arrivals, 11)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binaries", nargs="+", metavar="GROUND")
    ap.add_argument("--runs", type=int, default=25)
    ap.add_argument("--window-ms", type=int, default=6000)
    opts = ap.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    labels = ["before", "after"] if len(opts.binaries) == 2 else [f"#{i + 1}" for i in range(len(opts.binaries))]
    scenarios = [
        ("SearXNG on loopback, default limit", []),
        ("SearXNG on loopback, --max-per-minute 10", ["--max-per-minute", "10"]),
        ("Wikipedia (public), default limit", ["--search", "wikipedia"]),
    ]
    print(f"{opts.runs} runs of `ground search` one after another; a minute is {opts.window_ms} ms for a binary that paces\n")
    print(f"{'binary':7} {'scenario':42} {'exit 0':>6} {'exit 8':>6} {'other':>5} {'sent':>4} {'took':>7} {'11 sent within':>14}")
    for label, ground in zip(labels, opts.binaries):
        for name, args in scenarios:
            if args[:1] == ["--search"]:
                probe = subprocess.run([ground, "search", "--help"], capture_output=True, text=True)
                if "wikipedia" not in probe.stdout:
                    print(f"{label:7} {name:42} (this binary has no --search wikipedia)")
                    continue
            codes, sent, elapsed, span = scenario(ground, base, args, opts.runs, opts.window_ms)
            other = len(codes) - codes.count(0) - codes.count(8)
            within = "-" if span is None else f"{span:.2f}s"
            print(f"{label:7} {name:42} {codes.count(0):6} {codes.count(8):6} {other:5} {sent:4} {elapsed:6.1f}s {within:>14}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
