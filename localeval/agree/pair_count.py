"""Pairwise accuracy: whether the better candidate of each pair scores higher; pure arithmetic."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from localeval.nan import Nan
from localeval.report.aggregate import bootstrap_mean_ci


@dataclass(frozen=True)
class PairCount:
    """How the pairs came out: better candidate higher (win), lower (loss), equal, or NaN on a side."""

    wins: int
    losses: int
    ties: int
    nan_pairs: int

    @property
    def pairs(self) -> int:
        return self.wins + self.losses + self.ties + self.nan_pairs

    @property
    def accuracy(self) -> float:
        """Wins plus half of ties and NaN pairs, over all pairs (NaN when there are none)."""
        if not self.pairs:
            return math.nan
        return (self.wins + 0.5 * (self.ties + self.nan_pairs)) / self.pairs

    def interval(self, level: float = 0.95, resamples: int = 2000, seed: int = 0) -> tuple[float, float] | None:
        """Percentile bootstrap interval of the accuracy, resampling pairs (None under two pairs).

        50 pairs leave about +-0.12 to 0.14 at 95 %: what a judge's figure can and cannot tell apart.
        """
        if self.pairs < 2:
            return None
        credits = [1.0] * self.wins + [0.0] * self.losses + [0.5] * (self.ties + self.nan_pairs)
        return bootstrap_mean_ci(credits, level=level, resamples=resamples, seed=seed)


def score_value(score: float | Nan | None) -> float | None:
    """A score as a float, or None when it is missing or NaN."""
    if score is None or isinstance(score, Nan) or math.isnan(score):
        return None
    return float(score)


def count_pairs(good: Sequence[float | Nan | None], bad: Sequence[float | Nan | None]) -> PairCount:
    """Compare each better candidate's score with its worse twin's.

    >>> count_pairs([1.0, 0.5, 0.2, None], [0.0, 0.5, 0.9, 0.1])
    PairCount(wins=1, losses=1, ties=1, nan_pairs=1)
    """
    if len(good) != len(bad):
        raise ValueError(f"{len(good)} scores for better candidates but {len(bad)} for worse ones")
    wins = losses = ties = nan_pairs = 0
    for g, b in zip(map(score_value, good), map(score_value, bad), strict=True):
        if g is None or b is None:
            nan_pairs += 1
        elif g > b:
            wins += 1
        elif g < b:
            losses += 1
        else:
            ties += 1
    return PairCount(wins, losses, ties, nan_pairs)


def pairwise_accuracy(
    scores_good: Sequence[float | Nan | None], scores_bad: Sequence[float | Nan | None]
) -> float:
    """Share of pairs where the better candidate scores higher; a tie or a NaN on either side is half.

    >>> pairwise_accuracy([1.0, 0.5, 0.2, float("nan")], [0.0, 0.5, 0.9, 0.1])
    0.5
    """
    return count_pairs(scores_good, scores_bad).accuracy

