#!/usr/bin/env python3
"""`ground index` against LangChain's DirectoryLoader + BM25Retriever, on one generated corpus.

    scripts/bench-docs-vs-langchain.py [--bin PATH] [--mb 50] [--runs 5] [--work DIR]
                                       [--venv DIR] [--query "..."]

1. Lays out a deterministic corpus (scripts/make-text-corpus.py, seed 7: Markdown
   and text files with a Zipf word distribution) under WORK/corpus, once.
2. Makes the peer's venv (default /tmp/ground-bench-lc-venv) from
   scripts/bench-docs-vs-langchain.requirements.txt when it is missing.
3. Times whole processes, in pairs (ground, peer, ground, peer, ...), so that a drift
   in the machine's speed moves both sides of a ratio alike:
   (a) indexing: `ground index add CORPUS` into an empty data folder (removed before
       every run) vs scripts/bench-docs-peer-langchain.py index (load, build
       BM25Retriever, pickle it to disk so a later process can query it);
   (b) a query process: `ground index search QUERY` vs the peer's query (a new
       Python process that loads the pickle and asks).
   Prints, per command, wall seconds (min / median / max), CPU seconds (user+system,
   median) and peak RSS (the largest of the runs, from wait4's rusage: the same
   figure /usr/bin/time -v prints as "Maximum resident set size"); then the median
   of the per-pair wall ratios ground/peer. The issue's target is <= 0.2 for both.

ground runs with GROUND_INDEX_DIR, XDG_DATA_HOME, HOME and XDG_CONFIG_HOME under WORK and an empty
config file, so nothing of the user's is read or written. Build ground with
`cargo build --release` first: a debug build is several times slower.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQS = ROOT / "scripts" / "bench-docs-vs-langchain.requirements.txt"
PEER = ROOT / "scripts" / "bench-docs-peer-langchain.py"


def run_once(cmd, env=None, before=None):
    """Runs cmd with output thrown away; returns (wall s, cpu s, peak RSS KiB, exit code)."""
    if before:
        before()
    with tempfile.TemporaryFile() as errf:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            errf.seek(0)
            err = errf.read().decode(errors="replace")
            sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({p.returncode}):\n{err[-3000:]}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, p.returncode


def paired(name, a, b, runs, warmup=1):
    """Runs a and b (each (cmd, env, before)) in turn; prints both and the ratio a/b."""
    for _ in range(warmup):
        run_once(*a)
        run_once(*b)
    ra, rb = [], []
    for _ in range(runs):
        ra.append(run_once(*a))
        rb.append(run_once(*b))
    print(f"\n{name} ({runs} pairs after {warmup} warm-up)")
    for label, rs in (("ground", ra), ("langchain", rb)):
        walls = sorted(r[0] for r in rs)
        print(
            f"  {label:<10} wall {walls[0]:.3f} / {statistics.median(walls):.3f} / {walls[-1]:.3f} s"
            f"  cpu {statistics.median(r[1] for r in rs):.3f} s  peak RSS {max(r[2] for r in rs) / 1024:.1f} MiB"
        )
    ratios = sorted(x[0] / y[0] for x, y in zip(ra, rb))
    print(f"  ratio ground/langchain (wall, per pair): median {statistics.median(ratios):.3f} (min {ratios[0]:.3f}, max {ratios[-1]:.3f})")
    return statistics.median(ratios)


def ensure_venv(venv):
    py = venv / "bin" / "python"
    if py.exists():
        return py
    print(f"bench: making the peer's venv in {venv}", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "-r", str(REQS)], check=True)
    return py


def ensure_corpus(work, mb):
    corpus = work / "corpus"
    stamp = work / f"corpus.{mb:g}mb.done"
    if not stamp.exists():
        shutil.rmtree(corpus, ignore_errors=True)
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make-text-corpus.py"), str(corpus), "--mb", str(mb)], check=True)
        stamp.write_text("")
    files = sum(len(f) for _, _, f in os.walk(corpus))
    size = sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(corpus) for x in fs)
    return corpus, files, size


def ground_env(work, data):
    env = dict(os.environ)
    (work / "home").mkdir(exist_ok=True)
    cfg = work / "config.toml"
    cfg.write_text("")
    env.update(HOME=str(work / "home"), XDG_DATA_HOME=str(data), GROUND_INDEX_DIR=str(data / "ground" / "index"), XDG_CONFIG_HOME=str(work / "config"), GROUND_CONFIG=str(cfg), NO_COLOR="1")
    return env


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "ground"), help="the ground binary (default target/release/ground)")
    ap.add_argument("--mb", type=float, default=50, help="corpus size in MB (default 50)")
    ap.add_argument("--runs", type=int, default=5, help="timed pairs per comparison (default 5)")
    ap.add_argument("--work", default="/tmp/ground-bench-docs", help="working folder: corpus, data, pickle (default /tmp/ground-bench-docs)")
    ap.add_argument("--venv", default="/tmp/ground-bench-lc-venv", help="the peer's venv (made when missing)")
    ap.add_argument("--query", default="furula nagami cemiku", help="the query of (b): three mid-frequency words of one file's topic")
    args = ap.parse_args()

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    py = ensure_venv(Path(args.venv))
    corpus, files, size = ensure_corpus(work, args.mb)
    print(f"corpus: {files} files, {size / 1e6:.1f} MB ({corpus})")
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; {os.cpu_count()} CPUs")

    # (a) indexing, from nothing each run.
    data_a = work / "data-index"
    env_a = ground_env(work, data_a)
    pkl_a = work / "peer-index.pkl"

    def fresh_ground():
        shutil.rmtree(data_a, ignore_errors=True)

    def fresh_peer():
        if pkl_a.exists():
            pkl_a.unlink()

    r_index = paired(
        "(a) indexing",
        ([args.bin, "index", "add", str(corpus)], env_a, fresh_ground),
        ([str(py), str(PEER), "index", str(corpus), str(pkl_a)], None, fresh_peer),
        args.runs,
    )
    index_bytes = sum(os.path.getsize(os.path.join(d, x)) for d, _, fs in os.walk(data_a) for x in fs)
    print(f"  on disk: ground's index {index_bytes / 1e6:.1f} MB, the peer's pickle {pkl_a.stat().st_size / 1e6:.1f} MB")

    # (b) a query process against the index (a) left.
    r_query = paired(
        f"(b) a query process: {args.query!r}",
        ([args.bin, "index", "search", args.query, "-n", "5"], env_a, None),
        ([str(py), str(PEER), "query", str(pkl_a), args.query, "-n", "5"], None, None),
        args.runs,
    )
    for label, cmd, env in (
        ("ground", [args.bin, "index", "search", args.query, "-n", "5", "--json"], env_a),
        ("langchain", [str(py), str(PEER), "query", str(pkl_a), args.query, "-n", "5"], None),
    ):
        out = subprocess.run(cmd, env=env, capture_output=True, text=True).stdout
        print(f"  {label} top results: {out.strip()[:400]}")
    load = os.getloadavg()
    print(f"\nload average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"summary: indexing ratio {r_index:.3f}, query-process ratio {r_query:.3f} (target <= 0.2 each)")


if __name__ == "__main__":
    main()
