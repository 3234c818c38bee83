"""Why a score is missing: a NaN always carries one reason from a closed list."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

NanReason = Literal[
    "no_statements",  # the judge extracted no statement from the text to check
    "no_claims",  # factual correctness: no claim on the side it needs
    "no_questions",  # response relevancy: no usable generated question
    "no_topics",  # topic adherence: the judge found no topic in the human's turns
    "truncated",  # the judge's answer hit the token limit twice
    "engine_error",  # the engine raised on this ask, even alone
    "invalid_output",  # the answer did not parse (should not happen under a grammar; counted if it does)
    "context_too_long",  # the ask does not fit the judge's context window
    "missing_field",  # the sample lacks a field the metric needs
    "undefined",  # the formula itself is undefined (for example 0/0 in Ragas' own code)
]

NAN_REASONS: tuple[str, ...] = get_args(NanReason)


@dataclass(frozen=True)
class Nan:
    """A missing score and the reason it is missing."""

    reason: NanReason

    def __post_init__(self) -> None:
        if self.reason not in NAN_REASONS:
            raise ValueError(f"unknown NaN reason {self.reason!r}; known: {', '.join(NAN_REASONS)}")
