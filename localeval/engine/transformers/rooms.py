"""The decode slots' key/value memory: per layer a room of ``slots x kv_heads x columns x head_dim`` that
flat steps write into (``flat.py``), and a pool that keeps that memory between decode loops."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from localeval.engine.transformers.invariant import TILE_KEYS, round_up

if TYPE_CHECKING:
    from localeval.engine.transformers.flat import FlatStep


class RoomPool:
    """Memory for key/value rooms kept between decode loops: one buffer per layer and kind (keys, values),
    handed out as views of the size asked for and replaced by a larger one when a loop needs more.

    A loop's rooms hold every slot at the longest ask's length (hundreds of MB for a small judge): fresh
    memory for every round would pay its page faults every round; the pool pays them once per engine.
    The buffers stay allocated for the engine's life and start zeroed. A view's columns hold whatever the
    last loop left, always finite numbers: attention weighs the columns past a row's filled ones by 0.
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
            held = self.buffers[key] = like.new_zeros(size, dtype=dtype)
        return held[: shape[0], :, : shape[2]]


class SlotKV:
    """The decode slots' key/value rooms, one per layer, and the flat step being run.

    ``slots`` rows of ``room`` columns each (grown, with a copy, when a row needs more). Rooms are
    allocated on the first write, in ``dtype`` (float32 for a bfloat16 model) or the states' own, from
    ``pool`` when given (memory kept between loops), else fresh and zeroed; ``room`` is rounded up to a
    whole number of key blocks (attention reads rows that wide).
    """

    def __init__(self, layers: int, slots: int, room: int, dtype: Any = None, pool: RoomPool | None = None) -> None:
        self.slots, self.room, self.dtype, self.pool = slots, round_up(room, TILE_KEYS), dtype, pool
        self.step: FlatStep | None = None
        self.layers = [_slot_layer()(self, index) for index in range(layers)]

    def grow(self, room: int) -> None:
        """Make every slot at least ``room`` columns (the filled columns kept)."""
        if room > self.room:
            self.room = round_up(max(room, self.room + self.room // 2), TILE_KEYS)
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
            """Rooms from the pool if any, else zeroed ones."""
            pool = self.owner.pool
            if pool is None:
                return like.new_zeros(shape, dtype=dtype), like.new_zeros(shape, dtype=dtype)
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
