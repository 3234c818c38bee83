"""The flat step: one forward pass over every busy row's new tokens, laid end to end in one sequence.

Rows in the decode slots need different numbers of new tokens in a step: one (its last token), one
plus its draft tokens (``drafts.py``), or a whole prompt tail (a row just admitted). Padding them to
one width would multiply the matrix products by the longest; instead their tokens go through the model
as one sequence of ``T`` tokens (batch 1), so every linear layer is one product of ``T`` rows, and only
attention needs to know which row a token belongs to:

* :class:`SlotKV` is the key/value cache: per layer a room of ``slots x kv_heads x columns x head_dim``,
  each row left-aligned in its slot (its ``length`` columns filled). A step writes token ``t`` at
  column ``column[t]`` of slot ``slot[t]``. A row whose draft tokens were refused keeps only the columns
  it accepted: its length is set back and the rest is overwritten by its next step.
* :func:`flat_attention`, registered with transformers as an attention function, computes each token's
  attention over its own row's columns only, row by row, with PyTorch's scaled-dot-product attention: a
  decoding row's few tokens (its last token and its drafts) with the query heads that share a key/value
  head packed together (no copy of keys or values), a prompt tail in blocks of queries, each reading
  only the columns its last token reaches. (One call over every slot at once reads every slot's widest
  columns and idle slots too: it measured slower here than a call per row.)

Which tokens belong where travels as a :class:`FlatStep` passed to the model's forward, which hands it
to the attention function; the cache layers read it from the :class:`SlotKV` that owns them. Outside a
flat step the registered function is transformers' sdpa attention (a prompt's shared prefix, models
decoded in fixed batches). A bfloat16 model's attention runs in float32, and its cache is kept in float32.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

ATTENTION = "localeval_flat"  # the registered name, model dtype
ATTENTION_FLOAT32 = "localeval_flat_float32"  # the same, computed in float32 (bfloat16 weights)
QUERY_CHUNK = 256  # a long segment's queries are taken this many at a time (bounds the score matrix)
PACKED = 32  # a segment of at most this many tokens is a decoding row: its query heads are packed


@dataclass
class FlatStep:
    """Where each of a step's ``T`` tokens goes (its slot and column), and each row's run of them.

    ``segments`` holds (slot, start, count, length) per row: ``count`` tokens from flat index ``start``,
    written after the ``length`` columns the slot held; ``width`` is the columns any token reads.
    """

    slot: torch.Tensor
    column: torch.Tensor
    segments: list[tuple[int, int, int, int]]
    width: int
    tokens: int


def flat_step(chunks: Mapping[int, Sequence[int]], lengths: Sequence[int],
              device: Any = None) -> tuple[FlatStep, list[int], list[int]]:
    """The layout of a step in which slot ``s`` takes the tokens ``chunks[s]`` after its ``lengths[s]``
    columns; with the flat token ids and their positions (a token's position is its column).

    >>> step, ids, positions = flat_step({0: [7], 1: [4, 5, 6, 1], 2: [8, 9]}, [5, 0, 3])
    >>> ids, positions, step.segments, step.width
    ([7, 4, 5, 6, 1, 8, 9], [5, 0, 1, 2, 3, 3, 4], [(0, 0, 1, 5), (1, 1, 4, 0), (2, 5, 2, 3)], 6)
    """
    import torch

    ids: list[int] = []
    slot: list[int] = []
    column: list[int] = []
    segments: list[tuple[int, int, int, int]] = []
    for s in sorted(chunks):
        tokens, length = chunks[s], lengths[s]
        segments.append((s, len(ids), len(tokens), length))
        ids += tokens
        slot += [s] * len(tokens)
        column += range(length, length + len(tokens))
    step = FlatStep(slot=torch.tensor(slot, device=device), column=torch.tensor(column, device=device),
                    segments=segments, width=max(column, default=-1) + 1, tokens=len(ids))
    return step, ids, column


def flat_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, scaling: float | None = None,
                   flat_step: FlatStep | None = None, **kwargs: Any) -> tuple[Any, None]:
    """Attention of a flat step's tokens over their own rows (transformers' sdpa outside a flat step).

    ``query`` is (1, heads, T, head_dim); ``key``/``value`` the whole slot rooms (slots, kv_heads,
    columns, head_dim), this step's tokens already written. Returns (1, T, heads, head_dim).
    """
    if flat_step is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, **kwargs)
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    _, heads, _, dim = query.shape
    kv_heads = key.shape[1]
    group = heads // kv_heads
    q = query[0].to(key.dtype)  # (heads, T, dim)
    out = q.new_empty(flat_step.tokens, heads, dim)
    for slot, start, count, length in flat_step.segments:
        keys, values = key[slot : slot + 1], value[slot : slot + 1]
        if count <= PACKED:  # a decoding row: its few queries, those of a key/value head packed together
            queries = q[:, start : start + count].reshape(1, kv_heads, group * count, dim)
            mask = None
            if count > 1:  # token j sees columns 0 .. length + j
                causal = _causal(length, count, q.device)
                mask = causal[None].expand(group, count, length + count).reshape(1, 1, group * count, -1)
            mixed = sdpa(queries, keys[:, :, : length + count], values[:, :, : length + count], attn_mask=mask,
                         scale=scaling)
            out[start : start + count] = mixed.view(heads, count, dim).transpose(0, 1)
            continue
        for lo in range(0, count, QUERY_CHUNK):  # a prompt tail: a block of queries reads only the
            hi = min(count, lo + QUERY_CHUNK)  # columns its last token reaches
            causal = _causal(length + lo, hi - lo, q.device)
            mixed = sdpa(q[None, :, start + lo : start + hi], keys[:, :, : length + hi], values[:, :, : length + hi],
                         attn_mask=causal, scale=scaling, enable_gqa=True)
            out[start + lo : start + hi] = mixed[0].transpose(0, 1)
    return out[None].to(query.dtype), None


def _causal(past: int, count: int, device: Any) -> torch.Tensor:
    """(count, past + count): token j, at column past + j, sees columns 0 .. past + j."""
    import torch

    return torch.ones((count, past + count), dtype=torch.bool, device=device).tril(diagonal=past)


def flat_attention_float32(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                           **kwargs: Any) -> tuple[Any, None]:
    """:func:`flat_attention` computed in float32, the output in the query's dtype (bfloat16 weights:
    PyTorch's bfloat16 attention on a CPU is slow and less exact)."""
    out, _ = flat_attention(module, query.float(), key.float(), value.float(), attention_mask, **kwargs)
    return out.to(query.dtype), None


