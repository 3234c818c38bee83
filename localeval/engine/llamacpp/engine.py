"""A GGUF judge run by llama.cpp's own server, which localeval starts, asks and stops (``--engine llama-cpp``).

The server is started on 127.0.0.1 with the file as it is (quantized: a 1.5B Q4_K_M judge is 1.1 GB), its chat
template from the GGUF (``--jinja``), ``parallel`` slots each with a window of ``max_model_len`` tokens, and
``threads`` CPU threads; then the round goes through the server engine in llama-server's dialect (``json_schema``,
slots kept full, its prefix cache).

Invariance: llama-server decodes the asks of several slots in one batch, and a prompt partly from its prefix cache,
so a greedy answer may depend on what else was asked. ``deterministic`` runs one slot with the prefix cache off:
each ask is then decoded alone from its first token, its answer a function of the ask, the file, the build and the
thread count (``benchmarks/README.md``: what that costs).
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from localeval.engine.base import Abilities, Invariance, Request, Result
from localeval.engine.llamacpp.process import LlamaServer, find_binary
from localeval.engine.server.engine import ServerEngine
from localeval.errors import JudgeDied, LocalevalError
from localeval.model_folders.llama_server_build import build_info

DEFAULT_WINDOW = 8192  # tokens a slot holds, where the GGUF trains longer (the longest ask here needs ~6k)
DEFAULT_SLOTS = 4
DIED_SETTLE = 5.0  # seconds a dropped connection waits for the server's exit, to name how it ended
BATCHED = Invariance(False, "llama-server decodes several slots' asks in one batch and reuses cached prompt "
                            "prefixes, so a greedy answer may depend on what else was asked; --deterministic runs "
                            "one slot without the prefix cache, each ask decoded alone")
ALONE = Invariance(True, "--deterministic: one llama-server slot, prefix cache off: each ask is decoded alone from "
                         "its first token")


class LlamaCppEngine(ServerEngine):
    """``gguf`` run by a llama-server this engine starts (``connect``) and stops (``close``)."""

    abilities = Abilities(soft="checked")

    def __init__(self, gguf: str | Path, *, llama_server: str | None = None, threads: int | None = None,
                 parallel: int = DEFAULT_SLOTS, max_model_len: int | None = None, deterministic: bool = False,
                 log_dir: str | Path | None = None, timeout: float = 600.0) -> None:
        from localeval.model_folders.gguf_facts import read_gguf

        self.gguf = Path(gguf)
        self.facts = read_gguf(self.gguf)
        self.binary = find_binary(llama_server)
        self.build = build_info(self.binary)
        self.deterministic = deterministic
        self.slots = 1 if deterministic else parallel
        self.window = max_model_len or min(self.facts.context_length or DEFAULT_WINDOW, DEFAULT_WINDOW)
        self.threads = threads
        arguments = ["-m", str(self.gguf), "-c", str(self.window * self.slots), "-np", str(self.slots),
                     "--jinja", "--no-webui", "--no-warmup", "-fit", "off"]
        arguments += ["--no-kv-unified"] if self.slots > 1 else []
        arguments += ["-t", str(threads), "-tb", str(threads)] if threads else []
        arguments += ["--no-cache-prompt"] if deterministic else []
        self.server = LlamaServer(self.binary, arguments, log_dir)
        self.invariance = ALONE if deterministic else BATCHED
        self._sha256: str | None = None
        self._previous_sigterm: Any = None
        super().__init__(["http://127.0.0.1:1/v1"], kind="llamacpp", timeout=timeout, retries=0)

    def connect(self) -> LlamaCppEngine:
        """Start llama-server on the GGUF and connect to it (``ServerEngine.connect``)."""
        if self.servers:
            return self
        from localeval.model_folders.gguf_judge import file_sha256
        from localeval.model_folders.location import models_dir

        self._sha256 = file_sha256(self.gguf, models_dir())
        self._stop_on_sigterm()
        try:
            self.server.start()
            self.urls = [self.server.url]
            super().connect()
        except BaseException:
            self.close()
            raise
        return self

    @property
    def fingerprint(self) -> str:
        """The file's hash, its quantization, the llama.cpp build and what decides an answer's bits."""
        mode = "alone" if self.deterministic else f"slots{self.slots}"
        return (f"llama-cpp:{self.gguf.name}:sha256={(self._sha256 or '')[:16]}:{self.facts.file_type}:"
                f"{self.build}:threads{self.threads or 'auto'}:{mode}")

    def require_soft(self) -> None:
        """Stop: llama-server gives log-probabilities from before its grammar's mask (the probe shows it), so p(1)
        over the tokens the grammar allows at a verdict cannot be read from them."""
        try:
            super().require_soft()
        except LocalevalError:
            raise LocalevalError(
                f"--soft needs p(1) over the tokens the grammar allows at each verdict; llama-server ({self.build}) "
                "reports log-probabilities taken before its grammar's mask (the schema probe's verdict step lists "
                "tokens the grammar forbids there), so the llama-cpp engine cannot give soft verdicts. Run without "
                "--soft, or use the transformers or vllm engine for them") from None

    def api_key(self) -> str | None:
        return self.server.key  # made for this start, given to the server in its environment

    def generate(self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
                 ) -> list[Result]:
        """The server engine's round; a server that died in it is named with its exit and its log."""
        try:
            return super().generate(requests, on_result)
        except JudgeDied:
            self.server.check_alive(settle=DIED_SETTLE)
            raise

    def close(self) -> None:
        super().close()
        self.server.stop()
        if self._previous_sigterm is not None:
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None
        if self.server.failed:
            warnings.warn(f"llama-server failed; its log is kept at {self.server.log}", stacklevel=2)

    def _stop_on_sigterm(self) -> None:
        """SIGTERM to this process becomes an interrupt, so the server is stopped on the way out (the main thread
        only can take signals; elsewhere the child's death signal still ends it)."""
        if threading.current_thread() is not threading.main_thread():
            return

        def interrupt(signum: int, frame: FrameType | None) -> None:
            raise KeyboardInterrupt

        self._previous_sigterm = signal.signal(signal.SIGTERM, interrupt)


__all__ = ["ALONE", "BATCHED", "DEFAULT_SLOTS", "DEFAULT_WINDOW", "LlamaCppEngine"]
