#!/usr/bin/env python3
"""Retrieval quality of `ground index search` on the docs development set.

    scripts/measure-docs-recall.py [--bin PATH] [-n 5] [--model-file PATH.gguf]
                                   [--llm-url URL --model NAME] [--show]

Lays out the set (scripts/docs-devset/assemble.py: 84 crate READMEs and docs from
cargo's registry sources, pinned by sha256), indexes it with `ground index add` into
a throwaway data folder (a temporary GROUND_INDEX_DIR, XDG_DATA_HOME and HOME, and an
empty config file, so nothing of the user's is read or written), then asks each question of
scripts/docs-devset/questions.json with `ground index search --json -n N`.

Prints, over the questions:
  * recall@N: the share of questions with an expected file among the first N results;
  * MRR: the mean of 1/rank of the first expected file (0 when none is in the N);
  * with --model-file (or GROUND_TEST_GGUF set), or --llm-url (an OpenAI-compatible
    server, e.g. llama.cpp's: `ground --llm openai --llm-url URL --model NAME`; a debug
    ground binary then answers at the server's speed): the share of
    `ground answer --docs=devset --no-web --json` answers that cite an expected file
    (a verified citation whose source is a file source with that path), and the share
    that are grounded. Without a model this prints "not measured".

--show prints each question's rank (or "-") and the top result, to see what missed.
The questions were written as a person would ask them, not copied from the answer's
sentence; each names the file(s) that answer it, as `<crate>/<path>`.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEVSET = ROOT / "scripts" / "docs-devset"
COLLECTION = "devset"

sys.path.insert(0, str(DEVSET))
import assemble  # noqa: E402


def isolated_env(tmp):
    """An environment in which ground reads and writes only under `tmp`."""
    env = dict(os.environ)
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    config = tmp / "config.toml"
    config.write_text("")
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(tmp / "data"),
        GROUND_INDEX_DIR=str(tmp / "data" / "ground" / "index"),
        XDG_CONFIG_HOME=str(tmp / "config"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        GROUND_CONFIG=str(config),
        NO_COLOR="1",
    )
    return env


def run_json(cmd, env, timeout=600):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0 and not p.stdout.strip():
        sys.exit(f"measure-docs-recall: {' '.join(cmd[:4])} ... failed ({p.returncode}):\n{p.stderr}")
    try:
        return json.loads(p.stdout), p
    except json.JSONDecodeError:
        sys.exit(f"measure-docs-recall: {' '.join(cmd[:4])} ... printed no JSON:\n{p.stdout[:2000]}\n{p.stderr[:2000]}")


def relative(path, root):
    """A result's path as `<crate>/<path>` under the set's root (results may give an
    absolute path, a file:// URI, or one relative to the indexed folder)."""
    p = str(path)
    if p.startswith("file://"):
        p = p[len("file://") :]
    r = str(root).rstrip("/") + "/"
    if p.startswith(r):
        return p[len(r) :]
    return p.lstrip("./")


def first_rank(results, expected, root):
    """1-based rank of the first result that is an expected file, or None."""
    for i, r in enumerate(results, 1):
        if relative(r.get("path", ""), root) in expected:
            return i
    return None


def cites_expected(answer, expected, root):
    """Whether a citation of the answer points at a file source with an expected path."""
    by_index = {s.get("index"): s for s in answer.get("sources", []) if s.get("index") is not None}
    for c in answer.get("citations", []):
        if not c.get("verified"):
            continue
        s = by_index.get(c.get("source"))
        if s and s.get("kind") == "file" and relative(s.get("path", ""), root) in expected:
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=str(ROOT / "target" / "debug" / "ground"), help="the ground binary (default target/debug/ground)")
    ap.add_argument("-n", type=int, default=5, help="results per question (default 5)")
    ap.add_argument("--model-file", default=os.environ.get("GROUND_TEST_GGUF"), help="a GGUF for the answer share (default $GROUND_TEST_GGUF; .ci/embedded prints one)")
    ap.add_argument("--llm-url", help="an OpenAI-compatible model server's base URL (instead of --model-file), e.g. http://127.0.0.1:8081/v1")
    ap.add_argument("--model", default="smollm2", help="the model name to ask --llm-url for (default smollm2)")
    ap.add_argument("--show", action="store_true", help="print each question's rank and top hit")
    args = ap.parse_args()

    questions = json.loads((DEVSET / "questions.json").read_text())
    with tempfile.TemporaryDirectory(prefix="ground-docs-recall-") as t:
        tmp = Path(t)
        root = tmp / "devset"
        files = assemble.assemble(root)
        env = isolated_env(tmp)

        t0 = time.monotonic()
        added, _ = run_json([args.bin, "index", "add", str(root), "--collection", COLLECTION, "--json"], env)
        index_s = time.monotonic() - t0
        skipped = added.get("skipped", [])
        print(f"set: {files} files; indexed in {index_s:.2f} s: added {added.get('added')}, skipped {len(skipped)}")
        for s in skipped:
            print(f"  skipped {s.get('path')}: {s.get('reason')}")

        hits, rr, ranks = 0, 0.0, []
        for q in questions:
            out, _ = run_json([args.bin, "index", "search", q["q"], "--collection", COLLECTION, "-n", str(args.n), "--json"], env)
            results = out.get("results", [])
            rank = first_rank(results, set(q["expect"]), root)
            ranks.append(rank)
            if rank is not None:
                hits += 1
                rr += 1.0 / rank
            if args.show:
                top = relative(results[0]["path"], root) if results else "(none)"
                print(f"  {rank or '-':>2}  {q['id']:<24} top: {top}")
        n = len(questions)
        print(f"questions: {n}")
        print(f"recall@{args.n}: {hits / n:.3f} ({hits}/{n})")
        print(f"MRR@{args.n}: {rr / n:.3f}")
        print(f"rank 1: {sum(1 for r in ranks if r == 1)}/{n}")

        if args.llm_url:
            model_args = ["--llm", "openai", "--llm-url", args.llm_url, "--model", args.model]
            model_name = f"{args.model} at {args.llm_url}"
        elif args.model_file:
            model_args = ["--model-file", args.model_file]
            model_name = Path(args.model_file).name
        else:
            print("answers citing an expected file: not measured (no model; give --model-file PATH.gguf, --llm-url URL or set GROUND_TEST_GGUF)")
            return
        help_text = subprocess.run([args.bin, "answer", "--help"], env=env, capture_output=True, text=True).stdout
        if "--docs" not in help_text or "--no-web" not in help_text:
            print("answers citing an expected file: not measured (this ground's `answer` has no --docs/--no-web)")
            return
        cited, grounded, failed = 0, 0, 0
        t0 = time.monotonic()
        for q in questions:
            cmd = [args.bin, "answer", q["q"], f"--docs={COLLECTION}", "--no-web", "--json", *model_args]
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
            try:
                ans = json.loads(p.stdout)
            except json.JSONDecodeError:
                failed += 1
                if args.show:
                    print(f"  !! {q['id']}: exit {p.returncode}: {p.stderr.strip()[-300:]}")
                continue
            ok = cites_expected(ans, set(q["expect"]), root)
            cited += ok
            grounded += bool(ans.get("grounded"))
            if args.show:
                print(f"  {'ok' if ok else '--'}  {q['id']:<24} grounded={ans.get('grounded')}")
        answer_s = time.monotonic() - t0
        print(f"answers citing an expected file: {cited / n:.3f} ({cited}/{n}; {failed} without JSON) with {model_name}")
        print(f"answers grounded: {grounded / n:.3f} ({grounded}/{n}); {answer_s / n:.1f} s an answer")


if __name__ == "__main__":
    main()
