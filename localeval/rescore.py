"""Work on a run without new judge calls (rescore), and a cost projection before a run (estimate)."""

from __future__ import annotations

import random
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.api import evaluate_run
from localeval.config import JudgeOptions, RunConfig, build_config, model_object
from localeval.data import load_samples
from localeval.data.sample import Sample
from localeval.engine.base import Request, Result, estimate_prompt_tokens
from localeval.errors import LocalevalError
from localeval.metrics.registry import MetricSpec, parse_metrics
from localeval.prompts.base import Settings
from localeval.report.plain import plain_table, plain_text
from localeval.result import EvaluationResult
from localeval.run.scheduling import build_scheduler, chunk_samples
from localeval.run.source import open_source
from localeval.scheduler import total_usage
from localeval.scheduler.chunked import missing_field_skips
from localeval.store.cache import JudgeCache
from localeval.store.run_folder import CACHE, SAMPLES, SCORES, RunLock, read_summary


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


@dataclass
class CostEstimate:
    """What a run costs (judge calls, tokens, seconds, disk): measured on a few samples, projected to all."""

    measured_samples: int
    total_samples: int
    measured: dict[str, Any]  # summary_dict()["usage"] and ["total"] of the small run
    projected: dict[str, dict[str, float]]  # per metric and "total": calls, tokens, seconds
    disk: dict[str, float] = field(default_factory=dict)  # projected bytes per run-folder file
    chunk_size: int | None = None  # samples a chunk of the full run would hold

    def table(self) -> str:
        factor = self.total_samples / self.measured_samples
        header = ("metric", "judge calls", "prompt tok", "compl tok", "engine s")
        keys = ("judge_calls", "prompt_tokens", "completion_tokens", "engine_seconds")
        rows = [(name, *(f"{p[key]:.0f}" for key in keys)) for name, p in self.projected.items()]
        wall = self.projected["total"]["wall_seconds"]
        lines = [f"measured on {self.measured_samples} of {self.total_samples} samples (x{factor:.1f}):",
                 plain_text(plain_table(header, rows, right=range(1, 5)), width=100),
                 f"projected wall time on this machine: {wall:.0f} s ({wall / 3600:.2f} h), "
                 "model loading excluded; larger rounds batch better, so this errs high"]
        if self.disk:
            parts = ", ".join(f"{name} {_size(size)}" for name, size in self.disk.items())
            chunks = -(-self.total_samples // self.chunk_size) if self.chunk_size else 1
            lines.append(f"projected disk: {_size(sum(self.disk.values()))} in the run folder ({parts}); "
                         f"{chunks} chunk(s) of {self.chunk_size or self.total_samples} samples")
        return "\n".join(lines)


def _size(size: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size:.0f} B"


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
    total: int | None = None,
) -> CostEstimate:
    """Run the metrics on ``sample`` random samples (no cache) and scale calls, tokens, time and disk to the
    data set, or to ``total`` samples."""
    config = build_config(metrics, judge, embedder, settings=settings, seed=seed, judge_options=judge_options)
    return estimate_run(data, config, judge=model_object(judge), embedder=model_object(embedder), sample=sample,
                        progress=progress, total=total)


def estimate_run(
    data: str | Path | Iterable[Sample | Mapping[str, Any]],
    config: RunConfig,
    *,
    judge: Any = None,
    embedder: Any = None,
    sample: int = 10,
    progress: bool = True,
    total: int | None = None,
) -> CostEstimate:
    """The cost of the run ``config`` describes: ``sample`` random samples (drawn by its seed) run uncached,
    projected to the data set's size or to ``total`` samples (a large file is read in chunks, never whole)."""
    specs = parse_metrics(list(config.metrics) or None)
    size = chunk_samples(config, judge)
    source = open_source(data, specs, True, size, False)
    k = max(1, min(sample, source.count))
    chosen = sorted(random.Random(config.seed).sample(range(source.count), k))
    wanted, picked = set(chosen), []
    for index, rows in source.chunks():
        picked += [s for i, s in enumerate(rows, index * size) if i in wanted]
    with tempfile.TemporaryDirectory(prefix="localeval-estimate-") as folder:
        small = evaluate_run(picked, config, judge=judge, embedder=embedder, out=folder, cache=True,
                             progress=progress, report=False)
        disk = _disk_per_sample(Path(folder), k)
    count = total or source.count
    factor = count / k
    keys = ("judge_calls", "prompt_tokens", "completion_tokens", "engine_seconds", "embed_texts")
    projected = {name: {key: getattr(u, key) * factor for key in keys} for name, u in small.usage().items()}
    usage = total_usage(small.usage())
    projected["total"] = {key: getattr(usage, key) * factor for key in keys}
    projected["total"]["wall_seconds"] = small.output.wall_seconds * factor
    summary = small.summary_dict()
    return CostEstimate(k, count, {"usage": summary["usage"], "total": summary["total"]}, projected,
                        {name: per * count for name, per in disk.items()}, size if count > size else None)


def _disk_per_sample(folder: Path, samples: int) -> dict[str, float]:
    """Bytes a sample adds to each run-folder file; the cache's from its rows (a small file is mostly empty pages):
    each key twice (table and index), the answer or vector, the time, and some 24 bytes of record overhead."""
    per = {name: (folder / name).stat().st_size / samples for name in (SCORES, SAMPLES)}
    with sqlite3.connect(folder / CACHE) as db:
        answers = db.execute("SELECT COALESCE(SUM(2 * LENGTH(key) + LENGTH(CAST(answer AS BLOB)) "
                             "+ LENGTH(created_at) + 24), 0) FROM answers").fetchone()[0]
        vectors = db.execute("SELECT COALESCE(SUM(2 * LENGTH(key) + LENGTH(vector) + LENGTH(created_at) + 24), 0) "
                             "FROM embeddings").fetchone()[0]
    per[CACHE] = (answers + vectors) / samples
    return per
