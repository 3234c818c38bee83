"""Prediction-powered means: a hand-computed case, the halving rule, and coverage on simulated judges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from localeval.agree.ppi import labels_to_halve, ppi_mean

Z95 = 1.959963984540054


def test_tiny_case_by_hand() -> None:
    # judge on N=4: mean 0.75; deviations .05 -.15 .25 -.15: var (ddof 1) 0.11 / 3
    # labelled: f (0.8, 0.6), Y (0.6, 0.2): residuals (-0.2, -0.4), mean -0.3, var 0.02
    r = ppi_mean([0.8, 0.6, 1.0, 0.6], [0.8, 0.6], [0.6, 0.2])
    assert r.judge_mean == pytest.approx(0.75)
    assert r.rectifier == pytest.approx(-0.3)
    assert r.estimate == pytest.approx(0.45)
    assert r.var_judge == pytest.approx(0.11 / 3) and r.var_rectifier == pytest.approx(0.02)
    half = Z95 * math.sqrt(0.11 / 3 / 4 + 0.02 / 2)
    assert r.ci == pytest.approx((0.45 - half, 0.45 + half))
    assert r.judge_ci == pytest.approx((0.75 - Z95 * math.sqrt(0.11 / 3 / 4), 0.75 + Z95 * math.sqrt(0.11 / 3 / 4)))
    # labels alone: mean 0.4, var 0.08 over 2
    assert r.labels_mean == pytest.approx(0.4)
    assert r.labels_ci == pytest.approx((0.4 - Z95 * 0.2, 0.4 + Z95 * 0.2))
    assert (r.n_total, r.n_labelled, r.level) == (4, 2, 0.95)
    # var_f/N = 0.00917 is more than a quarter of 0.01917: labels alone cannot halve the interval
    assert r.labels_to_halve is None and "not by labels alone" in r.halving_note
    assert r.to_dict()["ci"] == list(r.ci)


def test_level_changes_the_width() -> None:
    f, y = [0.2, 0.4, 0.9, 0.5], [0.0, 1.0, 1.0, 0.0]
    wide, narrow = ppi_mean(f, f, y, level=0.99), ppi_mean(f, f, y, level=0.8)
    assert wide.ci[1] - wide.ci[0] > narrow.ci[1] - narrow.ci[0]
    assert wide.estimate == narrow.estimate == pytest.approx(0.5)  # f on all = f labelled: the labels' mean


def test_labels_to_halve_by_hand() -> None:
    # 0.25/1000 + 0.1/100 = 0.00125 -> a quarter 0.0003125; less the fixed 0.00025: 0.1 / 0.0000625
    assert labels_to_halve(0.25, 1000, 0.1, 100) == 1600
    assert labels_to_halve(0.0, 1000, 0.3, 100) == 400  # no judge term: four times the labels
    assert labels_to_halve(0.25, 100, 0.01, 100) is None  # the judge's variance over N dominates
    assert labels_to_halve(0.25, 1000, 0.0, 100) is None  # errors that never vary: labels do not help
    r = ppi_mean(np.linspace(0, 1, 1000), [0.1, 0.9, 0.5, 0.3], [0.0, 1.0, 1.0, 0.0])
    assert r.labels_to_halve is not None and str(r.labels_to_halve - 4) in r.halving_note
    assert "more than the run" not in r.halving_note
    small = ppi_mean([0.5] * 10, [0.5] * 4, [0.0, 1.0, 1.0, 0.0])  # a constant judge: four times the labels
    assert small.labels_to_halve == 16 and "more than the run's 10 samples" in small.halving_note


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="as many labels"):
        ppi_mean([0.1, 0.2, 0.3], [0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([0.1, 0.2, 0.3], [0.1], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        ppi_mean([0.1, math.nan, 0.3], [0.1, 0.3], [1.0, 0.0])
    with pytest.raises(ValueError, match="level"):
        ppi_mean([0.1, 0.2], [0.1, 0.2], [1.0, 0.0], level=95)


def _coverage(truth: float, y: np.ndarray, f: np.ndarray, n: int) -> tuple[float, float, float, float]:
    """Share of repetitions whose PPI and plain-judge intervals hold ``truth``, and their mean widths."""
    ppi = judge = 0
    width_ppi = width_labels = 0.0
    for y_rep, f_rep in zip(y, f, strict=True):  # the first n samples are the labelled ones
        r = ppi_mean(f_rep, f_rep[:n], y_rep[:n])
        ppi += r.ci[0] <= truth <= r.ci[1]
        judge += r.judge_ci[0] <= truth <= r.judge_ci[1]
        width_ppi += r.ci[1] - r.ci[0]
        width_labels += r.labels_ci[1] - r.labels_ci[0]
    reps = len(y)
    return ppi / reps, judge / reps, width_ppi / reps, width_labels / reps


REPS, N, LABELLED = 300, 2000, 100


def test_coverage_with_a_lenient_judge_that_flips_labels() -> None:
    # Y ~ Bernoulli(0.6); the judge passes 40% of failures and fails 5% of passes: E f = 0.73, bias +0.13
    rng = np.random.default_rng(2023)
    y = (rng.random((REPS, N)) < 0.6).astype(float)
    flip = rng.random((REPS, N)) < np.where(y == 1, 0.05, 0.40)
    f = np.where(flip, 1 - y, y)
    ppi, judge, width_ppi, width_labels = _coverage(0.6, y, f, LABELLED)
    assert 0.90 <= ppi <= 0.99
    assert judge < 0.05  # the plain judge mean is confidently wrong
    assert width_ppi < width_labels  # the judge's scores narrow the labels' interval


def test_coverage_with_a_continuous_judge_biased_upwards() -> None:
    # Y ~ Uniform(0, 1), true mean 0.5; f = clip(Y + 0.1 + noise): the judge reads about 0.1 too high
    rng = np.random.default_rng(7)
    y = rng.random((REPS, N))
    f = np.clip(y + 0.1 + rng.normal(scale=0.15, size=(REPS, N)), 0, 1)
    ppi, judge, width_ppi, width_labels = _coverage(0.5, y, f, LABELLED)
    assert 0.90 <= ppi <= 0.99
    assert judge < 0.05
    assert width_ppi < width_labels
