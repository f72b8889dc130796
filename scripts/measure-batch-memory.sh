#!/usr/bin/env bash
# Peak memory (RSS) of `ground batch` on a big input and a big earlier output, with no
# model and no search: every id already has a record, so the run reads both files,
# asks nothing and ends. What it measures is what reading them costs.
#
#   scripts/measure-batch-memory.sh [GROUND ...]     (default target/debug/ground)
#
# Each GROUND binary given (e.g. one built before a change and one after) runs on the
# same files, from stdin (a pipe) and from a file; one line of figures each, from
# /usr/bin/time -v. LINES (default 1000000) sets the questions: JSON Lines of about
# 112 bytes each, and an earlier output of one record of about 330 bytes per id.
#
# Measured (debug builds, 2 cores, LINES=1000000: a 116 MiB input, a 292 MiB output of
# records for every id; "before" is the build of b2f860a, which read both whole):
#                  before (read whole)        after (streamed)
#   input          1,076 MB peak RSS, 15 s      113 MB, 14 s
#   input+out      1,743 MB, 30 s               180 MB, 26 s
#   stdin+out      1,742 MB, 27 s               180 MB, 27 s
# What is left is the ids: the input's (to find a duplicate) and the output's (to
# skip what has a record), each a short string in a hash set, and about 20 MB of
# the binary's own.
set -euo pipefail
cd "$(dirname "$0")/.."
lines=${LINES:-1000000}
[ $# -gt 0 ] || set -- target/debug/ground
work=$(mktemp -d /tmp/ground-mbm.XXXXXX)
trap 'rm -rf "$work"' EXIT

python3 - "$work" "$lines" <<'PY'
import json, sys
work, n = sys.argv[1], int(sys.argv[2])
pad = "x" * 40
with open(f"{work}/questions.jsonl", "w") as q, open(f"{work}/answers.jsonl", "w") as a:
    for i in range(1, n + 1):
        q.write(json.dumps({"id": f"q{i:07d}", "question": f"How do tardigrades survive space, take {i}? {pad}"}) + "\n")
        a.write(json.dumps({"id": f"q{i:07d}", "line": i, "answer": "They enter a tun state. " * 10, "grounded": True}) + "\n")
PY
printf 'input %s MiB, output %s MiB, %s ids\n' \
    "$(( $(stat -c %s "$work/questions.jsonl") >> 20 ))" \
    "$(( $(stat -c %s "$work/answers.jsonl") >> 20 ))" "$lines"

# No model, no search: nothing is asked. A cache and home of its own.
export HOME="$work/home" XDG_CACHE_HOME="$work/cache" GROUND_LLM=ollama \
    GROUND_LLM_URL=http://127.0.0.1:9 GROUND_SEARCH=searxng GROUND_SEARXNG_URL=http://127.0.0.1:9
mkdir -p "$HOME"

# Three ways: the input alone (a shard no id falls in: nothing asked, no --out), the
# input and the earlier output, and both with the input from a pipe.
nobody=12345/9223372036854775807
for ground in "$@"; do
    for how in input input+out stdin+out; do
        cp "$work/answers.jsonl" "$work/out.jsonl"
        case $how in
        input)
            /usr/bin/time -v "$ground" batch "$work/questions.jsonl" --shard $nobody -q \
                >/dev/null 2>"$work/time" || true ;;
        input+out)
            /usr/bin/time -v "$ground" batch "$work/questions.jsonl" --out "$work/out.jsonl" -q \
                >/dev/null 2>"$work/time" || true ;;
        stdin+out)
            cat "$work/questions.jsonl" | /usr/bin/time -v "$ground" batch - --out "$work/out.jsonl" -q \
                >/dev/null 2>"$work/time" || true ;;
        esac
        rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
        wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
        summary=$(grep -m1 'ground batch:' "$work/time" || grep -m1 'error' "$work/time" || true)
        printf '%s, %s: peak RSS %s MB, wall %s  (%s)\n' \
            "$ground" "$how" "$(( rss / 1000 ))" "$wall" "$summary"
    done
done
