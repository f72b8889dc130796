#!/usr/bin/env python3
"""How well ground's own match (src/grounding/matches.rs) supports true statements and
refuses false ones, on the extraction dev pages and the end-to-end fixture site.

    scripts/measure-match.py [--data /work/shared/data/extraction-dev] [--site e2e/site]
                             [--per-page 12] [--show 5] [--release]

Statements are built deterministically (seeded by page and sentence) from source
sentences: sentences of 8 to 40 words of each page's text (the dev pages' ground-truth
articles, with their pages' titles; the fixture site's pages as ground extracts them), at most --per-page of
them per page, evenly spread. Three sets:

  (a) true: the sentence lightly paraphrased -- a leading clause moved to the end
      ("In 1822, X did Y." -> "X did Y in 1822."), up to two words replaced by
      synonyms from a small table, up to two filler words dropped and (every other
      sentence) one other word dropped; a date written the other way round
      ("14 October 1911" <-> "October 14, 1911") and (every other sentence)
      thousands without their comma ("5,000" -> "5000");
  (b) one anchor changed in (a): a number (a year moved by 2, another value), a date
      shifted by a day (or a year), a number word, or a name swapped for another
      name of the same page that is not in the sentence;
  (c) a negation added to (a) (after the first auxiliary verb, or `never` before
      the first past-tense verb) or removed from it.

Each page is checked with two other pages beside it as distractors (the next two in
id order), all of their text counted as shown. Every statement cites source 1 with a
quote that is on no page, so only the match can support it -- exactly what
`ground answer` does with a statement whose quote did not verify.

Also printed, without a target: recall on a heavier paraphrase of the same sentences
(up to four synonyms, two or three words dropped), to show how fast recall falls as
the wording moves away from the source's.

And (d): the true statements of (a) checked against the two distractor pages alone,
their own page left out: any support there is a false one (no target either).

And a fourth set, for statements about a page's subject (issue 39): pages name their
subject in the title and then say "It was designed by ...". For each page, its subject
is the name its sentences use most (a run of capitalised words inside sentences); its
sentences that open with "It", "Its", "He", "She", "His" or "Her" and do not hold the
subject's name are paraphrased as in (a) and the pronoun replaced by the name ("It was
designed by X" -> "Quillfeather Lighthouse was designed by X"). The page is shown with
every sentence naming its subject removed and the subject put in front of its title, so
only the title names it:

  (e) true: those statements;
  (f) one anchor changed in (e), as in (b) (the subject's name may be the one swapped);
  (g) the statements of (e) against the two distractor pages alone (another page's
      subject never counts).

Printed: recall on (a) (and how often the window found holds the source sentence),
the false-support rate on (b) and (c), per page set and overall, with the time the
check took; --show N prints N examples of each failure.

Targets (issue 23): recall >= 0.85 on (a); false support <= 1 % on (b) and (c).
Targets (issue 39): recall >= 0.85 on (e); false support <= 1 % on every set.

The probe is examples/match_probe.rs, built with `cargo build --example match_probe`
(--release to build it optimised; the figures do not depend on it).
"""
import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]
MONTH_RE = "|".join(MONTHS) + r"|Jan\.|Feb\.|Aug\.|Sept\.|Sep\.|Oct\.|Nov\.|Dec\."
# A date as articles write it: day month year, month day year, month day, day month.
DATE = re.compile(
    rf"\b(?P<d1>\d{{1,2}}) (?P<m1>{MONTH_RE})(?: (?P<y1>\d{{4}}))?(?![\w])"
    rf"|\b(?P<m2>{MONTH_RE}) (?P<d2>\d{{1,2}})(?:, (?P<y2>\d{{4}}))?(?![\w\d])")


def date_parts(m):
    if m.group("d1"):
        return int(m.group("d1")), m.group("m1"), m.group("y1")
    return int(m.group("d2")), m.group("m2"), m.group("y2")


