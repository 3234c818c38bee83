"""vLLM's engine process as the driver sees it: whether it died, and the requests a failed call left behind.

vLLM runs its engine core in a child process. Once that process is gone (killed, out of memory) every
later call fails; the driver learns it from the process's exit code or from vLLM's ``EngineDeadError``.
A call that failed for any other reason leaves its unfinished requests in the engine, where the next
call would collect their outputs with its own: they are aborted before the call's error goes on.

A call in flight when the process dies would wait for ever: vLLM's synchronous client notices the death
(its monitor shuts the client down) but the thread that feeds it outputs stops without a word, and the
call blocks on an empty queue. ``watched`` wakes it with an error in that queue, as vLLM's own thread does
with an error of its own.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

WATCH_SECONDS = 0.5  # how often a call in flight checks that the engine process lives


def death(llm: Any, error: BaseException | None = None) -> str | None:
    """Why vLLM's engine can answer nothing more (its process gone, or vLLM says it died); None while it lives."""
    gone = [f"{getattr(p, 'name', 'process')} (pid {p.pid}) {exit_text(p.exitcode)}"
            for p in engine_processes(llm) if p.exitcode is not None]
    if gone:
        return f"vLLM's engine process {', '.join(gone)}"
    if error is not None and type(error).__name__ == "EngineDeadError":
        return f"vLLM's engine died: {error}"
    return None


def engine_processes(llm: Any) -> list[Any]:
    """The engine core processes vLLM started for ``llm`` (none where it runs the engine in this process)."""
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    manager = getattr(getattr(core, "resources", None), "engine_manager", None)
    return list(getattr(manager, "processes", None) or ())


def exit_text(code: int) -> str:
    """``was killed by SIGKILL`` for a negative exit code, else ``exited with code N``."""
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


@contextlib.contextmanager
def watched(llm: Any) -> Iterator[None]:
    """While inside: should an engine process of ``llm`` die, the call waiting for its outputs is woken with an
    error (nothing is watched where vLLM runs its engine in this process or keeps no queue of outputs)."""
    processes = engine_processes(llm)
    queue = getattr(getattr(getattr(llm, "llm_engine", None), "engine_core", None), "outputs_queue", None)
    if not processes or queue is None:
        yield
        return
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(WATCH_SECONDS):
            if any(p.exitcode is not None for p in processes):
                queue.put_nowait(RuntimeError("vLLM's engine process is gone"))
                return

    watcher = threading.Thread(target=watch, name="localeval-vllm-watch", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def abort_unfinished(llm: Any) -> None:
    """Abort every request a failed call left in the engine, so the next call collects only its own outputs."""
    engine = getattr(llm, "llm_engine", None)
    states = getattr(getattr(engine, "output_processor", None), "request_states", None)
    if not states or engine is None:
        return
    try:
        engine.abort_request(list(states), internal=True)  # vLLM's internal request ids, as the states hold them
    except TypeError:  # a vLLM whose abort_request takes the ids only
        engine.abort_request(list(states))


__all__ = ["WATCH_SECONDS", "abort_unfinished", "death", "engine_processes", "exit_text", "watched"]
