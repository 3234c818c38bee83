"""Judge-free retrieval metrics over context ids: ID-based precision and recall, hit rate, MRR, NDCG."""

from __future__ import annotations

import math
from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.steps import Outcome, no_asks


def _unique(ids: Sequence[str]) -> list[str]:
    """Ids in order, each kept at its first rank only (a repeated chunk is not found twice)."""
    seen: set[str] = set()
    return [i for i in ids if not (i in seen or seen.add(i))]  # type: ignore[func-returns-value]


def id_precision(retrieved: Sequence[str], reference: Sequence[str]) -> float:
    """Distinct retrieved ids that are reference ids, over distinct retrieved ids (Ragas)."""
    got = set(retrieved)
    return len(got & set(reference)) / len(got) if got else math.nan


def id_recall(retrieved: Sequence[str], reference: Sequence[str]) -> float:
    """Distinct reference ids that were retrieved, over distinct reference ids (Ragas)."""
    want = set(reference)
    return len(want & set(retrieved)) / len(want) if want else math.nan


def hit_rate_score(retrieved: Sequence[str], reference: Sequence[str], k: int | None = None) -> float:
    """1.0 when any of the top k retrieved ids is a reference id, else 0.0."""
    want = set(reference)
    return float(any(i in want for i in list(retrieved)[:k]))


def reciprocal_rank(retrieved: Sequence[str], reference: Sequence[str], k: int | None = None) -> float:
    """1/rank of the first reference id among the top k, 0.0 when none is there."""
    want = set(reference)
    for rank, i in enumerate(list(retrieved)[:k], start=1):
        if i in want:
            return 1.0 / rank
    return 0.0


def ndcg_score(retrieved: Sequence[str], reference: Sequence[str], k: int | None = None) -> float:
    """Normalised discounted cumulative gain with binary relevance at cut-off k.

    >>> round(ndcg_score(["x", "a"], ["a"]), 4)
    0.6309
    """
    want = set(reference)
    top = _unique(retrieved)[:k]
    dcg = sum(1.0 / math.log2(rank + 1) for rank, i in enumerate(top, start=1) if i in want)
    cutoff = len(want) if k is None else min(len(want), k)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, cutoff + 1))
    return dcg / ideal if ideal else math.nan


def _ids(sample: Sample) -> tuple[list[str], list[str]]:
    return list(sample.retrieved_context_ids or ()), list(sample.reference_context_ids or ())


@no_asks
def id_context_precision(sample: Sample, trace: dict) -> Outcome:
    """ID-based context precision (no judge)."""
    return id_precision(*_ids(sample))


@no_asks
def id_context_recall(sample: Sample, trace: dict) -> Outcome:
    """ID-based context recall (no judge)."""
    return id_recall(*_ids(sample))


@no_asks
def hit_rate(sample: Sample, trace: dict, k: int | None = None) -> Outcome:
    """Hit rate at k (no judge)."""
    return hit_rate_score(*_ids(sample), k)


@no_asks
def mrr(sample: Sample, trace: dict, k: int | None = None) -> Outcome:
    """Reciprocal rank at k; its mean over samples is the MRR (no judge)."""
    return reciprocal_rank(*_ids(sample), k)


@no_asks
def ndcg(sample: Sample, trace: dict, k: int | None = None) -> Outcome:
    """NDCG at k (no judge)."""
    return ndcg_score(*_ids(sample), k)