def write_date(day, month, year, day_first):
    if day_first:
        return f"{day} {month}" + (f" {year}" if year else "")
    return f"{month} {day}" + (f", {year}" if year else "")
DAYS = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

# Synonyms for the paraphrase: common words a writer swaps without changing the claim.
SYNONYMS = {
    "big": "large", "large": "big", "small": "little", "little": "small",
    "began": "started", "begin": "start", "started": "began", "start": "begin",
    "said": "stated", "says": "states", "told": "informed",
    "buy": "purchase", "bought": "purchased", "help": "assist", "helped": "assisted",
    "use": "employ", "used": "employed", "uses": "employs",
    "show": "demonstrate", "shows": "demonstrates", "showed": "demonstrated",
    "many": "numerous", "often": "frequently", "important": "significant",
    "about": "around", "quickly": "rapidly", "fast": "quick", "hard": "difficult",
    "get": "obtain", "got": "obtained", "make": "create", "made": "created",
    "need": "require", "needs": "requires", "needed": "required",
    "people": "persons", "children": "kids", "job": "work", "jobs": "positions",
    "area": "region", "areas": "regions", "company": "firm", "companies": "firms",
    "main": "principal", "whole": "entire", "enough": "sufficient", "end": "finish",
    "try": "attempt", "tried": "attempted", "want": "wish", "wants": "wishes",
    "almost": "nearly", "nearly": "almost", "maybe": "perhaps", "below": "under",
}
FILLERS = ["very", "really", "also", "just", "still", "even", "quite", "already",
           "currently", "actually", "simply", "certainly", "indeed", "now"]
LEADS = ["In", "On", "At", "After", "Before", "When", "While", "Although", "Though",
         "Because", "Since", "During", "For", "By", "With", "As", "If", "Under",
         "Despite", "Unlike", "Like", "Over", "Throughout", "Last", "This", "Earlier"]
STOP = set("""a about all also an and any are as at be been but by can could did do does
for from had has have he her his how i if in into is it its me more most my no not of on
or our she so some than that the their then there these they this those to was we were
what when where which who whom why will with would you your""".split())
AUX = ["is", "are", "was", "were", "has", "have", "had", "can", "could", "will", "would",
       "should", "may", "might", "must", "does", "do", "did"]
NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
                "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen",
                "sixteen", "seventeen", "eighteen", "nineteen", "twenty"]
NEGATION = re.compile(r"\b(not(?! only)|never|no|none|cannot|without|neither|nor|nobody|nothing|nowhere)\b|n['’]t\b", re.I)
MULTIPLIERS = {"hundred", "thousand", "million", "billion", "trillion"}


def rng_for(*parts):
    seed = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return random.Random(int(seed[:16], 16))


def sentences(text):
    out = []
    for block in text.split("\n"):
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z\"“])", block.strip()):
            s = s.strip()
            words = s.split()
            # Statements, not questions or exclamations.
            if (8 <= len(words) <= 40 and s[0].isupper() and s[-1] == "."
                    and '"' not in s and "“" not in s and "”" not in s):
                out.append(s)
    return out


def pick(items, n):
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def page_names(text):
    """Capitalised words used inside sentences (not only at their start): names."""
    inside, lower = set(), set()
    for s in re.split(r"(?<=[.!?:])\s+|\n", text):
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", s)
        for k, w in enumerate(words):
            if w[0].islower():
                lower.add(w.lower())
            elif k > 0 and len(w) > 2 and w not in MONTHS and w not in DAYS:
                inside.add(w)
    return sorted(w for w in inside if w.lower() not in lower and w.isalpha())


