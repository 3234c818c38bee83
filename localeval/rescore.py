"""Work on a run without new judge calls: every score again from the run's judge cache, no model loaded."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from localeval.config import RunConfig
from localeval.data import load_samples
from localeval.data.sample import Sample
from localeval.engine.base import Request, Result, estimate_prompt_tokens
from localeval.errors import LocalevalError
from localeval.metrics.registry import MetricSpec, parse_metrics
from localeval.result import EvaluationResult
from localeval.run.scheduling import build_scheduler
from localeval.scheduler.chunked import missing_field_skips
from localeval.store.cache import JudgeCache
from localeval.store.run_folder import CACHE, SAMPLES, RunLock, read_summary


class CacheOnlyEngine:
    """Stands in for the judge of a finished run: same fingerprint, answers only from the cache."""

    def __init__(self, fingerprint: str) -> None:
        self._fingerprint = fingerprint
        self.context_window: int | None = None  # no window: a cached answer is looked up as it was asked
        self.misses = 0

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    def count_prompt_tokens(self, request: Request) -> int:
        return estimate_prompt_tokens(request)

    def generate(self, requests: list[Request], on_result: Any = None) -> list[Result]:
        self.misses += len(requests)
        results = [Result(choices=[], prompt_tokens=0, error="no cached answer (rescore loads no model)")
                   for _ in requests]
        for i, r in enumerate(results):
            if on_result is not None:
                on_result(i, r)
        return results


class CacheOnlyEmbedder:
    """Stands in for the embedder of a finished run."""

    def __init__(self, fingerprint: str) -> None:
        self.fingerprint = fingerprint

    def embed(self, texts: list[str]) -> Any:
        raise LocalevalError(
            f"{len(texts)} embeddings are not in the cache; rescore loads no model. Rerun `evaluate` instead."
        )


def rescore(run: str | Path, progress: bool = False) -> EvaluationResult:
    """Recompute every score and the summary of ``run`` from its judge cache alone (no model)."""
    folder = Path(run)
    info = read_summary(folder)["run"]
    samples_file = folder / SAMPLES
    if not samples_file.exists():
        raise LocalevalError(f"{folder} holds no {SAMPLES}: no chunk of its run finished, nothing to rescore")
    if not info.get("cache"):
        raise LocalevalError(f"{folder} was evaluated without a cache (--no-cache): nothing to rescore from")
    cache_path = Path(info["cache"])
    if not cache_path.exists():
        cache_path = folder / CACHE
    samples = load_samples(samples_file)
    config = RunConfig.from_run_record(info)
    specs = parse_metrics(list(config.metrics))
    engine = CacheOnlyEngine(config.judge_fingerprint) if config.judge_fingerprint else None
    embedder = CacheOnlyEmbedder(config.embedder_fingerprint) if config.embedder_fingerprint else None
    with RunLock(folder):
        return _rescore_locked(folder, info, samples, specs, config, engine, embedder, cache_path, progress)


def _rescore_locked(
    folder: Path, info: dict[str, Any], samples: list[Sample], specs: list[MetricSpec], config: RunConfig,
    engine: CacheOnlyEngine | None, embedder: CacheOnlyEmbedder | None, cache_path: Path, progress: bool,
) -> EvaluationResult:
    cache = JudgeCache(cache_path)
    try:
        output = build_scheduler(config, engine, embedder, cache, progress).run(
            samples, specs, skip=missing_field_skips(samples, specs))
    finally:
        cache.close()
    missed = engine.misses if engine else 0
    result = EvaluationResult(samples, specs, output,
                              {**info, "rescored": time.strftime("%Y-%m-%dT%H:%M:%S"), "rescore_misses": missed})
    result.save(folder)  # whole, so a chunked run's log goes with it: a rerun starts over
    return result
