"""The decode loop of one fixed batch, left padded, under each row's grammar, a row leaving as its JSON closes.

The engine uses it where continuous batching cannot (cache layers that are not plain, e.g. sliding windows).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localeval.engine.base import FinishReason
from localeval.engine.grammar import BatchGrammar
from localeval.engine.soft import LeadTable, note_p1
from localeval.engine.transformers.kv_cache import PrefixCache, growing_layer
from localeval.engine.transformers.loading import LoadedModel

if TYPE_CHECKING:
    import torch


@dataclass
class Row:
    """One sequence to decode: a request, or one of its ``n`` samples."""

    request: int  # index in the caller's list
    ids: list[int]
    schema: str
    max_tokens: int  # the most it may decode
    temperature: float
    seed: int
    tokens: list[int] = field(default_factory=list)
    finish: FinishReason = "stop"
    cached: int = 0  # prompt tokens served from a shared prefix
    shared: int = 0  # continuous batching: the prefix length this row shares with others of its prompt
    soft: bool = False  # record p(1) at each binary decision into ``probs``
    probs: list[float] = field(default_factory=list)
    planned: int = 0  # the answer length batches are planned by (0: max_tokens); decoding may go past it

    @property
    def plan(self) -> int:
        """Tokens this row is planned to take: ``planned``, or its whole budget when unset."""
        return min(self.planned or self.max_tokens, self.max_tokens)


def start_grammar(loaded: LoadedModel, grammar_backend: Any, rows: list[Row]) -> tuple[BatchGrammar, list[bool]]:
    """One grammar row per row, and whether each row's grammar already allows nothing but the end."""
    grammar = BatchGrammar(grammar_backend, [r.schema for r in rows], loaded.vocab_size)
    ready = grammar.fill(range(len(rows)))
    return grammar, list(ready)


def decode_batch(loaded: LoadedModel, grammar_backend: Any, rows: list[Row], shared: int,
                 prefixes: PrefixCache, finished: Callable[[Row], None] | None = None,
                 leads: LeadTable | None = None) -> None:
    """Decode one batch in place (each row's tokens and finish reason); ``shared``: prefix length.

    ``leads`` (given when a row is soft): which tokens start with 0 or 1, for p(1) at binary decisions.

    ``finished(row)`` is called for each row as it completes (its JSON closed or its budget spent).
    """
    report = finished or (lambda row: None)
    import torch
    from transformers import DynamicCache

    device = loaded.device
    grammar, ready = start_grammar(loaded, grammar_backend, rows)
    active = [b for b in range(len(rows)) if not ready[b]]
    for b in range(len(rows)):
        if ready[b]:
            report(rows[b])
    if not active:
        return
    width = max(len(rows[b].ids) - shared for b in active)
    ids = torch.full((len(active), width), loaded.pad_token_id, dtype=torch.long)
    mask = torch.zeros((len(active), shared + width), dtype=torch.long)
    mask[:, :shared] = 1
    for k, b in enumerate(active):  # left padding: every prompt ends at the last column
        tail = rows[b].ids[shared:]
        ids[k, width - len(tail) :] = torch.tensor(tail)
        mask[k, shared + width - len(tail) :] = 1
        rows[b].cached = shared
    positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, shared:]
    generators = {b: torch.Generator().manual_seed(rows[b].seed) for b in active if rows[b].temperature > 0}
    cache = DynamicCache(config=loaded.model.config)
    if loaded.plain_layers:  # room for the longest answer: no concatenation at every step
        room = shared + width + max(rows[b].plan for b in active)
        cache.layers = [growing_layer()(room) for _ in cache.layers]
    if shared:
        n = len(active)
        for i, (keys, values) in enumerate(prefixes.get(tuple(rows[active[0]].ids[:shared]))):
            cache.update(keys.expand(n, -1, -1, -1), values.expand(n, -1, -1, -1), i)
    with torch.inference_mode():
        logits = loaded.forward(ids.to(device), mask.to(device), positions.to(device), cache)
        while True:
            grammar.apply(logits, active)
            if leads is not None:
                note_p1(leads, logits, grammar.bitmask[active], [rows[b] for b in active])
            tokens = pick(logits, [rows[b] for b in active], [generators.get(b) for b in active])
            going: list[int] = []
            for b, token in zip(active, tokens, strict=True):
                if grammar.is_stop(token):
                    rows[b].finish = "stop"
                    report(rows[b])
                    continue
                grammar.accept(b, token)
                rows[b].tokens.append(token)
                going.append(b)
            filled = grammar.fill(going)
            still: list[int] = []
            for b, done in zip(going, filled, strict=True):
                if done:
                    rows[b].finish = "stop"
                elif len(rows[b].tokens) >= rows[b].max_tokens:
                    rows[b].finish = "length"
                else:
                    still.append(b)
                    continue
                report(rows[b])
            if not still:
                return
            if len(still) < len(active):
                keep = torch.tensor([active.index(b) for b in still])
                cache.batch_select_indices(keep.to(device))
                mask, positions = mask[keep], positions[keep]
            active = still
            step = torch.tensor([[rows[b].tokens[-1]] for b in active])
            mask = torch.cat([mask, torch.ones((len(active), 1), dtype=mask.dtype)], dim=1)
            positions = positions[:, -1:] + 1
            logits = loaded.forward(step.to(device), mask.to(device), positions.to(device), cache)


def pick(logits: torch.Tensor, rows: list[Row], generators: list[torch.Generator | None]) -> list[int]:
    """Greedy for temperature 0, else a draw from each row's own seeded generator."""
    import torch

    chosen = logits.argmax(dim=-1).tolist()
    for k, (row, gen) in enumerate(zip(rows, generators, strict=True)):
        if gen is not None:
            probs = torch.softmax(logits[k].cpu() / row.temperature, dim=-1)
            chosen[k] = int(torch.multinomial(probs, 1, generator=gen).item())
    return [int(t) for t in chosen]