@functools.cache
def register_attention() -> tuple[str, str]:
    """Register both attention functions, with sdpa's mask, once; their names (model dtype, float32)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION, flat_attention)
    AttentionInterface.register(ATTENTION_FLOAT32, flat_attention_float32)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)
    AttentionMaskInterface.register(ATTENTION_FLOAT32, sdpa_mask)
    return ATTENTION, ATTENTION_FLOAT32


class RoomPool:
    """Memory for key/value rooms kept between decode loops: one buffer per layer and kind (keys, values),
    handed out as views of the size asked for and replaced by a larger one when a loop needs more.

    A loop's rooms hold every slot at the longest ask's length (hundreds of MB for a small judge): taking
    fresh memory for every round cost its page faults each time (12.7 s of the 143 s that 10 ClapNQ samples
    under six metrics took, zeroed), while the pool pays them once per engine, for the largest round.
    The buffers stay allocated for the engine's life. A view's columns hold whatever the last loop left:
    attention reads only a row's filled columns.
    """

    def __init__(self) -> None:
        self.buffers: dict[tuple[int, str], Any] = {}

    def room(self, layer: int, kind: str, shape: tuple[int, ...], like: Any, dtype: Any) -> Any:
        """A (slots, heads, columns, dim) view of layer ``layer``'s ``kind`` buffer, grown to fit ``shape``."""
        key = (layer, kind)
        held = self.buffers.get(key)
        if held is not None and (held.dtype != dtype or held.device != like.device
                                 or held.shape[1] != shape[1] or held.shape[3] != shape[3]):
            held = None  # states of another shape or kind: start again
        if held is None or held.shape[0] < shape[0] or held.shape[2] < shape[2]:
            size = shape if held is None else (max(shape[0], held.shape[0]), shape[1],
                                               max(shape[2], held.shape[2]), shape[3])
            self.buffers[key] = None  # the old buffer goes before the new one is taken
            held = self.buffers[key] = like.new_empty(size, dtype=dtype)
        return held[: shape[0], :, : shape[2]]


