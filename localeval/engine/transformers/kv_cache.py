"""Key/value caches: the states of shared prompt prefixes kept between batches, and a preallocated layer
for fixed batches (continuous batching keeps its states in decode slots: ``rooms.SlotKV``)."""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from localeval.engine.transformers.loading import LoadedModel

if TYPE_CHECKING:
    import torch

PREFIX_CACHE_SIZE = 4  # shared prefixes whose states are kept between batches and calls

States = list[tuple["torch.Tensor", "torch.Tensor"]]  # per layer, keys and values of one row


class PrefixCache:
    """The key/value states of the last few shared prompt prefixes, computed once each."""

    def __init__(self, loaded: LoadedModel, size: int = PREFIX_CACHE_SIZE) -> None:
        self.loaded = loaded
        self.size = size
        self.states: OrderedDict[tuple[int, ...], States] = OrderedDict()

    def get(self, prefix: tuple[int, ...]) -> States:
        """Key/value states of a shared prompt prefix (one row), kept for a few reuses."""
        import torch
        from transformers import DynamicCache

        if prefix in self.states:
            self.states.move_to_end(prefix)
            return self.states[prefix]
        cache = DynamicCache(config=self.loaded.model.config)
        device = self.loaded.device
        ids = torch.tensor([prefix], device=device)
        with torch.inference_mode():
            self.loaded.forward(ids, torch.ones_like(ids), torch.arange(len(prefix), device=device)[None], cache,
                                one_row=True)
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
