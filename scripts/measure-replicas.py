#!/usr/bin/env python3
"""Two `ground serve` replicas sharing state in Redis behind HAProxy, against one alone.

    python3 scripts/measure-replicas.py [--bin target/debug/ground] [--clients 16]
        [--rounds 2] [--model-ms 1000] [--limit 30] [--window-ms 5000]

Needs Debian's `redis-server` and `haproxy` (apt-get install redis-server haproxy).
Reuses scripts/load-serve.py's stand-ins (a SearXNG answering every search with a real
capture, the fixture pages, an OpenAI-compatible model answering after --model-ms) and
its streaming client. Then, with the same --clients concurrent streaming clients for
--rounds rounds (each question its own text, so no cache hits):

  one      one `ground serve`, its own state (no Redis)
  two      two `ground serve` with --redis-url on one redis-server, behind HAProxy
           (leastconn), the clients talking to HAProxy

  alone    two `ground serve` behind HAProxy, each with its own state (no Redis)

All run with `--max-per-minute LIMIT` and the window shortened to --window-ms (the
variable GROUND_TEST_RATE_WINDOW_MS, so a minute's pacing takes seconds): for `two` the
limit is the deployment's, one window in Redis; `alone` may send twice as many. For
each: answered/s (answered per wall second of the rounds), p50/p99 latency (request to
[DONE]), requests lost (error or hung), the searches that reached the stand-in SearXNG
and the most of them in any window (checked on windows --jitter-ms shorter: the
limiter counts a search when it takes its slot, the stand-in a little later), page
fetches.

With --again, answers may be reused (`--reuse-secs 600` instead of 0) and, after the
rounds of each two-replica deployment, the first round's questions are asked again
through HAProxy (so about half land on the other replica than the one that answered
them): the model calls, searches and page fetches of that round say how much of an
answer one replica made the other reuses (sharing Redis: none should reach the model).

Exit 0 when no request was lost and no window saw more searches than the deployment's
bound; else 1.
"""
import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("load_serve", os.path.join(ROOT, "scripts", "load-serve.py"))
load = importlib.util.module_from_spec(spec)
spec.loader.exec_module(load)


class Timed(load.Counts):
    """The stand-ins' counts, with the time of every search."""

    def __init__(self):
        super().__init__()
        self.search_times = []

    def add(self, name, n=1):
        super().add(name, n)
        if name == "searches":
            with self.lock:
                self.search_times.append(time.monotonic())


def most_in_window(times, window_s):
    """The most searches in any window of window_s seconds (ending at a search)."""
    times = sorted(times)
    most, start = 0, 0
    for end, t in enumerate(times):
        while t - times[start] >= window_s:
            start += 1
        most = max(most, end - start + 1)
    return most


def start(argv, env, log_path):
    log = open(log_path, "wb")
    return subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)


