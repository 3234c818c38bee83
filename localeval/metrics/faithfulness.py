"""Faithfulness: the share of the response's statements that the retrieved contexts support."""

from __future__ import annotations

import math
from collections.abc import Sequence

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import NLI, STATEMENTS, NLIInput, StatementsInput
from localeval.steps import Ask, Steps


def supported_ratio(verdicts: Sequence[float]) -> float:
    """Supported statements over all statements (verdicts 0/1, or p(1) for the soft score); NaN when
    there are none (0/0 is undefined).

    >>> supported_ratio([1, 1, 0])
    0.6666666666666666
    """
    if not verdicts:
        return math.nan
    return sum(verdicts) / len(verdicts)


def faithfulness(sample: Sample, trace: dict) -> Steps:
    """Split the response into statements, then judge them all against the joined contexts."""
    assert sample.user_input is not None and sample.response is not None
    extracted = yield Ask(STATEMENTS, StatementsInput(question=sample.user_input, answer=sample.response))
    trace["statements"] = extracted.statements
    if not extracted.statements:
        return Nan("no_statements")
    context = "\n".join(sample.retrieved_contexts or ())
    judged = yield Ask(NLI, NLIInput(context=context, statements=extracted.statements))
    trace["verdicts"] = [v.verdict for v in judged.verdicts]
    trace["reasons"] = [v.reason for v in judged.verdicts]
    note_soft(trace, supported_ratio, [v.verdict for v in judged.verdicts])
    return supported_ratio([v.verdict for v in judged.verdicts])
