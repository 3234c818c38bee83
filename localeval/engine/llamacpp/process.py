"""llama.cpp's ``llama-server`` as a child of this process: found, started on 127.0.0.1 on a free port, waited for,
and stopped on every way out.

The API key is made fresh for each start and reaches the server in its environment (``LLAMA_API_KEY``), never on
its command line (``ps`` shows that) or on disk. The child is asked to die with its parent (Linux's
``PR_SET_PDEATHSIG``), so a localeval killed outright (SIGKILL, the OOM killer) leaves no server behind; a normal
end, an error, Ctrl-C and SIGTERM stop it through ``stop``. Its output goes to a log file, which ``stop`` removes
after a clean run and keeps when the server failed (the message names it).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx

from localeval.engine.vllm_process import exit_text
from localeval.errors import JudgeDied, LocalevalError
from localeval.model_folders.llama_server_build import BUILT, NAME
from localeval.model_folders.location import models_dir

BINARY = NAME
BINARY_ENV = "LOCALEVAL_LLAMA_SERVER"
START_SECONDS = 600.0  # a large GGUF on a slow disk loads in minutes
STOP_SECONDS = 10.0
LOG = "llama-server.log"
_PR_SET_PDEATHSIG = 1


def built_binary() -> Path:
    """Where `localeval models prepare llama-server` puts the binary it builds."""
    return models_dir() / BUILT / "bin" / BINARY


def find_binary(given: str | None = None) -> Path:
    """The llama-server to run: ``given`` (--llama-server), else $LOCALEVAL_LLAMA_SERVER, else the one
    `localeval models prepare llama-server` built, else ``llama-server`` on PATH; an error that says how to get one."""
    for path, said in ((given, "--llama-server"), (os.environ.get(BINARY_ENV), f"${BINARY_ENV}")):
        if path:
            found = Path(path).expanduser()
            if found.is_dir():
                found = found / BINARY
            if not (found.is_file() and os.access(found, os.X_OK)):
                raise LocalevalError(f"{said} names {path}, which is not an executable llama-server")
            return found.resolve()
    if built_binary().is_file():
        return built_binary()
    on_path = shutil.which(BINARY)
    if on_path:
        return Path(on_path).resolve()
    raise LocalevalError(
        f"the llama-cpp engine needs llama.cpp's {BINARY}, and none was found (not at {built_binary()}, not on "
        "PATH): `localeval models prepare llama-server` builds it from llama.cpp's source (about 5 minutes on 2 "
        "cores), or give --llama-server PATH (docs/judge-servers.md: llama.cpp, run by localeval)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class LlamaServer:
    """One llama-server process: ``start`` runs it and waits until it answers ``/health``; ``stop`` ends it."""

    def __init__(self, binary: Path, arguments: Sequence[str], log_dir: str | Path | None = None) -> None:
        self.binary, self.arguments = binary, list(arguments)
        self._temp = None if log_dir is not None else tempfile.mkdtemp(prefix="localeval-llama-")
        self.log = Path(log_dir if log_dir is not None else self._temp or ".") / LOG
        self.port = 0
        self.key = ""
        self.process: subprocess.Popen[bytes] | None = None
        self.failed = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> LlamaServer:
        """Run the server on a free port of 127.0.0.1 and wait until it has loaded the model."""
        self.port, self.key = free_port(), secrets.token_urlsafe(24)
        command = [str(self.binary), *self.arguments, "--host", "127.0.0.1", "--port", str(self.port)]
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "LLAMA_API_KEY": self.key}
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            env=env, preexec_fn=_die_with_parent)
        try:
            self._wait_ready()
        except BaseException:
            self.failed = True
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        with httpx.Client(timeout=5.0) as client:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise LocalevalError(f"llama-server {exit_text(self.process.returncode)} while loading the judge; "
                                         f"{self._log_said()}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"http://127.0.0.1:{self.port}/health").status_code == 200:
                        return
                time.sleep(0.2)
        raise LocalevalError(f"llama-server did not answer /health within {START_SECONDS:.0f} s; {self._log_said()}")

    def check_alive(self, settle: float = 0.0) -> None:
        """Raise JudgeDied where the server process has ended (the answers so far are in the judge cache).

        ``settle``: seconds to wait for an exit first, where the connection has just dropped: the socket closes
        before the process is reaped, so a server killed mid-answer may still look alive for a moment."""
        if self.process is not None and settle > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(settle)
        if self.process is not None and self.process.poll() is not None:
            self.failed = True
            raise JudgeDied(f"llama-server {exit_text(self.process.returncode)}; {self._log_said()}")

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL after ``STOP_SECONDS``); its log is removed unless it failed."""
        process, self.process = self.process, None
        if process is not None:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            elif process.returncode not in (0, -signal.SIGTERM):
                self.failed = True
        if not self.failed:
            self.log.unlink(missing_ok=True)
            if self._temp is not None:
                shutil.rmtree(self._temp, ignore_errors=True)

    def _log_said(self) -> str:
        lines = _tail(self.log)
        last = f" Its last lines:\n{lines}" if lines else ""
        return f"its log is kept at {self.log}.{last}"


def _tail(log: Path, lines: int = 8) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join("  " + line for line in text.strip().splitlines()[-lines:])


@contextlib.contextmanager
def running(server: LlamaServer) -> Iterator[LlamaServer]:
    """``server`` started, and stopped on the way out whatever the way."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


__all__ = ["BINARY", "BINARY_ENV", "LOG", "LlamaServer", "built_binary", "find_binary", "free_port", "running"]
