"""Soft verdicts: each 0/1 verdict of a soft answer carries the judge's p(1), and a metric's formula runs on them too.

The engine records p(1) at each binary decision of an answer, in text order (``Choice.verdict_probs``).
Parsing pairs them with the answer's values whose schema is ``enum [0, 1]``, in the same order, and
turns each such verdict into a :class:`SoftBit`: an ``int`` (so the hard arithmetic is Ragas' own,
unchanged) that also holds its p(1). A metric then calls :func:`note_soft` with its formula and its
verdicts: where every verdict has a p(1), the trace gets them (``p1``) and the formula's value on
them in place of the 0/1 verdicts (``soft_score``). An answer whose decisions and verdicts do not
pair up one to one keeps plain verdicts, so its sample has no soft score.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

Path = tuple[str | int, ...]


class SoftBit(int):
    """A 0/1 verdict that also holds p(1), the judge's probability of 1 at that verdict."""

    p1: float

    def __new__(cls, value: int, p1: float) -> SoftBit:
        bit = super().__new__(cls, value)
        bit.p1 = p1
        return bit


def is_binary(schema: Any) -> bool:
    """Whether a schema is a 0/1 verdict (``enum`` of exactly 0 and 1)."""
    return isinstance(schema, dict) and sorted(schema.get("enum", ())) == [0, 1]


def binary_paths(value: Any, schema: Any, path: Path = ()) -> list[Path]:
    """Where the 0/1 verdicts of a parsed JSON value are, in text order (keys in the order written)."""
    if is_binary(schema):
        return [path]
    if not isinstance(schema, dict):
        return []
    if isinstance(value, dict):
        props = schema.get("properties", {})
        return [p for key, item in value.items() if key in props for p in binary_paths(item, props[key], (*path, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in binary_paths(item, schema.get("items"), (*path, i))]
    return []


def with_p1(parsed: BaseModel, text: str, probs: Sequence[float] | None,
            schema: Callable[[], dict[str, Any]]) -> BaseModel:
    """``parsed`` with each 0/1 verdict a SoftBit of its p(1), where ``probs`` pair up with the verdicts."""
    if probs is None:
        return parsed
    paths = binary_paths(json.loads(text), schema())
    if len(paths) != len(probs):
        return parsed
    for path, p in zip(paths, probs, strict=True):
        holder: Any = parsed
        for step in path[:-1]:
            holder = holder[step] if isinstance(step, int) else getattr(holder, step)
        last = path[-1]
        if isinstance(last, int):
            holder[last] = SoftBit(holder[last], p)
        else:
            holder.__dict__[last] = SoftBit(getattr(holder, last), p)
    return parsed


def soft_values(verdicts: Any) -> Any:
    """The same nesting of lists with each verdict's p(1); None when any verdict lacks one."""
    if isinstance(verdicts, SoftBit):
        return verdicts.p1
    if isinstance(verdicts, list | tuple):
        values = [soft_values(v) for v in verdicts]
        return None if any(v is None for v in values) else values
    return None


def _any_soft(verdicts: Any) -> bool:
    """Whether any verdict in the nesting holds a p(1) (no verdict at all: none does)."""
    if isinstance(verdicts, list | tuple):
        return any(_any_soft(v) for v in verdicts)
    return isinstance(verdicts, SoftBit)


def note_soft(trace: dict[str, Any], formula: Callable[..., Any], *verdicts: Any, **options: Any) -> float | None:
    """Record p(1) of the verdicts and the formula on them (``soft_score``), when every verdict has one.

    Each of ``verdicts`` is one argument of ``formula`` (a list of verdicts, or a list of such lists);
    ``options`` are passed to it as they are. Returns the soft score (None: a verdict lacks p(1), there
    is no verdict at all, or the formula gives NaN).
    """
    probs = [soft_values(list(v)) for v in verdicts]
    if not probs or any(p is None for p in probs) or not _any_soft(verdicts):
        return None
    trace["p1"] = probs[0] if len(probs) == 1 else probs
    score = float(formula(*probs, **options))
    if math.isnan(score):
        return None
    trace["soft_score"] = score
    return score