def paraphrase(sentence, rng, heavy=False):
    s = sentence
    # Clause reorder: a leading phrase before the first comma moves to the end.
    m = re.match(r"^([A-Z][a-z]+)\b([^,]{0,60}),\s+(.+?)([.!?])$", s)
    if m and m.group(1) in LEADS and len(m.group(3).split()) >= 4:
        lead = m.group(1).lower() + m.group(2)
        rest = m.group(3)
        first = rest.split()[0]
        if first.lower() in STOP or first.lower() in ("a", "an", "the"):
            rest = first.lower() + rest[len(first):]
        rest = rest[0].upper() + rest[1:]
        s = f"{rest} {lead}{m.group(4)}"
    # Dates written the other way round ("14 October 1911" <-> "October 14, 1911"),
    # thousands without their comma: the same values, spelt differently.
    m = DATE.search(s)
    if m and 1 <= date_parts(m)[0] <= 31:
        day, month, year = date_parts(m)
        s = s[:m.start()] + write_date(day, month, year, not m.group("d1")) + s[m.end():]
    if rng.random() < 0.5:
        s = re.sub(r"(?<![\d.])(\d{1,3}),(\d{3})(?![\d,])", r"\1\2", s)
    words = s.split(" ")
    # Synonyms: up to two words.
    spots = [i for i, w in enumerate(words) if re.sub(r"\W", "", w) in SYNONYMS and i > 0]
    for i in rng.sample(spots, min(4 if heavy else 2, len(spots))):
        core = re.sub(r"\W", "", words[i])
        words[i] = words[i].replace(core, SYNONYMS[core])
    # Fillers dropped, then one other lowercase word of 4+ letters (not a number or
    # negation), as a writer leaves out a qualifier.
    fillers = [i for i, w in enumerate(words) if i > 0 and w.lower() in FILLERS][:2]
    words = [w for i, w in enumerate(words) if i not in fillers]
    droppable = [i for i, w in enumerate(words)
                 if i > 0 and re.fullmatch(r"[a-z]{4,}", w) and w not in STOP
                 and w not in NUMBER_WORDS and w not in MULTIPLIERS and not NEGATION.search(w)
                 and w not in SYNONYMS.values()]
    drops = (2 if rng.random() < 0.5 else 3) if heavy else (1 if rng.random() < 0.5 else 0)
    for i in sorted(rng.sample(droppable, min(drops, len(droppable))), reverse=True):
        del words[i]
    return " ".join(words)


def fmt_like(value, original):
    if "." in original:
        decimals = len(original.split(".")[1])
        return f"{value:.{decimals}f}"
    if "," in original:
        return f"{int(value):,}"
    return str(int(value))


def change_anchor(statement, names, rng):
    """One anchor of the statement changed; None when it has none."""
    options = []
    date = DATE.search(statement)
    if date and not 1 <= date_parts(date)[0] <= 31:
        date = None
    if date:
        options.append("date")
    numbers = [m for m in re.finditer(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w])", statement)
               if not (date and date.start() <= m.start() < date.end())]
    if numbers:
        options.append("number")
    words = [m for m in re.finditer(r"\b(" + "|".join(NUMBER_WORDS[1:]) + r")\b", statement)]
    if words:
        options.append("word")
    inside = [m for m in re.finditer(r"(?<=\s)[A-Z][A-Za-z'-]*", statement)
              if m.group(0).rstrip("'s") in names]
    # Another name: not one of the sentence's words or a form of one ("MacBooks" for
    # "MacBook" is no other name).
    stems = {w.lower()[:5] for w in re.findall(r"\w+", statement)}
    others = [n for n in names if n.lower()[:5] not in stems]
    if inside and others:
        options.append("name")
    if not options:
        return None, None
    kind = rng.choice(options)
    if kind == "date":
        day, month, year = date_parts(date)
        new = write_date(day + 1 if day < 28 else day - 1, month, year, bool(date.group("d1")))
        return statement[:date.start()] + new + statement[date.end():], "date"
    if kind == "number":
        m = rng.choice(numbers)
        raw = m.group(0)
        value = float(raw.replace(",", ""))
        if 1500 <= value <= 2100 and "," not in raw and "." not in raw:
            new = value + rng.choice([-2, 2, 3])
        elif value < 10:
            new = value + 2
        else:
            new = round(value * 1.5) if "." not in raw else value * 1.5
        return statement[:m.start()] + fmt_like(new, raw) + statement[m.end():], "number"
    if kind == "word":
        m = rng.choice(words)
        n = NUMBER_WORDS.index(m.group(0))
        new = NUMBER_WORDS[n + 2] if n + 2 < len(NUMBER_WORDS) else NUMBER_WORDS[n - 2]
        return statement[:m.start()] + new + statement[m.end():], "word"
    m = rng.choice(inside)
    new = rng.choice(others)
    return statement[:m.start()] + new + statement[m.start() + len(m.group(0).rstrip("'s")):], "name"


