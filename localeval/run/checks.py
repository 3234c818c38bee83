"""What a run checks before any model loads: its data, its run folder and its judge cache."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.metrics.definition import MetricSpec
from localeval.run.source import Source, open_source
from localeval.store.cache import JudgeCache
from localeval.store.held_run import check_run_folder
from localeval.store.out_path import check_out_path
from localeval.store.run_folder import CACHE


def checked_source(samples: Any, specs: Sequence[MetricSpec], size: int, *, checked: bool, explicit: bool,
                   out: str | Path | None, cache: str | Path | bool, replace: bool) -> Source:
    """The run's samples (in chunks of ``size``; ``checked``: a missing field is an error; ``explicit``: the size
    was chosen) once the data, ``out`` and the judge cache are found fit: any problem stops the run here, before a
    model loads."""
    source = open_source(samples, specs, checked, size, explicit)
    check_out_path(out)  # a file, or a place this user cannot write
    probe_cache(cache, out)  # a damaged judge cache
    if out is not None and not replace:
        check_out(Path(out), source, specs)
    return source


def check_out(out: Path, source: Source, specs: Sequence[MetricSpec]) -> None:
    """Stop when ``out`` holds another run's scores (``store.held_run``)."""
    check_run_folder(out, [s.name for s in specs], lambda: (rows for _, rows in source.chunks()), source.count,
                     source.describe() if source.path is not None else None)


def cache_file(cache: str | Path | bool, out: str | Path | None) -> Path | None:
    """The run's judge cache file: the run folder's (True), none (False), or a file shared between runs."""
    if cache is False:
        return None
    if cache is True:
        return Path(out) / CACHE if out is not None else None
    return Path(cache)


def open_cache(cache: str | Path | bool, out: str | Path | None) -> JudgeCache:
    """The run's judge cache (``cache_file``), opened."""
    path = cache_file(cache, out)
    return JudgeCache(path) if path is not None else JudgeCache.disabled()


def probe_cache(cache: str | Path | bool, out: str | Path | None) -> None:
    """Open and close the run's cache where the file is there already: a damaged one, or a newer localeval's,
    stops the run before any model loads (``store.cache_errors``)."""
    path = cache_file(cache, out)
    if path is not None and path.exists():
        JudgeCache(path).close()


__all__ = ["cache_file", "check_out", "checked_source", "open_cache", "probe_cache"]
