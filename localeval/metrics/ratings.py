"""Ragas' single-rating metrics: two judges rate the sample, the score is the mean of both, rescaled to 0-1.

Answer accuracy (0/2/4, divided by 4; the second judge sees response and reference swapped), context
relevance (0/1/2 of the joined contexts for the question, divided by 2) and response groundedness
(0/1/2 of the response against the joined contexts, divided by 2), with Ragas 0.4.3's edge cases.
The schema allows only the scale's values, so Ragas' retries on an out-of-scale rating never happen.
"""

from __future__ import annotations

from typing import Any

from localeval.data.sample import Sample
from localeval.nan import Nan
from localeval.prompts.ratings import (
    ACCURACY_1,
    ACCURACY_2,
    GROUNDEDNESS_1,
    GROUNDEDNESS_2,
    RELEVANCE_1,
    RELEVANCE_2,
    AccuracyInput,
    GroundingInput,
    QuestionContextInput,
)
from localeval.steps import Ask, Steps


def two_judges(first: int, second: int, top: int) -> float:
    """The mean of two ratings on a 0..``top`` scale, each divided by ``top`` first (Ragas' order)."""
    return (first / top + second / top) / 2.0


def _record(trace: dict, judged: list) -> list[int]:
    ratings = [j.rating for j in judged]
    trace["ratings"] = ratings
    trace["reasons"] = [j.reason for j in judged]
    return ratings


def answer_accuracy(sample: Sample, trace: dict) -> Steps:
    """Judge 1 rates the response against the reference; judge 2 the reference against the response."""
    q, response, reference = sample.user_input, sample.response, sample.reference
    if not q or not response or not reference:
        return Nan("missing_field")  # Ragas raises on an empty question, response or reference
    judged = yield [Ask(ACCURACY_1, AccuracyInput(question=q, answer=response, reference=reference)),
                    Ask(ACCURACY_2, AccuracyInput(question=q, answer=reference, reference=response))]
    first, second = _record(trace, judged)
    return two_judges(first, second, 4)


def _both_rate(trace: dict, prompts: tuple[Any, Any], inp: Any) -> Steps:
    """Both judges rate ``inp`` on the 0/1/2 scale; the score is their rescaled mean."""
    first, second = _record(trace, (yield [Ask(prompts[0], inp), Ask(prompts[1], inp)]))
    return two_judges(first, second, 2)


def ragas_context_relevance(sample: Sample, trace: dict) -> Steps:
    """Both judges rate the joined contexts for the question; trivial contexts score 0 without an ask."""
    q, contexts = sample.user_input, sample.retrieved_contexts
    if not q or not contexts:
        return Nan("missing_field")
    context = "\n".join(contexts)
    # Ragas' edge cases: an empty question or context, a context equal to or inside the question
    if not q.strip() or not context.strip() or context.strip() in q.strip():
        trace["edge_case"] = "empty context or question, or the context repeats the question"
        return 0.0
    return (yield from _both_rate(trace, (RELEVANCE_1, RELEVANCE_2), QuestionContextInput(question=q, context=context)))


def response_groundedness(sample: Sample, trace: dict) -> Steps:
    """Both judges rate how much of the response the joined contexts support."""
    response, contexts = sample.response, sample.retrieved_contexts
    if not response or not contexts:
        return Nan("missing_field")
    context = "\n".join(contexts)
    if not response.strip() or not context.strip():
        trace["edge_case"] = "blank response or contexts"
        return 0.0
    return (yield from _both_rate(trace, (GROUNDEDNESS_1, GROUNDEDNESS_2), GroundingInput(context=context,
                                                                                         response=response)))
