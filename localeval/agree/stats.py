"""Agreement statistics between a judge and human labels, and their paired bootstrap intervals.

Pure numpy, no I/O. Each statistic has a batched kernel that takes two ``(resamples, n)`` arrays and
returns one value per row, so that a bootstrap computes all its resamples at once; the public
functions are that kernel on one row. A statistic that is undefined (a constant input for a
correlation, chance agreement of 1 for kappa) is NaN.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from localeval.bootstrap import check_bootstrap, percentile_interval, resampled

Values = Sequence[float] | np.ndarray
Kernel = Callable[[np.ndarray, np.ndarray], np.ndarray]

_BLOCK = 2_000_000  # array cells per bootstrap block, to bound memory on large label sets


def _pair(a: Values, b: Values) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"need two 1-D sequences of the same length, got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("need at least one pair of values")
    return x, y


def _row_counts(codes: np.ndarray, k: int) -> np.ndarray:
    """How often each code 0..k-1 occurs in each row of ``codes``: shape (rows, k)."""
    rows = codes.shape[0]
    offset = codes + k * np.arange(rows)[:, None]
    return np.bincount(offset.ravel(), minlength=rows * k).reshape(rows, k)


def _codes(*arrays: np.ndarray) -> tuple[list[np.ndarray], int]:
    """Integer codes of the values over the union of the arrays (sorted), and how many there are."""
    values, inverse = np.unique(np.concatenate([a.ravel() for a in arrays]), return_inverse=True)
    codes, start = [], 0
    for a in arrays:
        codes.append(inverse[start : start + a.size].reshape(a.shape))
        start += a.size
    return codes, values.size


def _accuracy(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray((a == b).mean(axis=-1), dtype=np.float64)


def _kappa(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (ca, cb), k = _codes(a, b)
    n = a.shape[-1]
    observed = (ca == cb).mean(axis=-1)
    chance = (_row_counts(ca, k) * _row_counts(cb, k)).sum(axis=-1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(chance < 1, (observed - chance) / (1 - chance), np.nan)


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    da = a - a.mean(axis=-1, keepdims=True)
    db = b - b.mean(axis=-1, keepdims=True)
    norm = np.sqrt((da * da).sum(axis=-1) * (db * db).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (da * db).sum(axis=-1) / norm
    # a constant row is undefined; tested directly, as its deviations from the mean may be rounding noise
    constant = (np.ptp(a, axis=-1) == 0) | (np.ptp(b, axis=-1) == 0)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n within each row; tied values share the mean of the ranks they span."""
    (codes,), k = _codes(x)
    counts = _row_counts(codes, k)
    # a value's rank: the count of smaller values in its row, plus the middle of its own run of ties
    rank_of_code = np.cumsum(counts, axis=-1) - (counts - 1) / 2.0
    return np.take_along_axis(rank_of_code, codes, axis=-1)


def _spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _pearson(_average_ranks(a), _average_ranks(b))


KERNELS: dict[str, Kernel] = {"accuracy": _accuracy, "kappa": _kappa, "pearson": _pearson, "spearman": _spearman}


def compute(statistic: str, a: Values, b: Values) -> float:
    """The statistic named in KERNELS on two sequences.

    >>> compute("accuracy", [1, 0], [1, 1])
    0.5
    """
    if statistic not in KERNELS:
        raise ValueError(f"unknown statistic {statistic!r}; one of {', '.join(KERNELS)}")
    return _one(KERNELS[statistic], a, b)


def _one(kernel: Kernel, a: Values, b: Values) -> float:
    x, y = _pair(a, b)
    return float(kernel(x[None, :], y[None, :])[0])


def accuracy(a: Values, b: Values) -> float:
    """Share of positions where the two raters give the same label.

    >>> accuracy([1, 0, 1, 1], [1, 1, 1, 0])
    0.5
    """
    return _one(_accuracy, a, b)


def cohen_kappa(a: Values, b: Values) -> float:
    """Cohen's kappa, (observed - chance) / (1 - chance), for two or more classes; NaN when chance is 1.

    >>> round(cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]), 3)  # observed 3/4, chance 1/2*1/4 + 1/2*3/4 = 1/2
    0.5
    """
    return _one(_kappa, a, b)


def pearson(a: Values, b: Values) -> float:
    """Pearson correlation; NaN when either side is constant.

    >>> pearson([1, 2, 3], [2, 4, 7])  # doctest: +ELLIPSIS
    0.99339...
    """
    return _one(_pearson, a, b)


def average_ranks(x: Values) -> list[float]:
    """Ranks from 1, ties sharing their average rank.

    >>> average_ranks([10, 20, 20, 5])
    [2.0, 3.5, 3.5, 1.0]
    """
    data = np.asarray(x, dtype=np.float64)
    return [float(r) for r in _average_ranks(data[None, :])[0]] if data.size else []


def spearman(a: Values, b: Values) -> float:
    """Spearman correlation: Pearson on average ranks (ties handled); NaN when either side is constant.

    >>> spearman([1, 2, 3, 4], [1, 3, 2, 4])
    0.8
    """
    return _one(_spearman, a, b)


def confusion_matrix(truth: Values, predicted: Values, labels: Sequence[float] = (0, 1)) -> list[list[int]]:
    """Counts with rows = true label, columns = predicted label, in the order of ``labels``.

    >>> confusion_matrix([1, 1, 0, 0, 1], [1, 0, 0, 1, 1])
    [[1, 1], [1, 2]]
    """
    x, y = _pair(truth, predicted) if len(truth) else (np.zeros(0), np.zeros(0))
    index = {float(v): i for i, v in enumerate(labels)}
    outside = sorted({float(v) for v in np.concatenate([x, y]) if float(v) not in index})
    if outside:
        raise ValueError(f"values {outside} are not among the labels {list(labels)}")
    matrix = [[0] * len(labels) for _ in labels]
    for t, p in zip(x, y, strict=True):
        matrix[index[float(t)]][index[float(p)]] += 1
    return matrix


def bootstrap_ci(
    statistic: str, a: Values, b: Values, *, level: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile interval of ``statistic`` (a name in KERNELS) over paired resamples; deterministic per seed.

    Both sequences are resampled with the same indices. A resample where the statistic is undefined
    is left out; None when fewer than two pairs, or when no resample gives a value.
    """
    if statistic not in KERNELS:
        raise ValueError(f"unknown statistic {statistic!r}; one of {', '.join(KERNELS)}")
    check_bootstrap(level, resamples)
    x, y = _pair(a, b)
    n = x.size
    if n < 2:
        return None
    kernel = KERNELS[statistic]
    values = resampled(n, lambda draws: kernel(x[draws], y[draws]), resamples=resamples, seed=seed, block_cells=_BLOCK)
    values = values[~np.isnan(values)]
    if not values.size:
        return None
    return percentile_interval(values, level)


def is_binary(values: Values) -> bool:
    """Every value is 0 or 1."""
    return all(v in (0, 1) for v in np.asarray(values, dtype=np.float64).tolist())


def threshold(values: Values, cut: float = 0.5) -> list[int]:
    """1 where the value is at least ``cut``, else 0 (a score read as pass or fail).

    >>> threshold([0.2, 0.5, 1.0])
    [0, 1, 1]
    """
    return [int(v >= cut) for v in np.asarray(values, dtype=np.float64).tolist()]
