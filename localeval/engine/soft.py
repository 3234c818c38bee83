"""p(1) at a binary decision: the judge's probability of a 0/1 verdict's "1", over the tokens the grammar allows.

A decode step is a binary decision when every token the grammar allows there starts with "0" or "1"
and both kinds are allowed (the first token of a value whose schema is ``enum [0, 1]``). p(1) is the
softmax mass of the allowed tokens starting with "1" over the mass of all allowed tokens, from the
logits at temperature 1 (the model's own distribution, whatever the sampling temperature).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch

OTHER, ZERO, ONE = -1, 0, 1


def token_leads(texts: Sequence[str]) -> torch.Tensor:
    """Per token id: ZERO where its text starts with "0", ONE with "1", else OTHER (int8)."""
    return torch.tensor([lead_of(t) for t in texts], dtype=torch.int8)


def _packed(flags: torch.Tensor, words: int) -> torch.Tensor:
    """A one-row packed bitmask (bit ``t % 32`` of word ``t // 32``) with the bits of ``flags`` set."""
    bits = torch.zeros(words * 32, dtype=torch.int64)
    bits[: flags.numel()] = flags.to(torch.int64)
    weights = torch.tensor([1 << i for i in range(31)] + [-(1 << 31)], dtype=torch.int64)
    return (bits.view(words, 32) * weights).sum(dim=1).to(torch.int32)


@dataclass(frozen=True)
class LeadTable:
    """Which tokens start with "0", with "1", or with anything else, as packed bitmasks and as booleans."""

    zero: torch.Tensor  # packed (words,) int32
    one: torch.Tensor
    other: torch.Tensor
    ones: torch.Tensor  # (vocab,) bool: the token starts with "1"

    @classmethod
    def from_texts(cls, texts: Sequence[str], words: int) -> LeadTable:
        """The table of a vocabulary whose token ``i`` reads ``texts[i]``; ``words``: the bitmask's width."""
        leads = token_leads(texts)
        pad = torch.full((words * 32 - leads.numel(),), OTHER, dtype=torch.int8)
        full = torch.cat([leads, pad])
        return cls(_packed(full == ZERO, words), _packed(full == ONE, words), _packed(full == OTHER, words),
                   full == ONE)


def _unpacked(row: torch.Tensor) -> torch.Tensor:
    """The boolean form of one packed bitmask row (little-endian words)."""
    bits = (row.to(torch.int64).unsqueeze(1) >> torch.arange(32)) & 1
    return bits.view(-1).bool()


def binary_p1(logits: torch.Tensor, bitmask: torch.Tensor, table: LeadTable) -> float | None:
    """p(1) at this step of one row, or None when the step is not a binary decision.

    ``logits``: the row's logits (raw or already masked); ``bitmask``: its packed allowed-token row.
    """
    if bool((bitmask & table.other).any()) or not bool((bitmask & table.zero).any()) \
            or not bool((bitmask & table.one).any()):
        return None
    allowed = _unpacked(bitmask)[: logits.shape[-1]]
    width = allowed.numel()
    row = logits[:width].float().cpu().masked_fill(~allowed, float("-inf"))
    total = torch.logsumexp(row, dim=0)
    ones = torch.logsumexp(row.masked_fill(~table.ones[:width], float("-inf")), dim=0)
    return float(torch.exp(ones - total))


class Soft(Protocol):
    """A decoded row that may ask for p(1): the transformers engine's Row."""

    soft: bool
    probs: list[float]


def note_p1(table: LeadTable, logits: torch.Tensor, bitmask: torch.Tensor, rows: Sequence[Soft]) -> None:
    """Append p(1) to each soft row whose step (logits row ``k``, bitmask row ``k``) is a binary decision."""
    for k, row in enumerate(rows):
        if row.soft and (p := binary_p1(logits[k], bitmask[k], table)) is not None:
            row.probs.append(p)


# vLLM returns the top-k log-probabilities at each step, taken after the grammar's mask (its V1 model
# runner masks the logits before the sampler, whose default "raw_logprobs" are read from them): at a
# binary decision every allowed token is among them, and together they hold all the mass.
WHOLE_MASS = 1e-3  # how far the returned 0/1 tokens' mass may fall short of 1 at a binary decision


def p1_from_logprobs(steps: Sequence[Mapping[int, float]], lead: Callable[[int], int]) -> tuple[float, ...]:
    """p(1) at each binary decision of an answer from each step's top log-probabilities (token id -> logprob).

    A step is a binary decision when its tokens with any probability all start with "0" or "1" (``lead``:
    ZERO, ONE or OTHER of a token id), both kinds are there, and they hold the whole mass (none left
    outside the top k); p(1) is renormalised over them.
    """
    probs: list[float] = []
    for step in steps:
        mass = {ZERO: 0.0, ONE: 0.0, OTHER: 0.0}
        for token, logprob in step.items():
            if logprob > float("-inf"):
                mass[lead(token)] += math.exp(logprob)
        both = mass[ZERO] + mass[ONE]
        if mass[OTHER] == 0 and mass[ZERO] > 0 and mass[ONE] > 0 and both >= 1 - WHOLE_MASS:
            probs.append(mass[ONE] / both)
    return tuple(probs)


def lead_of(text: str) -> int:
    """ZERO, ONE or OTHER: how a token's text starts."""
    return ZERO if text.startswith("0") else ONE if text.startswith("1") else OTHER
