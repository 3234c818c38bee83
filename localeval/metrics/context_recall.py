"""Context recall: the share of the reference's statements that the retrieved contexts support."""

from __future__ import annotations

from localeval.data.sample import Sample
from localeval.metrics.faithfulness import supported_ratio
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import ATTRIBUTION, AttributionInput
from localeval.steps import Ask, Steps


def context_recall(sample: Sample, trace: dict) -> Steps:
    """One ask splits the reference into statements and attributes each to the joined contexts."""
    assert sample.user_input is not None and sample.reference is not None
    context = "\n".join(sample.retrieved_contexts or ())
    answer = yield Ask(
        ATTRIBUTION, AttributionInput(question=sample.user_input, context=context, answer=sample.reference)
    )
    trace["statements"] = [c.statement for c in answer.classifications]
    trace["verdicts"] = [c.attributed for c in answer.classifications]
    trace["reasons"] = [c.reason for c in answer.classifications]
    if not answer.classifications:
        return Nan("no_statements")  # Ragas: no classification gives NaN
    note_soft(trace, supported_ratio, [c.attributed for c in answer.classifications])
    return supported_ratio([c.attributed for c in answer.classifications])
