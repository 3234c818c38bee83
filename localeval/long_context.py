"""What to do with an ask that does not fit the judge's context window: an explicit policy.

``skip`` (default): the sample scores ``Nan("context_too_long")`` for that metric. ``error``: stop the
run, naming the sample and metric. ``truncate``: cut the longest text of the ask's input (usually the
context) until the ask fits, and record the cut in the sample's trace. Never a silent cut.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from localeval.engine.base import Request
from localeval.steps import Ask

POLICIES: tuple[str, ...] = ("skip", "error", "truncate")
MAX_CUTS = 6


class TooLong(Exception):
    """The ask needs ``tokens`` but the window holds ``window``."""

    def __init__(self, tokens: int, window: int) -> None:
        super().__init__(f"the ask needs {tokens} tokens (prompt plus answer budget); the judge's window is {window}")
        self.tokens, self.window = tokens, window


def fit(
    ask: Ask,
    render: Callable[[Ask], Request],
    count: Callable[[Request], int],
    window: int,
    policy: str,
) -> tuple[Ask, Request, dict[str, Any] | None]:
    """The ask (maybe cut), its request, and a note of what was cut; raises TooLong if it cannot fit."""
    request = render(ask)
    needed = count(request) + request.max_tokens
    if needed <= window:
        return ask, request, None
    if policy != "truncate":
        raise TooLong(needed, window)
    original = needed
    lengths = {k: len(v) for k, v in ask.input.__dict__.items() if isinstance(v, str)}
    for _ in range(MAX_CUTS):
        field, value = _longest_text(ask)
        if field is None:
            break
        keep = max(0, int(len(value) * (window / needed) * 0.95) - 16)
        ask = Ask(ask.prompt, ask.input.model_copy(update={field: value[:keep]}), ask.n)
        request = render(ask)
        needed = count(request) + request.max_tokens
        if needed <= window:
            note = {"field": field, "kept_chars": keep, "from_chars": lengths[field], "tokens_before": original}
            return ask, request, note
    raise TooLong(needed, window)


def _longest_text(ask: Ask) -> tuple[str | None, str]:
    texts = {k: v for k, v in ask.input.__dict__.items() if isinstance(v, str) and v}
    if not texts:
        return None, ""
    field = max(texts, key=lambda k: len(texts[k]))
    return field, texts[field]
