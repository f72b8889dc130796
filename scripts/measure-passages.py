#!/usr/bin/env python3
"""How much of what matters reaches the model, on the extraction dev pages.

    scripts/measure-passages.py [--budget 300] [--data /work/shared/data/extraction-dev]
    scripts/measure-passages.py --evidence [--baseline REV | --before-probe PATH] [--pools 3,10]
                                [--windows 1024:256,2048:512,4096:1024,1400:256]

Without --evidence: passage selection (BM25) against the text's first N tokens, one
page at a time, with the same token budget.

Per page (one source, `--budget` tokens for the whole source block):
  * title as the question: share of the ground-truth article's words that are sent
    (multiset recall) -- how much of the article gets through either way;
  * needle questions: three sentences of the ground-truth article, at 1/3, 2/3 and the
    end of it, each turned into a keyword question (its 6 longest words); a hit is the
    whole sentence being sent. This is what selection is for: the answer is rarely in
    the first screenful.

With --evidence: evidence recall of the whole context stage, several sources at once,
at model windows of 1k, 2k and 4k tokens. For each page, up to four sentences of its
ground-truth article (the first, those at 1/3 and 2/3, the last; at least 12 words,
and found whole in ground's extraction) each become two questions: "rare", the
sentence's four rarest words (document frequency over the dev articles), which points
at the sentence; and "topic", the two rarest words of the page's title and one other
word of the sentence picked at random, the way a person names the subject and a
detail; and "near", the four rarest words of the sentence before it (after it, for the
first) that the answer sentence does not hold: the answer passage shares no word with
the question, as in most of the misses on real news questions, and sits beside the
sentences that match. The sources are a pool of POOL pages (--pools, default 3 and 10: the default
`--pages 3` and the wide `--pages 10`): that page and the POOL-1 other pages holding
most of the question's words (ties broken at random; realistic distractors: they share
the question's words, as the other results of a search do), in a shuffled order, each
with its real URL. The context is built as `ground answer` builds
it for a WINDOW-token model answering in at most ANSWER tokens (the source budget is
the window less the answer, the instructions and the question, times 0.97: mirrored
from src/pipeline.rs). A hit is the sentence reaching the prompt in the answer page's
block: "most" when 80 % of its word trigrams are there, "whole" when all of it is,
in order. Also printed: the share of the budget used (estimated tokens, and of it the
page text without headers and markers), `[…]` lines per prompt, and the share of the
page words sent that came from the answer page. With --baseline REV, the same probe
is built against the context stage of git revision REV (e.g. the commit before a
change) and both are printed, before and after; --before-probe PATH takes a probe
built earlier instead (e.g. `cargo build --example context_probe` on main, copied),
which spares building a second tree.

Extraction is ground's own (examples/context_probe.rs runs extract_html and the
context stage), built with `cargo build --example context_probe` (--release to build
it optimised).
"""
import argparse
import gzip
import json
import os
import random
import re
import shutil
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


def build_probe(tree, release, out):
    """Builds examples/context_probe.rs (this checkout's) against the crate in `tree`
    and copies the binary to `out`. A baseline is built in a target directory of its
    own inside this checkout's (cargo would take the two trees' builds for one), kept
    for the next run."""
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if tree != ROOT:
        shutil.copy(ROOT / "examples" / "context_probe.rs", tree / "examples" / "context_probe.rs")
        target = target / "measure-baseline"
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    subprocess.run(["cargo", "build", "-q", "--example", "context_probe"] + (["--release"] if release else []),
                   cwd=tree, env=env, check=True)
    shutil.copy(target / ("release" if release else "debug") / "examples" / "context_probe", out)
    return out


def extract_pages(probe, data, truth):
    with tempfile.TemporaryDirectory() as tmp:
        for i in truth:
            (Path(tmp) / f"{i}.html").write_bytes(gzip.decompress((data / "html" / f"{i}.html.gz").read_bytes()))
        return [json.loads(l) for l in subprocess.run([str(probe), "extract", tmp], check=True,
                                                      capture_output=True, text=True).stdout.splitlines()]


def trigrams(ws):
    return {tuple(ws[i:i + 3]) for i in range(len(ws) - 2)}


