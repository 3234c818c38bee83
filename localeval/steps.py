"""What a metric may yield to the scheduler, and what it gets back.

A metric is a generator: it yields an :class:`Ask` (one judge answer back, parsed into the
prompt's output model), an :class:`Ask` with ``n`` set (a tuple of ``n`` sampled answers, also
when ``n`` is 1), a list of asks (a list of answers, same order) or an :class:`Embed` (an array,
one row per text), and finally returns a float or a :class:`~localeval.nan.Nan`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

from localeval.nan import Nan

if TYPE_CHECKING:
    from pydantic import BaseModel

    from localeval.prompts.base import Prompt


@dataclass(frozen=True)
class Ask:
    """One question to the judge: a prompt, its input, and how many samples to draw."""

    prompt: Prompt
    input: BaseModel
    n: int | None = None  # None: one answer; an int: a tuple of n sampled, seeded generations


@dataclass(frozen=True)
class Embed:
    """Texts to embed with the run's embedding model."""

    texts: tuple[str, ...]


Yielded = Ask | list[Ask] | Embed
Outcome = float | Nan
Steps = Generator[Yielded, Any, Outcome]
P = ParamSpec("P")


def no_asks(score: Callable[P, Outcome]) -> Callable[P, Steps]:
    """A metric that asks nothing (the model-free ones) as the generator the scheduler drives: ``score`` runs at
    the generator's first step and its outcome is the generator's return value."""

    @functools.wraps(score)
    def steps(*args: P.args, **kwargs: P.kwargs) -> Steps:
        yield from ()
        return score(*args, **kwargs)

    return steps
