"""Answer correctness (statement-level F-beta, weighted with semantic similarity) and semantic similarity.

Ragas 0.4.3's arithmetic: the response and the reference are split into statements; TP are response
statements the reference supports, FP those it does not, FN reference statements the response does not
state. Ragas asks for the three lists in one free-form answer; here each statement gets a 0/1 verdict
under the grammar (the NLI prompt, both ways), which gives the same counts. The score is
``np.average([F-beta, cosine], weights=[1 - weight, weight])``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import NLI, STATEMENTS, NLIInput, StatementsInput
from localeval.steps import Ask, Embed, Steps


def correctness_fbeta(tp: float, fp: float, fn: float, beta: float = 1.0) -> float:
    """Ragas' answer-correctness F-beta: an empty side counts as perfect when the other is empty too.

    >>> correctness_fbeta(2, 1, 1)
    0.6666666666666666
    """
    precision = tp / (tp + fp) if tp + fp else (1.0 if fn == 0 else 0.0)
    recall = tp / (tp + fn) if tp + fn else (1.0 if fp == 0 else 0.0)
    if precision + recall == 0:
        return 0.0
    b2 = beta**2
    return float((1 + b2) * (precision * recall) / (b2 * precision + recall))


def cosine_or_zero(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors; 0.0 when either is all zeros (answer correctness' similarity)."""
    x, y = np.asarray(a, dtype=np.float64).reshape(1, -1), np.asarray(b, dtype=np.float64).reshape(1, -1)
    nx, ny = np.linalg.norm(x, axis=1), np.linalg.norm(y, axis=1)
    if nx[0] == 0 or ny[0] == 0:
        return 0.0
    return float(np.dot(x, y.T)[0, 0] / (nx[0] * ny[0]))


def correctness_score(factuality: float, similarity: float, weight: float) -> float:
    """Ragas' weighted average of the factuality F-beta and the similarity (``weight`` on the similarity)."""
    return float(np.average([factuality, similarity], weights=[1 - weight, weight]))


def answer_correctness(sample: Sample, trace: dict, beta: float = 1.0, weight: float = 0.25) -> Steps:
    """Statements of both sides, verdicts both ways, then the weighted F-beta and similarity."""
    assert sample.user_input is not None and sample.response is not None and sample.reference is not None
    sides = (sample.response, sample.reference)
    split = yield [Ask(STATEMENTS, StatementsInput(question=sample.user_input, answer=s)) for s in sides]
    response_st, reference_st = (s.statements for s in split)
    trace["response_claims"], trace["reference_claims"] = response_st, reference_st
    if response_st and reference_st:
        judged = yield [Ask(NLI, NLIInput(context=sample.reference, statements=response_st)),
                        Ask(NLI, NLIInput(context=sample.response, statements=reference_st))]
        resp_v, ref_v = ([v.verdict for v in j.verdicts] for j in judged)
        trace["response_verdicts"], trace["reference_verdicts"] = resp_v, ref_v
        factuality = statement_fbeta(resp_v, ref_v, beta)
        soft = note_soft(trace, statement_fbeta, resp_v, ref_v, beta=beta)  # the soft factuality, for now
    else:
        factuality, soft = 1.0, None  # Ragas: no statement on a side leaves nothing to get wrong (no soft score)
    trace["factuality"] = factuality
    similarity = 0.0
    if weight != 0:
        vectors = yield Embed((sample.response, sample.reference))
        similarity = cosine_or_zero(vectors[0], vectors[1])
        trace["similarity"] = similarity
    if soft is not None:
        trace["soft_score"] = correctness_score(soft, similarity, weight)
    return correctness_score(factuality, similarity, weight)


def statement_fbeta(response_verdicts: Sequence[float], reference_verdicts: Sequence[float], beta: float) -> float:
    """The F-beta of the statement verdicts (0/1, or p(1) for the soft score: expected counts)."""
    tp = sum(response_verdicts)
    return correctness_fbeta(tp, len(response_verdicts) - tp, sum(1 - v for v in reference_verdicts), beta)


def semantic_similarity(sample: Sample, trace: dict, threshold: float | None = None) -> Steps:
    """Cosine of the embeddings of reference and response; with a threshold, 1.0 at or above it, else 0.0.

    A zero vector gives NaN (0/0) as in Ragas, and with a threshold 0.0 (NaN is below any threshold); a
    threshold of 0 is no threshold (Ragas tests it for truth).
    """
    vectors = yield Embed((sample.reference or " ", sample.response or " "))
    a, b = (np.asarray(v, dtype=np.float64) for v in (vectors[0], vectors[1]))
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        return 0.0 if threshold else Nan("undefined")
    score = float((a / na) @ (b / nb))
    trace["cosine"] = score
    return float(score >= threshold) if threshold else score