def evidence_asks(pages, truth, pool):
    """The questions of --evidence: (ask for the probe, answer sentence, answer index)."""
    df = {}
    for v in truth.values():
        for w in set(words(v["articleBody"])):
            df[w] = df.get(w, 0) + 1
    texts = {p["id"]: p["text"] for p in pages}
    text_words = {p["id"]: words(p["text"]) for p in pages}
    asks = []
    for p in pages:
        article = truth[p["id"]]["articleBody"]
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", article) if len(words(s)) >= 12]
        if len(sentences) < 6:
            continue
        text_norm = norm(texts[p["id"]])
        for at in sorted({0, len(sentences) // 3, 2 * len(sentences) // 3, len(sentences) - 1}):
            sentence = sentences[at]
            if norm(sentence) not in text_norm:  # the extractor lost it: not the context's fault
                continue
            rng = random.Random(f"{p['id']}:{at}")
            by_rarity = lambda ws: sorted(ws, key=lambda w: (df.get(w, 0), -len(w), w))
            candidates = content_words(sentence)
            rare = by_rarity(candidates)[:4]
            topic = by_rarity(content_words(p["title"]))[:2]
            detail = [w for w in candidates if w not in topic]
            topic += rng.sample(detail, min(1, len(detail)))
            # "near": the question names what the sentence next to the answer says and
            # none of the answer's own words (the answer passage shares none with it).
            beside = sentences[at - 1] if at > 0 else sentences[1]
            own = set(words(sentence))
            near = by_rarity([w for w in content_words(beside) if w not in own])[:4]
            for kind, chosen in (("rare", rare), ("topic", topic), ("near", near)):
                if not chosen:
                    continue
                pool_words = {"topic": topic, "near": content_words(beside)}.get(kind, candidates)
                question = " ".join(w for w in dict.fromkeys(pool_words) if w in chosen)
                others = [q for q in pages if q["id"] != p["id"]]
                overlap = {q["id"]: sum(w in chosen for w in text_words[q["id"]]) for q in others}
                keyed = [(-overlap[q["id"]], rng.random(), q) for q in others]
                distractors = [q for _, _, q in sorted(keyed, key=lambda k: k[:2])[:pool - 1]]
                sources = [p] + distractors
                rng.shuffle(sources)
                ask = {"id": p["id"], "question": question,
                       "sources": [{"url": truth[s["id"]]["url"], "title": s["title"], "text": s["text"]}
                                   for s in sources]}
                asks.append((kind, ask, sentence, sources.index(p)))
    return asks


# Words that name nothing: left out of the questions --evidence makes.
STOP = set("""a about after all also an and any are as at be been before being but by can could did do does
for from had has have he her his how i if in into is it its just more most my new no not of on or our out over
said says she so some than that the their them then there these they this those to up was we were what when
where which who why will with would you your""".split())


def content_words(text):
    return [w for w in dict.fromkeys(words(text)) if len(w) >= 3 and not w.isdigit() and w not in STOP]


def evidence_run(probe, asks, window, answer):
    run = subprocess.run([str(probe), "window", str(window), str(answer)],
                         input="".join(json.dumps(a) + "\n" for _, a, _, _ in asks),
                         check=True, capture_output=True, text=True)
    results = [json.loads(l) for l in run.stdout.splitlines()]
    most = whole = over = 0
    used, text, markers, answer_share, budgets = [], [], [], [], []
    for (_, _, sentence, at), r in zip(asks, results):
        sent = words(r["bodies"][at])
        want = trigrams(words(sentence))
        most += len(want & trigrams(sent)) >= 0.8 * len(want)
        whole += norm(sentence) in " ".join(sent)
        over += r["estimated_tokens"] > r["budget"]
        used.append(r["estimated_tokens"] / r["budget"])
        text.append(r["text_tokens"] / r["budget"])
        markers.append(r["markers"])
        total = sum(len(words(b)) for b in r["bodies"])
        answer_share.append(len(sent) / total if total else 0.0)
        budgets.append(r["budget"])
    n = len(asks)
    mean = lambda xs: sum(xs) / len(xs)
    return {"most": most / n, "whole": whole / n, "used": mean(used), "text": mean(text),
            "markers": mean(markers), "answer_share": mean(answer_share), "over": over,
            "budget": sorted(budgets)[n // 2]}


def evidence(args, data, truth):
    windows = [tuple(int(x) for x in w.split(":")) for w in args.windows.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        probes = {}
        if args.baseline:
            tree = Path(tmp) / "baseline"
            tree.mkdir()
            archive = subprocess.run(["git", "archive", args.baseline], cwd=ROOT, check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-m", "-C", str(tree)], input=archive, check=True)  # -m: fresh mtimes, so cargo rebuilds
            probes[f"before ({args.baseline})"] = build_probe(tree, args.release, Path(tmp) / "probe-before")
        if args.before_probe:
            probes["before (probe given)"] = Path(args.before_probe)
        after = "after (this tree)" if probes else "this tree"
        probes[after] = Path(args.probe) if args.probe else build_probe(ROOT, args.release, Path(tmp) / "probe")
        pages = extract_pages(next(iter(probes.values())), data, truth)
        print(f"{'pool':>4} {'window':>6} {'answer':>6} {'budget':>6}  {'question':<8} {'code':<22} {'recall':>6} "
              f"{'whole':>6} {'used':>5} {'text':>5} {'[…]':>4} {'ans.words':>9} {'over':>4}")
        for pool in [int(p) for p in args.pools.split(",")]:
            asks = evidence_asks(pages, truth, pool)
            kinds = list(dict.fromkeys(k for k, _, _, _ in asks))
            counts = ", ".join(f"{k} {sum(a[0] == k for a in asks)}" for k in kinds)
            print(f"pool of {pool}: {len(pages)} pages, questions: {counts}; {pool} sources each (the answer "
                  f"page and {pool - 1} distractors)")
            for window, answer in windows:
                for kind in [k for k in kinds + ["all"] if not args.kinds or k in args.kinds.split(",")]:
                    for name, probe in probes.items():
                        chosen = [a for a in asks if kind in ("all", a[0])]
                        r = evidence_run(probe, chosen, window, answer)
                        print(f"{pool:>4} {window:>6} {answer:>6} {r['budget']:>6}  {kind:<8} {name:<22} "
                              f"{r['most']:>6.3f} {r['whole']:>6.3f} {r['used']:>5.2f} {r['text']:>5.2f} "
                              f"{r['markers']:>4.1f} {r['answer_share']:>9.2f} {r['over']:>4}")
    print("recall: the answer sentence (80 % of its word trigrams) reached the prompt; whole: all of it, in order;\n"
          "used: estimated tokens / source budget; text: page text alone / budget; […]: gap lines per prompt;\n"
          "ans.words: share of the page words sent that came from the answer page; over: contexts over budget")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=300)
    ap.add_argument("--data", default="/work/shared/data/extraction-dev")
    ap.add_argument("--evidence", action="store_true", help="evidence recall over several sources per question")
    ap.add_argument("--windows", default="1024:256,2048:512,4096:1024,1400:256",
                    help="--evidence: WINDOW:ANSWER_TOKENS pairs, comma-separated")
    ap.add_argument("--baseline", help="--evidence: also measure the context stage of this git revision")
    ap.add_argument("--before-probe", help="--evidence: also measure this context_probe binary (built earlier)")
    ap.add_argument("--probe", help="--evidence: measure this context_probe binary instead of building this tree's")
    ap.add_argument("--kinds", help="--evidence: only these question kinds (rare,topic,near,all)")
    ap.add_argument("--pools", default="3,10", help="--evidence: pool sizes (pages per question), comma-separated")
    ap.add_argument("--release", action="store_true", help="build the probe optimised")
    args = ap.parse_args()
    data = Path(args.data)
    truth = json.loads((data / "ground-truth.json").read_text())
    if args.evidence:
        return evidence(args, data, truth)
    with tempfile.TemporaryDirectory() as tmp:
        probe = build_probe(ROOT, args.release, Path(tmp) / "probe")
        pages = extract_pages(probe, data, truth)
        return single(args, probe, pages, truth)


def single(args, probe, pages, truth):
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
