#!/usr/bin/env python3
"""A stand-in for llama-server's process life, not its answers: ``--version`` prints a build line; otherwise it
writes its pid and environment's key length to its log, answers ``/health`` once ``FAKE_LOAD_SECONDS`` have passed,
and ends on SIGTERM; a model path containing "broken" makes it exit 1 while "loading", like a bad GGUF."""

from __future__ import annotations

import http.server
import os
import sys
import threading
import time

args = sys.argv[1:]
if args == ["--version"]:
    print("version: 0.5.0-dev (build 7, commit abc1234)\nbuilt with a test for Linux x86_64")
    sys.exit(0)
model, port = args[args.index("-m") + 1], int(args[args.index("--port") + 1])
print(f"pid {os.getpid()} key {len(os.environ.get('LLAMA_API_KEY', ''))} chars", flush=True)
if "broken" in model:
    print("gguf_init_from_file_impl: failed to read magic", flush=True)
    sys.exit(1)
ready = time.monotonic() + float(os.environ.get("FAKE_LOAD_SECONDS", "0"))


class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if time.monotonic() >= ready else 503)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Health)
threading.Thread(target=server.serve_forever, daemon=True).start()
while True:
    time.sleep(1)
