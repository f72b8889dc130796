#!/usr/bin/env python3
"""Write a deterministic text corpus of Markdown and plain-text files, for index benchmarks.

    scripts/make-text-corpus.py OUT [--mb 50] [--seed 7] [--files-per-dir 100]

The same seed and size give the same bytes on every machine (Python's own Mersenne
Twister, no other source of randomness). Words follow a Zipf law (s = 1.07) over a
vocabulary of 60,000 made-up words built from syllables, with the 150 commonest
English function words at the top ranks, so term frequencies, document lengths and
the share of rare words look like prose: about 60 % of tokens are from the top 150
words, and about half of the vocabulary appears fewer than ten times in 50 MB.
Files are 2-60 KB (log-normal), two thirds Markdown (headings, paragraphs, lists,
now and then a fenced code block) and one third plain text, in folders of
--files-per-dir files. Each file also gets a few "topic" words drawn from a
rank band of its own, so documents differ the way real ones do and a query of a
few mid-frequency words has a small set of good answers.

Prints the file count, the bytes written, and three example queries (mid-frequency
words from one file's topic band) that scripts/bench-docs-vs-langchain.py uses.
"""
import argparse
import bisect
import itertools
import math
import os
import random
from pathlib import Path

FUNCTION_WORDS = """the of and to a in is that for it as was with be by on not he this are or his
from at which but have an they you were their one all we her can has there been if more when
will would who so no she other its may these two into them then than some could only out
what about time up do any first like our my new also over most such after made many even
him where well back much should those through before here just because each how between both
under same another while still very last long great own being us might years own without
again around every where few upon during however often since never always although toward
less until yet whether rather though within along whose among perhaps once almost across
thus nor against twice beyond per via
""".split()

SYLLABLES = """ba be bi bo bu ca ce ci co cu da de di do du fa fe fi fo fu ga ge gi go gu ha he
hi ho hu ja je jo ka ke ki ko ku la le li lo lu ma me mi mo mu na ne ni no nu pa pe pi po pu
ra re ri ro ru sa se si so su ta te ti to tu va ve vi vo vu wa we wi wo za ze zi zo zu an en
in on un ar er ir or ur al el il ol ul ast est ist ost ust ent ant ion ing ers ous ive ate
""".split()

VOCAB = 60_000
ZIPF_S = 1.07


def vocabulary(rng):
    """VOCAB distinct words: the function words, then made-up words of 2-4 syllables
    (shorter ones at the common ranks, as in natural language)."""
    words = []
    seen = set()
    for w in FUNCTION_WORDS:
        if w not in seen:
            seen.add(w)
            words.append(w)
    while len(words) < VOCAB:
        rank = len(words)
        n = 2 if rank < 3000 else 3 if rank < 25000 else rng.choice((3, 4))
        w = "".join(rng.choice(SYLLABLES) for _ in range(n))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_cum_weights(n):
    total = 0.0
    cum = []
    for r in range(1, n + 1):
        total += 1.0 / (r**ZIPF_S)
        cum.append(total)
    return cum


class Writer:
    """Draws words and lays them out as sentences, paragraphs and files."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.words = vocabulary(self.rng)
        self.cum = zipf_cum_weights(len(self.words))

    def draw(self, k):
        return self.rng.choices(self.words, cum_weights=self.cum, k=k)

    def topic(self):
        """A file's own band of words (ranks 800-40,000), mixed into its text."""
        lo = self.rng.randrange(800, 40_000)
        return self.words[lo : lo + 40]

    def sentence(self, topic):
        rng = self.rng
        n = max(3, int(rng.lognormvariate(2.7, 0.45)))
        ws = self.draw(n)
        for i in range(len(ws)):
            if rng.random() < 0.06:
                ws[i] = rng.choice(topic)
        ws[0] = ws[0].capitalize()
        if n > 10 and rng.random() < 0.4:
            ws[rng.randrange(3, n - 2)] += ","
        return " ".join(ws) + rng.choice(".....?!")

    def paragraph(self, topic):
        return " ".join(self.sentence(topic) for _ in range(self.rng.randint(2, 7)))

    def wrap(self, text, width=80):
        lines, line = [], ""
        for w in text.split(" "):
            if line and len(line) + 1 + len(w) > width:
                lines.append(line)
                line = w
            else:
                line = f"{line} {w}" if line else w
        if line:
            lines.append(line)
        return "\n".join(lines)

    def markdown(self, size, topic):
        rng = self.rng
        out = [f"# {' '.join(self.draw(rng.randint(2, 5))).capitalize()} {topic[0]}\n"]
        n = len(out[0])
        while n < size:
            r = rng.random()
            if r < 0.12:
                block = f"## {' '.join(w for w in self.draw(rng.randint(2, 6))).capitalize()} {rng.choice(topic)}\n"
            elif r < 0.22:
                block = "\n".join(f"- {self.sentence(topic)}" for _ in range(rng.randint(2, 6))) + "\n"
            elif r < 0.25:
                ident = "_".join(self.draw(2))
                block = f"```\nlet {ident} = {rng.randint(0, 9999)};\n{ident}.{rng.choice(topic)}();\n```\n"
            else:
                block = self.wrap(self.paragraph(topic)) + "\n"
            out.append(block)
            n += len(block) + 1
        return "\n".join(out)

    def plain(self, size, topic):
        out, n = [], 0
        while n < size:
            block = self.wrap(self.paragraph(topic), self.rng.choice((72, 80, 100))) + "\n"
            out.append(block)
            n += len(block) + 1
        return "\n".join(out)


def generate(out, mb, seed, files_per_dir):
    """Writes the corpus; returns (files, bytes, example queries)."""
    w = Writer(seed)
    out = Path(out)
    target = int(mb * 1_000_000)
    total = 0
    queries = []
    for i in itertools.count():
        if total >= target:
            break
        size = int(min(60_000, max(2_000, w.rng.lognormvariate(math.log(18_000), 0.7))))
        topic = w.topic()
        md = w.rng.random() < 2 / 3
        text = w.markdown(size, topic) if md else w.plain(size, topic)
        d = out / f"d{i // files_per_dir:03d}"
        d.mkdir(parents=True, exist_ok=True)
        p = d / f"f{i:05d}.{'md' if md else 'txt'}"
        data = text.encode()
        p.write_bytes(data)
        total += len(data)
        if i in (7, 501, 1303):
            queries.append(" ".join(topic[1:4]))
    return i, total, queries


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder to write (created; must be empty or absent)")
    ap.add_argument("--mb", type=float, default=50, help="size in MB (10^6 bytes) (default 50)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--files-per-dir", type=int, default=100)
    args = ap.parse_args()
    if os.path.exists(args.out) and os.listdir(args.out):
        ap.error(f"{args.out} is not empty")
    files, total, queries = generate(args.out, args.mb, args.seed, args.files_per_dir)
    print(f"corpus: {files} files, {total} bytes in {args.out}")
    for q in queries:
        print(f"query: {q}")


if __name__ == "__main__":
    main()
