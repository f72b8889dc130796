#!/usr/bin/env python3
"""Continuous batching, timed: N replies one at a time against the same N at once, in
ground's embedded engine and (with --server) in llama.cpp's own server with
`--parallel N`.

    scripts/bench-concurrent.py [--model-file FILE] [--threads N] [--max-tokens N]
                                [-n N] [--no-grammar] [--release] [--server]
                                [--spincount N]

- ground: `cargo run --example bench_concurrent` loads the GGUF once and writes N
  replies (each on a short source of its own: only the instructions are shared, so
  the figure is the batching's, not the prompt cache's) one at a time, then the same
  N from N threads at once (`parallel` N: one llama.cpp batch per step). It prints the
  two wall times, their ratio, how many replies came out the same, and where the
  others first differ.
- llama.cpp (--server): its server from PyPI `xllamacpp` (e2e/llama_server.py) with
  `--parallel N` and a window of the same size per slot, asked the very same messages
  (`bench_concurrent --prompts N`) and the same JSON schema through
  /v1/chat/completions, greedy: one at a time, then N at once from N threads.

Default model: SmolLM2-135M-Instruct Q4_1 (the path .ci/embedded prints). Not a test:
the figures depend on the machine and how busy it is; say both with them. Needs the
venv of .ci/e2e for --server (GROUND_E2E_VENV, default /tmp/ground-e2e-venv).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("GROUND_E2E_VENV", "/tmp/ground-e2e-venv"))
WINDOW = 2048  # each reply's window, as in examples/bench_concurrent.rs


def cargo_example(release: bool, args: list) -> dict:
    cmd = ["cargo", "run", "--quiet", "--locked", "--example", "bench_concurrent"]
    if release:
        cmd.insert(2, "--release")
    done = subprocess.run(cmd + ["--", *args], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bench_concurrent failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_server(gguf: str, threads: int, n: int, max_tokens: int, grammar: bool,
               release: bool) -> dict:
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"no venv at {VENV}: run .ci/e2e once, or set GROUND_E2E_VENV")
    asked = cargo_example(release, ["--prompts", str(n)])
    with tempfile.TemporaryDirectory() as work:
        port_file = Path(work) / "port"
        server = subprocess.Popen(
            [str(python), str(ROOT / "e2e" / "llama_server.py"), "--model", gguf,
             "--ctx-size", str(WINDOW * n), "--threads", str(threads),
             "--parallel", str(n), "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            started = time.monotonic()
            while True:
                if time.monotonic() - started > 120:
                    sys.exit("llama.cpp's server did not become healthy within 120 s")
                if port_file.exists():
                    base = f"http://127.0.0.1:{port_file.read_text().strip()}"
                    try:
                        with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                            if r.status == 200:
                                break
                    except OSError:
                        pass
                time.sleep(0.05)

            def ask(prompt: dict) -> dict:
                body = {
                    "model": "smollm2",
                    "messages": [{"role": "system", "content": prompt["system"]},
                                 {"role": "user", "content": prompt["user"]}],
                    "temperature": 0,
                    "max_tokens": max_tokens,
                    "ignore_eos": not grammar,
                }
                if grammar:
                    body["response_format"] = {
                        "type": "json_schema",
                        "json_schema": {"name": "answer", "schema": asked["schema"]}}
                req = urllib.request.Request(f"{base}/v1/chat/completions",
                                             data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=1800) as r:
                    return json.load(r)

            prompts = asked["prompts"]
            t = time.monotonic()
            alone = [ask(p) for p in prompts]
            one_at_a_time = time.monotonic() - t
            together = [None] * len(prompts)

            def worker(i):
                together[i] = ask(prompts[i])

            threads_ = [threading.Thread(target=worker, args=(i,)) for i in range(len(prompts))]
            t = time.monotonic()
            for th in threads_:
                th.start()
            for th in threads_:
                th.join()
            at_once = time.monotonic() - t
            text = lambda r: r["choices"][0]["message"]["content"]
            return {
                "one_at_a_time_s": one_at_a_time,
                "at_once_s": at_once,
                "ratio": at_once / max(one_at_a_time, 1e-9),
                "same_replies": sum(text(a) == text(b) for a, b in zip(alone, together)),
                "completion_tokens": [r["usage"]["completion_tokens"] for r in together],
            }
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model-file", "--gguf", dest="gguf",
                    help="the GGUF to run (default: SmolLM2, from .ci/embedded)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("-n", type=int, default=4, help="replies (1-8)")
    ap.add_argument("--no-grammar", dest="grammar", action="store_false")
    ap.add_argument("--release", action="store_true", help="time a release build")
    ap.add_argument("--server", action="store_true",
                    help="also time llama.cpp's server with --parallel N")
    ap.add_argument("--spincount", type=int,
                    help="GOMP_SPINCOUNT for both engines (ground's default: 1000; "
                         "libgomp's own: 300000)")
    args = ap.parse_args()
    if args.spincount is not None:
        os.environ["GOMP_SPINCOUNT"] = str(args.spincount)
    load_before = os.getloadavg()[0]
    gguf = args.gguf
    if not gguf:
        found = subprocess.run([str(ROOT / ".ci" / "embedded")], stdout=subprocess.PIPE, text=True)
        gguf = found.stdout.strip().splitlines()[-1]
    flags = [gguf, str(args.threads), str(args.max_tokens), str(args.n)]
    if not args.grammar:
        flags.append("--no-grammar")
    ground = cargo_example(args.release, flags)
    load = os.getloadavg()[0]
    print(f"{Path(gguf).name}: {args.n} replies of up to {args.max_tokens} tokens, "
          f"{args.threads} threads, {'release' if args.release else 'debug'} build, "
          f"load average {load_before:.1f} at the start, {load:.1f} after ground's run, "
          f"GOMP_SPINCOUNT {os.environ.get('GOMP_SPINCOUNT', 'ground 1000, llama.cpp 300000')}")
    print("| engine | one at a time | at once | ratio | same replies |")
    print("|---|---|---|---|---|")
    print(f"| ground (embedded) | {ground['one_at_a_time_s']:.1f} s | {ground['at_once_s']:.1f} s "
          f"| {ground['ratio']:.2f} | {ground['same_replies']} of {args.n} |")
    if args.server:
        server = run_server(gguf, args.threads, args.n, args.max_tokens, args.grammar, args.release)
        print(f"| llama.cpp server --parallel {args.n} | {server['one_at_a_time_s']:.1f} s "
              f"| {server['at_once_s']:.1f} s | {server['ratio']:.2f} "
              f"| {server['same_replies']} of {args.n} |")
        print(f"\nground at once / llama.cpp at once: {ground['at_once_s'] / server['at_once_s']:.2f}"
              f" (load average {os.getloadavg()[0]:.1f} after the server's run)")
    print("\nground's replies written together:", json.dumps(ground["together"]))
    print("where they first differ from the reply written alone:", ground["differ_at_char"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
