"""Continuous batching: a waiting row takes the decode slot of one that finished, so steps run full.

Each row is prefilled on its own (batch of one, after its shared prefix's cached states) and its
key/value states are copied into a free slot of the running batch, right-aligned with the others:
every row's tokens end at the same column, so one decode step appends one column for all of them.
The attention mask hides the columns before each row's own tokens and the position ids count its
own tokens only, so a row sees exactly the context it would see alone.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from localeval.engine.grammar import BatchGrammar
from localeval.engine.repeats import RepeatGuard
from localeval.engine.soft import LeadTable, note_p1
from localeval.engine.transformers.batching import SlotTable
from localeval.engine.transformers.decode import Row, pick, start_grammar
from localeval.engine.transformers.kv_cache import PrefixCache, slot_layer
from localeval.engine.transformers.loading import LoadedModel

if TYPE_CHECKING:
    import torch


class Stepper:
    """One token for some rows: mask by grammar, pick, advance; report the rows that finish."""

    def __init__(self, grammar: BatchGrammar, rows: list[Row], generators: dict[int, Any],
                 report: Callable[[Row], None], profile: MutableMapping[str, float],
                 leads: LeadTable | None = None, guard: RepeatGuard | None = None) -> None:
        self.grammar, self.rows, self.generators = grammar, rows, generators
        self.report, self.profile, self.leads, self.guard = report, profile, leads, guard
        self.refused: dict[int, str] = {}  # per row, the last cut its schema did not allow

    def step(self, logits: torch.Tensor, ks: list[int]) -> list[int]:
        """Advance rows ``ks`` (logits row ``i`` is row ``ks[i]``); the rows that go on."""
        clock = time.perf_counter()
        self.grammar.apply(logits, ks)
        if self.leads is not None:  # soft asks: p(1) at each binary decision
            note_p1(self.leads, logits, self.grammar.bitmask[ks], [self.rows[k] for k in ks])
        tokens = pick(logits, [self.rows[k] for k in ks], [self.generators.get(k) for k in ks])
        going: list[int] = []
        for k, token in zip(ks, tokens, strict=True):
            if self.grammar.is_stop(token):
                self._finish(k, "stop")
                continue
            self.grammar.accept(k, token)
            self.rows[k].tokens.append(token)
            if self.guard is not None and not self.rows[k].soft and self.guard.ends_item(token) and self._cut_repeat(k):
                continue
            going.append(k)
        still: list[int] = []
        for k, done in zip(going, self.grammar.fill(going), strict=True):
            if done:
                self._finish(k, "stop")
            elif len(self.rows[k].tokens) >= self.rows[k].max_tokens:
                self._finish(k, "length")
            else:
                still.append(k)
        self.profile["grammar_seconds"] += time.perf_counter() - clock
        return still

    def _cut_repeat(self, k: int) -> bool:
        """End row ``k`` before its first repeated list item, where its schema allows (the guard).

        A cut the schema refused (a list of fixed length) is not tried again for the same row."""
        assert self.guard is not None
        cut = self.guard.cut(self.rows[k].tokens)
        if cut is None or self.refused.get(k) == cut:
            return False
        shorter = self.guard.tokens_for(self.rows[k].tokens, cut)
        if not self.grammar.complete_with(k, shorter):
            self.refused[k] = cut
            return False
        self.rows[k].tokens = shorter
        self.profile["repeats_cut"] += 1
        self._finish(k, "stop")
        return True

    def _finish(self, k: int, reason: Any) -> None:
        self.rows[k].finish = reason
        self.report(self.rows[k])


def prefill_row(loaded: LoadedModel, row: Row, prefixes: PrefixCache,
                profile: MutableMapping[str, float]) -> tuple[torch.Tensor, list[tuple[Any, Any]]]:
    """The row's next-token logits (one row) and its key/value states per layer, its prefix reused."""
    import torch
    from transformers import DynamicCache

    device = loaded.device
    cache = DynamicCache(config=loaded.model.config)
    if row.shared:
        for i, (keys, values) in enumerate(prefixes.get(tuple(row.ids[: row.shared]))):
            cache.update(keys, values, i)
    tail = torch.tensor([row.ids[row.shared :]], device=device)
    mask = torch.ones((1, len(row.ids)), dtype=torch.long, device=device)
    positions = torch.arange(row.shared, len(row.ids), device=device)[None]
    row.cached = row.shared
    clock = time.perf_counter()
    logits = loaded.forward(tail, mask, positions, cache)
    profile["prefill_seconds"] += time.perf_counter() - clock
    profile["prefill_tokens"] += tail.numel()
    profile["prefill_padded_tokens"] += tail.numel()
    return logits, [(keys, values) for keys, values, *_ in cache]


