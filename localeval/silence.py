"""Keeping a run's terminal quiet: whether a stream is a terminal, and silencing the model libraries'
loading bars, logging and warnings while they load and run."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import TextIO


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (else progress is written as plain lines)."""
    return is_terminal(sys.stderr)


def is_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (a stream without ``isatty`` is not)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


_QUIET_ENV = {"TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
              "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}
_QUIET_LOGGERS = ("transformers", "sentence_transformers", "huggingface_hub", "torch", "xgrammar", "accelerate")


@contextlib.contextmanager
def quiet(enabled: bool = True, bars_only: bool = False) -> Iterator[None]:
    """Silence the model libraries while inside: their loading bars, logging and warnings
    (``bars_only``: just the bars, for a log file that should not fill with carriage returns)."""
    if not enabled:
        yield
        return
    env = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1"} if bars_only else _QUIET_ENV
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    loggers = () if bars_only else _QUIET_LOGGERS
    levels = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(logging.ERROR)
    restore_transformers = _quiet_transformers(bars_only)
    try:
        with warnings.catch_warnings():
            if not bars_only:
                warnings.simplefilter("ignore")
            yield
    finally:
        restore_transformers()
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _quiet_transformers(bars_only: bool = False) -> Callable[[], None]:
    """Turn off the bars and logging of transformers and huggingface_hub, where already imported
    (an import inside ``quiet`` reads the environment set there); returns what undoes it."""
    undo: list[Callable[[], None]] = []
    if "transformers.utils.logging" in sys.modules:
        from transformers.utils import logging as hf_logging

        verbosity, bars = hf_logging.get_verbosity(), hf_logging.is_progress_bar_enabled()
        if not bars_only:
            hf_logging.set_verbosity_error()
            undo.append(lambda: hf_logging.set_verbosity(verbosity))
        hf_logging.disable_progress_bar()
        if bars:
            undo.append(hf_logging.enable_progress_bar)
    if "huggingface_hub.utils" in sys.modules:
        from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

        if not are_progress_bars_disabled():
            disable_progress_bars()
            undo.append(enable_progress_bars)

    def restore() -> None:
        for step in undo:
            step()

    return restore


__all__ = ["is_terminal", "quiet", "stderr_is_terminal"]
