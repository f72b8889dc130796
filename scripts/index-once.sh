#!/bin/sh
# Indexes a folder once with `ground index add`, into a fresh throwaway data folder
# (removed after), so that farm-bench can time whole processes before and after a change:
#
#   farm-bench -n 5 --vs "scripts/index-once.sh OLD_BINARY CORPUS" -- scripts/index-once.sh NEW_BINARY CORPUS
#
# CORPUS defaults to scripts/bench-docs-vs-langchain.py's (/tmp/ground-bench-docs/corpus).
# Nothing of the user's is read or written: HOME and the XDG folders point at the
# throwaway folder too. Exits with ground's exit code; when ground fails, its error
# output is printed (to stderr), so a failed run is not mistaken for a fast one.
set -u
bin=${1:?usage: scripts/index-once.sh GROUND_BINARY [CORPUS]}
corpus=${2:-/tmp/ground-bench-docs/corpus}
dir=$(mktemp -d "${TMPDIR:-/tmp}/ground-index-once.XXXXXX")
GROUND_INDEX_DIR=$dir HOME=$dir XDG_CONFIG_HOME=$dir XDG_DATA_HOME=$dir XDG_CACHE_HOME=$dir \
    "$bin" index add "$corpus" >/dev/null 2>"$dir/.stderr"
rc=$?
[ "$rc" -eq 0 ] || cat "$dir/.stderr" >&2
rm -rf "$dir"
exit $rc
