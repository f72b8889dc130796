#!/usr/bin/env python3
"""Does `ground serve`'s queue get its places back when waiting clients leave?

    python3 scripts/measure-serve-queue.py [--bin target/debug/ground] [--leavers 2]
        [--probes 5] [--model-ms 3000]

Stands up load-serve.py's stand-ins on 127.0.0.1 (a SearXNG capture, the fixture pages,
an OpenAI-compatible model answering after --model-ms), starts `ground serve
--concurrency 1 --queue 2` with an API key, and then:
  1. one client asks a question and holds the one place while the model thinks;
  2. --leavers clients ask and leave after 0.3 s, while they wait in the queue;
  3. --probes clients ask one after another, each waiting at most 0.5 s for a status:
     "refused" is a 429 within that time, "admitted" is no status yet (it waits in the
     queue: with one place and a 3 s model no answer comes sooner).
Before the fix every probe after the leavers is refused (their places were kept for
good); after it none is. Prints the counts, and the figure: probes refused of probes.
Exit 0 when no probe was refused.
"""
import argparse
import http.client
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("load_serve", os.path.join(ROOT, "scripts", "load-serve.py"))
load_serve = importlib.util.module_from_spec(spec)
spec.loader.exec_module(load_serve)


def post(port, question, timeout):
    """POSTs one question; its status, or None when none came within `timeout`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    body = json.dumps({"model": "ground", "messages": [{"role": "user", "content": question}]})
    try:
        conn.request("POST", "/v1/chat/completions", body=body, headers={
            "content-type": "application/json", "authorization": f"Bearer {load_serve.KEY}"})
        return conn.getresponse().status
    except (socket.timeout, TimeoutError):
        return None
    finally:
        conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "debug", "ground"))
    ap.add_argument("--leavers", type=int, default=2)
    ap.add_argument("--probes", type=int, default=5)
    ap.add_argument("--model-ms", type=int, default=3000)
    args = ap.parse_args()

    counts = load_serve.Counts()
    searx_url, model_url = load_serve.stand_ins(args.model_ms, counts)
    home = tempfile.mkdtemp(prefix="measure-serve-queue-")
    port = load_serve.free_port()
    argv = [args.bin, "serve", "--listen", f"127.0.0.1:{port}", "--concurrency", "1", "--queue", "2",
            "--search", "searxng", "--searxng-url", searx_url, "--llm", "openai", "--llm-url", model_url,
            "--model", load_serve.MODEL, "--allow-private-addresses"]
    env = load_serve.clean_env(home, "serve")
    env["GROUND_SERVE_API_KEY"] = load_serve.KEY
    env["GROUND_MAX_PER_MINUTE"] = "0"
    err = open(os.path.join(home, "serve.err"), "wb")
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    try:
        if not load_serve.wait_health(port, proc, 30):
            sys.exit(f"measure-serve-queue: ground serve did not start (see {home}/serve.err)")
        holder = threading.Thread(target=post, args=(port, "holder: do tardigrades survive in space", 60))
        holder.start()
        deadline = time.monotonic() + 20
        while counts.model_calls == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [post(port, f"leaver {i}: do tardigrades survive in space", 0.3) for i in range(args.leavers)]
        time.sleep(0.3)
        probes = [post(port, f"probe {i}: do tardigrades survive in space", 0.5) for i in range(args.probes)]
        refused = sum(1 for s in probes if s == 429)
        print(f"clients that left the queue: {args.leavers} (their statuses: {left})")
        print(f"probes after them: {probes} (None: admitted, waiting for the one place)")
        print(f"refused at once: {refused} of {args.probes}")
        holder.join(90)
        return 0 if refused == 0 else 1
    finally:
        load_serve.stop(proc)
        err.close()


if __name__ == "__main__":
    sys.exit(main())
