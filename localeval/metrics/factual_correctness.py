"""Factual correctness: claims of the response checked against the reference, and back."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import CLAIM_PROMPTS, NLI, ClaimsInput, NLIInput
from localeval.steps import Ask, Steps

P_EPSILON = 1e-8  # Ragas' epsilon in precision and recall modes (its F-beta has none)


def fbeta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    """F-beta from counts, as Ragas computes it: no epsilon, a zero denominator gives a zero
    precision or recall, and 0.0 when both are 0 (the operations in Ragas' order, so exact halves
    such as 0.875 stay exact)."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta**2
    return (1 + b2) * (precision * recall) / (b2 * precision + recall)


def factual_score(
    response_verdicts: Sequence[float], reference_verdicts: Sequence[float] | None, mode: str = "f1",
    beta: float = 1.0,
) -> float:
    """TP: response claims the reference supports; FP: those it does not; FN: reference claims
    the response does not support. Rounded to 2 decimals with numpy, as Ragas does (``np.round``
    scales by 100 and rounds half to even, which differs from ``round`` on some values). On p(1) in place
    of 0/1 (the soft score) the counts are expected counts."""
    tp = sum(response_verdicts)
    fp = len(response_verdicts) - tp
    fn = 0 if mode == "precision" else sum(1 - v for v in reference_verdicts or [])
    if mode == "precision":
        score = tp / (tp + fp + P_EPSILON)
    elif mode == "recall":
        score = tp / (tp + fn + P_EPSILON)
    else:
        score = fbeta(tp, fp, fn, beta)
    return float(np.round(score, 2))


def factual_correctness(
    sample: Sample,
    trace: dict,
    mode: str = "f1",
    beta: float = 1.0,
    atomicity: str = "low",
    coverage: str = "low",
    empty: str = "zero",
) -> Steps:
    """Decompose response (and, unless precision mode, reference) into claims; verify each side.

    ``empty``: when the formula's denominator has no claims at all (Ragas scores that 0/0 as 0.0,
    by its epsilon in precision and recall modes, by a zero test in F-beta): ``zero`` (Ragas) or
    ``nan`` (``Nan("no_claims")``).
    """
    assert sample.response is not None and sample.reference is not None
    prompt = CLAIM_PROMPTS[(atomicity, coverage)]  # type: ignore[index]
    sides = [sample.response] if mode == "precision" else [sample.response, sample.reference]
    decomposed = yield [Ask(prompt, ClaimsInput(response=text)) for text in sides]
    claims = [d.claims for d in decomposed]
    # Response claims are checked against the reference; reference claims against the response.
    against = [sample.reference, sample.response]
    asks = [Ask(NLI, NLIInput(context=against[i], statements=c)) for i, c in enumerate(claims) if c]
    judged = iter((yield asks) if asks else [])
    verdicts = [[v.verdict for v in next(judged).verdicts] if c else [] for c in claims]
    trace["response_claims"], trace["response_verdicts"] = claims[0], verdicts[0]
    if mode != "precision":
        trace["reference_claims"], trace["reference_verdicts"] = claims[1], verdicts[1]
    if empty == "nan" and _no_denominator(verdicts, mode):
        return Nan("no_claims")
    judged_sides = verdicts if mode != "precision" else verdicts[:1]
    note_soft(trace, lambda *p1: factual_score(p1[0], p1[1] if len(p1) > 1 else None, mode, beta), *judged_sides)
    return factual_score(verdicts[0], verdicts[1] if mode != "precision" else None, mode, beta)


def _no_denominator(verdicts: list[list[int]], mode: str) -> bool:
    tp = sum(1 for v in verdicts[0] if v)
    fp = len(verdicts[0]) - tp
    fn = 0 if mode == "precision" else sum(1 for v in verdicts[1] if not v)
    return {"precision": tp + fp, "recall": tp + fn}.get(mode, tp + fp + fn) == 0
