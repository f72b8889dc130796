#!/usr/bin/env python3
"""Lay out the docs development set in a folder, from cargo's registry sources.

    scripts/docs-devset/assemble.py OUT [--registry DIR]

Copies every file named in manifest.txt (beside this script) from
`$CARGO_HOME/registry/src/*/<crate>-<version>/<path>` to `OUT/<crate>/<path>`, after
checking its sha256, so the set is the same on every machine. The crates are
dependencies in Cargo.lock: `cargo fetch` brings them. No third-party text is kept
in the repository, only the list.

The questions (questions.json) name their expected files by the same
`<crate>/<path>` form. Used by scripts/measure-docs-recall.py.
"""
import argparse
import glob
import hashlib
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def manifest():
    """(sha256, crate, version, path) for every line of manifest.txt."""
    rows = []
    for line in (HERE / "manifest.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        sha, crate, version, path = line.split(maxsplit=3)
        rows.append((sha, crate, version, path))
    return rows


def registry_roots(given):
    if given:
        return [Path(given)]
    home = Path(os.environ.get("CARGO_HOME") or Path.home() / ".cargo")
    return [Path(p) for p in sorted(glob.glob(str(home / "registry" / "src" / "*")))]


def assemble(out, registry=None):
    """Copy the set into `out` (created); returns the number of files. Exits with a
    message naming the fix when a crate is missing or a file's hash differs."""
    roots = registry_roots(registry)
    out = Path(out)
    n = 0
    for sha, crate, version, path in manifest():
        src = None
        for root in roots:
            cand = root / f"{crate}-{version}" / path
            if cand.is_file():
                src = cand
                break
        if src is None:
            sys.exit(
                f"assemble: {crate}-{version}/{path} is not in the cargo registry sources "
                f"({', '.join(map(str, roots)) or 'none found'}); run `cargo fetch` in the repository"
            )
        data = src.read_bytes()
        got = hashlib.sha256(data).hexdigest()
        if got != sha:
            sys.exit(f"assemble: {src} has sha256 {got}, the manifest says {sha}")
        dest = out / crate / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
        n += 1
    return n


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="folder to lay the set out in (created; existing files are overwritten)")
    ap.add_argument("--registry", help="a registry source folder (default: $CARGO_HOME/registry/src/*)")
    args = ap.parse_args()
    n = assemble(args.out, args.registry)
    print(f"assemble: {n} files in {args.out}")


if __name__ == "__main__":
    main()
