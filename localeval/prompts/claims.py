"""Decompose a text into claims at a chosen atomicity and coverage (factual correctness).

Atomicity is how finely a sentence is split; coverage is how much of it the claims keep.
The four combinations each get their own wording and examples, as in Ragas.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from localeval.prompts.base import Prompt, TextList

Level = Literal["low", "high"]
CLAIM_CHARS = 240


class ClaimsInput(BaseModel):
    response: str


class ClaimsOutput(BaseModel):
    claims: list[str]


_CLAIMS = TextList("claims", source="response", chars_per_item=35, item_chars=CLAIM_CHARS)

_LOVELACE = "Ada Lovelace was an English mathematician, writer and amateur astronomer."
_NILE = (
    "The Nile is the longest river in Africa. It flows north through eleven countries and "
    "empties into the Mediterranean Sea."
)

_EXAMPLES: dict[tuple[Level, Level], tuple[list[str], list[str]]] = {
    ("low", "low"): (
        ["Ada Lovelace was a mathematician and writer."],
        ["The Nile is Africa's longest river.", "The Nile flows into the Mediterranean."],
    ),
    ("low", "high"): (
        [_LOVELACE],
        [
            "The Nile is the longest river in Africa.",
            "The Nile flows north through eleven countries and empties into the Mediterranean Sea.",
        ],
    ),
    ("high", "low"): (
        ["Ada Lovelace was a mathematician.", "Ada Lovelace was a writer."],
        ["The Nile is the longest river in Africa.", "The Nile empties into the Mediterranean Sea."],
    ),
    ("high", "high"): (
        [
            "Ada Lovelace was English.",
            "Ada Lovelace was a mathematician.",
            "Ada Lovelace was a writer.",
            "Ada Lovelace was an amateur astronomer.",
        ],
        [
            "The Nile is the longest river in Africa.",
            "The Nile flows north.",
            "The Nile flows through eleven countries.",
            "The Nile empties into the Mediterranean Sea.",
        ],
    ),
}

_ATOMICITY = {
    "low": "Keep related facts of a sentence together in one claim.",
    "high": "Split every sentence into the smallest claims, one fact each.",
}
_COVERAGE = {
    "low": "Keep only the main facts; minor details may be left out.",
    "high": "Keep every fact and detail of the text.",
}


def claims_prompt(atomicity: Level = "low", coverage: Level = "low") -> Prompt[ClaimsInput, ClaimsOutput]:
    """The claim decomposition prompt for one atomicity/coverage combination."""
    lovelace, nile = _EXAMPLES[(atomicity, coverage)]
    return Prompt(
        name=f"claims_{atomicity}_{coverage}",
        instruction=(
            "You break a text into standalone claims, each one checkable on its own, with no "
            f"pronouns. {_ATOMICITY[atomicity]} {_COVERAGE[coverage]} Follow the examples."
        ),
        input_model=ClaimsInput,
        output_model=ClaimsOutput,
        examples=(
            (ClaimsInput(response=_LOVELACE), ClaimsOutput(claims=lovelace)),
            (ClaimsInput(response=_NILE), ClaimsOutput(claims=nile)),
        ),
        schema=_CLAIMS.schema,
        max_tokens=_CLAIMS.max_tokens,
    )


CLAIM_PROMPTS: dict[tuple[Level, Level], Prompt[ClaimsInput, ClaimsOutput]] = {
    key: claims_prompt(*key) for key in _EXAMPLES
}
