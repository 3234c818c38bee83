"""The decode slots of continuous batching: which row each holds, its filled key/value columns, and where a row
admitted into a slot takes the states of the longest prefix it shares with a row already in one."""

from __future__ import annotations

from localeval.engine.transformers.batching import SlotTable
from localeval.engine.transformers.decode import Row
from localeval.engine.transformers.drafts import MAX_DRAFT
from localeval.engine.transformers.kv_cache import PrefixCache
from localeval.engine.transformers.loading import LoadedModel
from localeval.engine.transformers.rooms import SlotKV

MIN_SHARED = 16  # prompt tokens a row must share with a row in a slot, beyond its prompt's own prefix, to copy them


def shared_length(a: list[int], b: list[int]) -> int:
    """How many leading tokens ``a`` and ``b`` have in common.

    >>> shared_length([1, 2, 3, 4], [1, 2, 5])
    2
    """
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Slots:
    """Which row each decode slot holds, how many columns of its states are filled, and their rooms."""

    def __init__(self, loaded: LoadedModel, layers: int, rows: list[Row], batch_size: int,
                 prefixes: PrefixCache, share: bool = True) -> None:
        import torch

        self.rows, self.prefixes, self.share = rows, prefixes, share
        self.table = SlotTable(batch_size)
        room = max(len(r.ids) + r.plan for r in rows) + MAX_DRAFT + 1
        dtype = torch.float32 if loaded.dtype == "bfloat16" else None  # its attention runs in float32 (flat.py)
        self.kv = SlotKV(layers, min(batch_size, len(rows)), room, dtype, loaded.rooms)
        self.lengths: list[int] = [0] * self.kv.slots  # per slot: columns of states filled
        self.prefilled: set[int] = set()  # slots whose row's prompt is wholly in its columns

    def place(self, k: int) -> int:
        """Row ``k`` takes a free slot (its states come with :meth:`fill`)."""
        slot = self.table.place(k)
        self.lengths[slot] = 0
        self.prefilled.discard(slot)
        return slot

    def fill(self, k: int, slot: int) -> int:
        """Slot ``slot`` takes the states of the longest prefix row ``k`` shares with a prefilled row in a
        slot, or else of its prompt's own prefix; the columns filled."""
        row = self.rows[k]
        source, length = -1, row.shared
        for other in self.prefilled if self.share else ():
            held = self.table.slots[other]
            if held is not None:
                n = min(shared_length(row.ids, self.rows[held].ids), len(row.ids) - 1)
                if n >= max(length, row.shared + MIN_SHARED):
                    source, length = other, n
        self.kv.grow(len(row.ids) + row.plan + MAX_DRAFT + 1)
        if source >= 0:
            self.kv.copy(source, slot, length)
        elif length:
            self.kv.place(slot, self.prefixes.get(tuple(row.ids[:length])), length)
        row.cached = self.lengths[slot] = length
        return length

    def slot_of(self, k: int) -> int:
        """The slot row ``k`` holds."""
        return self.table.slots.index(k)

    def sibling(self, k: int, admitted: list[int]) -> bool:
        """Whether row ``k`` shares more than its prompt's prefix with a row admitted in this step (it
        will copy those states from that row's slot once they are computed, at the next step)."""
        row = self.rows[k]
        return self.share and any(shared_length(row.ids, self.rows[j].ids) >= row.shared + MIN_SHARED
                                  for j in admitted)

    def free(self, slot: int) -> None:
        self.table.free(slot)
        self.prefilled.discard(slot)

    def pack(self) -> None:
        """Move the rows of the highest slots into free lower ones (a copy of their filled columns), so
        the slots in use are the first ones and a step's batched attention reads no idle slot."""
        for src, dst in self.table.pack():
            self.kv.copy(src, dst, self.lengths[src])
            self.lengths[dst] = self.lengths[src]
            if src in self.prefilled:
                self.prefilled.discard(src)
                self.prefilled.add(dst)
