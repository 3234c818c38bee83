"""Context relevance (the Ragas paper's definition): the share of the context's sentences that help answer.

Context precision needs a reference or a response; a ``cr.csv`` pair has neither, so the context is split
into sentences (``per_chunk`` at a time) and the judge decides for each whether it helps answer the
question; the score is the share judged relevant. A padded context scores lower, which average precision
would not show when the padding comes last.
"""

from __future__ import annotations

import re

from localeval.data.sample import Sample
from localeval.metrics.context_precision import precision_at_k_score
from localeval.metrics.definition import MetricDef, MetricSpec
from localeval.metrics.soft import note_soft
from localeval.prompts.context_relevance import CONTEXT_RELEVANCE, RelevanceInput
from localeval.steps import Ask, Steps

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
MIN_UNIT_CHARS = 20  # shorter pieces (headings, list items) are joined to the next one


def split_sentences(text: str, per_chunk: int = 1) -> list[str]:
    """Lines, then sentences; short pieces joined to the next; then ``per_chunk`` sentences a chunk.

    >>> split_sentences("Intro\\nThe bee is small. It lives in southern Spain.")
    ['Intro The bee is small.', 'It lives in southern Spain.']
    """
    pieces = [s.strip() for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()]
    units: list[str] = []
    carry = ""
    for piece in pieces:
        carry = f"{carry} {piece}".strip()
        if len(carry) >= MIN_UNIT_CHARS:
            units.append(carry)
            carry = ""
    if carry and units:
        units[-1] = f"{units[-1]} {carry}"
    elif carry:
        units.append(carry)
    return [" ".join(units[i : i + per_chunk]) for i in range(0, len(units), per_chunk)]


def context_relevance(sample: Sample, trace: dict) -> Steps:
    """Share of the context's chunks (sentences) the judge finds relevant to the question."""
    assert sample.user_input is not None
    judged = yield [Ask(CONTEXT_RELEVANCE, RelevanceInput(question=sample.user_input, excerpt=c))
                    for c in sample.retrieved_contexts or ()]
    verdicts = [j.verdict for j in judged]
    trace["verdicts"] = verdicts
    trace["reasons"] = [j.reason for j in judged]
    note_soft(trace, precision_at_k_score, verdicts)
    return precision_at_k_score(verdicts)


CONTEXT_RELEVANCE_SPEC = MetricSpec(
    "context_relevance", "context_relevance",
    MetricDef(context_relevance, ("user_input", "retrieved_contexts"), ("retrieved_contexts",),
              summary="share of context sentences judged relevant to the question"),
    {},
)
