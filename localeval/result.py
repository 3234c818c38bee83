"""``EvaluationResult``: a run's scores per sample and metric, with NaN reasons, verdict traces and cost.

A result reads its rows from one of two sources. ``MemoryRows`` holds the samples and the scheduler's output
(a run without a run folder). ``FolderRows`` reads the run folder's scores.jsonl and samples.jsonl when asked,
so a run of millions of samples keeps only each metric's values in memory. Rows, frame, summary, strata and
saving all go through that one interface, so both kinds of run give the same answers.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from localeval.data import Sample
from localeval.errors import writing
from localeval.metrics.definition import MetricSpec
from localeval.nan import Nan
from localeval.report.aggregate import MetricSummary, format_table, soft_scores, summarize
from localeval.report.invariance import invariance_warning
from localeval.report.judge_note import toy_judge_lines
from localeval.report.plain import plain_table, plain_text
from localeval.report.strata import stratified_summary
from localeval.scheduler import RunOutput, Usage, total_usage
from localeval.steps import Outcome
from localeval.store.chunks import CHUNKS
from localeval.store.run_folder import (
    RERUN,
    SAMPLES,
    SCORES,
    iter_jsonl,
    result_rows,
    sample_record,
    write_samples,
    write_scores,
    write_summary,
)

if TYPE_CHECKING:
    import pandas as pd


class RowSource(Protocol):
    """Where a result's rows are: what scores.jsonl and samples.jsonl hold, a row per sample in sample order."""

    @property
    def count(self) -> int: ...

    def score_rows(self) -> Iterator[dict[str, Any]]: ...

    def sample_records(self) -> Iterator[dict[str, Any]]: ...

    def soft_scores(self, metric: str) -> list[float | None] | None: ...

    def strata(self) -> dict[str, Any]: ...

    def write(self, folder: Path) -> bool: ...


@dataclass
class MemoryRows:
    """Rows built from the samples and the scheduler's output, both held in memory."""

    samples: list[Sample]
    metrics: list[str]
    output: RunOutput

    @property
    def count(self) -> int:
        return len(self.samples)

    def score_rows(self) -> Iterator[dict[str, Any]]:
        return iter(result_rows(self.samples, self.metrics, self.output))

    def sample_records(self) -> Iterator[dict[str, Any]]:
        return (sample_record(s) for s in self.samples)

    def soft_scores(self, metric: str) -> list[float | None] | None:
        return soft_scores(self.output.traces.get(metric, []))  # None: a run without soft verdicts

    def strata(self) -> dict[str, Any]:
        return stratified_summary(self.score_rows())

    def write(self, folder: Path) -> bool:
        """Write samples.jsonl and scores.jsonl into ``folder``."""
        write_samples(folder, self.samples)
        write_scores(folder, self.score_rows())
        return True


@dataclass
class FolderRows:
    """Rows read from a run folder's scores.jsonl and samples.jsonl; the soft scores and strata, read once
    when the run ended, are kept (``bulk`` computes them in the same pass as the values)."""

    folder: Path
    count: int
    soft: dict[str, list[float | None]]
    strata_data: dict[str, Any]

    def score_rows(self) -> Iterator[dict[str, Any]]:
        return iter_jsonl(self.folder, SCORES)

    def sample_records(self) -> Iterator[dict[str, Any]]:
        return iter_jsonl(self.folder, SAMPLES)

    def soft_scores(self, metric: str) -> list[float | None] | None:
        soft = self.soft.get(metric)
        return soft if soft and any(v is not None for v in soft) else None

    def strata(self) -> dict[str, Any]:
        return self.strata_data

    def write(self, folder: Path) -> bool:
        """Copy samples.jsonl and scores.jsonl into ``folder``; False when it is this run folder itself."""
        if folder.resolve() == self.folder.resolve():
            return False
        for name in (SCORES, SAMPLES):
            shutil.copyfile(self.folder / name, folder / name)
        return True


def _value(outcome: Outcome | None) -> float | None:
    """A score's value; None for a Nan with its reason, a bare None or a float NaN."""
    if outcome is None or isinstance(outcome, Nan):
        return None
    value = float(outcome)
    return None if math.isnan(value) else value


