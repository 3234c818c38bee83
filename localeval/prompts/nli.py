"""Judge each statement against a context: can it be inferred from it (1) or not (0)?"""

from __future__ import annotations

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Repeats, Settings, Verdict, array, obj, verdict_schema
from localeval.prompts.votes import vote_list

REASON_CHARS = 160


class NLIInput(BaseModel):
    context: str  # first: asks about one context share a longer prefix
    statements: list[str]


class NLIOutput(BaseModel):
    verdicts: list[Verdict]


def _schema(inp: NLIInput, settings: Settings) -> dict:
    n = len(inp.statements)
    verdict = verdict_schema(settings, REASON_CHARS)
    return obj({"verdicts": array(verdict, n, n)})  # exactly one verdict per statement


def _max_tokens(inp: NLIInput, settings: Settings) -> int:
    per_item = (REASON_CHARS // 3 + 16) if settings.reasons else 8
    return len(inp.statements) * per_item + 16


NLI = Prompt(
    name="nli",
    instruction=(
        "You check statements against a context. For each statement, in the order given, decide "
        "whether it can be directly inferred from the context alone: verdict 1 if the context "
        "supports it, verdict 0 if the context contradicts it or does not say. Do not use outside "
        "knowledge. Give exactly one verdict per statement."
    ),
    input_model=NLIInput,
    output_model=NLIOutput,
    examples=(
        (
            NLIInput(
                context=(
                    "Priya works as a nurse at a children's hospital in Leeds. She has worked night "
                    "shifts for three years and cycles to work every day. In her free time she "
                    "volunteers at an animal shelter."
                ),
                statements=[
                    "Priya is a doctor.",
                    "Priya works in Leeds.",
                    "Priya likes animals.",
                    "Priya owns a car.",
                ],
            ),
            NLIOutput(
                verdicts=[
                    Verdict(reason="The context says she is a nurse, not a doctor.", verdict=0),
                    Verdict(reason="Her hospital is in Leeds.", verdict=1),
                    Verdict(reason="She volunteers at an animal shelter.", verdict=1),
                    Verdict(reason="Cycling to work says nothing about owning a car.", verdict=0),
                ]
            ),
        ),
    ),
    schema=_schema,
    max_tokens=_max_tokens,
    vote=vote_list("verdicts"),
    repeats=Repeats("statements", "verdicts"),  # a statement listed twice is judged once
)
