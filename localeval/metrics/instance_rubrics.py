"""Instance-specific rubrics (Ragas 0.4.3's ``InstanceSpecificRubrics``): the judge scores each sample on
the rubric the sample brings (``Sample.rubrics``), and the score is the level it picks, as it is (1..5 for
Ragas' usual rubrics; no rescaling).

The judge sees whichever of user_input, response, retrieved_contexts, reference_contexts and reference the
sample has; a conversation sample shows its transcript as the input (Ragas' legacy multi-turn mode). The
schema allows exactly the rubric's levels, so an out-of-rubric score cannot come back.
"""

from __future__ import annotations

from localeval.data.messages import rubric_levels, transcript
from localeval.data.sample import Sample
from localeval.nan import Nan
from localeval.prompts.rubrics import RUBRIC_SCORE, RubricInput
from localeval.steps import Ask, Steps


def _listed(values: tuple[str, ...] | None) -> list[str] | None:
    return None if values is None else list(values)


def instance_rubrics(sample: Sample, trace: dict) -> Steps:
    """One ask: the sample's fields and its rubric; the score is the level chosen."""
    rubrics = sample.rubrics
    if not rubrics:
        return Nan("missing_field")  # Ragas raises ValueError without rubrics
    try:
        levels = rubric_levels(rubrics)
    except ValueError as error:  # the loader refuses such keys; a Sample built in code may have them
        trace["nan_detail"] = str(error)
        return Nan("missing_field")
    shown = transcript(sample.conversation) if sample.conversation else sample.user_input
    inp = RubricInput(user_input=shown, response=sample.response,
                      retrieved_contexts=_listed(sample.retrieved_contexts),
                      reference_contexts=_listed(sample.reference_contexts), reference=sample.reference,
                      rubrics=dict(rubrics))
    judged = yield Ask(RUBRIC_SCORE, inp)
    trace.update(levels=list(levels), score=int(judged.score), reason=judged.reason)
    return float(judged.score)
