"""summary.json's record of a run (``run``): metrics, models, policies, cache, start, machine, config, and
whether its judge's answers hold whatever shares their batch; and the judge cache a run opens."""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from localeval.config import RunConfig
from localeval.engine.base import invariance_of
from localeval.metrics.registry import MetricSpec
from localeval.report.invariance import NO_JUDGE
from localeval.store.cache import JudgeCache
from localeval.store.run_folder import CACHE


def run_info(specs: Sequence[MetricSpec], config: RunConfig, store: JudgeCache, started: float,
             engine: Any = None) -> dict[str, Any]:
    """summary.json's record of the run; ``engine``: the judge that answers (None: no metric needs one)."""
    return {
        "metrics": [s.name for s in specs],
        "metric_specs": [s.canonical() for s in specs],
        "judge": config.judge_fingerprint,
        "embedder": config.embedder_fingerprint,
        "on_missing": config.on_missing,
        "long_context": config.long_context,
        "cache": str(store.path.resolve()) if store.path is not None else None,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
        "machine": f"{platform.system()} {platform.machine()}, python {platform.python_version()}",
        "invariance": invariance_record(engine if any(s.definition.judge for s in specs) else None),
        "config": config.to_dict(),
    }


def invariance_record(engine: Any) -> dict[str, Any]:
    """``{"batch_invariant": ..., "note": ...}`` as the judge says it; batch-invariant when no judge is asked."""
    if engine is None:
        return {"batch_invariant": True, "note": NO_JUDGE}
    return asdict(invariance_of(engine))


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
