"""Per-metric summaries: mean over valid scores, NaN share and reasons, the NaN interval, a bootstrap CI.

A NaN is neither a zero nor absent: the true mean lies between the mean that counts every NaN as 0
and the mean over the valid scores, so both are reported next to the share of NaN and its reasons.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from localeval.bootstrap import check_bootstrap, percentile_interval, resampled
from localeval.nan import NAN_REASONS, Nan
from localeval.report.plain import KeptTogether, plain_table, plain_text

# A bare float NaN or None carries no reason; the closest in the closed list is a formula undefined.
_BARE_NAN_REASON = "undefined"
# Cap on resamples x sample size drawn at once, to bound memory on large data sets.
_BOOTSTRAP_BLOCK = 4_000_000
# The NaN-reasons column wraps, but never narrower than this.
_MIN_NAN_WIDTH = 24


@dataclass(frozen=True)
class MetricSummary:
    """One metric over a data set; `interval` is (NaN counted as 0, mean on valid)."""

    name: str
    n: int
    valid: int
    mean: float | None
    nan_count: int
    nan_share: float
    nan_reasons: dict[str, int]
    mean_nan_as_zero: float | None
    interval: tuple[float, float] | None
    ci95: tuple[float, float] | None
    std: float | None
    soft_mean: float | None = None  # soft verdicts: the mean of the soft scores (p(1) in place of 0/1)
    soft_valid: int = 0  # samples with a soft score
    soft_ci95: tuple[float, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists)."""
        data = asdict(self)
        for field in ("interval", "ci95", "soft_ci95"):
            if data[field] is not None:
                data[field] = list(data[field])
        return data


_COUNTS_FROM = 20_000  # from this many values, resample counts per distinct value when there are few of them
_COUNTS_RATIO = 20  # few: at most one distinct value in this many


def bootstrap_mean_ci(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; deterministic for a given seed.

    A large sample with few distinct values (a million scores of a few hundred fractions) is resampled
    as counts per distinct value, one multinomial draw per resample: the same bootstrap distribution of
    the mean as drawing n indices, at a cost of distinct values instead of n per resample.
    """
    check_bootstrap(level, resamples)
    data = np.asarray(values, dtype=np.float64)
    if data.ndim != 1 or data.size == 0:
        raise ValueError("bootstrap_mean_ci needs a non-empty 1-D sequence of values")
    if data.size >= _COUNTS_FROM:
        distinct, counts = np.unique(data, return_counts=True)
        if distinct.size * _COUNTS_RATIO <= data.size:
            draws = np.random.default_rng(seed).multinomial(data.size, counts / data.size, size=resamples)
            return percentile_interval(draws @ distinct / data.size, level)
    means = resampled(data.size, lambda draws: data[draws].mean(axis=1), resamples=resamples, seed=seed,
                      block_cells=_BOOTSTRAP_BLOCK)
    return percentile_interval(means, level)


def summarize(name: str, values: Sequence[float | Nan | None],
              soft: Sequence[float | None] | None = None) -> MetricSummary:
    """Summarize one metric's per-sample scores; a `Nan` counts under its reason.

    ``soft``: each sample's soft score (None where it has none), for a run with soft verdicts.
    """
    valid: list[float] = []
    reasons: Counter[str] = Counter()
    for value in values:
        if isinstance(value, Nan):
            reasons[value.reason] += 1
        elif value is None or math.isnan(value):
            reasons[_BARE_NAN_REASON] += 1
        else:
            valid.append(float(value))
    n = len(values)
    nan_count = n - len(valid)
    order = {reason: i for i, reason in enumerate(NAN_REASONS)}
    ranked = sorted(reasons.items(), key=lambda item: (-item[1], order.get(item[0], len(order))))

    mean = math.fsum(valid) / len(valid) if valid else None
    # A NaN counts as 0 even where scores can dip below 0 (answer relevancy's cosine); the two ends
    # may then cross, and are kept as computed (low = NaN-as-0, high = on-valid), not reordered.
    mean_nan_as_zero = math.fsum(valid) / n if n else None
    interval = (mean_nan_as_zero, mean) if mean is not None and mean_nan_as_zero is not None else None
    return MetricSummary(
        name=name,
        n=n,
        valid=len(valid),
        mean=mean,
        nan_count=nan_count,
        nan_share=nan_count / n if n else 0.0,
        nan_reasons=dict(ranked),
        mean_nan_as_zero=mean_nan_as_zero,
        interval=interval,
        ci95=bootstrap_mean_ci(valid) if len(valid) >= 2 else None,
        std=float(np.std(valid, ddof=1)) if len(valid) >= 2 else None,
        **_soft_fields(soft),
    )


def soft_scores(traces: Sequence[dict[str, Any]]) -> list[float | None] | None:
    """Each sample's soft score from its trace; None when no sample has one (a run without soft verdicts)."""
    scores = [t.get("soft_score") if isinstance(t, dict) else None for t in traces]
    return scores if any(s is not None for s in scores) else None


def _soft_fields(soft: Sequence[float | None] | None) -> dict[str, Any]:
    kept = [float(s) for s in soft or () if s is not None and not math.isnan(s)]
    if not kept:
        return {}
    return {"soft_mean": math.fsum(kept) / len(kept), "soft_valid": len(kept),
            "soft_ci95": bootstrap_mean_ci(kept) if len(kept) >= 2 else None}


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pair(pair: tuple[float, float] | None) -> str:
    return "-" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def _percent(share: float) -> str:
    # Never print 0% or 100% for a share that is not exactly that.
    if 0 < share < 0.005:
        return "<1%"
    if 0.995 <= share < 1:
        return ">99%"
    return f"{share:.0%}"


def _nan_cell(summary: MetricSummary) -> str:
    # A no-break space inside "reason count" keeps the pair on one line when the cell wraps.
    share = _percent(summary.nan_share)
    if summary.nan_count == 0:
        return share
    reasons = ", ".join(f"{reason}\u00a0{count}" for reason, count in summary.nan_reasons.items())
    return f"{share} ({reasons})"


def format_table(summaries: Sequence[MetricSummary], *, width: int = 100) -> str:
    """A plain-text table, one metric a row; long NaN-reason lists wrap to fit `width` columns.

    A run with soft verdicts gets a "soft" column: the mean soft score (p(1) in place of each 0/1 verdict).
    """
    soft = any(s.soft_mean is not None for s in summaries)
    header = ("metric", "mean", *(("soft",) if soft else ()), "valid/n", "NaN % (reasons)", "range", "95% CI")
    rows = [
        (s.name, _number(s.mean), *((_number(s.soft_mean),) if soft else ()), f"{s.valid}/{s.n}",
         KeptTogether(_nan_cell(s), min_width=_MIN_NAN_WIDTH), _pair(s.interval), _pair(s.ci95))
        for s in summaries
    ]
    right = (1, 2, 3, 5, 6) if soft else (1, 2, 4, 5)
    table = plain_text(plain_table(header, rows, right=right), width=width)
    note = "\nrange: [mean with NaN as 0, mean on valid]; the true mean lies between the two."
    if soft:
        note += "\nsoft: the mean soft score, each 0/1 verdict replaced by the judge's p(1) ('-': no verdicts)."
    return table + note
