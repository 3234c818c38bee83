"""Continuous batching in flat steps: a waiting row takes a finished row's slot, drafts cut the steps.

Every step is one forward pass over the new tokens of every busy slot laid end to end (``flat.py``):

* a row just admitted brings its prompt's tail: its slot first takes the key/value states of the
  longest prefix it shares, either with a row already in a slot (the asks of one sample repeat its
  question and passages; the ``n`` samples of one ask repeat the whole prompt) or with its prompt's
  instruction and examples (``PrefixCache``), and only the rest is computed;
* a decoding row brings its last token and, when greedy, its draft tokens (``drafts.py``): the grammar's
  forced text and prompt lookup. The model scores every position at once; the row keeps the drafts it
  would have picked itself and the model's own pick where they part, and its slot keeps only the
  columns it accepted.

A row leaves the moment its JSON is complete or its budget is spent, and the next waiting row takes its
slot at the next step, so steps run full until the queue is empty. Only the number of rows limits
admission: nothing is padded, so a row costs the work of its own tokens whatever the others hold, and
the key/value rooms are allocated for every slot at the longest ask's length whatever is admitted (a
token budget of rows x longest row, as the padded batches of ``decode.py`` use, would keep slots idle).
Position ids count a row's own tokens, so each row sees exactly the context it would see alone. The slots
are ``slots.py``'s, a step's picks under the grammar ``stepper.py``'s.
"""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from localeval.engine.repeats import RepeatGuard
from localeval.engine.soft import LeadTable
from localeval.engine.transformers.decode import Row, start_grammar
from localeval.engine.transformers.drafts import MAX_DRAFT, PromptLookup, draft
from localeval.engine.transformers.flat import flat_step
from localeval.engine.transformers.kv_cache import PrefixCache
from localeval.engine.transformers.loading import LoadedModel
from localeval.engine.transformers.slots import Slots
from localeval.engine.transformers.stepper import Stepper

if TYPE_CHECKING:
    import torch

PREFILL_TOKENS = 4096  # prompt tokens admitted into one step, at the least one row


def decode_continuous(loaded: LoadedModel, grammar_backend: Any, rows: list[Row], batch_size: int,
                      prefixes: PrefixCache, finished: Callable[[Row], None] | None = None,
                      leads: LeadTable | None = None, guard: RepeatGuard | None = None,
                      drafts: int = MAX_DRAFT) -> list[int]:
    """Decode ``rows`` in place, admitted in list order as slots free up; the order they were admitted.

    ``leads`` (given when a row is soft): which tokens start with 0 or 1, for p(1) at binary decisions.
    ``guard`` (given with ``stop_repeats``): a list that repeats an earlier item ends before it.
    ``drafts``: the most draft tokens a greedy row feeds in a step (0: one token at a time).

    ``finished(row)`` is called for each row as it completes (its JSON closed or its budget spent).
    """
    import torch

    report = finished or (lambda row: None)
    grammar, ready = start_grammar(loaded, grammar_backend, rows)
    for k in range(len(rows)):
        if ready[k]:
            report(rows[k])
    queue = deque(k for k in range(len(rows)) if not ready[k])
    if not queue:
        return []
    generators = {k: torch.Generator().manual_seed(rows[k].seed) for k in queue if rows[k].temperature > 0}
    stepper = Stepper(grammar, rows, generators, report, leads, guard)
    slots = Slots(loaded, _layers(loaded), rows, batch_size, prefixes)
    decoder = _Decoder(loaded, rows, queue, stepper, slots, drafts)
    with torch.inference_mode():
        while decoder.step():
            pass
    return decoder.admitted


def _layers(loaded: LoadedModel) -> int:
    from transformers import DynamicCache

    return len(DynamicCache(config=loaded.model.config).layers)


