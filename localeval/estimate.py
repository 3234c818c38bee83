"""A cost projection before a run: a few samples measured, the whole run's calls, tokens, time and disk
projected."""

from __future__ import annotations

import random
import sqlite3
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.api import evaluate_run
from localeval.config import JudgeOptions, RunConfig, build_config, model_object
from localeval.data.sample import Sample
from localeval.metrics.registry import parse_metrics
from localeval.prompts.base import Settings
from localeval.report.plain import plain_table, plain_text
from localeval.run.scheduling import chunk_samples
from localeval.run.source import open_source
from localeval.scheduler import total_usage
from localeval.store.run_folder import CACHE, SAMPLES, SCORES


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
