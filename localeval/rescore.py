"""Work on a run without new judge calls (rescore), and a cost projection before a run (estimate)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.api import EvaluationResult, as_samples, evaluate_run, missing_field_skips
from localeval.config import JudgeOptions, RunConfig, build_config, model_object
from localeval.data import load_samples
from localeval.data.sample import Sample
from localeval.engine.base import Request, Result, estimate_prompt_tokens
from localeval.errors import LocalevalError
from localeval.metrics.registry import MetricSpec, parse_metrics
from localeval.prompts.base import Settings
from localeval.report.plain import plain_table, plain_text
from localeval.scheduler import total_usage
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
        raise LocalevalError(f"{folder} holds no {SAMPLES}; it was written by an older localeval")
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
        output = config.scheduler(engine, embedder, cache, progress).run(
            samples, specs, skip=missing_field_skips(samples, specs))
    finally:
        cache.close()
    missed = engine.misses if engine else 0
    result = EvaluationResult(samples, specs, output,
                              {**info, "rescored": time.strftime("%Y-%m-%dT%H:%M:%S"), "rescore_misses": missed})
    result.save(folder)
    return result


@dataclass
class CostEstimate:
    """What a run costs (judge calls, tokens, seconds): measured on a few samples, projected to all."""

    measured_samples: int
    total_samples: int
    measured: dict[str, Any]  # summary_dict()["usage"] and ["total"] of the small run
    projected: dict[str, dict[str, float]]  # per metric and "total": calls, tokens, seconds

    def table(self) -> str:
        factor = self.total_samples / self.measured_samples
        header = ("metric", "judge calls", "prompt tok", "compl tok", "engine s")
        keys = ("judge_calls", "prompt_tokens", "completion_tokens", "engine_seconds")
        rows = [(name, *(f"{p[key]:.0f}" for key in keys)) for name, p in self.projected.items()]
        wall = self.projected["total"]["wall_seconds"]
        return "\n".join([f"measured on {self.measured_samples} of {self.total_samples} samples (x{factor:.1f}):",
                          plain_text(plain_table(header, rows, right=range(1, 5)), width=100),
                          f"projected wall time on this machine: {wall:.0f} s ({wall / 3600:.2f} h), "
                          "model loading excluded; larger rounds batch better, so this errs high"])


def estimate(
    data: str | Path | Iterable[Sample | Mapping[str, Any]],
    metrics: str | Sequence[str] | None = None,
    judge: Any = None,
    embedder: Any = None,
    *,
    sample: int = 10,
    seed: int = 0,
    judge_options: JudgeOptions | None = None,
    settings: Settings | None = None,
    progress: bool = True,
) -> CostEstimate:
    """Run the metrics on ``sample`` random samples (no cache) and scale calls, tokens and time."""
    config = build_config(metrics, judge, embedder, settings=settings, seed=seed, judge_options=judge_options)
    return estimate_run(data, config, judge=model_object(judge), embedder=model_object(embedder), sample=sample,
                        progress=progress)


def estimate_run(
    data: str | Path | Iterable[Sample | Mapping[str, Any]],
    config: RunConfig,
    *,
    judge: Any = None,
    embedder: Any = None,
    sample: int = 10,
    progress: bool = True,
) -> CostEstimate:
    """The cost of the run ``config`` describes: ``sample`` random samples (drawn by its seed) run uncached."""
    specs = parse_metrics(list(config.metrics) or None)
    rows = as_samples(data, specs)
    k = max(1, min(sample, len(rows)))
    chosen = sorted(random.Random(config.seed).sample(range(len(rows)), k))
    small = evaluate_run([rows[i] for i in chosen], config, judge=judge, embedder=embedder, cache=False,
                         progress=progress)
    factor = len(rows) / k
    keys = ("judge_calls", "prompt_tokens", "completion_tokens", "engine_seconds", "embed_texts")
    projected = {name: {key: getattr(u, key) * factor for key in keys} for name, u in small.usage().items()}
    total = total_usage(small.usage())
    projected["total"] = {key: getattr(total, key) * factor for key in keys}
    projected["total"]["wall_seconds"] = small.output.wall_seconds * factor
    summary = small.summary_dict()
    return CostEstimate(k, len(rows), {"usage": summary["usage"], "total": summary["total"]}, projected)
