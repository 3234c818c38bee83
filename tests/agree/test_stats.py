"""Agreement statistics against hand-computed values, and the paired bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from localeval.agree.stats import (
    accuracy,
    average_ranks,
    bootstrap_ci,
    cohen_kappa,
    compute,
    confusion_matrix,
    is_binary,
    pearson,
    spearman,
    threshold,
)


def test_accuracy_by_hand() -> None:
    assert accuracy([1, 0, 1, 1], [1, 1, 1, 0]) == 0.5  # positions 0 and 2 agree
    assert accuracy([0.5, 1.0], [0.5, 1.0]) == 1.0
    with pytest.raises(ValueError):
        accuracy([1, 0], [1])
    with pytest.raises(ValueError):
        accuracy([], [])


def test_kappa_known_cases() -> None:
    assert cohen_kappa([0, 1, 0, 1, 1], [0, 1, 0, 1, 1]) == 1.0  # perfect
    # observed 2/4; each rater says 1 half the time: chance 1/2 * 1/2 + 1/2 * 1/2 = 1/2 -> 0
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 1, 0]) == 0.0
    assert cohen_kappa([0, 1], [1, 0]) == -1.0  # observed 0, chance 1/2
    # the textbook 2x2 (50 items): yes/yes 20, A yes B no 5, A no B yes 10, no/no 15
    # observed 35/50 = 0.7; A says yes 25/50, B 30/50: chance 0.5*0.6 + 0.5*0.4 = 0.5; kappa 0.2/0.5
    a = [1] * 20 + [1] * 5 + [0] * 10 + [0] * 15
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))  # chance agreement 1: undefined


def test_kappa_three_classes_by_hand() -> None:
    # observed 4/6; A: 1/3 each class; B: 0 -> 2/6, 1 -> 3/6, 2 -> 1/6; chance 1/3 * (2+3+1)/6 = 1/3
    # kappa (2/3 - 1/3) / (2/3) = 1/2
    assert cohen_kappa([0, 1, 2, 0, 1, 2], [0, 1, 2, 1, 1, 0]) == pytest.approx(0.5)


def test_pearson_by_hand() -> None:
    # x - 2 = (-1, 0, 1); y - 13/3 = (-7/3, -1/3, 8/3): sum of products 5, sums of squares 2 and 114/9
    assert pearson([1, 2, 3], [2, 4, 7]) == pytest.approx(5 / math.sqrt(2 * 114 / 9))
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(pearson([0.1, 0.1, 0.1], [1, 2, 3]))  # constant: rounding noise is not a correlation


def test_spearman_with_ties_by_hand() -> None:
    # ranks x (1, 2.5, 2.5, 4), y (1, 3, 2, 4); centred (-1.5, 0, 0, 1.5) and (-1.5, .5, -.5, 1.5):
    # sum of products 4.5, sums of squares 4.5 and 5: 4.5 / sqrt(22.5) = sqrt(0.9)
    assert spearman([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(math.sqrt(0.9))
    assert spearman([1, 2, 3, 4], [10, 20, 30, 1000]) == pytest.approx(1.0)  # ranks only
    assert average_ranks([10, 20, 20, 5]) == [2.0, 3.5, 3.5, 1.0]
    assert average_ranks([7, 7, 7]) == [2.0, 2.0, 2.0]
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))


def test_against_reference_implementations() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        a = rng.integers(0, 4, 40).astype(float)
        b = np.clip(a + rng.integers(-1, 2, 40), 0, 3)
        # ranks written out: values below, plus the middle of the run of equal values
        ranks_a, ranks_b = ([(v < x).sum() + ((v == x).sum() + 1) / 2 for x in v] for v in (a, b))
        assert spearman(a, b) == pytest.approx(np.corrcoef(ranks_a, ranks_b)[0, 1], abs=1e-12)
        assert pearson(a, b) == pytest.approx(np.corrcoef(a, b)[0, 1], abs=1e-12)
        # kappa from its definition, with a contingency table
        table = np.zeros((4, 4))
        np.add.at(table, (a.astype(int), b.astype(int)), 1)
        table /= table.sum()
        chance = table.sum(1) @ table.sum(0)
        assert cohen_kappa(a, b) == pytest.approx((np.trace(table) - chance) / (1 - chance), abs=1e-12)


def test_confusion_matrix_rows_are_truth() -> None:
    assert confusion_matrix([1, 1, 0, 0, 1], [1, 0, 0, 1, 1]) == [[1, 1], [1, 2]]
    assert confusion_matrix([], []) == [[0, 0], [0, 0]]
    assert confusion_matrix([2, 0], [2, 1], labels=(0, 1, 2)) == [[0, 1, 0], [0, 0, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="not among the labels"):
        confusion_matrix([2], [1])


def test_helpers() -> None:
    assert is_binary([0, 1, 1.0]) and not is_binary([0, 0.5])
    assert threshold([0.2, 0.5, 1.0]) == [0, 1, 1]
    assert compute("kappa", [1, 0], [1, 0]) == 1.0
    with pytest.raises(ValueError, match="unknown statistic"):
        compute("median", [1], [1])


def test_bootstrap_is_deterministic_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(0)
    a = rng.normal(size=60)
    b = a + rng.normal(scale=0.8, size=60)
    for name in ("pearson", "spearman"):
        ci = bootstrap_ci(name, a, b, seed=7)
        assert ci == bootstrap_ci(name, a, b, seed=7)
        assert ci != bootstrap_ci(name, a, b, seed=8)
        assert ci is not None and ci[0] < compute(name, a, b) < ci[1] <= 1.0
    assert bootstrap_ci("accuracy", [1, 0, 1], [1, 0, 1]) == (1.0, 1.0)
    assert bootstrap_ci("kappa", [1], [1]) is None  # one pair
    assert bootstrap_ci("kappa", [1, 1, 1], [1, 1, 1]) is None  # undefined in every resample


def test_bootstrap_ranks_each_resample_afresh() -> None:
    # the batched kernel must equal the statistic computed resample by resample
    a, b = [0.1, 0.5, 0.5, 0.9, 0.2, 0.7], [0.0, 0.4, 0.6, 1.0, 0.4, 0.4]
    ci = bootstrap_ci("spearman", a, b, resamples=300, seed=1)
    draws = np.random.default_rng(1).integers(0, 6, size=(300, 6))
    x, y = np.asarray(a), np.asarray(b)
    values = np.array([spearman(x[d], y[d]) for d in draws])
    values = values[~np.isnan(values)]
    assert ci == pytest.approx(tuple(np.quantile(values, [0.025, 0.975])))


def test_bootstrap_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci("accuracy", [1, 0], [1, 0], level=1.5)
    with pytest.raises(ValueError, match="resamples"):
        bootstrap_ci("accuracy", [1, 0], [1, 0], resamples=0)
    with pytest.raises(ValueError, match="unknown"):
        bootstrap_ci("median", [1, 0], [1, 0])