def wait_port(port, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            import socket
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def serve_replica(args, flags, home, name, extra):
    port = load.free_port()
    env = load.clean_env(home, name)
    env["GROUND_SERVE_API_KEY"] = load.KEY
    env["GROUND_TEST_RATE_WINDOW_MS"] = str(args.window_ms)
    argv = [args.bin, "serve", "--listen", f"127.0.0.1:{port}", "--max-per-minute", str(args.limit),
            "--queue", str(args.queue)] + flags + extra
    print("$ " + " ".join(argv), flush=True)
    proc = start(argv, env, os.path.join(home, f"{name}.err"))
    if not load.wait_health(port, proc, 30):
        sys.exit(f"measure-replicas: replica {name} did not answer /health (see {home}/{name}.err)")
    return proc, port


def rounds(args, port, offset):
    results, wall = [], 0.0
    for r in range(args.rounds):
        t = time.monotonic()
        with ThreadPoolExecutor(args.clients) as pool:
            futs = [pool.submit(load.stream_request, port, load.question(offset + r * args.clients + i),
                                args.client_timeout) for i in range(args.clients)]
            got = [f.result(timeout=args.client_timeout + 30) for f in futs]
        wall += time.monotonic() - t
        results += got
        tally = {o: sum(1 for x in got if x["outcome"] == o) for o in ("answered", "refused", "error", "hung")}
        print(f"  round {r + 1}: {time.monotonic() - t:.2f}s wall, {tally}", flush=True)
    return results, wall


def again(args, port, offset, counts):
    """Asks round 1's questions again (each its own client, at once); prints what reached
    the stand-ins."""
    before = (counts.model_calls, counts.searches, counts.pages)
    with ThreadPoolExecutor(args.clients) as pool:
        futs = [pool.submit(load.stream_request, port, load.question(offset + i), args.client_timeout)
                for i in range(args.clients)]
        got = [f.result(timeout=args.client_timeout + 30) for f in futs]
    answered = sum(1 for x in got if x["outcome"] == "answered")
    print(f"  asked again: {len(got)} questions of round 1, answered {answered}; model calls "
          f"{counts.model_calls - before[0]}, searches {counts.searches - before[1]}, page fetches "
          f"{counts.pages - before[2]}", flush=True)
    return answered == len(got)


def balance(home, tag, port_a, port_b):
    """HAProxy (leastconn) in front of the two replicas: its port and process."""
    front = load.free_port()
    cfg = os.path.join(home, f"haproxy-{tag}.cfg")
    with open(cfg, "w") as f:
        f.write(f"""defaults
    mode http
    timeout connect 5s
    timeout client 10m
    timeout server 10m
frontend ground
    bind 127.0.0.1:{front}
    default_backend replicas
backend replicas
    balance leastconn
    option httpchk GET /health
    server a 127.0.0.1:{port_a} check
    server b 127.0.0.1:{port_b} check
""")
    print(f"$ haproxy -f {cfg}  (127.0.0.1:{front} -> {port_a}, {port_b})", flush=True)
    haproxy = start(["haproxy", "-f", cfg], os.environ.copy(), os.path.join(home, f"haproxy-{tag}.log"))
    if not wait_port(front, 10):
        sys.exit("measure-replicas: haproxy did not start")
    time.sleep(0.5)
    return front, haproxy


def report(name, results, wall, counts, before, args, allowed):
    by = {o: [x for x in results if x["outcome"] == o] for o in ("answered", "refused", "error", "hung")}
    lat = [x["seconds"] for x in by["answered"]]
    times = counts.search_times[before["times"]:]
    searches = counts.searches - before["searches"]
    most = most_in_window(times, args.window_ms / 1000)
    # The limiter counts a search when it takes its slot; the stand-in sees it a little
    # later (up to --jitter-ms on a busy machine), so the bound is checked on windows
    # that much shorter.
    inner = most_in_window(times, (args.window_ms - args.jitter_ms) / 1000)
    lost = len(by["error"]) + len(by["hung"])
    print(f"{name}: {len(results)} requests, answered {len(by['answered'])}, refused {len(by['refused'])}, "
          f"lost {lost}; answered/s {len(by['answered']) / wall:.2f} over {wall:.2f}s; "
          f"latency p50 {load.fmt_s(load.pct(lat, 50))} p99 {load.fmt_s(load.pct(lat, 99))}; "
          f"searches at SearXNG {searches} (most in one {args.window_ms} ms window: {most}, in one "
          f"{args.window_ms - args.jitter_ms} ms window: {inner}; limit {args.limit} per window, the deployment's "
          f"bound {allowed}); "
          f"page fetches {counts.pages - before['pages']}", flush=True)
    for x in (by["error"] + by["hung"])[:5]:
        print(f"  {x['outcome']}: {x['why']}")
    return lost == 0 and inner <= allowed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--model-ms", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=8, help="searches per window for the deployment")
    ap.add_argument("--window-ms", type=int, default=5000, help="the rate limit's window (a minute, shortened)")
    ap.add_argument("--jitter-ms", type=int, default=1000,
                    help="slack between a slot taken and the search reaching the stand-in")
    ap.add_argument("--queue", type=int, default=16, help="ground serve --queue of each replica")
    ap.add_argument("--client-timeout", type=float, default=300.0)
    ap.add_argument("--again", action="store_true",
                    help="reuse answers and ask round 1's questions again on each two-replica deployment")
    args = ap.parse_args()
    for tool in ("redis-server", "haproxy"):
        if shutil.which(tool) is None:
            sys.exit(f"measure-replicas: {tool} is not installed (Debian: apt-get install redis-server haproxy)")
    counts = Timed()
    searx_url, model_url = load.stand_ins(args.model_ms, counts)
    home = tempfile.mkdtemp(prefix="ground-replicas-")
    flags = ["--allow-private-addresses", "--search", "searxng", "--searxng-url", searx_url,
             "--llm", "openai", "--llm-url", model_url, "--model", load.MODEL, "--reuse-secs", "600" if args.again else "0"]
    procs = []
    ok = True
    snap = lambda: {"searches": counts.searches, "pages": counts.pages, "times": len(counts.search_times)}
    try:
        print(f"== one replica, its own state: {args.clients} clients x {args.rounds} rounds", flush=True)
        one, port = serve_replica(args, flags, home, "one", [])
        before = snap()
        results, wall = rounds(args, port, 0)
        ok &= report("one replica", results, wall, counts, before, args, args.limit)
        load.stop(one)

        redis_port = load.free_port()
        redis = start(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                       "--appendonly", "no", "--dir", home, "--maxmemory", "256mb",
                       "--maxmemory-policy", "allkeys-lru"], os.environ.copy(), os.path.join(home, "redis.log"))
        procs.append(redis)
        if not wait_port(redis_port, 10):
            sys.exit("measure-replicas: redis-server did not start")
        redis_url = f"redis://127.0.0.1:{redis_port}/0"
        for shared, offset in ((False, 100_000), (True, 200_000)):
            extra = ["--redis-url", redis_url] if shared else []
            tag = "shared" if shared else "alone"
            a, port_a = serve_replica(args, flags, home, f"a-{tag}", extra)
            b, port_b = serve_replica(args, flags, home, f"b-{tag}", extra)
            front, haproxy = balance(home, tag, port_a, port_b)
            what = "sharing Redis" if shared else "each with its own state (no Redis)"
            print(f"== two replicas {what} behind HAProxy: {args.clients} clients x {args.rounds} rounds",
                  flush=True)
            before = snap()
            results, wall = rounds(args, front, offset)
            # Alone, each replica keeps its own window: the deployment may send twice the limit.
            good = report(f"two replicas {what}", results, wall, counts, before, args,
                          args.limit if shared else 2 * args.limit)
            ok &= good
            if args.again:
                ok &= again(args, front, offset, counts)
            for proc in (haproxy, a, b):
                load.stop(proc)
            if shared:
                for name in ("a-shared", "b-shared"):
                    with open(os.path.join(home, f"{name}.err"), errors="replace") as f:
                        warnings = [line.strip() for line in f if line.startswith("warning: shared state")]
                    print(f"  replica {name}: {len(warnings)} shared-state warnings (one per Redis outage)")
                    for line in warnings[:3]:
                        print(f"    {line}")
    finally:
        for proc in reversed(procs):
            load.stop(proc)
    if ok:
        shutil.rmtree(home, ignore_errors=True)
    else:
        print(f"work dir kept: {home}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
