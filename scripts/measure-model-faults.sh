#!/usr/bin/env bash
# Before/after figures for issue R4 findings 2 and 4 (the embedded model's faults):
#
#   2. `ground answer --model-file crafted.gguf` on a copy of the test model whose
#      tokenizer.ggml.model is changed in place from "gpt2" to "none": exit code and
#      time until the process ends (before: SIGABRT from llama.cpp, 134 in a shell);
#   4. a hub stand-in on loopback that sends the response head, then one byte every
#      DRIP seconds: how long `ground model pull qwen3-0.6b` and
#      `ground answer --timeout 10` run against it (each killed at CAP seconds).
#
# Usage: scripts/measure-model-faults.sh [GROUND_BINARY]   (default target/debug/ground)
# Needs GROUND_TEST_GGUF (SmolLM2-135M-Instruct.Q4_1.gguf, `.ci/embedded | tail -1`).
# Environment: DRIP (default 25), CAP (default 75).
set -uo pipefail
cd "$(dirname "$0")/.."
GROUND=${1:-target/debug/ground}
DRIP=${DRIP:-25}
CAP=${CAP:-75}
: "${GROUND_TEST_GGUF:?set GROUND_TEST_GGUF to the SmolLM2 GGUF (.ci/embedded | tail -1)}"
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

# A clean environment: HOME in the scratch folder, no config, search on a closed port
# (`--fallback offline` then goes straight to the model).
run() {
    env -i PATH="$PATH" HOME="$work/home" NO_COLOR=1 GROUND_SEARCH=searxng \
        GROUND_SEARXNG_URL=http://127.0.0.1:9 GROUND_MODEL_HUB="http://127.0.0.1:$port" \
        timeout -s KILL "$CAP" "$GROUND" "$@"
}
measure() { # label, command...
    local label=$1 start end code
    shift
    start=$(date +%s.%N)
    "$@" >"$work/out" 2>"$work/err"
    code=$?
    end=$(date +%s.%N)
    printf '%-44s exit %-4s %6.1f s   %s\n' "$label" "$code" "$(echo "$end - $start" | bc)" \
        "$(grep -m1 -E '^error:|GGML_ASSERT|Aborted' "$work/err" | cut -c1-150)"
}

# Finding 2: the crafted file.
python3 - "$GROUND_TEST_GGUF" "$work/none.gguf" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
needle = b"tokenizer.ggml.model\x08\0\0\0\x04\0\0\0\0\0\0\0gpt2"
at = data.find(needle)
assert at >= 0, "the test model's tokenizer is not gpt2"
data[at + len(needle) - 4 : at + len(needle)] = b"none"
open(sys.argv[2], "wb").write(data)
PY
port=9
measure "answer --model-file none.gguf" run answer --llm embedded --model-file "$work/none.gguf" \
    --fallback offline -q "do tardigrades survive in space"

# Finding 4: the dripping hub.
python3 - "$DRIP" >"$work/port" <<'PY' &
import socket, sys, threading, time
drip = float(sys.argv[1])
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(8)
print(server.getsockname()[1], flush=True)
def serve(conn):
    try:
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 639447744\r\n\r\n")
        while True:
            time.sleep(drip)
            conn.sendall(b"x")
    except OSError:
        pass
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
PY
sleep 1
port=$(cat "$work/port")
measure "model pull (a byte every ${DRIP} s)" run model pull qwen3-0.6b
measure "answer --timeout 10 (a byte every ${DRIP} s)" run answer --llm embedded --model qwen3-0.6b \
    --timeout 10 -q "do tardigrades survive in space"
echo "(exit 137 = killed at the ${CAP} s cap: still running)"
