"""``evaluate_run``, the owner of a run: checks before any model loads, the models, the chunks, the result."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localeval.config import RunConfig
from localeval.data import Sample
from localeval.engine.base import JudgeEngine
from localeval.metrics.registry import parse_metrics
from localeval.result import EvaluationResult
from localeval.run.checks import checked_source
from localeval.run.chunk_loop import run_chunks
from localeval.run.models import load_models
from localeval.run.scheduling import chunk_samples


def evaluate_run(
    samples: str | Path | Iterable[Sample | Mapping[str, Any]],
    config: RunConfig,
    *,
    judge: JudgeEngine | None = None,
    embedder: Any = None,
    out: str | Path | None = None,
    cache: str | Path | bool = True,
    progress: bool = True,
    report: bool = True,
    replace: bool = False,
) -> EvaluationResult:
    """Score samples as ``config`` says; ``judge`` and ``embedder``: loaded objects (None: load the config's).

    The data, the run folder, the judge cache and both model folders are checked before either model loads; then
    the samples are scored in chunks (one chunk when they fit: ``localeval.run.chunk_loop``).
    ``replace``: overwrite the run ``out`` holds, whatever it is (else another run there stops this one).
    """
    specs = parse_metrics(list(config.metrics) or None)
    source = checked_source(samples, specs, chunk_samples(config, judge), checked=config.on_missing == "error",
                            explicit=config.chunk_size is not None, out=out, cache=cache, replace=replace)
    started = time.time()
    engine, emb = load_models(specs, config, judge, embedder, progress, out)
    try:
        config = config.with_models(engine if any(s.definition.judge for s in specs) else None,
                                    emb if any(s.uses_embedder(config.settings.judge_mode) for s in specs) else None)
        return run_chunks(source, specs, config, engine, emb, out=out, cache=cache, progress=progress,
                          report=report, replace=replace, started=started)
    finally:
        if judge is None and engine is not None and hasattr(engine, "close"):
            engine.close()  # the judge this run loaded (a llama-server it started stops here)


__all__ = ["evaluate_run"]
