"""The percentile bootstrap shared by every interval: index resamples drawn in blocks, one statistic each."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def check_bootstrap(level: float, resamples: int) -> None:
    """Refuse a level outside (0, 1) or fewer than one resample."""
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, got {level}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")


def resampled(
    n: int, statistic: Callable[[np.ndarray], np.ndarray], *, resamples: int, seed: int, block_cells: int
) -> np.ndarray:
    """``statistic`` of each of ``resamples`` index draws (rows of n indices, with replacement).

    Draws are made ``block_cells // n`` rows at a time, which bounds memory; the seed and the block size
    fix the draws, so the same call gives the same values.
    """
    rng = np.random.default_rng(seed)
    block = max(1, block_cells // n)
    values = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, block):
        stop = min(start + block, resamples)
        values[start:stop] = statistic(rng.integers(0, n, size=(stop - start, n)))
    return values


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` interval of the resampled values."""
    tail = (1 - level) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high)
