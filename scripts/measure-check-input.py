#!/usr/bin/env python3
"""Time `ground check --cited` on hostile answers: each is refused at its cap, or read
in time linear in its (capped) size. No page is fetched: the only URLs are on a closed
loopback port, refused as private addresses.

    python3 scripts/measure-check-input.py [--ground target/debug/ground] [--runs 3]

Prints one line per input: its size, the exit code, the median wall time, the peak
memory (max RSS) and the first line of stderr.
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time

KIB = 1024
URL = "http://127.0.0.1:9/page"


def inputs():
    yield "2 MiB of text", "x" * (2 * KIB * KIB)
    yield "250 KiB of '['", "A claim [1]. " + "[" * (250 * KIB) + f"\n[1] {URL}\n"
    yield "'[a](' x 60K", "A claim [1]. " + "[a](" * (60 * KIB) + f"\n[1] {URL}\n"
    yield "5,000 markers in a sentence", "A claim " + "[1]" * 5000 + f".\n[1] {URL}\n"
    yield "5,000 listed URLs", "A claim [1].\n" + "".join(f"[{n}] {URL}?{n}\n" for n in range(1, 5001))
    yield "3,000 cited sentences", "A claim [1]. " * 3000 + f"\n[1] {URL}\n"
    yield "100 long cited sentences (250 KiB)", (
        ("The tower " + "is very tall " * 190 + "[1][2][3][4][5][6][7][8][9][10][11][12][13][14][15][16]. ") * 100
        + "\n" + "".join(f"[{n}] {URL}?{n}\n" for n in range(1, 17))
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ground", default="target/debug/ground")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {"HOME": home, "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1",
               "GROUND_SEARCH": "searxng", "GROUND_SEARXNG_URL": "http://127.0.0.1:9"}
        for name, text in inputs():
            path = os.path.join(home, "answer.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            times, code, first = [], None, ""
            for _ in range(args.runs):
                started = time.monotonic()
                done = subprocess.run([args.ground, "check", "--cited", path], env=env,
                                      capture_output=True, text=True, timeout=120)
                times.append(time.monotonic() - started)
                code = done.returncode
                first = (done.stderr.splitlines() or [""])[0]
            rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            print(f"{name:38} {len(text.encode()):>9} B  exit {code}  "
                  f"{statistics.median(times) * 1000:7.0f} ms  max RSS so far {rss // KIB} MiB  {first[:90]}")


if __name__ == "__main__":
    main()
