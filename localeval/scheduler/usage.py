"""What each metric cost: asks, judge calls, cache hits, tokens and seconds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localeval.engine.base import Result


@dataclass
class Usage:
    """What one metric cost."""

    asks: int = 0  # asks its generators made (shared ones counted for every metric)
    judge_calls: int = 0  # generations the engine ran for it (a shared ask counts for the first asker)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    engine_seconds: float = 0.0
    embed_texts: int = 0
    embed_seconds: float = 0.0
    retries: int = 0

    def add(self, other: Usage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {n: getattr(self, n) for n in self.__dataclass_fields__}
        out["engine_seconds"] = round(self.engine_seconds, 3)
        out["embed_seconds"] = round(self.embed_seconds, 3)
        return out


def total_usage(usages: dict[str, Usage]) -> Usage:
    """The total of several metrics' usage."""
    total = Usage()
    for u in usages.values():
        total.add(u)
    return total


def charge_generation(usage: dict[str, Usage], askers: Sequence[str], results: Sequence[Result],
                      seconds: float, retry: bool) -> None:
    """Charge each result to the metric that asked first; the call's seconds are shared by tokens."""
    tokens = [r.prompt_tokens + sum(c.completion_tokens for c in r.choices) for r in results]
    total = sum(tokens) or 1
    for name, result, t in zip(askers, results, tokens, strict=True):
        u = usage[name]
        u.judge_calls += 1
        u.retries += int(retry)
        u.prompt_tokens += result.prompt_tokens
        u.cached_prompt_tokens += result.cached_prompt_tokens
        u.completion_tokens += sum(c.completion_tokens for c in result.choices)
        u.engine_seconds += seconds * t / total


def charge_embedding(usage: dict[str, Usage], askers: Sequence[str], texts: int, seconds: float) -> None:
    """Share one embedder call among the metrics that asked, by how many of their jobs asked."""
    for name in set(askers):
        share = askers.count(name) / len(askers)
        usage[name].embed_texts += round(texts * share)
        usage[name].embed_seconds += seconds * share
