"""Context precision (average precision over judged chunks), without reference, and Precision@K."""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.prompts import CONTEXT_USEFULNESS, UsefulnessInput
from localeval.steps import Ask, Steps

EPSILON = 1e-10  # Ragas adds this to the denominator, so all-irrelevant gives 0.0, not NaN


def average_precision(verdicts: Sequence[float]) -> float:
    """Mean of precision@k at the ranks of useful chunks (Ragas' arithmetic, epsilon included).

    >>> round(average_precision([1, 0, 1]), 3)
    0.833
    """
    numerator = sum(sum(verdicts[: i + 1]) / (i + 1) * verdicts[i] for i in range(len(verdicts)))
    return numerator / (sum(verdicts) + EPSILON)


def precision_at_k_score(verdicts: Sequence[float], k: int | None = None) -> float:
    """Share of useful chunks among the top k (all when k is None); order does not matter."""
    top = list(verdicts if k is None else verdicts[:k])
    return sum(top) / len(top)


def _usefulness_asks(sample: Sample, against: str) -> list[Ask]:
    assert sample.user_input is not None
    return [
        Ask(CONTEXT_USEFULNESS, UsefulnessInput(question=sample.user_input, answer=against, context=c))
        for c in sample.retrieved_contexts or ()
    ]


def _judge(sample: Sample, against: str, trace: dict) -> Steps:
    judged = yield _usefulness_asks(sample, against)
    verdicts = [j.verdict for j in judged]
    trace["verdicts"] = verdicts
    trace["reasons"] = [j.reason for j in judged]
    return verdicts  # type: ignore[return-value]


def context_precision(sample: Sample, trace: dict) -> Steps:
    """Each chunk judged useful or not for reaching the reference; average precision in rank order."""
    assert sample.reference is not None
    verdicts = yield from _judge(sample, sample.reference, trace)
    note_soft(trace, average_precision, verdicts)
    return average_precision(verdicts)  # type: ignore[arg-type]


def context_utilization(sample: Sample, trace: dict) -> Steps:
    """Context precision without reference: chunks judged against the response instead."""
    assert sample.response is not None
    verdicts = yield from _judge(sample, sample.response, trace)
    note_soft(trace, average_precision, verdicts)
    return average_precision(verdicts)  # type: ignore[arg-type]


def precision_at_k(sample: Sample, trace: dict, k: int | None = None) -> Steps:
    """Useful chunks among the top k; the same asks as context precision, so no extra calls."""
    assert sample.reference is not None
    verdicts = yield from _judge(sample, sample.reference, trace)
    note_soft(trace, precision_at_k_score, verdicts, k=k)
    return precision_at_k_score(verdicts, k)  # type: ignore[arg-type]