class EvaluationResult:
    """Scores per sample and metric, with NaN reasons, verdict traces and what the run cost.

    ``rows``: the samples scored (their rows are then ``output``'s outcomes and traces), or a ``RowSource``
    such as ``FolderRows``. ``output``: per metric each sample's outcome, in sample order, and the run's cost.
    """

    def __init__(self, rows: Sequence[Sample] | RowSource, specs: Sequence[MetricSpec], output: RunOutput,
                 info: dict[str, Any]) -> None:
        self.specs = list(specs)
        self.output = output
        self.info = info
        self.source: RowSource = MemoryRows(list(rows), self.metric_names, output) if isinstance(
            rows, Sequence) else rows
        self._summaries: dict[str, MetricSummary] | None = None  # a bootstrap over many values is slow: once

    @property
    def metric_names(self) -> list[str]:
        return [s.name for s in self.specs]

    @property
    def sample_count(self) -> int:
        """Samples scored."""
        return self.source.count

    def scores(self, metric: str) -> list[Outcome]:
        """One value or Nan per sample, in sample order."""
        return self.output.outcomes[metric]

    def __getitem__(self, metric: str) -> list[float]:
        """A metric's scores as floats, NaN where a sample has none (as Ragas' ``result["faithfulness"]``);
        a metric is named as the summary names it, or as it was asked for (``ndcg:k=2``)."""
        name = metric if metric in self.output.outcomes else self._parsed(metric)
        if name not in self.output.outcomes:
            raise KeyError(f"no metric {metric!r} in this result; the metrics run: {', '.join(self.metric_names)}")
        return [math.nan if (x := _value(v)) is None else x for v in self.output.outcomes[name]]

    @staticmethod
    def _parsed(metric: str) -> str:
        from localeval.errors import LocalevalError
        from localeval.metrics.registry import parse_metric

        try:
            return parse_metric(metric).name
        except LocalevalError:
            return metric

    def __repr__(self) -> str:
        """One line: the sample count, and each metric's mean over its valid scores and its NaN share."""
        parts = []
        for name in self.metric_names:
            values = self.output.outcomes[name]
            valid = [x for v in values if (x := _value(v)) is not None]
            mean = f"{math.fsum(valid) / len(valid):.4f}" if valid else "nan"
            share = (len(values) - len(valid)) / len(values) if values else 0.0
            parts.append(f"{name}={mean} (NaN {share:.0%})")
        return f"EvaluationResult({self.sample_count} samples: {', '.join(parts)})"

    def summary(self) -> dict[str, MetricSummary]:
        """Per metric: mean over valid samples, NaN share and reasons, interval, bootstrap CI."""
        if self._summaries is None:
            self._summaries = {name: summarize(name, self.output.outcomes[name], self.soft_scores(name))
                               for name in self.metric_names}
        return self._summaries

    def soft_scores(self, metric: str) -> list[float | None] | None:
        """Each sample's soft score for ``metric``; None for a run without soft verdicts."""
        return self.source.soft_scores(metric)

    def usage(self) -> dict[str, Usage]:
        return self.output.usage

    def table(self, judge_note: bool = True) -> str:
        """The printed summary: scores, then cost, then a warning when the judge is not batch-invariant, then
        (``judge_note``) a note when the bundled toy judge scored."""
        warning = invariance_warning(self.info)
        lines = [format_table(list(self.summary().values())), "", _usage_table(self)]
        lines += ["", warning] if warning else []
        lines += toy_judge_lines(self.info) if judge_note else []
        return "\n".join(lines)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per sample: id, then per metric its value, NaN reason and trace (for a large run read
        from its folder, ``iter_rows`` keeps one at a time)."""
        return list(self.iter_rows())

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """The rows of ``rows()``, one at a time."""
        return self.source.score_rows()

    def to_pandas(self) -> pd.DataFrame:
        """A frame indexed by sample id: the samples' own fields (those any sample has), then per metric its
        score (NaN where missing) and ``<metric>__nan_reason``."""
        import pandas as pd

        records = list(self.source.sample_records())
        fields = [f.name for f in dataclasses.fields(Sample)
                  if f.name not in ("id", "extra") and any(f.name in r for r in records)]
        data: dict[str, list[Any]] = {"id": [r["id"] for r in records]}
        for name in fields:
            data[name] = [r.get(name) for r in records]
        for name in self.metric_names:
            values = self.output.outcomes[name]
            data[name] = [math.nan if (x := _value(v)) is None else x for v in values]
            data[f"{name}__nan_reason"] = [None if _value(v) is not None else v.reason if isinstance(v, Nan)
                                           else "undefined" for v in values]
        return pd.DataFrame(data).set_index("id")

    def summary_dict(self) -> dict[str, Any]:
        """Everything summary.json holds."""
        total = total_usage(self.output.usage)
        wall = self.output.wall_seconds
        return {
            "metrics": {name: s.to_dict() for name, s in self.summary().items()},
            "usage": {name: u.to_dict() for name, u in self.output.usage.items()},
            "total": {
                **total.to_dict(),
                "samples": self.sample_count,
                "wall_seconds": round(wall, 3),
                "samples_per_second": round(self.sample_count / wall, 4) if wall > 0 else None,
                "rounds": self.output.rounds,
                "engine_calls": self.output.engine_calls,
                "embed_calls": self.output.embed_calls,
                "prefix_cache_hit_rate": (round(total.cached_prompt_tokens / total.prompt_tokens, 4)
                                          if total.prompt_tokens else None),
            },
            "strata": self.strata(),
            "run": self.info,
        }

    def strata(self) -> dict[str, Any]:
        """summary.json's strata: the answerable samples' relevancy, the unanswerable ones' refusals."""
        return self.source.strata()

    def save(self, folder: str | Path) -> Path:
        """Write samples.jsonl, scores.jsonl and summary.json into ``folder`` (a run folder's own result
        rewrites only its summary)."""
        out = Path(folder)
        with writing(out, "The judge cache is intact", RERUN):
            out.mkdir(parents=True, exist_ok=True)
            if self.source.write(out):
                (out / CHUNKS).unlink(missing_ok=True)  # a chunk log there describes other files' offsets
        write_summary(out, self.summary_dict())
        return out


def _usage_table(result: EvaluationResult) -> str:
    header = ("metric", "asks", "calls", "cached", "prompt tok", "compl tok", "engine s")
    rows = [(name, str(u.asks), str(u.judge_calls), str(u.cache_hits), str(u.prompt_tokens),
             str(u.completion_tokens), f"{u.engine_seconds:.1f}")
            for name, u in [*result.output.usage.items(), ("total", total_usage(result.output.usage))]]
    wall = result.output.wall_seconds
    rate = result.sample_count / wall if wall > 0 else float("inf")
    return "\n".join([plain_text(plain_table(header, rows, right=range(1, 7)), width=100),
                      f"{result.sample_count} samples in {wall:.1f} s ({rate:.2f} samples/s), "
                      f"{result.output.rounds} rounds, {result.output.engine_calls} engine calls"])
