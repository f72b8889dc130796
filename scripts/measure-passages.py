#!/usr/bin/env python3
"""How much of what matters reaches the model: passage selection (BM25) against the
text's first N tokens, on the extraction dev pages, with the same token budget.

    scripts/measure-passages.py [--budget 300] [--data /work/shared/data/extraction-dev]

Per page (one source, `--budget` tokens for the whole source block):
  * title as the question: share of the ground-truth article's words that are sent
    (multiset recall) -- how much of the article gets through either way;
  * needle questions: three sentences of the ground-truth article, at 1/3, 2/3 and the
    end of it, each turned into a keyword question (its 6 longest words); a hit is the
    whole sentence being sent. This is what selection is for: the answer is rarely in
    the first screenful.
Extraction is ground's own (examples/context_probe.rs runs extract_html and the
context stage), built with `cargo build --release --example context_probe`.
"""
import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"\w+", re.UNICODE)


def words(text):
    return [w.lower() for w in WORD.findall(text)]


def norm(text):
    return " ".join(words(text))


def recall(truth, sent):
    from collections import Counter
    t, s = Counter(words(truth)), Counter(words(sent))
    total = sum(t.values())
    return sum(min(n, s[w]) for w, n in t.items()) / total if total else 0.0


def needles(article, text_norm):
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", article) if len(words(s)) >= 12]
    if len(sentences) < 6:
        return []
    picks = {len(sentences) // 3, 2 * len(sentences) // 3, len(sentences) - 1}
    out = []
    for i in sorted(picks):
        s = sentences[i]
        if norm(s) not in text_norm:  # the extractor lost it: not selection's fault
            continue
        keys = sorted(set(w for w in words(s) if not w.isdigit()), key=lambda w: (-len(w), w))[:6]
        out.append((s, " ".join(keys)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--data", default="/work/shared/data/extraction-dev")
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
    asks, kinds = [], []
    for p in pages:
        article = truth[p["id"]]["articleBody"]
        asks.append({"id": p["id"], "title": p["title"], "text": p["text"], "question": p["title"]})
        kinds.append(("title", article))
        for sentence, question in needles(article, norm(p["text"])):
            asks.append({"id": p["id"], "title": p["title"], "text": p["text"], "question": question})
            kinds.append(("needle", sentence))
    run = subprocess.run([str(probe), "select", str(args.budget)], input="".join(json.dumps(a) + "\n" for a in asks),
                         check=True, capture_output=True, text=True)
    results = [json.loads(l) for l in run.stdout.splitlines()]
    rec = {"bm25": [], "lead": []}
    hit = {"bm25": 0, "lead": 0}
    n_needles = 0
    over = 0
    for (kind, target), r in zip(kinds, results):
        over += r["bm25_tokens"] > args.budget
        if kind == "title":
            for m in rec:
                rec[m].append(recall(target, r[m]))
        else:
            n_needles += 1
            for m in hit:
                hit[m] += norm(target) in norm(r[m])
    mean = lambda xs: sum(xs) / len(xs)
    print(f"{len(pages)} pages, budget {args.budget} tokens per page (one source each)")
    print(f"title as question, article words sent (recall): passages+BM25 {mean(rec['bm25']):.3f}, first N tokens {mean(rec['lead']):.3f}")
    print(f"needle questions ({n_needles}, sentences at 1/3, 2/3, end of the article): whole sentence sent: "
          f"passages+BM25 {hit['bm25'] / n_needles:.3f}, first N tokens {hit['lead'] / n_needles:.3f}")
    print(f"contexts over budget: {over}")


if __name__ == "__main__":
    sys.exit(main())
