"""Several answers to one ask made into one (``Settings.votes``): the majority of 0/1 verdicts."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def majority(verdicts: Sequence[int]) -> int:
    """The verdict most answers gave; a tie counts as 0 (not supported, not useful)."""
    ones = sum(1 for v in verdicts if v == 1)
    return int(ones * 2 > len(verdicts))


def vote_field(field_name: str = "verdict") -> Callable[[Sequence[Any]], Any]:
    """Majority of a single 0/1 verdict field; the answer kept (with its reason) is the first in the majority."""

    def combine(answers: Sequence[Any]) -> Any:
        winner = majority([getattr(a, field_name) for a in answers])
        return next(a for a in answers if getattr(a, field_name) == winner)

    return combine


def vote_list(list_name: str, field_name: str = "verdict") -> Callable[[Sequence[Any]], Any]:
    """Majority per position of a list of 0/1 verdicts whose length the schema fixes (NLI)."""
    pick = vote_field(field_name)

    def combine(answers: Sequence[Any]) -> Any:
        lists = [getattr(a, list_name) for a in answers]
        if len({len(items) for items in lists}) != 1:
            raise ValueError(f"the votes disagree on the number of {list_name}")
        return answers[0].model_copy(update={list_name: [pick(position) for position in zip(*lists, strict=True)]})

    return combine
