"""Split a reference answer into statements and say which the context supports (context recall)."""

from __future__ import annotations

import re

from pydantic import BaseModel

from localeval.prompts.base import Prompt, Settings, array, binary, obj, text

STATEMENT_CHARS = 240
REASON_CHARS = 160


class AttributionInput(BaseModel):
    question: str
    context: str
    answer: str


class Attribution(BaseModel):
    statement: str
    reason: str = ""
    attributed: int


class AttributionOutput(BaseModel):
    classifications: list[Attribution]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def sentence_count(text: str) -> int:
    """Sentences in a text (lines, then full stops, question and exclamation marks); at least 1."""
    return max(1, sum(1 for line in text.splitlines() for s in _SENTENCE_END.split(line) if s.strip()))


def _max_items(inp: AttributionInput) -> int:
    # One classification per sentence of the answer, with room for a sentence split in two or three.
    # A looping small model otherwise invents statements until its token budget runs out.
    return min(40, sentence_count(inp.answer) + 2)


def _schema(inp: AttributionInput, settings: Settings) -> dict:
    props = {"statement": text(STATEMENT_CHARS, 1)}
    if settings.reasons:
        props["reason"] = text(REASON_CHARS)
    props["attributed"] = binary()
    return obj({"classifications": array(obj(props), 0, _max_items(inp))})


def _max_tokens(inp: AttributionInput, settings: Settings) -> int:
    reasons = (REASON_CHARS // 3 + 8) if settings.reasons else 0
    per_item = 24 + reasons
    return min(len(inp.answer) // 2 + 96 + _max_items(inp) * per_item,
               _max_items(inp) * (STATEMENT_CHARS // 3 + per_item) + 16)


ATTRIBUTION = Prompt(
    name="attribution",
    instruction=(
        "You check a reference answer against a context. Split the answer into its statements, "
        "then classify each one: attributed 1 if the context supports it, attributed 0 if the "
        "context does not contain it. Use no outside knowledge."
    ),
    input_model=AttributionInput,
    output_model=AttributionOutput,
    examples=(
        (
            AttributionInput(
                question="Tell me about the Danube.",
                context=(
                    "The Danube is Europe's second-longest river, after the Volga. It rises in the "
                    "Black Forest in Germany and flows into the Black Sea."
                ),
                answer=(
                    "The Danube is the second-longest river in Europe. It starts in Germany's Black "
                    "Forest. It passes through Vienna."
                ),
            ),
            AttributionOutput(
                classifications=[
                    Attribution(
                        statement="The Danube is the second-longest river in Europe.",
                        reason="The context says so directly.",
                        attributed=1,
                    ),
                    Attribution(
                        statement="The Danube starts in Germany's Black Forest.",
                        reason="The context says it rises in the Black Forest in Germany.",
                        attributed=1,
                    ),
                    Attribution(
                        statement="The Danube passes through Vienna.",
                        reason="The context names no city on the river.",
                        attributed=0,
                    ),
                ]
            ),
        ),
    ),
    schema=_schema,
    max_tokens=_max_tokens,
)
