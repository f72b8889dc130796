#!/usr/bin/env python3
"""How often the cross-check (src/grounding/cross.rs) flags a contradiction where none
exists, on real news pages: rtqa-dev's questions, each with up to ten real pages found
for it (../shared/tools/rtqa-dev/README.md says how to fetch and prepare them).

    scripts/measure-false-conflicts.py DATA [--questions 300] [--per-page 6] [--show 8]
                                            [--release]

DATA is the folder `../shared/tools/rtqa-dev/prepare.py MIRROR/repo DATA` wrote.

Statements are taken from one page and checked against the other pages of the same
question, as `ground answer` cross-checks an answer's statements against every source
read: for each question, each page gives at most --per-page of its sentences of 8 to
40 words (evenly spread over the page, deterministic), each citing its own page with
its own words as the quote, so its page supports it and every other page is read for
support and conflict. The pages of one question are about one news story, written
independently: a sentence of one stating a fact is, nearly always, not contradicted by
the others. What the cross-check flags is therefore an upper bound on its false
conflicts (some flags may be real disagreements between pages: a death toll updated,
another count); --show prints examples to judge.

Printed: the share of statements flagged as contradicted (all statements, and those
holding a number or date, where most conflicts are read), per kind, the share
corroborated by another page, the time per question, and examples.

Target (issue 44): flagged <= 2 % of statements.

The probe is examples/cross_probe.rs, built with `cargo build --example cross_probe`
(--release to build it optimised; the figures do not depend on it).
"""
import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)]?\s+(?=[\"'\u201c\u2018(]?[A-Z0-9])")
HAS_ANCHOR = re.compile(r"\d|\b(January|February|March|April|June|July|August|September|"
                        r"October|November|December)\b")


def sentences(text):
    """The sentences of a page's text: its lines cut at sentence ends."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.extend(s.strip() for s in SENTENCE_END.split(line) if s.strip())
    return out


def statements_of(text, per_page):
    """At most per_page sentences of 8 to 40 words, evenly spread over the page."""
    fit = [s for s in sentences(text) if 8 <= len(s.split()) <= 40 and s[-1:] in ".!?"]
    if len(fit) <= per_page:
        return fit
    step = len(fit) / per_page
    return [fit[int(i * step)] for i in range(per_page)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("--questions", type=int, default=300)
    ap.add_argument("--per-page", type=int, default=6)
    ap.add_argument("--show", type=int, default=8)
    ap.add_argument("--release", action="store_true")
    a = ap.parse_args()

    data = Path(a.data)
    questions = [json.loads(l) for l in open(data / "questions_top10.jsonl", encoding="utf8")]
    questions = questions[: a.questions]
    profile = ["--release"] if a.release else []
    subprocess.run(["cargo", "build", "--quiet", "--example", "cross_probe", *profile],
                   cwd=ROOT, check=True)
    probe = ROOT / "target" / ("release" if a.release else "debug") / "examples" / "cross_probe"

    lines, given = [], {}
    for q in questions:
        sources, statements = [], []
        for d in q["docs"]:
            text = (data / d["text_or_html_path"]).read_text(encoding="utf8")
            sources.append({"title": d.get("title") or "", "text": text})
            for s in statements_of(text, a.per_page):
                key = f"{len(sources)}.{len(statements)}"
                statements.append({"key": key, "source": len(sources), "text": s})
                given[(q["id"], key)] = s
        if len(sources) >= 2 and statements:
            lines.append(json.dumps({"id": q["id"], "sources": sources, "statements": statements}))

    started = time.time()
    run = subprocess.run([str(probe)], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, check=True)
    wall = time.time() - started
    rows = [json.loads(l) for l in run.stdout.splitlines() if l.strip()]
    times = [r["ms"] for r in rows if "ms" in r]
    rows = [r for r in rows if "key" in r]
    pages = {q["id"]: q["docs"] for q in questions}

    total = len(rows)
    anchored = [r for r in rows if HAS_ANCHOR.search(given[(r["id"], r["key"])])]
    flagged = [r for r in rows if r["contradicted_by"]]
    flagged_anchored = [r for r in anchored if r["contradicted_by"]]
    kinds = Counter(c["kind"] for r in flagged for c in r["contradicted_by"][:1])
    corroborated = sum(1 for r in rows if r["corroborated_by"])
    share = lambda n, d: f"{n}/{d} = {100.0 * n / d:.2f} %" if d else "0/0"

    print(f"questions {len(lines)}, statements {total} (with a number or date: {len(anchored)})")
    print(f"supported by their own page: {share(sum(1 for r in rows if r['support'] == 'quote'), total)}")
    print(f"corroborated by another page: {share(corroborated, total)}")
    print(f"flagged as contradicted: {share(len(flagged), total)}  (target <= 2 %)")
    print(f"  of statements with a number or date: {share(len(flagged_anchored), len(anchored))}")
    print(f"  by kind: {dict(kinds)}")
    if times:
        times.sort()
        print(f"time per question: median {times[len(times) // 2]:.1f} ms, "
              f"max {times[-1]:.1f} ms (whole run {wall:.1f} s)")
    for r in flagged[: a.show]:
        c = r["contradicted_by"][0]
        page = int(r["key"].split(".")[0])
        print(f"\n- [{r['id']}] page {page}: {given[(r['id'], r['key'])]}")
        print(f"  page {c['source']} ({c['kind']}: {c['value']}): {c['quote'].strip()}")
        urls = pages[r["id"]]
        print(f"  {urls[page - 1]['url']}\n  {urls[c['source'] - 1]['url']}")
    print("\nSUMMARY " + json.dumps({"statements": total, "flagged": len(flagged),
                                      "flagged_share": len(flagged) / total if total else 0,
                                      "anchored": len(anchored),
                                      "flagged_anchored": len(flagged_anchored),
                                      "kinds": dict(kinds), "corroborated": corroborated}))


if __name__ == "__main__":
    sys.exit(main())
