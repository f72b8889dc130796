#!/usr/bin/env python3
"""Runs llama.cpp's own HTTP server (OpenAI API) from the PyPI wheel `xllamacpp`.

    VENV/bin/python e2e/llama_server.py --model FILE.gguf --ctx-size 2048 --port-file FILE

xllamacpp has no command-line entry point: `xllamacpp.Server(CommonParams)` starts
llama.cpp's server (tools/server) in-process, listening on `params.hostnames` and
`params.port`; the fields mirror llama-server's flags (-m -> model.path, -c -> n_ctx,
--host -> hostnames, --port -> port, -a -> model_alias, -t -> cpuparams.n_threads,
-tb -> cpuparams_batch.n_threads).
Port 0 lets the server pick a free port; `Server.listening_address` says which, and
we write that port to --port-file. Then we sleep until killed (SIGTERM/SIGINT).
"""
import argparse
import os
import signal
import sys
import time
from urllib.parse import urlsplit

import xllamacpp


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="path of the GGUF file")
    ap.add_argument("--ctx-size", type=int, default=2048)
    ap.add_argument("--alias", default="smollm2")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: llama.cpp's default)")
    ap.add_argument("--parallel", type=int, default=1, help="slots decoded in one batch (-np)")
    ap.add_argument("--port-file", required=True)
    args = ap.parse_args()

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    if args.threads > 0:
        params.cpuparams.n_threads = args.threads
        params.cpuparams_batch.n_threads = args.threads
    params.hostnames = ["127.0.0.1"]
    params.port = 0
    server = xllamacpp.Server(params)
    address = server.listening_address  # e.g. "http://127.0.0.1:41234"
    port = urlsplit(address).port
    if not port:
        sys.exit(f"llama_server: no port in listening address {address!r}")
    print(f"llama_server: listening on {address}", file=sys.stderr, flush=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(args.port_file + ".tmp", args.port_file)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    while not stop:
        time.sleep(0.2)
    # os._exit: skip interpreter teardown, which can hang on the server's threads
    os._exit(0)


if __name__ == "__main__":
    main()
