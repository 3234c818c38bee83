"""Decode slots in the key/value cache, model-free: rows placed, appended to, replaced, trimmed, selected."""

from __future__ import annotations

import torch

from localeval.engine.transformers.kv_cache import slot_layer


def _states(length: int, fill: float) -> tuple[torch.Tensor, torch.Tensor]:
    keys = fill + torch.arange(length, dtype=torch.float32)[None, None, :, None].expand(1, 2, length, 3)
    return keys.clone(), -keys.clone()


def _row(layer, slot: int, length: int) -> torch.Tensor:
    """The keys of ``slot``'s own last ``length`` columns, one value per column."""
    return layer.keys[slot, 0, layer.keys.shape[-2] - length :, 0]


def test_rows_end_at_one_column_and_a_longer_row_makes_room_before_the_others() -> None:
    layer = slot_layer()(2)
    layer.place(0, *_states(3, 100.0))
    layer.place(1, *_states(5, 200.0))  # longer than the content so far: room is made on the left
    assert layer.keys.shape == (2, 2, 5, 3)
    assert _row(layer, 0, 3).tolist() == [100.0, 101.0, 102.0]
    assert _row(layer, 1, 5).tolist() == [200.0, 201.0, 202.0, 203.0, 204.0]
    assert torch.equal(layer.values, -layer.keys)
    assert torch.isfinite(layer.keys).all()  # columns before a row's own are zero, never NaN under a mask
    for step in range(4):  # past the room of 2: the layer reallocates and keeps its content
        keys, values = layer.update(torch.full((2, 2, 1, 3), 7.0 + step), torch.full((2, 2, 1, 3), -7.0 - step))
        assert keys.shape[-2] == 6 + step and torch.equal(values, -keys)
    assert _row(layer, 0, 7).tolist() == [100.0, 101.0, 102.0, 7.0, 8.0, 9.0, 10.0]
    assert _row(layer, 1, 9)[:5].tolist() == [200.0, 201.0, 202.0, 203.0, 204.0]
    assert layer.get_seq_length() == 9


def test_a_slot_takes_a_new_row_and_unused_columns_are_trimmed() -> None:
    layer = slot_layer()(4)
    layer.place(0, *_states(6, 100.0))
    layer.place(1, *_states(2, 200.0))
    layer.update(torch.ones((2, 2, 1, 3)), -torch.ones((2, 2, 1, 3)))
    layer.place(0, *_states(3, 300.0))  # the long row finished; a short one takes its slot
    assert _row(layer, 0, 3).tolist() == [300.0, 301.0, 302.0]
    assert _row(layer, 1, 3).tolist() == [200.0, 201.0, 1.0]
    layer.trim(3)  # no row reaches further back than 3 columns
    assert layer.keys.shape[-2] == 3
    layer.place(2, *_states(1, 400.0))  # a new slot after the last
    assert layer.keys.shape[0] == 3 and _row(layer, 2, 1).tolist() == [400.0]
    assert _row(layer, 1, 3).tolist() == [200.0, 201.0, 1.0]
    layer.batch_select_indices(torch.tensor([1, 2]))
    assert layer.keys.shape[:3] == (2, 2, 3)
    assert _row(layer, 0, 3).tolist() == [200.0, 201.0, 1.0] and _row(layer, 1, 1).tolist() == [400.0]


def test_slots_are_added_in_allocated_rows_without_moving_the_others() -> None:
    layer = slot_layer()(4, slots=3)
    layer.place(0, *_states(2, 100.0))
    room = layer.key_room
    layer.place(1, *_states(2, 200.0))
    layer.place(2, *_states(1, 300.0))
    assert layer.key_room is room and layer.keys.shape[:3] == (3, 2, 2)  # three slots, one allocation
    assert [_row(layer, s, n).tolist() for s, n in [(0, 2), (1, 2), (2, 1)]] == [[100.0, 101.0], [200.0, 201.0],
                                                                                [300.0]]


def test_bfloat16_states_are_kept_in_float32_with_their_exact_values() -> None:
    """A bfloat16 model's attention runs in float32: its cache is float32, so no step casts it whole."""
    layer = slot_layer()(2)
    keys, values = (t.to(torch.bfloat16) / 3 for t in _states(3, 100.0))
    layer.place(0, keys, values)
    new = torch.full((1, 2, 1, 3), 1 / 3, dtype=torch.bfloat16)
    out_keys, out_values = layer.update(new, -new)
    assert out_keys.dtype == out_values.dtype == torch.float32
    assert torch.equal(out_keys[0, :, :3], keys[0].float()) and torch.equal(out_keys[0, :, 3:], new[0].float())
    assert torch.equal(out_values[0, :, 3:], -new[0].float())