def flip_negation(statement):
    """A negation removed, or added; None when no place for one is found."""
    removals = [(r"\bcannot\b", "can"), (r"\bcan['’]t\b", "can"), (r"\bwon['’]t\b", "will"),
                (r"n['’]t\b", ""), (r"\bnot\s+(?!only)", ""), (r"\bnever\s+", ""),
                (r"\bwithout\b", "with"), (r"\bno longer\b", "still"), (r"\bno\b", "some")]
    if NEGATION.search(statement):
        for pattern, repl in removals:
            new, n = re.subn(pattern, repl, statement, count=1)
            if n and new != statement:
                return new, "removed"
        return None, None
    words = statement.split(" ")
    for i, w in enumerate(words[1:], 1):
        if w in AUX and (i + 1 >= len(words) or words[i + 1] != "only"):
            words[i] = "cannot" if w == "can" else f"{w} not"
            return " ".join(words), "added"
    for i, w in enumerate(words[1:], 1):
        if re.fullmatch(r"[a-z]{3,}ed", w):
            words[i] = f"never {w}"
            return " ".join(words), "added"
    return None, None


OPENER = re.compile(r"^(It|Its|He|She|His|Her)\s+(?=[a-z0-9])")
NAME_RUN = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-z]+(?: [A-Z][a-z]+)*")


def subject_of(text):
    """The name a page's sentences use most (twice at least), or None."""
    counts = {}
    for run in NAME_RUN.findall(text):
        if run.split()[0] in MONTHS or run.split()[0] in DAYS or len(run) < 3:
            continue
        counts[run] = counts.get(run, 0) + 1
    best = sorted(counts.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))
    return best[0][0] if best and best[0][1] >= 2 else None


def subject_statements(page, per_page, label, names):
    """(e) and (f) for one page, and the page as shown for them (only its title names
    its subject); ([], None) when it has no subject or no sentence opening with a
    pronoun."""
    subject = subject_of(page["text"])
    if not subject:
        return [], None
    cases = []
    opening = [s for s in sentences(page["text"]) if OPENER.match(s) and subject not in s]
    for k, sentence in enumerate(pick(opening, per_page)):
        rng = rng_for(label, page["id"], k, "subject")
        true = paraphrase(sentence, rng)
        m = OPENER.match(true)
        if not m:
            continue
        named = subject + ("'s " if m.group(1) in ("Its", "His", "Her") else " ")
        true = named + true[m.end():]
        base = f"{label}/{page['id']}/s{k}"
        cases.append({"key": f"{base}/e", "set": "e", "sentence": sentence, "text": true})
        changed, how = change_anchor(true, names + subject.split(), rng)
        if changed and changed != true:
            cases.append({"key": f"{base}/f", "set": "f", "how": how, "sentence": sentence, "text": changed})
    if not cases:
        return [], None
    text = "\n".join(" ".join(s for s in re.split(r"(?<=[.!?])\s+", line) if subject not in s)
                     for line in page["text"].split("\n"))
    return cases, {"title": f"{subject}: {page['title']}", "text": text}


def load_dev(probe, data):
    """The ground-truth articles, each with its page's title as ground extracts it."""
    truth = json.loads((Path(data) / "ground-truth.json").read_text())
    out = subprocess.run([probe, "extract", str(Path(data) / "html")], check=True,
                         capture_output=True, text=True).stdout
    titles = {v["id"]: v["title"] for v in map(json.loads, out.splitlines())}
    return [{"id": k[:12], "title": titles.get(k, ""), "text": v["articleBody"]}
            for k, v in sorted(truth.items())]


