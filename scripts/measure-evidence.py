#!/usr/bin/env python3
"""Evidence recall on real news questions (rtqa-dev) in the three modes the grounding
issue measures, with the questions won and lost against an earlier measurement.

  # end to end: `ground answer` per question (slow: ~5 min per mode and 400 questions)
  python3 scripts/measure-evidence.py DATA [--ground target/debug/ground] [--n 400]
          [--modes default,1400,pages10] [--save OUT.json] [--against EARLIER.json]
  # the context stage alone, replayed over a saved run (~30 s per mode and 1,000 questions)
  python3 scripts/measure-evidence.py DATA --replay RUN.json [--budget-scale 0.72] [--save OUT.json] [--against ...]

DATA is the folder `../shared/tools/rtqa-dev/prepare.py MIRROR/repo DATA --max 1000`
wrote. End to end, each mode is one run of `../shared/tools/rtqa-dev/recall.py` (a
SearXNG-shaped server over the stored results and a recording model: no network), the
modes side by side on ports of their own. A replay takes from a saved run which pages
each question read and its source budget, extracts those pages with ground's own code
and builds the context again with `examples/context_probe.rs` (pages, then the snippets
of results not read): what a change to the context stage alone does, without running
ground 3,000 times. Compare a replay with a replay (build the probe before the change,
replay with --save, build it after, replay with --against): against the run itself
1-2 % of questions differ, as the run may add a read page's snippet, which the replay
does not.

Per mode and per slice of questions (1-400, where choices are made, and 401-1000, held
apart), it prints:
  overall      the gold answer reached the prompt, of all questions;
  first-three  the same, of the fixed set whose answer is in the first three results as
               served (the issue's figure);
  on-time      the same, of the first-three questions whose answer page is an article
               dated (in its URL) within 14 days of the question's week: most other
               first-three questions match by accident (the answer "Chicago" in a
               teachers' strike story for a question about measles), which no ranking
               of passages should chase;
and with --against, the questions won and lost for each.
"""
import argparse
import datetime
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RTQA = ROOT.parent / "shared" / "tools" / "rtqa-dev"
PROBE = ROOT / "target" / "debug" / "examples" / "context_probe"
MODES = {
    "default": [],
    "1400": ["--tokens", "1400"],
    "pages10": ["--extra", "--pages 10"],
}
# Questions are served in an order shuffled per question with this seed (serve.py).
SEED = "7"
ON_TIME_DAYS = 14


def served(q):
    docs = list(q["docs"])
    random.Random(f"{SEED}:{q['id']}").shuffle(docs)
    return docs


def on_time_ids(data, questions, has):
    """First-three questions whose answer page is dated within ON_TIME_DAYS of the
    question (RealTime QA ids begin with the question's date)."""
    ids = set()
    for q in questions:
        asked = datetime.date(int(q["id"][:4]), int(q["id"][4:6]), int(q["id"][6:8]))
        for d in served(q)[:3]:
            m = re.search(r"/(20\d\d)/(\d\d)/(\d\d)/", d["url"])
            if not m:
                continue
            try:
                dated = datetime.date(*map(int, m.groups()))
            except ValueError:
                continue
            text = (data / d["text_or_html_path"]).read_text(encoding="utf8")
            if abs((asked - dated).days) <= ON_TIME_DAYS and has(text, q["answers"]):
                ids.add(q["id"])
                break
    return ids


def run_modes(data, ground, n, modes):
    """recall.py once per mode (a second apart: it names its run folder by the second):
    {mode: {id: row}} in question order."""
    procs = {}
    for k, mode in enumerate(modes):
        argv = [sys.executable, str(RTQA / "recall.py"), str(data), "--n", str(n), "--ground", ground,
                "--search-port", str(18801 + 2 * k), "--model-port", str(18802 + 2 * k)]
        procs[mode] = subprocess.Popen(argv + MODES[mode], stdout=subprocess.PIPE, text=True)
        time.sleep(1.2)
    out = {}
    for mode, proc in procs.items():
        text, _ = proc.communicate()
        if proc.returncode != 0:
            sys.exit(f"recall.py failed in mode {mode}:\n{text}")
        rows_path = re.search(r"rows: (\S+rows\.jsonl)", text).group(1)
        rows = [json.loads(line) for line in open(rows_path, encoding="utf8")]
        out[mode] = {r["id"]: {"recall": r["recall"], "top3": r["top3"], "fetched": r["fetched"],
                               "budget": r["budget"]} for r in rows}
    return out


# What serve.py and the pipeline send of results not read: a snippet of the page's first
# words (serve.py's `content`), at most this many results (pipeline MAX_SNIPPET_SOURCES).
SNIPPET_WORDS = 30
MAX_SNIPPETS = 7


