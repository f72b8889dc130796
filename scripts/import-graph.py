#!/usr/bin/env python3
"""The import graph of src/: circles, upward imports and sideways imports between layers.

    scripts/import-graph.py [--root src] [--verbose]

Each file is a node; an edge is a `crate::x`, `ground::x` or `super::x` path that
names another file's module. In the library `crate::` names the library; in the
binary (bin/ground/) `crate::` and `super::` name the binary's own modules and
`ground::` the library, so a circle between the binary's files counts like one in
the library. Layers are those of the book's
"Layout of the code" page (docs/src/layout.md; ARCHITECTURE.md): a file's layer comes from its top-level module name.
Prints the files and lines per layer, every import circle (strongly connected
component of more than one file), every import that points from a lower layer up to a
higher one, the sideways imports inside the stages layer that are not on the allowed
list, and the files over 800 lines, the library's and the binary's (each must be one
concern; see ONE_CONCERN). The binary is the top layer: its imports of the library's
modules are edges like any other, so a library file that imported the binary would
be an upward import. Exit status 1 when a library module is not in LAYERS (a new module must
be placed in a layer on purpose, not fall into the top one), or when there is a
circle or an upward import; 0 otherwise.
"""
import argparse
import re
import sys
from pathlib import Path

# Top-level module -> layer. Anything not listed (the old files before the move) is
# placed by OLD_LAYERS, so that "before" and "after" are measured by the same rule.
LAYERS = {
    # L0 leaves: plain data and pure functions
    "text": 0, "http": 0, "settings": 0, "answer": 0, "answer_stream": 0, "events": 0,
    "extract": 0, "context": 0, "hits": 0, "image_hits": 0, "language": 0, "robots": 0,
    "keystore": 0, "files": 0, "sites": 0, "testing": 0, "index_home": 0,
    "claims": 0,
    # L1
    "error": 1, "config": 1,
    # L2 stages
    "search": 2, "pdf": 2, "fetch": 2, "page": 2, "llm": 2, "grounding": 2, "plan": 2, "cache": 2,
    "calibration": 2, "extract_files": 2, "docs": 2, "state": 2,
    # L3 run
    "pipeline": 3, "report": 3, "session": 3,
    # L4 the service every long-lived face shares
    "service": 4,
    # L5 faces
    "render": 5, "doctor": 5, "mcp": 5, "mcp_stdio": 5, "serve": 5, "batch": 5,
    # L6 the binary (and, before the move, the command-line files inside the library)
    "bin": 6, "cli": 6, "main": 6, "lib": 6,
    "cache_command": 6, "extract_command": 6, "fetch_command": 6, "search_command": 6,
}
LAYER_NAMES = ["L0 leaves", "L1 errors+config", "L2 stages", "L3 run", "L4 service", "L5 faces",
               "L6 binary"]
# Sideways imports the layout allows inside L2 (ARCHITECTURE.md).
# PDFs: a page or a local document is read through the sandbox, and fetch sizes a PDF body
# by pdf's own limit and signature.
ALLOWED_SIDEWAYS = {("plan", "llm"), ("page", "fetch"), ("page", "extract"), ("page", "cache"),
                    ("grounding", "answer"), ("llm", "context"), ("page", "pdf"),
                    ("extract_files", "pdf"), ("fetch", "pdf"), ("docs", "pdf"),
                    # the model download applies the page fetcher's address rules to
                    # redirects off the hub's host
                    ("llm", "fetch"),
                    # shared state (Redis): the rate limit's window, cache entries
                    ("search", "state"), ("cache", "state")}

PATH = re.compile(r"\b(crate|ground|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|ground|super)::\{([^;]*)\}", re.S)


def module_of(path: Path, root: Path) -> tuple:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


BIN = "bin/ground/"


def bin_module_of(rel: str) -> tuple:
    """A binary file's module inside the binary's own tree (main.rs is its root)."""
    parts = list(Path(rel[len(BIN):]).with_suffix("").parts)
    if parts[-1] in ("mod", "main") and (len(parts) > 1 or parts[-1] == "main"):
        parts = parts[:-1]
    return tuple(parts)


def resolve(parts: tuple, modules: dict) -> str | None:
    """The longest prefix of `parts` that is a file's module."""
    for n in range(len(parts), 0, -1):
        if parts[:n] in modules:
            return modules[parts[:n]]
    return None


def strip_comments(text: str) -> str:
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


# Files (library or binary) allowed over 800 lines because each holds one concern (the reason).
ONE_CONCERN = {
    "llm/frames.rs": "one framing reader for NDJSON and SSE; 490 of its lines are tests",
}


