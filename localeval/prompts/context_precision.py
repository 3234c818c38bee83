"""Was one retrieved context useful in arriving at the answer? (context precision, Precision@K)"""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Settings, Verdict, verdict_schema
from localeval.prompts.votes import vote_field

REASON_CHARS = 200


class UsefulnessInput(BaseModel):
    question: str
    answer: str
    context: str  # last: the asks of one sample differ only here


def _schema(inp: UsefulnessInput, settings: Settings) -> dict:
    return verdict_schema(settings, REASON_CHARS)


def _max_tokens(inp: UsefulnessInput, settings: Settings) -> int:
    return (REASON_CHARS // 3 + 24) if settings.reasons else 12


CONTEXT_USEFULNESS = Prompt(
    name="context_usefulness",
    instruction=(
        "You judge one retrieved passage. Given a question, an answer to it and a passage, decide "
        "whether the passage was useful for arriving at that answer: verdict 1 if it contains "
        "information that leads to the answer, verdict 0 if it does not."
    ),
    input_model=UsefulnessInput,
    output_model=Verdict,
    examples=(
        (
            UsefulnessInput(
                question="When did the Berlin Wall fall?",
                answer="The Berlin Wall fell on 9 November 1989.",
                context=(
                    "On the night of 9 November 1989 East German authorities opened the border "
                    "crossings, and crowds began tearing down the Berlin Wall."
                ),
            ),
            Verdict(reason="The passage gives the date the wall was opened and torn down.", verdict=1),
        ),
        (
            UsefulnessInput(
                question="What is the boiling point of water at sea level?",
                answer="100 degrees Celsius.",
                context="Water covers about 71 percent of the Earth's surface, mostly in oceans.",
            ),
            Verdict(reason="The passage is about water on Earth, not its boiling point.", verdict=0),
        ),
    ),
    schema=_schema,
    max_tokens=_max_tokens,
    vote=vote_field(),
)