def load_site(probe, site):
    out = subprocess.run([probe, "extract", site], check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def build(pages, per_page, label):
    """The three sets for `pages`, and the probe's input lines."""
    cases, lines = [], []
    for p, page in enumerate(pages):
        names = page_names(page["text"])
        statements = []
        for k, sentence in enumerate(pick(sentences(page["text"]), per_page)):
            rng = rng_for(label, page["id"], k)
            true = paraphrase(sentence, rng)
            base = f"{label}/{page['id']}/{k}"
            cases.append({"key": f"{base}/a", "set": "a", "sentence": sentence, "text": true})
            heavier = paraphrase(sentence, rng_for(label, page["id"], k, "heavy"), heavy=True)
            cases.append({"key": f"{base}/h", "set": "h", "sentence": sentence, "text": heavier})
            changed, how = change_anchor(true, names, rng)
            if changed and changed != true:
                cases.append({"key": f"{base}/b", "set": "b", "how": how, "sentence": sentence, "text": changed})
            flipped, how = flip_negation(true)
            if flipped and flipped != true:
                cases.append({"key": f"{base}/c", "set": "c", "how": how, "sentence": sentence, "text": flipped})
            statements += [c for c in cases[-4:] if c["key"].startswith(base)]
        if not statements:
            continue
        distractors = [pages[(p + 1) % len(pages)], pages[(p + 2) % len(pages)]]
        sources = [page] + [d for d in distractors if d is not page]
        lines.append(json.dumps({
            "id": f"{label}/{page['id']}",
            "sources": [{"title": s["title"], "text": s["text"]} for s in sources],
            "statements": [{"key": c["key"], "text": c["text"]} for c in statements],
        }))
        # (d) The true statements again, with their own page left out: only the
        # distractors are shown, so any support is a false one.
        others = [d for d in distractors if d is not page]
        absent = []
        for c in statements:
            if c["set"] == "a" and others:
                absent.append({"key": c["key"][:-1] + "d", "set": "d", "how": "absent",
                               "sentence": c["sentence"], "text": c["text"]})
        cases += absent
        if absent:
            lines.append(json.dumps({
                "id": f"{label}/{page['id']}/absent",
                "sources": [{"title": s["title"], "text": s["text"]} for s in others],
                "statements": [{"key": c["key"], "text": c["text"]} for c in absent],
            }))
        # The fourth set: the page's subject named only in its title.
        about, shown = subject_statements(page, per_page, label, names)
        if shown:
            cases += about
            lines.append(json.dumps({
                "id": f"{label}/{page['id']}/subject",
                "sources": [shown] + [{"title": s["title"], "text": s["text"]} for s in others],
                "statements": [{"key": c["key"], "text": c["text"]} for c in about],
            }))
            elsewhere = [{"key": c["key"][:-1] + "g", "set": "g", "how": "absent",
                          "sentence": c["sentence"], "text": c["text"]} for c in about if c["set"] == "e"]
            if others and elsewhere:
                cases += elsewhere
                lines.append(json.dumps({
                    "id": f"{label}/{page['id']}/subject-absent",
                    "sources": [{"title": s["title"], "text": s["text"]} for s in others],
                    "statements": [{"key": c["key"], "text": c["text"]} for c in elsewhere],
                }))
    return cases, lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/shared/data/extraction-dev")
    ap.add_argument("--site", default=str(ROOT / "e2e" / "site"))
    ap.add_argument("--per-page", type=int, default=12)
    ap.add_argument("--show", type=int, default=0, help="print N failures of each kind")
    ap.add_argument("--release", action="store_true")
    args = ap.parse_args()

    profile = ["--release"] if args.release else []
    subprocess.run(["cargo", "build", "--quiet", "--example", "match_probe", *profile],
                   cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    probe = str(target / ("release" if args.release else "debug") / "examples" / "match_probe")

    groups = {"dev": load_dev(probe, args.data), "site": load_site(probe, args.site)}
    results, timing = {}, {}
    all_cases = {}
    for label, pages in groups.items():
        cases, lines = build(pages, args.per_page, label)
        out = subprocess.run([probe, "check"], input="\n".join(lines) + "\n", check=True,
                             capture_output=True, text=True).stdout
        ms = 0.0
        for line in out.splitlines():
            v = json.loads(line)
            if "ms" in v:
                ms += v["ms"]
            else:
                results[v["key"]] = v
        timing[label] = (ms, len(cases))
        all_cases[label] = cases

    def report(name, cases):
        by = {s: [c for c in cases if c["set"] == s] for s in "abchdefg"}
        supported = lambda c: results[c["key"]]["support"] == "match"
        a = by["a"]
        hit = [c for c in a if supported(c)]
        right = [c for c in hit if c["sentence"][:40] in (results[c["key"]]["window"] or "")]
        print(f"{name}: {len(a)} true, {len(by['b'])} anchor changed, {len(by['c'])} negation flipped")
        if a:
            print(f"  (a) recall              {len(hit) / len(a):.3f}  ({len(hit)}/{len(a)}; "
                  f"window holds the source sentence in {len(right)}/{len(hit)})")
        h = by["h"]
        if h:
            hits = sum(supported(c) for c in h)
            print(f"  (a+) recall, heavier    {hits / len(h):.3f}  ({hits}/{len(h)}: up to 4 synonyms, 2-3 words dropped; no target)")
        e = by["e"]
        if e:
            hits = [c for c in e if supported(c)]
            print(f"  (e) recall, subject     {len(hits) / len(e):.3f}  ({len(hits)}/{len(e)}: named only in the title)")
        for s, label in (("b", "anchor changed"), ("c", "negation flipped"), ("d", "page absent"),
                         ("f", "subject, anchor changed"), ("g", "subject, page absent")):
            cs = by[s]
            bad = [c for c in cs if supported(c)]
            if cs:
                kinds = {}
                for c in cs:
                    total, wrong = kinds.get(c["how"], (0, 0))
                    kinds[c["how"]] = (total + 1, wrong + supported(c))
                detail = ", ".join(f"{k} {w}/{t}" for k, (t, w) in sorted(kinds.items()))
                print(f"  ({s}) false support       {len(bad) / len(cs):.3f}  ({len(bad)}/{len(cs)}: {detail})")
        return by

    print(f"probe: {probe}")
    everything = []
    for label, cases in all_cases.items():
        report(label, cases)
        ms, n = timing[label]
        print(f"  check time {ms:.0f} ms for {n} statements ({ms / max(n, 1):.2f} ms each, index included)")
        everything += cases
    by = report("all", everything)

    if args.show:
        misses = [c for c in by["a"] if results[c["key"]]["support"] != "match"]
        for title, cs in (("(a) missed", misses),
                          ("(e) missed", [c for c in by["e"] if results[c["key"]]["support"] != "match"]),
                          ("(f) supported", [c for c in by["f"] if results[c["key"]]["support"] == "match"]),
                          ("(g) supported", [c for c in by["g"] if results[c["key"]]["support"] == "match"]),
                          ("(b) supported", [c for c in by["b"] if results[c["key"]]["support"] == "match"]),
                          ("(c) supported", [c for c in by["c"] if results[c["key"]]["support"] == "match"]),
                          ("(d) supported", [c for c in by["d"] if results[c["key"]]["support"] == "match"])):
            print(f"\n{title}: {len(cs)}")
            for c in cs[:args.show]:
                print(f"  source:    {c['sentence']}")
                print(f"  statement: {c['text']}")
                if results[c["key"]]["window"]:
                    print(f"  window:    {results[c['key']]['window']}")
                print()


if __name__ == "__main__":
    sys.exit(main())
