"""Answers as the cache stores them, which of them are stored, and what a generator is sent back."""

from __future__ import annotations

import dataclasses
from typing import Any

from localeval.engine.base import Result
from localeval.metrics.soft import with_p1
from localeval.nan import NanReason
from localeval.prompts.base import DEFAULT_SETTINGS, Settings
from localeval.steps import Ask


class AskFailed(Exception):
    """An answer a generator needs could not be had; the sample's score becomes NaN."""

    def __init__(self, reason: NanReason, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason: NanReason = reason


def merged(ask: Ask) -> tuple[Ask, list[int] | None]:
    """The ask as it is sent: each repeated item of its prompt's ``repeats`` list once; with where each
    original item went (None: sent as it is). :func:`spread` turns the answer back."""
    repeats = ask.prompt.repeats
    found = repeats.distinct(ask.input) if repeats is not None else None
    if found is None:
        return ask, None
    return dataclasses.replace(ask, input=found[0]), found[1]


def spread(ask: Ask, value: Any, where: list[int] | None) -> Any:
    """The parsed answer (or the tuple of ``n``) to a merged ask as the answer to the original ask."""
    repeats = ask.prompt.repeats
    if where is None or repeats is None:
        return value
    try:
        if isinstance(value, tuple):
            return tuple(repeats.spread(v, where) for v in value)
        return repeats.spread(value, where)
    except ValueError as error:
        raise AskFailed("invalid_output", f"{ask.prompt.name}: {error}") from None


def answer_dict(result: Result) -> dict[str, Any]:
    """An engine result as the cache stores it."""
    return {
        "choices": [{"text": c.text, "completion_tokens": c.completion_tokens, "finish_reason": c.finish_reason,
                     **({"verdict_probs": list(c.verdict_probs)} if c.verdict_probs is not None else {})}
                    for c in result.choices],
        "prompt_tokens": result.prompt_tokens,
        "cached_prompt_tokens": result.cached_prompt_tokens,
        "error": result.error,
    }


def too_long_answer(why: str) -> dict[str, Any]:
    """The answer of an ask that was not sent because it does not fit the context window."""
    return {"choices": [{"text": "", "completion_tokens": 0, "finish_reason": "context_too_long"}],
            "prompt_tokens": 0, "cached_prompt_tokens": 0, "error": None, "detail": why}


def storable(answer: dict[str, Any], final: bool) -> bool:
    """What is cached: complete answers, and answers still cut off after the retry (deterministic,
    so a rerun would only repeat them). Engine errors, first cut-off answers and asks too long for
    the window are not: the next run asks again (perhaps with a larger window)."""
    if answer["error"]:
        return False
    reasons = {c["finish_reason"] for c in answer["choices"]}
    return reasons <= {"stop"} or (final and reasons <= {"stop", "length"})


def cut_off(answer: dict[str, Any]) -> bool:
    """Whether any choice of the answer hit its token budget."""
    return any(c["finish_reason"] == "length" for c in answer["choices"])


def parse_answer(ask: Ask, answer: dict[str, Any], voted: bool, settings: Settings = DEFAULT_SETTINGS) -> Any:
    """What the generator is sent: the parsed answer, the vote of several, or n of them; else AskFailed.

    A choice that carries p(1) at its verdicts (a soft ask) has each 0/1 verdict parsed as a
    :class:`~localeval.metrics.soft.SoftBit` holding its p(1); ``settings``: what the schema was built with.
    """
    if answer.get("error"):
        raise AskFailed("engine_error", answer["error"])
    choices = answer["choices"]
    reasons = {c["finish_reason"] for c in choices}
    if "context_too_long" in reasons:
        detail = answer.get("detail") or "the ask does not fit the judge's context window"
        raise AskFailed("context_too_long", detail)
    if "length" in reasons:
        raise AskFailed("truncated", "the answer hit the token limit, also on a retry with a larger budget")
    try:
        parsed = [with_p1(ask.prompt.parse(c["text"]), c["text"], c.get("verdict_probs"),
                          lambda: ask.prompt.schema(ask.input, settings)) for c in choices]
        if voted and ask.prompt.vote is not None:
            return ask.prompt.vote(parsed)
    except ValueError as error:
        raise AskFailed("invalid_output", f"{ask.prompt.name}: {error}") from None
    return parsed[0] if ask.n is None else tuple(parsed)
