"""A run folder read back: per-sample scores with NaN reasons and traces, and the run's summary."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError
from localeval.metrics.registry import definition_of
from localeval.nan import NAN_REASONS, Nan
from localeval.report.aggregate import MetricSummary, soft_scores, summarize
from localeval.store.chunks import CHUNKS
from localeval.store.run_folder import CACHE, SAMPLES, SCORES, SUMMARY, read_scores, read_summary


def higher_is_better(metric: str) -> bool:
    """Whether a higher score is the better one (its definition says; an unknown metric: yes)."""
    definition = definition_of(metric)
    return definition is None or definition.higher_is_better


@dataclass(frozen=True)
class Score:
    """One metric on one sample: a value, or None with the NaN reason; the judge's verdict trace."""

    value: float | None
    nan_reason: str | None = None
    trace: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> float | Nan:
        """The value, or a Nan (a reason outside the closed list reads as ``undefined``)."""
        if self.value is not None:
            return self.value
        reason = self.nan_reason if self.nan_reason in NAN_REASONS else "undefined"
        return Nan(reason)  # type: ignore[arg-type]


@dataclass(frozen=True)
class SampleScores:
    """One row of scores.jsonl."""

    id: str
    metrics: dict[str, Score]
    answerable: bool | None = None


@dataclass
class Run:
    """A run: its samples in file order, what summary.json holds (empty when absent), and the
    sample texts by id (``read_texts``; only the report needs them)."""

    path: Path | None
    samples: list[SampleScores]
    summary: dict[str, Any] = field(default_factory=dict)
    texts: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return str(self.path) if self.path is not None else "(in memory)"

    @property
    def metric_names(self) -> list[str]:
        """Metrics in the order the run chose them (summary.json), then any others the rows hold."""
        names = list(self.summary.get("metrics", {}))
        for sample in self.samples:
            names.extend(m for m in sample.metrics if m not in names)
        return names

    @property
    def usage(self) -> dict[str, dict[str, Any]]:
        return dict(self.summary.get("usage", {}))

    @property
    def total(self) -> dict[str, Any]:
        return dict(self.summary.get("total", {}))

    @property
    def info(self) -> dict[str, Any]:
        return dict(self.summary.get("run", {}))

    def scores(self, metric: str, *, answerable_only: bool = False) -> list[tuple[str, Score]]:
        """(sample id, score) for the samples that have this metric."""
        return [(s.id, s.metrics[metric]) for s in self.samples
                if metric in s.metrics and not (answerable_only and s.answerable is False)]

    def values(self, metric: str, *, answerable_only: bool = False) -> dict[str, float | None]:
        """Sample id -> value (None for NaN)."""
        return {i: sc.value for i, sc in self.scores(metric, answerable_only=answerable_only)}

    def metric_summary(self, metric: str, *, answerable_only: bool = False) -> MetricSummary:
        """Recomputed from the per-sample scores, the file a user can edit or filter."""
        scores = [sc for _, sc in self.scores(metric, answerable_only=answerable_only)]
        return summarize(metric, [sc.outcome for sc in scores], soft_scores([sc.trace for sc in scores]))

    def mean(self, metric: str, *, answerable_only: bool = False) -> float | None:
        return self.metric_summary(metric, answerable_only=answerable_only).mean


RunLike = Run | str | Path
# What evaluate leaves in its run folder from the start (its lock, while it runs or after a kill; judge cache, chunk
# log); summary.json comes last.
STARTED = (".lock", CACHE, CHUNKS)


def _score(metric: str, raw: Any, where: str) -> Score:
    if not isinstance(raw, Mapping):
        raise LocalevalError(f"{where}: metric {metric!r} is not an object")
    value = raw.get("value")
    if value is not None and not isinstance(value, int | float):
        raise LocalevalError(f"{where}: metric {metric!r} has a non-numeric value {value!r}")
    reason = raw.get("nan_reason")
    trace = raw.get("trace") or {}
    return Score(None if value is None else float(value),
                 None if value is not None else (reason or "undefined"),
                 dict(trace) if isinstance(trace, Mapping) else {})


def run_from_rows(rows: Iterable[Mapping[str, Any]], summary: Mapping[str, Any] | None = None,
                  path: Path | None = None) -> Run:
    """A Run from the rows scores.jsonl holds (or ``EvaluationResult.rows()``)."""
    samples = []
    for number, row in enumerate(rows, start=1):
        where = f"{path / SCORES if path else 'scores'} line {number}"
        if "id" not in row:
            raise LocalevalError(f"{where}: the row has no id")
        metrics = row.get("metrics") or {}
        answerable = row.get("answerable")
        samples.append(SampleScores(
            id=str(row["id"]),
            metrics={str(m): _score(str(m), raw, where) for m, raw in metrics.items()},
            answerable=answerable if isinstance(answerable, bool) else None,
        ))
    return Run(path, samples, dict(summary or {}))


def read_texts(folder: Path) -> dict[str, dict[str, Any]]:
    """Sample id -> its row of RUN/samples.jsonl (question, contexts, response, reference, ids); {}
    when the run folder has no samples.jsonl."""
    path = folder / SAMPLES
    if not path.exists():
        return {}
    texts: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise LocalevalError(f"{path} line {number} is not valid JSON ({error.msg}); fix the line, "
                                 f"or delete {SAMPLES} to write the report without the sample texts") from None
        if isinstance(row, Mapping) and "id" in row:
            texts[str(row["id"])] = dict(row)
    return texts


def read_run(folder: str | Path) -> Run:
    """Read RUN/scores.jsonl and, when present, RUN/summary.json (the report reads samples.jsonl)."""
    path = Path(folder)
    if not path.is_dir():
        raise LocalevalError(f"no run folder at {path}: give the folder an `evaluate --out` wrote")
    if not (path / SUMMARY).exists() and any((path / name).exists() for name in STARTED):
        raise LocalevalError(f"the run in {path} did not finish (it has no {SUMMARY} yet): run the same "
                             f"`localeval evaluate ... --out {path}` command again to resume it, then read it")
    try:
        rows = read_scores(path)
        summary = read_summary(path) if (path / SUMMARY).exists() else {}
    except json.JSONDecodeError as error:
        raise LocalevalError(f"{path}: a file is not valid JSON ({error})") from error
    return run_from_rows(rows, summary, path)


def as_run(run: RunLike) -> Run:
    """A Run as given, or read from its folder."""
    return run if isinstance(run, Run) else read_run(run)
