"""Instance-specific rubrics: the judge scores a sample on the rubric the sample brings with it (Ragas
0.4.3's ``InstanceSpecificRubrics``; the wording is localeval's own).

A rubric maps a level's name to its description (``{"score1_description": ..., "score5_description":
...}``); the whole number in each name is the level, and the answer's schema allows exactly those levels.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

from localeval.data.messages import rubric_levels
from localeval.prompts.base import Prompt, Schema, Settings, with_reason

REASON_CHARS = 240


class RubricInput(BaseModel):
    """What the sample has of these fields (absent ones are not shown), then its rubric."""

    user_input: str | None = None
    response: str | None = None
    retrieved_contexts: list[str] | None = None
    reference_contexts: list[str] | None = None
    reference: str | None = None
    rubrics: dict[str, str]

    @model_serializer(mode="wrap")
    def _drop_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return {k: v for k, v in handler(self).items() if v is not None}


class RubricScore(BaseModel):
    """The level the judge picks, after the short reason that led to it (empty when reasons are off)."""

    reason: str = ""
    score: int


def _schema(inp: RubricInput, settings: Settings) -> Schema:
    return with_reason({"score": {"type": "integer", "enum": list(rubric_levels(inp.rubrics))}}, settings,
                       REASON_CHARS)


def _budget(inp: RubricInput, settings: Settings) -> int:
    width = max((len(str(level)) for level in rubric_levels(inp.rubrics)), default=1)  # {"score":N}: 10 + N's digits
    return (REASON_CHARS // 3 + 24 + width) if settings.reasons else 10 + width


def vote_score(answers: Sequence[Any]) -> Any:
    """The most common level of several sampled answers (the first one seen on a tie), with its reason."""
    winner = Counter(a.score for a in answers).most_common(1)[0][0]
    return next(a for a in answers if a.score == winner)


_THANKS = {
    "score1_description": "No thanks at all, or a reply that is curt or rude.",
    "score2_description": "Thanks the guest but names nothing they did or said.",
    "score3_description": "Thanks the guest and names one specific thing they did.",
}
_TRAIN = {
    "score1_description": "Wrong departure time or wrong station.",
    "score2_description": "Right time and station, but the platform change is left out.",
    "score3_description": "Right time and station, and it warns of the platform change.",
    "score4_description": "All of level 3, and it suggests a later train in case of delay.",
}

RUBRIC_SCORE = Prompt(
    name="instance_rubric",
    instruction=(
        "You score one sample of a system's work on the rubric that comes with it. The rubric lists score "
        "levels, each named by a number, with what a response at that level looks like. Read the fields "
        "you are given (any of: the user's input or a conversation's transcript, the response, retrieved "
        "contexts, reference contexts, a reference answer), pick the one level whose description fits "
        "best, and answer with its number. Judge only by the rubric's descriptions."
    ),
    input_model=RubricInput,
    output_model=RubricScore,
    examples=(
        (
            RubricInput(user_input="Write a one-line thank-you note to a speaker at our meetup.",
                        response="Thanks for coming.", rubrics=_THANKS),
            RubricScore(reason="It thanks the speaker but mentions nothing about the talk.", score=2),
        ),
        (
            RubricInput(user_input="When does the next train to Leeds leave?",
                        response="The 14:05 to Leeds leaves from platform 6 (moved from platform 4).",
                        reference="The 14:05 from York station, now on platform 6 instead of 4.",
                        rubrics=_TRAIN),
            RubricScore(reason="Time and platform change are right; no fallback train is offered.", score=3),
        ),
    ),
    schema=_schema,
    max_tokens=_budget,
    vote=vote_score,
)
