"""summary.json's record of a run (``run``): metrics, models, policies, cache, start, machine, config, and
whether its judge's answers hold whatever shares their batch."""

from __future__ import annotations

import platform
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from localeval.config import RunConfig
from localeval.engine.base import invariance_of
from localeval.metrics.registry import MetricSpec
from localeval.report.invariance import NO_JUDGE
from localeval.store.cache import JudgeCache


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


__all__ = ["invariance_record", "run_info"]