class SlotKV:
    """The decode slots' key/value rooms, one per layer, and the flat step being run.

    ``slots`` rows of ``room`` columns each (grown, with a copy, when a row needs more). Rooms are
    allocated on the first write, in ``dtype`` (float32 for a bfloat16 model) or the states' own, from
    ``pool`` when given (memory kept between loops), else fresh.
    """

    def __init__(self, layers: int, slots: int, room: int, dtype: Any = None, pool: RoomPool | None = None) -> None:
        self.slots, self.room, self.dtype, self.pool = slots, room, dtype, pool
        self.step: FlatStep | None = None
        self.layers = [_slot_layer()(self, index) for index in range(layers)]

    def grow(self, room: int) -> None:
        """Make every slot at least ``room`` columns (the filled columns kept)."""
        if room > self.room:
            self.room = max(room, self.room + self.room // 2)
            for layer in self.layers:
                layer.resize(self.slots, self.room)

    def place(self, slot: int, states: Sequence[tuple[Any, Any]], length: int) -> None:
        """Slot ``slot`` takes the first ``length`` columns of one row's states (keys, values per layer)."""
        for layer, (keys, values) in zip(self.layers, states, strict=True):
            layer.write(slot, keys[0, :, :length], values[0, :, :length])

    def copy(self, source: int, slot: int, length: int) -> None:
        """Slot ``slot`` takes the first ``length`` columns of slot ``source`` (a prompt prefix they share)."""
        for layer in self.layers:
            layer.key_room[slot, :, :length] = layer.key_room[source, :, :length]
            layer.value_room[slot, :, :length] = layer.value_room[source, :, :length]

    def select(self, keep: Sequence[int]) -> None:
        """Keep only slots ``keep``, in that order, as slots 0 .. len(keep) - 1."""
        self.slots = len(keep)
        for layer in self.layers:
            layer.select(keep)


@functools.cache
def _slot_layer() -> type:
    import torch
    from transformers.cache_utils import DynamicLayer

    class SlotLayer(DynamicLayer):
        """One layer's rooms; ``update`` writes a flat step's tokens where its layout says."""

        def __init__(self, owner: SlotKV, index: int) -> None:
            super().__init__()
            self.owner, self.index = owner, index
            self.key_room: Any = None
            self.value_room: Any = None

        def _rooms(self, shape: tuple[int, ...], like: Any, dtype: Any) -> tuple[Any, Any]:
            """Uninitialised rooms (attention reads only a row's filled columns), from the pool if any."""
            pool = self.owner.pool
            if pool is None:
                return like.new_empty(shape, dtype=dtype), like.new_empty(shape, dtype=dtype)
            return (pool.room(self.index, "keys", shape, like, dtype),
                    pool.room(self.index, "values", shape, like, dtype))

        def _allocate(self, like: Any) -> None:
            dtype = self.owner.dtype or like.dtype
            shape = (self.owner.slots, like.shape[1], self.owner.room, like.shape[-1])
            self.key_room, self.value_room = self._rooms(shape, like, dtype)
            self.is_initialized, self.device = True, like.device

        def write(self, slot: int, keys: Any, values: Any) -> None:
            if self.key_room is None:
                self._allocate(keys[None])
            self.key_room[slot, :, : keys.shape[-2]] = keys
            self.value_room[slot, :, : values.shape[-2]] = values

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            step = self.owner.step
            if step is None:
                raise RuntimeError("decode slots are written by flat steps only")
            if self.key_room is None:
                self._allocate(key_states)
            self.key_room[step.slot, :, step.column] = key_states[0].transpose(0, 1).to(self.key_room.dtype)
            self.value_room[step.slot, :, step.column] = value_states[0].transpose(0, 1).to(self.value_room.dtype)
            return self.key_room, self.value_room

        def resize(self, slots: int, room: int) -> None:
            if self.key_room is None:
                return
            shape = (slots, self.key_room.shape[1], room, self.key_room.shape[-1])
            rows, width = min(slots, self.key_room.shape[0]), min(room, self.key_room.shape[2])
            # these views keep the old memory alive until the copy; where the pool hands out the same
            # buffer again, each element keeps its address and the copy leaves it as it is
            old_keys, old_values = self.key_room[:rows, :, :width], self.value_room[:rows, :, :width]
            self.key_room, self.value_room = self._rooms(shape, self.key_room, self.key_room.dtype)
            self.key_room[:rows, :, :width] = old_keys
            self.value_room[:rows, :, :width] = old_values

        def select(self, keep: Sequence[int]) -> None:
            if self.key_room is not None:
                index = torch.tensor(list(keep), device=self.key_room.device)
                self.key_room, self.value_room = self.key_room[index], self.value_room[index]

        def get_seq_length(self, *args: Any, **kwargs: Any) -> int:
            return 0 if self.owner.step is None else self.owner.step.width

        def crop(self, tokens_to_remove: int) -> None:
            raise NotImplementedError("decode slots are never cropped")

    return SlotLayer