class _Decoder:
    """The loop's state between flat steps: the queue, the slots, what each row waits for."""

    def __init__(self, loaded: LoadedModel, rows: list[Row], queue: deque[int], stepper: Stepper, slots: Slots,
                 drafts: int) -> None:
        from transformers import DynamicCache

        self.loaded, self.rows, self.queue, self.stepper, self.slots = loaded, rows, queue, stepper, slots
        self.drafts = drafts
        self.cache = DynamicCache(config=loaded.model.config)
        self.cache.layers = slots.kv.layers
        self.lookups: dict[int, PromptLookup] = {}
        self.admitted: list[int] = []
        self.waiting: list[int] = []  # admitted rows that take a sibling's states once computed, next step
        self.encode = functools.lru_cache(maxsize=4096)(self._encode)

    def _encode(self, text: str) -> tuple[int, ...]:
        return tuple(self.loaded.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _admit(self) -> dict[int, int]:
        """Rows whose prompt tails this step computes (slot -> row): last step's waiting rows, then the
        queue's next rows while they fit; a row that shares more than its prompt's prefix with one of
        them waits a step, for that row's states."""
        slots, entering = self.slots, {}
        for k in self.waiting:
            entering[slots.slot_of(k)] = k
        tokens = sum(len(self.rows[k].ids) for k in self.waiting)
        self.waiting = []
        while self.queue and slots.table.fits() and (not entering or tokens < PREFILL_TOKENS):
            k = self.queue.popleft()
            slot = slots.place(k)
            self.admitted.append(k)
            if slots.sibling(k, list(entering.values())):
                self.waiting.append(k)
            else:
                entering[slot] = k
                tokens += len(self.rows[k].ids)
        return entering

    def step(self) -> bool:
        """One flat step; False once every row is done."""
        slots, rows = self.slots, self.rows
        entering = self._admit()
        if not slots.table.rows:
            return bool(self.queue)
        if not self.queue:
            slots.pack()
            entering = {slots.slot_of(k): k for k in entering.values()}
        chunks: dict[int, list[int]] = {}
        for slot, k in entering.items():
            start = slots.fill(k, slot)
            chunks[slot] = rows[k].ids[start:]
        drafted = {slot: self._draft(k) for slot, k in enumerate(slots.table.slots)
                   if k is not None and slot not in entering and k not in self.waiting}
        held = {slot: k for slot, k in enumerate(slots.table.slots) if k is not None}
        for slot, guess in drafted.items():
            chunks[slot] = [rows[held[slot]].tokens[-1], *guess]
            slots.kv.grow(slots.lengths[slot] + len(chunks[slot]) + 1)
        order = sorted(chunks)
        keep: list[int] = []  # flat positions whose logits are kept: an entering row's last, all the others'
        firsts: list[int] = []  # where each slot's first pick is among the kept logits
        at = 0
        for slot in order:
            firsts.append(len(keep))
            count = len(chunks[slot])
            keep += [at + count - 1] if slot in entering else range(at, at + count)
            at += count
        logits = self._forward(chunks, keep)
        going = set(self.stepper.step(logits[firsts], [held[s] for s in order]))
        for slot, at in zip(order, firsts, strict=True):
            k = held[slot]
            alive = k in going
            if slot in entering:
                slots.lengths[slot] = len(rows[k].ids)
                slots.prefilled.add(slot)
            else:
                accepted, guess = 0, drafted[slot]
                if alive and guess:
                    accepted, alive = self.stepper.verify(k, logits[at + 1 : at + 1 + len(guess)], guess)
                slots.lengths[slot] += 1 + accepted
                if alive and k in self.lookups:
                    look = self.lookups[k]
                    look.extend(rows[k].tokens[len(look.context) - len(rows[k].ids) :])
            if not alive:
                slots.free(slot)
                self.lookups.pop(k, None)
        return True

    def _draft(self, k: int) -> list[int]:
        """Row ``k``'s draft tokens for this step (none for a sampled row or one at its budget's end)."""
        row = self.rows[k]
        room = min(self.drafts, row.max_tokens - len(row.tokens) - 1)
        if room <= 0 or row.temperature > 0:
            return []
        if k not in self.lookups:
            self.lookups[k] = PromptLookup([*row.ids, *row.tokens])
        return draft(self.lookups[k], self.stepper.forced(k), self.encode, room)

    def _forward(self, chunks: dict[int, list[int]], keep: list[int]) -> torch.Tensor:
        """Logits of the step at the flat positions ``keep``."""
        slots = self.slots
        step, ids, positions = flat_step(chunks, slots.lengths, device=self.loaded.device)
        slots.kv.step = step
        logits = self.loaded.forward_flat(ids, positions, self.cache, step, keep)
        slots.kv.step = None
        return logits
