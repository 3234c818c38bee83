"""A model folder built whole or not at all: built in a temporary sibling, marked complete, renamed into place."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from localeval.errors import LocalevalError

MARKER = ".localeval-prepared"  # written last: a folder holding it is complete


def not_ours(target: Path) -> LocalevalError:
    """The error for a folder in the way that localeval did not build."""
    return LocalevalError(f"{target} exists but was not made by `localeval models prepare` (no {MARKER} file): "
                          "remove it, or use it by path, then run prepare again.")


def build_folder(target: Path, build: Callable[[Path], list[str]]) -> list[str]:
    """Build one folder with ``build`` (given the temporary folder; returns lines to print) unless it is built."""
    if (target / MARKER).is_file():
        return [f"{target.name}: already prepared in {target}, nothing to do"]
    if target.exists():
        raise not_ours(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f".{target.name}.tmp-*"):  # left by an interrupted prepare
        shutil.rmtree(stale, ignore_errors=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    tmp.mkdir()
    try:
        lines = build(tmp)
        (tmp / MARKER).write_text("complete\n")
        try:
            tmp.rename(target)
        except OSError:
            if not (target / MARKER).is_file():
                raise
            return [f"{target.name}: prepared meanwhile by another process in {target}"]
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return [*lines, f"{target.name}: ready in {target}"]
