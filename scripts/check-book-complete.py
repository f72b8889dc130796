#!/usr/bin/env python3
"""Nothing of an older one-page README is lost in README.md and the book.

    git show REV:README.md > /tmp/old-readme.md
    python3 scripts/check-book-complete.py /tmp/old-readme.md

Every non-blank line of the old page (the quick-start markers aside) must occur in
README.md or a page of docs/src/, compared after a normal form that forgives what a
move into the book changes: a heading's level, and where a relative link points (its
text must stay). Prints the lines not found, with their line numbers in the old page,
and the count; exits 1 if any is missing.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def normal(line):
    line = line.rstrip()
    line = re.sub(r"^#{1,6} ", "# ", line)
    return re.sub(r"\]\((?![a-z]+:)[^)\s]*\)", "]()", line)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    old = open(sys.argv[1], encoding="utf-8").read().split("\n")
    book = os.path.join(ROOT, "docs", "src")
    now = set()
    for path in [os.path.join(ROOT, "README.md")] + [
        os.path.join(book, p) for p in os.listdir(book) if p.endswith(".md")
    ]:
        now.update(normal(l) for l in open(path, encoding="utf-8").read().split("\n"))
    missing = [
        (number, line)
        for number, line in enumerate(old, 1)
        if line.strip() and not line.startswith("<!-- ") and normal(line) not in now
    ]
    for number, line in missing:
        print(f"{number}: {line}")
    kept = sum(1 for l in old if l.strip() and not l.startswith("<!-- ")) - len(missing)
    print(f"check-book-complete: {kept} of {kept + len(missing)} lines of the old page kept, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