def decode_continuous(loaded: LoadedModel, grammar_backend: Any, rows: list[Row], batch_size: int,
                      batch_tokens: int | None, prefixes: PrefixCache, profile: MutableMapping[str, float],
                      finished: Callable[[Row], None] | None = None, leads: LeadTable | None = None,
                      guard: RepeatGuard | None = None) -> list[int]:
    """Decode ``rows`` in place, admitted in list order as slots free up; the order they were admitted.

    ``leads`` (given when a row is soft): which tokens start with 0 or 1, for p(1) at binary decisions.
    ``guard`` (given with ``stop_repeats``): a list that repeats an earlier item ends before it.

    ``finished(row)`` is called for each row as it completes (its JSON closed or its budget spent).
    """
    import torch
    from transformers import DynamicCache

    report = finished or (lambda row: None)
    device = loaded.device
    grammar, ready = start_grammar(loaded, grammar_backend, rows, profile)
    for k in range(len(rows)):
        if ready[k]:
            report(rows[k])
    queue = deque(k for k in range(len(rows)) if not ready[k])
    if not queue:
        return []
    costs = [len(r.ids) - r.shared + r.plan for r in rows]
    generators = {k: torch.Generator().manual_seed(rows[k].seed) for k in queue if rows[k].temperature > 0}
    stepper = Stepper(grammar, rows, generators, report, profile, leads, guard)
    table = SlotTable(batch_size, batch_tokens)
    cache = DynamicCache(config=loaded.model.config)
    room, slots = max(r.plan for r in rows), min(table.batch_size, len(queue))
    layers: list[Any] = [slot_layer()(room, slots) for _ in cache.layers]
    cache.layers = layers
    lengths: list[int] = []  # per slot: the row's tokens in the cache
    admitted: list[int] = []
    with torch.inference_mode():
        while True:
            while queue and table.fits(costs[queue[0]]):
                k = queue.popleft()
                admitted.append(k)
                logits, states = prefill_row(loaded, rows[k], prefixes, profile)
                if not stepper.step(logits, [k]):
                    continue
                slot = table.place(k, costs[k])
                for layer, (keys, values) in zip(layers, states, strict=True):
                    layer.place(slot, keys, values)
                lengths[slot:slot + 1] = [len(rows[k].ids)]
            if not table.rows:
                if queue:
                    continue
                return admitted
            keep = table.compact()
            if keep is not None:
                cache.batch_select_indices(torch.tensor(keep, device=device))
                lengths = [lengths[slot] for slot in keep]
            active = table.rows
            width = max(lengths) + 1
            for layer in layers:
                layer.trim(width - 1)
            own = torch.tensor(lengths)[:, None]
            mask = (torch.arange(width)[None] >= width - 1 - own).long()
            step = torch.tensor([[rows[k].tokens[-1]] for k in active])
            clock = time.perf_counter()
            logits = loaded.forward(step.to(device), mask.to(device), own.to(device), cache)
            profile["decode_seconds"] += time.perf_counter() - clock
            profile["decode_steps"] += 1
            profile["decode_tokens"] += len(active)
            lengths = [n + 1 for n in lengths]
            still = set(stepper.step(logits, active))
            for slot, k in enumerate(active):
                if k not in still:
                    table.free(slot)
