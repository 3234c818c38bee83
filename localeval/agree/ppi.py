"""Prediction-powered inference for a mean (Angelopoulos et al. 2023, as ARES uses it).

The judge scores all N samples (f); humans label n of them (Y). The judge's mean is biased by its
errors; the mean error on the labelled samples, the rectifier Y - f, corrects it:

    estimate = mean_N(f) + mean_n(Y - f),   variance = var_N(f) / N + var_n(Y - f) / n

with a normal-approximation interval. The labelled samples must be a uniform random sample of the
N (they may be among them: the small dependence this brings is ignored, as is usual when n << N).
A good judge has a small rectifier variance, and its interval is narrower than that of the labels
alone, ``mean_n(Y)``, which is reported too.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

from localeval.agree.stats import Values


@dataclass(frozen=True)
class PPIResult:
    """The corrected mean with its interval, next to the judge's plain mean and the labels' mean."""

    estimate: float
    ci: tuple[float, float]
    judge_mean: float  # mean of f over all N: ignores the judge's bias
    judge_ci: tuple[float, float]
    labels_mean: float  # mean of Y over the n labelled: unbiased, but only n samples
    labels_ci: tuple[float, float]
    rectifier: float  # mean_n(Y - f): the judge's bias with the sign flipped
    n_total: int
    n_labelled: int
    var_judge: float  # var_N(f)
    var_rectifier: float  # var_n(Y - f)
    level: float
    labels_to_halve: int | None  # labels that would halve the interval; None when labels alone cannot

    @property
    def halving_note(self) -> str:
        """The labels needed to halve the interval, in words."""
        if self.labels_to_halve is not None:
            more = f"{self.labels_to_halve} labels ({self.labels_to_halve - self.n_labelled} more)"
            if self.labels_to_halve > self.n_total:  # only a larger run, labelled in the same way, could
                return f"{more}: more than the run's {self.n_total} samples"
            return more
        if self.var_rectifier == 0:
            return "labels cannot narrow it: the judge's errors do not vary"
        return "not by labels alone: the judge's variance over N dominates"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("ci", "judge_ci", "labels_ci"):
            data[key] = list(data[key])
        data["halving_note"] = self.halving_note
        return data


def _interval(centre: float, variance: float, z: float) -> tuple[float, float]:
    half = z * math.sqrt(variance)
    return centre - half, centre + half


def labels_to_halve(var_judge: float, n_total: int, var_rectifier: float, n_labelled: int) -> int | None:
    """Labels n' with var_f/N + var_r/n' = (var_f/N + var_r/n) / 4, the width being the root of that sum.

    None when var_f/N alone is at least a quarter of the total: no number of labels can halve it.

    >>> labels_to_halve(0.25, 1000, 0.1, 100)  # 0.00025 + 0.001 -> 0.0003125: var_r/n' = 0.0000625
    1600
    >>> labels_to_halve(0.25, 100, 0.01, 100) is None  # 0.0025 + 0.0001: the judge's term dominates
    True
    """
    fixed = var_judge / n_total
    target = (fixed + var_rectifier / n_labelled) / 4
    room = target - fixed
    if var_rectifier <= 0 or room <= 0:
        return None
    return math.ceil(var_rectifier / room - 1e-9)  # the tolerance keeps an exact answer from rounding up


def ppi_mean(judge_all: Values, judge_labelled: Values, labels: Values, *, level: float = 0.95) -> PPIResult:
    """The prediction-powered mean from judge scores on all samples and (judge score, label) pairs.

    >>> r = ppi_mean([0.8, 0.6, 1.0, 0.6], [0.8, 0.6], [0.6, 0.2])  # 0.75 + mean(-0.2, -0.4) = 0.45
    >>> round(r.estimate, 6), round(r.judge_mean, 6), round(r.rectifier, 6)
    (0.45, 0.75, -0.3)
    """
    f_all = np.asarray(judge_all, dtype=np.float64)
    f_lab = np.asarray(judge_labelled, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if f_lab.shape != y.shape or f_lab.ndim != 1 or f_all.ndim != 1:
        raise ValueError(f"need 1-D inputs, and as many labels as labelled judge scores ({y.shape} vs {f_lab.shape})")
    if f_all.size < 2 or y.size < 2:
        raise ValueError(f"need at least 2 judge scores and 2 labels, got {f_all.size} and {y.size}")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    for name, values in (("judge_all", f_all), ("judge_labelled", f_lab), ("labels", y)):
        if not np.isfinite(values).all():
            raise ValueError(f"{name} holds NaN or infinite values; drop NaN scores first")
    z = NormalDist().inv_cdf(0.5 + level / 2)
    big_n, n = f_all.size, y.size
    residual = y - f_lab
    var_f, var_r, var_y = (float(v.var(ddof=1)) for v in (f_all, residual, y))
    judge_mean, rectifier = float(f_all.mean()), float(residual.mean())
    estimate = judge_mean + rectifier
    return PPIResult(
        estimate=estimate,
        ci=_interval(estimate, var_f / big_n + var_r / n, z),
        judge_mean=judge_mean,
        judge_ci=_interval(judge_mean, var_f / big_n, z),
        labels_mean=float(y.mean()),
        labels_ci=_interval(float(y.mean()), var_y / n, z),
        rectifier=rectifier,
        n_total=big_n,
        n_labelled=n,
        var_judge=var_f,
        var_rectifier=var_r,
        level=level,
        labels_to_halve=labels_to_halve(var_f, big_n, var_r, n),
    )
