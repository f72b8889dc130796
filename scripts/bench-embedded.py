#!/usr/bin/env python3
"""The embedded engine against llama.cpp's own server on one ~2,000-token prompt.

    scripts/bench-embedded.py [--gguf FILE] [--threads N] [--max-tokens N] [--release]

Both run the same GGUF (default: SmolLM2-135M-Instruct Q4_1, the path .ci/embedded
prints, installing it first when needed), the same
system and user message through the model's chat template, the same answer JSON schema
as a grammar, greedy, with the same threads (default: the physical cores):

- ground: `cargo run --example bench_embedded` (the engine of `--llm embedded`), which
  reports its own load time, prefill and decode times, and peak RSS (VmHWM);
- llama.cpp: its server from PyPI `xllamacpp` (the one the e2e uses, started by
  e2e/llama_server.py), asked once through /v1/chat/completions; prefill and decode
  speed from the reply's `timings`, load time from start to a healthy /health, peak
  RSS from the server process's VmHWM.

Prints one table. Not a test: the figures depend on the machine (put them in the
README with the machine they came from). Needs the venv of .ci/e2e
(GROUND_E2E_VENV, default /tmp/ground-e2e-venv, with xllamacpp==2026.10.11549).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("GROUND_E2E_VENV", "/tmp/ground-e2e-venv"))

SYSTEM = (
    "You answer the question only from the numbered sources. Reply with JSON: "
    "answerable, statements (each with text and citations with a source number and a "
    "verbatim quote), unknowns."
)


def physical_cores() -> int:
    cores = set()
    phys = core = None
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("physical id"):
                phys = line.split(":")[1].strip()
            elif line.startswith("core id"):
                core = line.split(":")[1].strip()
                cores.add((phys, core))
    except OSError:
        pass
    return max(1, len(cores) or os.cpu_count() or 1)


def prompt_text() -> str:
    """About 2,000 tokens of sources: the README's opening sections as six sources."""
    readme = (ROOT / "README.md").read_text()
    words = readme.split()
    chunks = [" ".join(words[i * 220:(i + 1) * 220]) for i in range(6)]
    sources = "\n\n".join(f"[{i + 1}] Source {i + 1}\n{c}" for i, c in enumerate(chunks))
    return f"Sources:\n{sources}\n\nQuestion: What does ground do, and what does it need to run?"


def schema(sources: int) -> dict:
    # The same shape and bounds as ground's answer schema for a 512-token answer.
    return {
        "type": "object",
        "properties": {
            "answerable": {"type": "boolean"},
            "statements": {"type": "array", "maxItems": 3, "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 200},
                    "citations": {"type": "array", "maxItems": 1, "items": {
                        "type": "object",
                        "properties": {
                            "source": {"type": "integer", "minimum": 1, "maximum": sources},
                            "quote": {"type": "string", "maxLength": 160},
                        },
                        "required": ["source", "quote"]}},
                },
                "required": ["text", "citations"]}},
            "unknowns": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 120}},
        },
        "required": ["answerable", "statements", "unknowns"],
    }


def vmhwm_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run_ground(gguf: str, prompt_file: Path, threads: int, max_tokens: int, release: bool) -> dict:
    cmd = ["cargo", "run", "--quiet", "--locked", "--example", "bench_embedded"]
    if release:
        cmd.insert(2, "--release")
    cmd += ["--", gguf, str(prompt_file), str(threads), str(max_tokens)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run_server(gguf: str, user: str, threads: int, max_tokens: int) -> dict:
    python = VENV / "bin" / "python"
    if not python.exists():
        sys.exit(f"no venv at {VENV}: run .ci/e2e once, or set GROUND_E2E_VENV")
    with tempfile.TemporaryDirectory() as work:
        port_file = Path(work) / "port"
        started = time.monotonic()
        server = subprocess.Popen(
            [str(python), str(ROOT / "e2e" / "llama_server.py"), "--model", gguf,
             "--ctx-size", "4096", "--threads", str(threads), "--port-file", str(port_file)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            base = None
            while time.monotonic() - started < 120:
                if port_file.exists():
                    base = f"http://127.0.0.1:{port_file.read_text().strip()}"
                    try:
                        with urllib.request.urlopen(f"{base}/health", timeout=2) as r:
                            if r.status == 200:
                                break
                    except OSError:
                        pass
                time.sleep(0.05)
            else:
                sys.exit("llama.cpp's server did not become healthy within 120 s")
            load = time.monotonic() - started
            body = {
                "model": "smollm2",
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                "temperature": 0,
                "max_tokens": max_tokens,
                "response_format": {"type": "json_schema",
                                    "json_schema": {"name": "answer", "schema": schema(6)}},
            }
            req = urllib.request.Request(f"{base}/v1/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=600) as r:
                reply = json.load(r)
            t = reply.get("timings", {})
            return {
                "load_s": load,
                "prompt_tokens": t.get("prompt_n"),
                "prefill_tps": t.get("prompt_per_second"),
                "completion_tokens": t.get("predicted_n"),
                "decode_tps": t.get("predicted_per_second"),
                "peak_rss_mb": vmhwm_mb(server.pid),
            }
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf", help="the GGUF to run (default: SmolLM2, from .ci/embedded)")
    ap.add_argument("--threads", type=int, default=physical_cores())
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--release", action="store_true", help="build the example in release mode")
    args = ap.parse_args()
    if not args.gguf:
        embedded = Path(__file__).resolve().parent.parent / ".ci" / "embedded"
        found = subprocess.run([str(embedded)], stdout=subprocess.PIPE, text=True)
        lines = found.stdout.strip().splitlines()
        if found.returncode != 0 or not lines:
            sys.exit("no GGUF: .ci/embedded could not provide SmolLM2; pass --gguf FILE")
        args.gguf = lines[-1]
    if not Path(args.gguf).is_file():
        sys.exit(f"no GGUF at {args.gguf}: pass --gguf FILE")
    user = prompt_text()
    with tempfile.TemporaryDirectory() as work:
        prompt_file = Path(work) / "prompt.txt"
        prompt_file.write_text(f"{SYSTEM}\n---\n{user}")
        ours = run_ground(args.gguf, prompt_file, args.threads, args.max_tokens, args.release)
    theirs = run_server(args.gguf, user, args.threads, args.max_tokens)
    print(f"{Path(args.gguf).name}, {args.threads} threads, max {args.max_tokens} tokens, JSON grammar")
    print(f"{'':24}{'ground (embedded)':>20}{'llama.cpp server':>20}{'ratio':>8}")
    rows = [
        ("prompt tokens", "prompt_tokens", "{:.0f}", False),
        ("prefill tokens/s", "prefill_tps", "{:.1f}", True),
        ("written tokens", "completion_tokens", "{:.0f}", False),
        ("decode tokens/s", "decode_tps", "{:.1f}", True),
        ("load time s", "load_s", "{:.2f}", True),
        ("peak RSS MB", "peak_rss_mb", "{:.0f}", True),
    ]
    for label, key, fmt, ratio in rows:
        a, b = ours.get(key), theirs.get(key)
        cell = lambda v: fmt.format(v) if isinstance(v, (int, float)) else "?"
        r = f"{a / b:.2f}x" if ratio and a and b else ""
        print(f"{label:24}{cell(a):>20}{cell(b):>20}{r:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