def top_module(name: str) -> str:
    return name.split("/")[0].removesuffix(".rs")


def layer_of(name: str) -> int:
    if name.startswith("bin/"):
        return 6
    return LAYERS[top_module(name)]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent / "src"))
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    root = Path(args.root)
    files = sorted(root.rglob("*.rs"))
    # Library modules by path; the binary's files form their own tree under bin/ground/.
    modules, bin_modules = {}, {}
    for f in files:
        rel = str(f.relative_to(root))
        if rel.startswith(BIN):
            bin_modules[bin_module_of(rel)] = rel
        elif not rel.startswith("bin/"):
            modules[module_of(f, root)] = rel
    edges = {}
    for f in files:
        rel = str(f.relative_to(root))
        text = strip_comments(f.read_text())
        # Production code only: a test module may import what it tests with.
        text = text.split("#[cfg(test)]\nmod tests")[0]
        in_bin = rel.startswith(BIN)
        own = bin_module_of(rel) if in_bin else module_of(f, root)
        # What `crate::` and `super::` name from this file.
        own_tree = bin_modules if in_bin else modules
        targets = set()
        paths = []
        for m in PATH.finditer(text):
            paths.append((m.group(1), m.group(2).split("::")[1:]))
        for m in USE_GROUP.finditer(text):
            for item in re.split(r"[,{}\s]+", m.group(2)):
                item = item.split("::")[0]
                if item and item not in ("self", "*"):
                    paths.append((m.group(1), [item]))
        for base, segs in paths:
            if base == "super":
                # `super::` in a child names its parent module (and maybe its items).
                target = resolve(tuple(own[:-1]) + tuple(segs), own_tree)
            elif base == "crate":
                target = resolve(tuple(segs), own_tree)
            elif rel.startswith("bin/") or rel == "main.rs":
                target = resolve(tuple(segs), modules)  # `ground::`: the library
            else:
                continue  # `ground::` inside the library is no module path
            if target and target != rel:
                targets.add(target)
        edges[rel] = targets
    lib = [f for f in edges if not f.startswith("bin/")]
    unknown = sorted({top_module(f) for f in lib if top_module(f) not in LAYERS})
    if unknown:
        for name in unknown:
            print(f"unknown module `{name}`: place it in a layer (LAYERS in {__file__})",
                  file=sys.stderr)
        return 1

    # Tarjan's strongly connected components.
    index, low, stack, on_stack, sccs = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(comp)

    for v in edges:
        if v not in index:
            strong(v)
    circles = [sorted(c) for c in sccs if len(c) > 1]

    upward, sideways = [], []
    for src, targets in sorted(edges.items()):
        for dst in sorted(targets):
            a, b = layer_of(src), layer_of(dst)
            if b > a:
                upward.append((src, dst))
            elif a == b == 2:
                pair = (src.split("/")[0].removesuffix(".rs"), dst.split("/")[0].removesuffix(".rs"))
                if pair[0] != pair[1] and pair not in ALLOWED_SIDEWAYS:
                    sideways.append((src, dst))

    clap_files = [f for f in lib if re.search(r"\bclap\b", (root / f).read_text())]

    lines = {f: sum(1 for _ in (root / f).open()) for f in edges}
    print(f"files: {len(edges)} ({len(lib)} library, {len(edges) - len(lib)} binary), "
          f"lines: {sum(lines.values())}")
    for n, name in enumerate(LAYER_NAMES):
        members = [f for f in edges if layer_of(f) == n]
        print(f"  {name}: {len(members)} files, {sum(lines[f] for f in members)} lines")
        if args.verbose:
            for f in sorted(members):
                print(f"      {lines[f]:5d}  {f}")
    print(f"circles: {len(circles)}" + "".join(
        f"\n  {len(c)} files: {' '.join(c)}" for c in circles))
    print(f"upward imports: {len(upward)}" + "".join(f"\n  {a} -> {b}" for a, b in upward))
    print(f"sideways stage imports not on the allowed list: {len(sideways)}" +
          "".join(f"\n  {a} -> {b}" for a, b in sideways))
    print(f"library files naming clap: {len(clap_files)}" +
          "".join(f"\n  {f}" for f in clap_files))
    long_files = sorted(f for f in edges if lines[f] > 800)
    print(f"files over 800 lines (library and binary): {len(long_files)}" + "".join(
        f"\n  {lines[f]:5d}  {f}: " + ONE_CONCERN.get(f, "NOT ONE CONCERN: split it")
        for f in long_files))
    unexplained = [f for f in long_files if f not in ONE_CONCERN]
    return 1 if circles or upward or unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
