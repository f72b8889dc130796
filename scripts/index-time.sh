#!/usr/bin/env bash
# Times `ground index add` on a folder into a throwaway index (GROUND_INDEX_DIR in a
# temp folder), then the incremental re-run (nothing changed), then one search.
# Usage: scripts/index-time.sh [FOLDER] [GROUND_BINARY]
#   default FOLDER: the cargo registry's sources; default binary: target/release/ground
#   if built, else target/debug/ground.
set -euo pipefail
folder="${1:-$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/ | head -1)}"
bin="${2:-}"
if [ -z "$bin" ]; then
  if [ -x target/release/ground ]; then bin=target/release/ground; else bin=target/debug/ground; fi
fi
index_dir="$(mktemp -d)"
trap 'rm -rf "$index_dir" "$index_dir.json"' EXIT
export GROUND_INDEX_DIR="$index_dir"
now() { date +%s.%N; }
t0=$(now)
"$bin" index add "$folder" --collection bench --json > "$index_dir.json"
t1=$(now)
"$bin" index add "$folder" --collection bench --json > /dev/null
t2=$(now)
"$bin" index search "how do I configure logging" --collection bench -n 5 --json > /dev/null
t3=$(now)
python3 - "$index_dir.json" "$t0" "$t1" "$t2" "$t3" "$bin" "$folder" "$index_dir" <<'PY'
import json, sys, os
s = json.load(open(sys.argv[1])); t0, t1, t2, t3 = map(float, sys.argv[2:6])
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(sys.argv[8]) for f in fs)
print(f"binary: {sys.argv[6]}  folder: {sys.argv[7]}")
print(f"files indexed: {s['files']}  passages: {s['passages']}  skipped: {len(s['skipped'])}  not documents: {s['not_documents']}")
print(f"first add: {t1 - t0:.2f} s   re-run (nothing changed): {t2 - t1:.2f} s   one search: {t3 - t2:.3f} s")
print(f"index size: {size / 1e6:.1f} MB")
PY
