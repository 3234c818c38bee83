"""Did the change help? Two runs paired by sample id: mean difference, paired bootstrap CI, verdict.

A verdict needs ``MIN_PAIRS`` (10) pairs: a bootstrap over fewer has almost no resamples to draw from (two pairs
give three distinct means, two equal differences an interval of width zero), so its interval undercovers and a
verdict from it would be noise. Below the minimum the verdict is "too few pairs" and no interval is drawn.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from localeval.errors import LocalevalError
from localeval.report.aggregate import bootstrap_mean_ci
from localeval.report.comparable import comparison_warnings
from localeval.report.moved import MOVED, MovedSample, format_moved, moved_samples
from localeval.report.runs import Run, RunLike, as_run, higher_is_better

BETTER, WORSE, SAME, TOO_FEW = "B better", "B worse", "no detectable change", "too few pairs"
MIN_PAIRS = 10  # the fewest pairs a verdict is drawn from


@dataclass(frozen=True)
class MetricComparison:
    """One metric over the samples scored on both sides; differences are B - A."""

    metric: str
    higher_is_better: bool
    paired: int  # samples with a valid score in both runs
    missing: int  # samples in only one of the runs
    nan: int  # samples in both runs but NaN on either side
    mean_a: float | None
    mean_b: float | None
    diff: float | None
    ci: tuple[float, float] | None
    verdict: str

    @property
    def excluded(self) -> int:
        return self.missing + self.nan


@dataclass(frozen=True)
class Comparison:
    """Every metric present in both runs, the metrics only one of them has, and why the numbers may differ by more
    than the change (other judges, other settings, a judge that is not batch-invariant: ``warnings``)."""

    run_a: str
    run_b: str
    metrics: list[MetricComparison]
    only_a: list[str]
    only_b: list[str]
    level: float
    resamples: int
    seed: int
    warnings: list[str] = field(default_factory=list)
    min_pairs: int = MIN_PAIRS
    moved: dict[str, list[MovedSample]] = field(default_factory=dict)  # per metric, the samples that moved most

    def get(self, metric: str) -> MetricComparison | None:
        return next((m for m in self.metrics if m.metric == metric), None)


def check_unique_ids(run: Run) -> None:
    """Pairing by id needs each id once."""
    doubles = [i for i, count in Counter(s.id for s in run.samples).items() if count > 1]
    if doubles:
        raise LocalevalError(f"{run.label}: sample ids occur twice ({', '.join(sorted(doubles)[:5])}); "
                             "pairing by id needs unique ids")


def _examples(ids: list[str], shown: int = 3) -> str:
    listed = ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
    return f" ({listed})" if ids else ""


def no_shared_ids(run_a: Run, run_b: Run) -> str | None:
    """Why two runs cannot be paired when no sample id is in both; ``None`` when some ids are."""
    ids_a, ids_b = [s.id for s in run_a.samples], [s.id for s in run_b.samples]
    if set(ids_a) & set(ids_b):
        return None
    sizes = []
    for label, ids in ((run_a.label, ids_a), (run_b.label, ids_b)):
        numbered = " (row numbers: its data had no id column)" if ids and all(i.isdigit() for i in ids) else ""
        sizes.append(f"{label} has {len(ids)} sample{'s' if len(ids) != 1 else ''}{_examples(ids)}{numbered}")
    return (f"no sample id is in both runs, so no sample can be paired: {'; '.join(sizes)}. "
            "Compare two runs of the same data set (the same id column), e.g. before and after a change")


def _verdict(ci: tuple[float, float] | None, higher: bool) -> str:
    if ci is None:
        return TOO_FEW
    if ci[0] > 0:
        return BETTER if higher else WORSE
    if ci[1] < 0:
        return WORSE if higher else BETTER
    return SAME


def compare_metric(run_a: Run, run_b: Run, metric: str, *, resamples: int = 2000, seed: int = 0,
                   level: float = 0.95) -> MetricComparison:
    """Pair one metric's valid scores by sample id and bootstrap the mean difference."""
    check_unique_ids(run_a)
    check_unique_ids(run_b)
    a, b = run_a.values(metric), run_b.values(metric)
    common = [i for i in a if i in b]
    pairs = [(a[i], b[i]) for i in common if a[i] is not None and b[i] is not None]
    diffs = [vb - va for va, vb in pairs]  # type: ignore[operator]
    n = len(pairs)
    ci = bootstrap_mean_ci(diffs, level=level, resamples=resamples, seed=seed) if n >= MIN_PAIRS else None
    higher = higher_is_better(metric)
    return MetricComparison(
        metric=metric,
        higher_is_better=higher,
        paired=n,
        missing=len(a) + len(b) - 2 * len(common),
        nan=len(common) - n,
        mean_a=math.fsum(va for va, _ in pairs) / n if n else None,  # type: ignore[misc]
        mean_b=math.fsum(vb for _, vb in pairs) / n if n else None,  # type: ignore[misc]
        diff=math.fsum(diffs) / n if n else None,
        ci=ci,
        verdict=_verdict(ci, higher),
    )