class ReplayInput:
    """The `context_probe window` input of a saved run's question: the pages it read,
    extracted by ground's own code (once per question, whatever the modes), and the
    snippets of the results it did not read."""

    def __init__(self, data, questions, page_html, budget_scale=1.0):
        if not PROBE.exists():
            sys.exit(f"{PROBE} is missing: build it with `cargo build --example context_probe`")
        self.data, self.page_html, self.budget_scale = data, page_html, budget_scale
        self.by_id = {q["id"]: q for q in questions}
        self.extracted = {}

    def text(self, doc):
        return (self.data / doc["text_or_html_path"]).read_text(encoding="utf8")

    def pages(self, qid):
        """Every result page of the question, extracted: {served index: {title, text}}."""
        if qid not in self.extracted:
            with tempfile.TemporaryDirectory() as tmp:
                for k, d in enumerate(served(self.by_id[qid])):
                    Path(tmp, f"{k:02d}.html").write_text(self.page_html(d["title"], self.text(d)), encoding="utf8")
                got = subprocess.run([str(PROBE), "extract", tmp], capture_output=True, text=True, check=True)
            self.extracted[qid] = {int(p["id"]): p for p in map(json.loads, got.stdout.splitlines())}
        return self.extracted[qid]

    def line(self, qid, row):
        q, docs, pages = self.by_id[qid], served(self.by_id[qid]), self.pages(qid)
        url = lambda k: f"http://127.0.0.1:18777/doc/{qid}/{k}"  # noqa: E731
        unread = [k for k in range(len(docs)) if k not in row["fetched"]][:MAX_SNIPPETS]
        return json.dumps({
            "id": qid, "question": q["question"], "budget": int(row["budget"] * self.budget_scale),
            "sources": [{"url": url(k), "title": pages[k]["title"], "text": pages[k]["text"]}
                        for k in row["fetched"] if k in pages],
            "shorts": [{"url": url(k), "title": docs[k]["title"],
                        "text": " ".join(self.text(docs[k]).split()[:SNIPPET_WORDS])} for k in unread],
        })

    def contexts(self, rows, *flags):
        """The contexts `context_probe window` builds for `rows` ({id: saved row})."""
        lines = [self.line(qid, row) for qid, row in rows.items()]
        got = subprocess.run([str(PROBE), "window", "4096", "0", *flags], input="\n".join(lines) + "\n",
                             capture_output=True, text=True, check=True)
        return [json.loads(line) for line in got.stdout.splitlines()]


def replay_modes(data, saved, questions, has, page_html, budget_scale):
    """The context stage again over each saved mode's pages and budgets (scaled)."""
    replay = ReplayInput(data, questions, page_html, budget_scale)
    out = {}
    for mode, rows in saved.items():
        out[mode] = {c["id"]: dict(rows[c["id"]], recall=has(c["text"], replay.by_id[c["id"]]["answers"]))
                     for c in replay.contexts(rows)}
    return out


def figure(rows, ids):
    ids = [i for i in ids if i in rows]
    return sum(rows[i]["recall"] for i in ids), len(ids)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--ground", default="target/debug/ground")
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--modes", default="default,1400,pages10")
    ap.add_argument("--replay", help="a run saved with --save: replay its context stage")
    ap.add_argument("--budget-scale", type=float, default=1.0,
                    help="with --replay: each question's source budget times this (tokens are seconds)")
    ap.add_argument("--save")
    ap.add_argument("--against")
    a = ap.parse_args()
    if not (RTQA / "recall.py").exists():
        sys.exit(f"{RTQA} is missing: run from a checkout beside ../shared")
    sys.path.insert(0, str(RTQA))
    from recall import has  # the set's own answer match
    from serve import page_html  # the set's own page markup

    data = Path(a.data)
    questions = [json.loads(line) for line in open(data / "questions_top10.jsonl", encoding="utf8")]
    if a.replay:
        results = replay_modes(data, json.load(open(a.replay, encoding="utf8")), questions, has, page_html,
                               a.budget_scale)
    else:
        modes = [m for m in a.modes.split(",") if m]
        unknown = [m for m in modes if m not in MODES]
        if unknown:
            sys.exit(f"unknown mode {unknown[0]!r}: choose from {', '.join(MODES)}")
        results = run_modes(data, os.path.abspath(a.ground), a.n, modes)
    before = json.load(open(a.against, encoding="utf8")) if a.against else {}
    on_time = on_time_ids(data, questions, has)
    order = [q["id"] for q in questions]
    print(f"{'mode':8} {'questions':9} {'overall':>13} {'first-three':>13} {'on-time':>10}")
    for mode, rows in results.items():
        for name, ids in (("1-400", order[:400]), ("401-1000", order[400:1000])):
            ids = [i for i in ids if i in rows]
            if not ids:
                continue
            top3 = [i for i in ids if rows[i]["top3"]]
            cells = []
            for subset in (ids, top3, [i for i in top3 if i in on_time]):
                got, n = figure(rows, subset)
                cells.append(f"{got / max(1, n):.3f} ({n})")
            line = f"{mode:8} {name:9} {cells[0]:>13} {cells[1]:>13} {cells[2]:>10}"
            old = before.get(mode)
            if old:
                won = [i for i in ids if i in old and rows[i]["recall"] and not old[i]["recall"]]
                lost = [i for i in ids if i in old and old[i]["recall"] and not rows[i]["recall"]]
                part = lambda s, xs: len([i for i in xs if i in s])  # noqa: E731
                line += (f"  won/lost +{len(won)}/-{len(lost)}; first-three +{part(top3, won)}/-{part(top3, lost)};"
                         f" on-time +{part(on_time, won)}/-{part(on_time, lost)}")
            print(line)
    if a.save:
        Path(a.save).write_text(json.dumps(results))


if __name__ == "__main__":
    main()
