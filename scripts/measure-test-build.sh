#!/usr/bin/env bash
# The cost of `cargo test` from nothing: wall time, CPU time, peak disk of target/ and
# the number of test binaries, for one commit (issue 20: one integration-test binary).
#
#   scripts/measure-test-build.sh [COMMIT]     (default HEAD)
#
# Checks COMMIT out into a scratch worktree with an empty target directory, runs
# `cargo test --locked` there (the README's test command), samples `du` of the target
# directory every second, and prints one line of figures. Dependencies come from the
# local cargo registry cache; nothing of the checkout it runs in is touched.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short "${1:-HEAD}")
work=$(mktemp -d /tmp/ground-mtb.XXXXXX)
trap 'git worktree remove --force "$work/src" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add --detach "$work/src" "$commit" >/dev/null 2>&1
export CARGO_TARGET_DIR="$work/target"
mkdir -p "$CARGO_TARGET_DIR"
peak_file="$work/peak"
echo 0 >"$peak_file"
(
    peak=0
    while :; do
        # du may race with files cargo removes: take its first number, or skip.
        now=$( (du -sb "$CARGO_TARGET_DIR" 2>/dev/null || true) | head -n 1 | cut -f1)
        if [ -n "$now" ] && [ "$now" -gt "$peak" ]; then
            peak=$now
            echo "$peak" >"$peak_file"
        fi
        sleep 1
    done
) &
sampler=$!
start=$(date +%s.%N)
( cd "$work/src" && /usr/bin/time -f "%e %U %S" -o "$work/time" cargo test --locked >"$work/log" 2>&1 ) || {
    kill "$sampler"; tail -30 "$work/log"; echo "cargo test failed at $commit" >&2; exit 1; }
kill "$sampler" 2>/dev/null || true
read -r wall user sys <"$work/time"
binaries=$(grep -c '^     Running ' "$work/log" || true)
passed=$(grep -Eo 'test result: ok\. [0-9]+ passed' "$work/log" | awk '{s+=$4} END {print s+0}')
peak=$(cat "$peak_file")
printf 'commit %s: cargo test from clean: wall %.0f s, cpu %.0f s, peak target/ %.2f GB, %s test binaries run, %s tests passed\n' \
    "$commit" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$peak / 1000000000" | bc -l)" "$binaries" "$passed"
