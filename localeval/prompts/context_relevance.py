"""The context-relevance prompt: does one excerpt of a context help answer the question."""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Verdict, verdict_schema
from localeval.prompts.votes import vote_field


class RelevanceInput(BaseModel):
    question: str
    excerpt: str  # last: the asks of one context differ only here


REASON_CHARS = 160

CONTEXT_RELEVANCE: Prompt[RelevanceInput, Verdict] = Prompt(
    name="context_relevance",
    instruction=(
        "You judge one excerpt of a retrieved context. Given a question and the excerpt, decide whether "
        "the excerpt contains information that helps answer the question: verdict 1 if it does, "
        "verdict 0 if it is off-topic or about the same subject but not about what is asked."
    ),
    input_model=RelevanceInput,
    output_model=Verdict,
    examples=(
        (
            RelevanceInput(
                question="When was the Eiffel Tower built, and why?",
                excerpt="It was built from 1887 to 1889 as the entrance arch of the 1889 World's Fair.",
            ),
            Verdict(reason="It gives both the years of construction and the purpose.", verdict=1),
        ),
        (
            RelevanceInput(
                question="When was the Eiffel Tower built, and why?",
                excerpt="The tower is repainted every seven years with about 60 tonnes of paint.",
            ),
            Verdict(reason="About the tower, but not about when or why it was built.", verdict=0),
        ),
    ),
    schema=lambda inp, settings: verdict_schema(settings, REASON_CHARS),
    max_tokens=lambda inp, settings: (REASON_CHARS // 3 + 24) if settings.reasons else 12,
    vote=vote_field(),
)
