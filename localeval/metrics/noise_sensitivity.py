"""Noise sensitivity: wrong response statements traced to relevant or to irrelevant chunks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts import NLI, STATEMENTS, NLIInput, StatementsInput
from localeval.steps import Ask, Steps


def noise_score(
    reference_by_context: Sequence[Sequence[float]],
    response_by_context: Sequence[Sequence[float]],
    response_in_reference: Sequence[float],
    mode: str = "relevant",
) -> float:
    """Ragas' matrix arithmetic.

    ``reference_by_context[k][j]``: reference statement j supported by chunk k;
    ``response_by_context[k][i]``: response statement i supported by chunk k;
    ``response_in_reference[i]``: response statement i supported by the reference.
    A chunk is relevant when it supports any reference statement. A response statement counts when
    the reference does not support it (it is wrong) and a relevant chunk supports it (relevant
    mode) or only irrelevant chunks do (irrelevant mode). NaN with no statements on either side.
    On p(1) in place of 0/1 (the soft score) "and" is a product, "not" one minus, "any" the largest:
    on 0/1 the same values as Ragas' boolean algebra.
    """
    if not response_in_reference or not any(len(row) for row in reference_by_context):
        return float("nan")
    r2gt = np.array(reference_by_context, dtype=np.float64).T  # (reference statements, chunks)
    r2ans = np.array(response_by_context, dtype=np.float64).T  # (response statements, chunks)
    incorrect = 1 - np.array([response_in_reference], dtype=np.float64)  # (1, response statements)
    relevant_chunks = np.max(r2gt, axis=0, keepdims=True)  # (1, chunks)
    from_relevant = np.max(relevant_chunks * r2ans, axis=1)
    if mode == "irrelevant":
        from_irrelevant = np.max((1 - relevant_chunks) * r2ans, axis=1) * (1 - from_relevant)
        return float(np.mean(from_irrelevant * incorrect))
    return float(np.mean(from_relevant * incorrect))


def noise_sensitivity(sample: Sample, trace: dict, mode: str = "relevant") -> Steps:
    """Statements of reference and response, each judged against every chunk and the reference: one ask per
    statement list and chunk, as Ragas asks (2N + 3 asks for N chunks)."""
    assert sample.user_input is not None and sample.reference is not None and sample.response is not None
    ref_st, resp_st = yield [
        Ask(STATEMENTS, StatementsInput(question=sample.user_input, answer=sample.reference)),
        Ask(STATEMENTS, StatementsInput(question=sample.user_input, answer=sample.response)),
    ]
    trace["reference_statements"], trace["response_statements"] = ref_st.statements, resp_st.statements
    if not ref_st.statements or not resp_st.statements:
        return Nan("no_statements")
    contexts = list(sample.retrieved_contexts or ())
    n = len(contexts)
    in_ref = Ask(NLI, NLIInput(context=sample.reference, statements=resp_st.statements))
    judged = yield [*(Ask(NLI, NLIInput(context=c, statements=ref_st.statements)) for c in contexts),
                    *(Ask(NLI, NLIInput(context=c, statements=resp_st.statements)) for c in contexts), in_ref]
    verdicts = [[v.verdict for v in j.verdicts] for j in judged[: 2 * n]]
    ref_by_ctx, resp_by_ctx = verdicts[:n], verdicts[n:]
    resp_in_ref = [v.verdict for v in judged[-1].verdicts]
    trace["reference_by_context"], trace["response_by_context"] = ref_by_ctx, resp_by_ctx
    trace["response_in_reference"] = resp_in_ref
    note_soft(trace, noise_score, ref_by_ctx, resp_by_ctx, resp_in_ref, mode=mode)
    return noise_score(ref_by_ctx, resp_by_ctx, resp_in_ref, mode)
