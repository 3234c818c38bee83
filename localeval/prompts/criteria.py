"""The prompt of a user-defined criterion: its definition, the sample fields it reads, a bounded answer.

A binary criterion is answered with a :class:`Verdict` (``verdict`` 0 or 1, as every verdict prompt);
a 1-to-N criterion with a :class:`Rating` whose ``rating`` the schema bounds to 1..N.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, create_model

from localeval.data.sample import LIST_FIELDS
from localeval.prompts.base import Prompt, Settings, Verdict, verdict_schema
from localeval.prompts.ratings import REASON_CHARS, Rating, rating_schema, vote_rating
from localeval.prompts.votes import vote_field

if TYPE_CHECKING:
    from localeval.metrics.criteria_file import Criterion

FIELD_WORDS = {
    "user_input": "the user's question",
    "response": "the system's response",
    "reference": "a reference answer",
    "retrieved_contexts": "the retrieved contexts",
    "reference_contexts": "the reference contexts",
    "retrieved_context_ids": "the ids of the retrieved contexts",
    "reference_context_ids": "the ids of the reference contexts",
}
SAMPLING_TEMPERATURE = 0.7  # strictness > 1 samples several verdicts, so they may differ


def input_model(criterion: Criterion) -> type[BaseModel]:
    """A model with the criterion's fields, in its order: texts, or lists of texts."""
    fields: dict[str, Any] = {f: ((list[str] if f in LIST_FIELDS else str), ...) for f in criterion.fields}
    return create_model(f"CriterionInput_{criterion.name}", **fields)


def instruction(criterion: Criterion) -> str:
    """What the judge is told: the criterion, the fields it gets, and how to answer."""
    given = ", ".join(FIELD_WORDS[f] + f" ({f})" for f in criterion.fields)
    lines = ["You judge one sample of a question-answering system against a single criterion.",
             f"Criterion {criterion.name!r}: {criterion.definition}",
             f"You are given {given}. Judge only what the criterion asks."]
    if criterion.binary:
        lines.append("Answer verdict 1 if the sample meets the criterion, verdict 0 if it does not.")
    else:
        lines.append(f"Rate how well the sample meets the criterion, from 1 (not at all) to {criterion.points} "
                     "(fully).")
        lines += [f"Rating {score}: {text}" for score, text in criterion.rubric]
    return "\n".join(lines)


def criterion_prompt(criterion: Criterion) -> Prompt:
    """The criterion's prompt; its name (``criterion:NAME``) labels its asks."""
    model = input_model(criterion)
    examples: list[tuple[BaseModel, BaseModel]] = []
    for given, score, reason in criterion.examples:
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in given}
        answer: BaseModel = Verdict(reason=reason, verdict=score) if criterion.binary \
            else Rating(reason=reason, rating=score)
        examples.append((model(**data), answer))
    allowed = criterion.values

    def schema(inp: BaseModel, settings: Settings) -> dict[str, Any]:
        return verdict_schema(settings, REASON_CHARS) if criterion.binary else rating_schema(allowed, settings)

    def budget(inp: BaseModel, settings: Settings) -> int:
        return (REASON_CHARS // 3 + 24) if settings.reasons else 12

    return Prompt(
        name=f"criterion:{criterion.name}",
        instruction=instruction(criterion),
        input_model=model,
        output_model=Verdict if criterion.binary else Rating,
        examples=tuple(examples),
        schema=schema,
        max_tokens=budget,
        sampling_temperature=SAMPLING_TEMPERATURE,
        vote=vote_field() if criterion.binary else vote_rating,
    )
