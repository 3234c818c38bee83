"""Key/value caches: the states of shared prompt prefixes kept between batches, and preallocated layers."""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from localeval.engine.transformers.loading import LoadedModel

if TYPE_CHECKING:
    import torch

PREFIX_CACHE_SIZE = 4  # shared prefixes whose states are kept between batches and calls

States = list[tuple["torch.Tensor", "torch.Tensor"]]  # per layer, keys and values of one row


class PrefixCache:
    """The key/value states of the last few shared prompt prefixes, computed once each."""

    def __init__(self, loaded: LoadedModel, profile: MutableMapping[str, float], size: int = PREFIX_CACHE_SIZE) -> None:
        self.loaded = loaded
        self.profile = profile
        self.size = size
        self.states: OrderedDict[tuple[int, ...], States] = OrderedDict()

    def get(self, prefix: tuple[int, ...]) -> States:
        """Key/value states of a shared prompt prefix (one row), kept for a few reuses."""
        import torch
        from transformers import DynamicCache

        if prefix in self.states:
            self.states.move_to_end(prefix)
            return self.states[prefix]
        started = time.perf_counter()
        cache = DynamicCache(config=self.loaded.model.config)
        device = self.loaded.device
        ids = torch.tensor([prefix], device=device)
        with torch.inference_mode():
            self.loaded.forward(ids, torch.ones_like(ids), torch.arange(len(prefix), device=device)[None], cache)
        self.profile["prefix_seconds"] += time.perf_counter() - started
        self.profile["prefix_tokens"] += len(prefix)
        states = self.states[prefix] = [(keys, values) for keys, values, *_ in cache]
        if len(self.states) > self.size:
            self.states.popitem(last=False)
        return states


@functools.cache
def growing_layer() -> type:
    """A cache layer that writes into preallocated room instead of concatenating at every step."""
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):
        def __init__(self, room: int) -> None:
            super().__init__()
            self.room = room
            self.length = 0
            self.key_room: Any = None
            self.value_room: Any = None

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self.length + key_states.shape[-2]
            if not self.is_initialized or end > self.key_room.shape[-2]:
                self.is_initialized, self.device = True, key_states.device
                size = max(end, self.room) if self.length == 0 else max(end, 2 * self.key_room.shape[-2])
                shape = (*key_states.shape[:2], size, key_states.shape[-1])
                keys, values = key_states.new_empty(shape), value_states.new_empty(shape)
                if self.length:
                    keys[:, :, : self.length] = self.keys
                    values[:, :, : self.length] = self.values
                self.key_room, self.value_room = keys, values
            self.key_room[:, :, self.length : end] = key_states
            self.value_room[:, :, self.length : end] = value_states
            self.length = end
            self.keys, self.values = self.key_room[:, :, :end], self.value_room[:, :, :end]
            return self.keys, self.values

        def batch_select_indices(self, indices: Any) -> None:
            if self.is_initialized:
                self.key_room, self.value_room = self.key_room[indices], self.value_room[indices]
                self.keys, self.values = self.key_room[:, :, : self.length], self.value_room[:, :, : self.length]

        def crop(self, tokens_to_remove: int) -> None:
            super().crop(tokens_to_remove)
            self.length = self.get_seq_length()

    return GrowingLayer


@functools.cache
def slot_layer() -> type:
    """A cache layer of decode slots: every row's tokens end at one shared column, a slot can take a new
    row's states, and the columns no row reaches any more are dropped without a copy."""
    import torch
    from transformers.cache_utils import DynamicLayer

    class SlotLayer(DynamicLayer):
        def __init__(self, room: int, slots: int = 1) -> None:
            super().__init__()
            self.room = room  # free columns kept after the content when the room is reallocated
            self.slots = slots  # rows allocated at least, so slots are added without a copy
            self.rows = 0  # slots in use: keys = key_room[:rows, :, start:end]
            self.start = self.end = 0
            self.key_room: Any = None
            self.value_room: Any = None

        def _view(self) -> None:
            self.keys = self.key_room[: self.rows, :, self.start : self.end]
            self.values = self.value_room[: self.rows, :, self.start : self.end]

        def _reallocate(self, rows: int, left: int, keys: Any, values: Any) -> None:
            """Zeroed room (never NaN under a mask) for ``rows`` rows, ``left`` free columns before the content."""
            width = self.end - self.start
            shape = (max(rows, self.slots), keys.shape[1], left + width + self.room)
            # A bfloat16 model's attention runs in float32 (attention.py): its states are kept in float32,
            # each column cast once as it is written, not the whole cache at every step.
            dtype = torch.float32 if keys.dtype == torch.bfloat16 else keys.dtype
            key_room = keys.new_zeros((*shape, keys.shape[-1]), dtype=dtype)
            value_room = values.new_zeros((*shape, values.shape[-1]), dtype=dtype)
            if self.key_room is not None and width and self.rows:
                key_room[: self.rows, :, left : left + width] = self.keys
                value_room[: self.rows, :, left : left + width] = self.values
            self.key_room, self.value_room = key_room, value_room
            self.start, self.end, self.rows = left, left + width, rows
            self.is_initialized, self.device = True, key_room.device
            self._view()

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
            end = self.end + key_states.shape[-2]
            if self.key_room is None or end > self.key_room.shape[-2]:
                self._reallocate(key_states.shape[0], 0, key_states, value_states)
                end = self.end + key_states.shape[-2]
            self.key_room[: self.rows, :, self.end : end] = key_states
            self.value_room[: self.rows, :, self.end : end] = value_states
            self.end = end
            self._view()
            return self.keys, self.values

        def place(self, slot: int, keys: Any, values: Any) -> None:
            """Slot ``slot`` (one past the last: a new slot) takes one row's states, ending at the shared end."""
            length = keys.shape[-2]
            rows = max(slot + 1, self.rows)
            if self.key_room is None or rows > self.key_room.shape[0] or self.end < length:
                self._reallocate(rows, max(0, length - (self.end - self.start)), keys, values)
            self.rows = rows
            self.start = min(self.start, self.end - length)
            self.key_room[slot, :, self.end - length : self.end] = keys[0]
            self.value_room[slot, :, self.end - length : self.end] = values[0]
            self._view()

        def trim(self, width: int) -> None:
            """Keep only the last ``width`` columns (no row reaches further back)."""
            self.start = max(self.start, self.end - width)
            self._view()

        def batch_select_indices(self, indices: Any) -> None:
            if self.key_room is not None:
                self.key_room, self.value_room = self.key_room[indices], self.value_room[indices]
                self.rows = len(indices)
                self._view()

        def crop(self, tokens_to_remove: int) -> None:
            raise NotImplementedError("decode slots are never cropped")

    return SlotLayer