def compare_runs(run_a: RunLike, run_b: RunLike, *, resamples: int = 2000, seed: int = 0,
                 level: float = 0.95, moved: int = MOVED) -> Comparison:
    """Per metric present in both runs: means on the paired samples, B - A with a bootstrap CI, and the ``moved``
    samples whose score changed most."""
    a, b = as_run(run_a), as_run(run_b)
    check_unique_ids(a)
    check_unique_ids(b)
    unpaired = no_shared_ids(a, b)
    if unpaired is not None:
        raise LocalevalError(unpaired)
    names_a, names_b = a.metric_names, b.metric_names
    metrics = [compare_metric(a, b, m, resamples=resamples, seed=seed, level=level)
               for m in names_a if m in names_b]
    return Comparison(a.label, b.label, metrics, [m for m in names_a if m not in names_b],
                      [m for m in names_b if m not in names_a], level, resamples, seed, comparison_warnings(a, b),
                      moved={m.metric: moved_samples(a, b, m.metric, moved) for m in metrics})


def _num(value: float | None, sign: bool = False) -> str:
    return "-" if value is None else (f"{value:+.3f}" if sign else f"{value:.3f}")


def format_ci(ci: tuple[float, float] | None) -> str:
    return "-" if ci is None else f"[{ci[0]:+.3f}, {ci[1]:+.3f}]"


def comparison_rows(c: Comparison) -> list[list[str]]:
    """The table's header and cells, shared by the text and the HTML rendering."""
    head = ["metric", "A", "B", "B - A", f"{c.level:.0%} CI", "pairs", "left out", "verdict"]
    rows = [head]
    for m in c.metrics:
        left = f"{m.excluded} ({m.missing} missing, {m.nan} NaN)" if m.excluded else "0"
        name = m.metric if m.higher_is_better else f"{m.metric} (lower is better)"
        verdict = f"{TOO_FEW} (< {c.min_pairs})" if m.verdict == TOO_FEW else m.verdict
        rows.append([name, _num(m.mean_a), _num(m.mean_b), _num(m.diff, True), format_ci(m.ci),
                     str(m.paired), left, verdict])
    return rows


def verdict_rule(c: Comparison) -> str:
    """What a verdict needs, and which metrics had too few pairs for one."""
    few = [f"{m.metric} ({m.paired})" for m in c.metrics if m.verdict == TOO_FEW]
    return (f"A verdict needs at least {c.min_pairs} pairs and the interval to exclude 0."
            + (f" Too few pairs to tell: {', '.join(few)}; score more samples in both runs." if few else ""))


def format_comparison(c: Comparison) -> str:
    """A plain-text table, one metric a row."""
    rows = comparison_rows(c)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    right = {1, 2, 3, 5}

    def line(cells: list[str]) -> str:
        return "  ".join(x.rjust(w) if i in right else x.ljust(w)
                         for i, (x, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

    out = [f"A: {c.run_a}", f"B: {c.run_b}", "", line(rows[0]), line(["-" * w for w in widths])]
    out += [line(r) for r in rows[1:]]
    if not c.metrics:
        out.append("(no metric is in both runs)")
    out.append("")
    out.append(f"Means on the samples valid in both runs; paired bootstrap, {c.resamples} resamples, "
               f"seed {c.seed}. {verdict_rule(c)}")
    for side, names in (("A", c.only_a), ("B", c.only_b)):
        if names:
            out.append(f"only in {side}: {', '.join(names)}")
    if any(c.moved.values()):
        out += ["", format_moved(c.moved)]
    if c.warnings:
        out += ["", "Warnings (the runs may differ by more than the change):", *(f"  - {w}" for w in c.warnings)]
    return "\n".join(out)


def comparison_to_dict(c: Comparison) -> dict[str, Any]:
    """A JSON-ready dict."""
    data = asdict(c)
    for m, raw in zip(c.metrics, data["metrics"], strict=True):
        raw["ci"] = list(m.ci) if m.ci is not None else None
        raw["excluded"] = m.excluded
    return data
