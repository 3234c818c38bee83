"""Batches and decode slots for the transformers engine, pure functions of token ids and answer budgets.

Rows of one prompt share its instruction and examples: a batch of them is prefilled once for that
shared prefix, then each row's own tail. Rows are sorted longest first so a batch wastes little on
padding, and cut by row count and by a token budget of rows x (longest tail + longest answer budget).
With continuous batching (flat steps) the plan gives each row its shared prefix, and a
:class:`SlotTable` lets the next waiting row take the slot of one that finished, limited by rows only;
once no row waits, the busy rows are packed into the first slots as others finish.
"""

from __future__ import annotations

from collections.abc import Sequence

MIN_SHARED_PREFIX = 32  # tokens; a shorter common prefix is not worth its own pass


def common_prefix(sequences: Sequence[list[int]]) -> int:
    """The length of the common prefix, leaving every sequence at least one token of its own."""
    low, high = min(sequences), max(sequences)  # lexicographic extremes bound every common prefix
    n = 0
    limit = min(len(s) for s in sequences) - 1
    while n < limit and low[n] == high[n]:
        n += 1
    return n


def split_rows(lengths: Sequence[int], budgets: Sequence[int], rows: Sequence[int], shared: int,
               batch_size: int, batch_tokens: int | None) -> list[list[int]]:
    """``rows`` (indices into ``lengths`` and ``budgets``) sorted longest first, cut into batches of at
    most ``batch_size`` rows and, when ``batch_tokens`` is set, at most that many tokens counted as
    rows x (longest prompt tail after ``shared`` + longest answer budget)."""
    ordered = sorted(rows, key=lambda k: lengths[k], reverse=True)  # similar lengths: little padding
    batches: list[list[int]] = []
    batch: list[int] = []
    width = answer = 0
    for k in ordered:
        w, a = max(width, lengths[k] - shared), max(answer, budgets[k])
        over = batch_tokens is not None and (len(batch) + 1) * (w + a) > batch_tokens
        if batch and (len(batch) >= batch_size or over):
            batches.append(batch)
            batch, w, a = [], lengths[k] - shared, budgets[k]
        batch.append(k)
        width, answer = w, a
    if batch:
        batches.append(batch)
    return batches


def plan_batches(ids: Sequence[list[int]], budgets: Sequence[int], batch_size: int,
                 batch_tokens: int | None, prefix_reuse: bool) -> list[tuple[list[int], int]]:
    """Batches of row indices, each with the prompt prefix its rows share (0: none).

    Rows whose first ``MIN_SHARED_PREFIX`` tokens agree are grouped; a group of two or more with a
    common prefix that long (and ``prefix_reuse``) is batched on its own around that prefix; the
    other rows are batched together by length.
    """
    lengths = [len(row) for row in ids]
    groups: dict[tuple[int, ...], list[int]] = {}
    for k, row in enumerate(ids):
        groups.setdefault(tuple(row[:MIN_SHARED_PREFIX]), []).append(k)
    rest: list[int] = []
    batches: list[tuple[list[int], int]] = []
    for group in groups.values():
        shared = common_prefix([ids[k] for k in group]) if prefix_reuse and len(group) > 1 else 0
        if shared < MIN_SHARED_PREFIX:
            rest += group
            continue
        batches += [(batch, shared) for batch in split_rows(lengths, budgets, group, shared, batch_size, batch_tokens)]
    batches += [(batch, 0) for batch in split_rows(lengths, budgets, rest, 0, batch_size, batch_tokens)]
    return batches


class SlotTable:
    """Which row holds each decode slot; at most ``batch_size`` rows hold one.

    Rows are the only limit: in flat steps nothing is padded, so a row costs the work of its own tokens
    whatever the others hold (``continuous.py``).
    """

    def __init__(self, batch_size: int) -> None:
        self.batch_size = max(1, batch_size)
        self.slots: list[int | None] = []  # the row in each slot; None: free until a row takes it

    @property
    def rows(self) -> list[int]:
        """The rows in slots, in slot order."""
        return [row for row in self.slots if row is not None]

    def fits(self) -> bool:
        """Whether a waiting row may take a slot now."""
        return len(self.rows) < self.batch_size

    def place(self, row: int) -> int:
        """The slot ``row`` takes: the first free one, else a new one after the last."""
        for slot, held in enumerate(self.slots):
            if held is None:
                self.slots[slot] = row
                return slot
        self.slots.append(row)
        return len(self.slots) - 1

    def free(self, slot: int) -> None:
        """The row in ``slot`` has finished."""
        self.slots[slot] = None

    def pack(self) -> list[tuple[int, int]]:
        """Move the rows of the highest slots into free lower ones until the slots in use are the first
        ones, and drop the free slots after them; the moves made, (from, to), in order.

        >>> table = SlotTable(4)
        >>> for row in range(4):
        ...     _ = table.place(row)
        >>> table.free(0); table.free(2)
        >>> table.pack(), table.slots
        ([(3, 0)], [3, 1])
        """
        moves: list[tuple[int, int]] = []
        while True:
            free = [slot for slot, row in enumerate(self.slots) if row is None]
            busy = [slot for slot, row in enumerate(self.slots) if row is not None]
            if not free or not busy or free[0] > busy[-1]:
                break
            self.slots[free[0]], self.slots[busy[-1]] = self.slots[busy[-1]], None
            moves.append((busy[-1], free[0]))
        while self.slots and self.slots[-1] is None:
            self.slots.pop()
        return moves
