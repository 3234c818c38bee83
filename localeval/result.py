"""``EvaluationResult``: a run's scores per sample and metric, with NaN reasons, verdict traces and cost."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.data import Sample
from localeval.metrics.definition import MetricSpec
from localeval.nan import Nan
from localeval.report.aggregate import MetricSummary, format_table, soft_scores, summarize
from localeval.report.invariance import invariance_warning
from localeval.report.plain import plain_table, plain_text
from localeval.report.strata import stratified_summary
from localeval.scheduler import RunOutput, Usage, total_usage
from localeval.steps import Outcome
from localeval.store.chunks import CHUNKS
from localeval.store.run_folder import result_rows, write_samples, write_scores, write_summary

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class EvaluationResult:
    """Scores per sample and metric, with NaN reasons, verdict traces and what the run cost."""

    samples: list[Sample]
    specs: list[MetricSpec]
    output: RunOutput
    info: dict[str, Any]

    @property
    def metric_names(self) -> list[str]:
        return [s.name for s in self.specs]

    def scores(self, metric: str) -> list[Outcome]:
        """One value or Nan per sample, in sample order."""
        return self.output.outcomes[metric]

    def summary(self) -> dict[str, MetricSummary]:
        """Per metric: mean over valid samples, NaN share and reasons, interval, bootstrap CI."""
        return {name: summarize(name, self.output.outcomes[name], self.soft_scores(name)) for name in self.metric_names}

    def soft_scores(self, metric: str) -> list[float | None] | None:
        return soft_scores(self.output.traces.get(metric, []))  # None: a run without soft verdicts

    def usage(self) -> dict[str, Usage]:
        return self.output.usage

    def table(self) -> str:
        """The printed summary: scores, then cost, then a warning when the judge is not batch-invariant."""
        warning = invariance_warning(self.info)
        lines = [format_table(list(self.summary().values())), "", _usage_table(self)]
        lines += ["", warning] if warning else []
        return "\n".join(lines)

    def rows(self) -> list[dict[str, Any]]:
        """One dict per sample: id, then per metric its value, NaN reason and trace."""
        return result_rows(self.samples, self.metric_names, self.output)

    @property
    def sample_count(self) -> int:
        """Samples scored."""
        return len(self.samples)

    def to_pandas(self) -> pd.DataFrame:
        """A frame indexed by sample id: one column per metric (NaN where missing) and its reason."""
        import pandas as pd

        data: dict[str, list[Any]] = {"id": [s.id for s in self.samples]}
        for name in self.metric_names:
            values = self.output.outcomes[name]
            data[name] = [float("nan") if isinstance(v, Nan) else v for v in values]
            data[f"{name}__nan_reason"] = [v.reason if isinstance(v, Nan) else None for v in values]
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
        return stratified_summary(self.rows())

    def save(self, folder: str | Path) -> Path:
        """Write scores.jsonl and summary.json into ``folder``."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        write_samples(out, self.samples)
        write_scores(out, self.rows())
        write_summary(out, self.summary_dict())
        (out / CHUNKS).unlink(missing_ok=True)  # a chunked run's log, whose offsets are another scores.jsonl's
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
