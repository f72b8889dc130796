#!/usr/bin/env python3
"""Every relative link in README.md and the book (docs/src/*.md) resolves.

    python3 scripts/check-links.py

A link to a file must name one that exists (relative to the page); a link with an
anchor (`page.md#part`, `#part`) must name a heading of that page, as GitHub and
mdBook make anchors from headings (lower case, punctuation dropped, spaces as
hyphens). Links in code blocks and to http(s) or mailto addresses are not checked
(there is no network here). Every page of docs/src/ must be listed in SUMMARY.md, and
every page SUMMARY.md lists must exist. Prints each broken link as `FILE:LINE: why`
and exits 1 if there is any; else prints the count checked and exits 0.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading):
    """The anchor GitHub and mdBook give a heading."""
    text = re.sub(r"[`*]", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def lines_outside_code(path):
    """(number, line) of each line of `path` outside fenced code blocks."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                fenced = not fenced
                continue
            if not fenced:
                yield number, line


def anchors(path, cache={}):
    """The anchors of the headings of Markdown file `path`."""
    if path not in cache:
        found = set()
        for _, line in lines_outside_code(path):
            m = re.match(r"^#{1,6} (.*)", line)
            if m:
                found.add(slug(m.group(1)))
        cache[path] = found
    return cache[path]


def check(page, problems):
    checked = 0
    here = os.path.dirname(page)
    for number, line in lines_outside_code(page):
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue
            checked += 1
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else page
            where = f"{os.path.relpath(page, ROOT)}:{number}"
            if not os.path.exists(dest):
                problems.append(f"{where}: {target}: no such file")
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append(f"{where}: {target}: no heading makes the anchor #{anchor}")
    return checked


def main():
    book = os.path.join(ROOT, "docs", "src")
    pages = [os.path.join(ROOT, "README.md")]
    pages += sorted(os.path.join(book, p) for p in os.listdir(book) if p.endswith(".md"))
    problems = []
    checked = sum(check(page, problems) for page in pages)
    summary = os.path.join(book, "SUMMARY.md")
    listed = set()
    for _, line in lines_outside_code(summary):
        listed.update(t.partition("#")[0] for t in LINK.findall(line))
    for page in pages[1:]:
        name = os.path.basename(page)
        if name != "SUMMARY.md" and name not in listed:
            problems.append(f"docs/src/SUMMARY.md: {name} is not listed")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-links: {len(problems)} broken of {checked} links")
        return 1
    print(f"check-links: {checked} relative links in {len(pages)} pages, all resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
