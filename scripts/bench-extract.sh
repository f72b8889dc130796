#!/usr/bin/env bash
# Quality and speed of `ground extract` on the extraction benchmark pages in shared/
# (ScrapingHub article-extraction-benchmark, dev half): builds the release binary, runs
# the scorer with one `ground extract` process for all pages, and prints F1 /
# precision / recall and pages/s + MB/s (process wall and CPU time, and the
# in-process extraction time that `ground extract` reports as extract_seconds=).
#
#   scripts/bench-extract.sh                 # all pages in shared/data/extraction-dev
#   REPEAT=5 scripts/bench-extract.sh --worst 10
#
# Environment: SHARED (default ../shared beside the repo), REPEAT (default 3, the
# minimum time of N runs is reported). Extra arguments go to the scorer.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
SCORER="$SHARED/tools/extraction-score.py"
if [ ! -f "$SCORER" ]; then
    echo "error: scorer not found at $SCORER; set SHARED to the shared/ folder" >&2
    exit 2
fi
cargo build --release --quiet --bin ground
CMD="target/release/ground extract --input-dir {in_dir} --output-dir {out_dir}"
echo "command: python3 $SCORER --name ground --repeat ${REPEAT:-3} --batch-cmd \"$CMD\" $*"
python3 "$SCORER" --name ground --repeat "${REPEAT:-3}" --batch-cmd "$CMD" "$@"
