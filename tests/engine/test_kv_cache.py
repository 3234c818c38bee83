"""Decode slots and flat steps, model-free: states written where the layout says, attention per row."""

from __future__ import annotations

import pytest
import torch

from localeval.engine.transformers import flat
from localeval.engine.transformers.flat import flat_attention, flat_step
from localeval.engine.transformers.invariant import TILE_KEYS
from localeval.engine.transformers.rooms import RoomPool, SlotKV

HEADS, KV_HEADS, DIM = 6, 2, 8  # three query heads share each key/value head, as grouped-query models have


class _Module(torch.nn.Module):
    num_key_value_groups = HEADS // KV_HEADS
    is_causal = True


def _fill(kv: SlotKV, slot: int, keys: torch.Tensor, values: torch.Tensor) -> None:
    kv.place(slot, [(keys[None], values[None])] * len(kv.layers), keys.shape[-2])


def _reference(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, past: int) -> torch.Tensor:
    """sdpa over one row's whole sequence: query i (at column past + i) sees columns 0 .. past + i."""
    n, width = query.shape[1], keys.shape[1]
    mask = torch.arange(width)[None] <= past + torch.arange(n)[:, None]
    out = torch.nn.functional.scaled_dot_product_attention(query[None], keys[None], values[None], attn_mask=mask,
                                                           enable_gqa=True)
    return out[0].transpose(0, 1)  # (n, heads, dim)


@pytest.mark.parametrize(("dtype", "chunk"), [(torch.float32, 128), (torch.bfloat16, 128), (torch.float32, 2)])
def test_a_flat_step_gives_each_token_the_attention_of_its_own_row_alone(dtype: torch.dtype, chunk: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each row's tokens in one block of queries, or in blocks of two."""
    monkeypatch.setattr(flat, "QUERY_CHUNK", chunk)
    gen = torch.Generator().manual_seed(0)
    kv = SlotKV(1, 4, room=16, dtype=torch.float32 if dtype == torch.bfloat16 else None)
    past = {0: 5, 2: 3, 3: 7}  # slot 1 is empty: a row just admitted, its whole prompt in this step
    rows = {s: (torch.randn(KV_HEADS, n, DIM, generator=gen), torch.randn(KV_HEADS, n, DIM, generator=gen))
            for s, n in past.items()}
    for s, (k, v) in rows.items():
        _fill(kv, s, k.to(dtype), v.to(dtype))
    lengths = [past.get(s, 0) for s in range(4)]
    chunks = {0: [11], 1: [12, 13, 14, 15], 2: [16, 17, 18]}  # slot 3 sits this step out (idle)
    step, ids, positions = flat_step(chunks, lengths)
    assert ids == [11, 12, 13, 14, 15, 16, 17, 18] and positions == [5, 0, 1, 2, 3, 3, 4, 5]
    query = torch.randn(1, HEADS, len(ids), DIM, generator=gen).to(dtype)
    new_k, new_v = (torch.randn(1, KV_HEADS, len(ids), DIM, generator=gen).to(dtype) for _ in range(2))
    kv.step = step
    keys, values = kv.layers[0].update(new_k, new_v)
    out, _ = flat_attention(_Module(), query, keys, values, None, scaling=DIM**-0.5, flat_step=step)
    assert out.shape == (1, len(ids), HEADS, DIM) and out.dtype == dtype
    at = 0
    for s, chunk in chunks.items():
        n = len(chunk)
        old_k, old_v = rows.get(s, (torch.zeros(KV_HEADS, 0, DIM), torch.zeros(KV_HEADS, 0, DIM)))
        whole_k = torch.cat([old_k.to(dtype).float(), new_k[0, :, at : at + n].float()], dim=1)
        whole_v = torch.cat([old_v.to(dtype).float(), new_v[0, :, at : at + n].float()], dim=1)
        expected = _reference(query[0, :, at : at + n].float(), whole_k, whole_v, lengths[s])
        assert torch.allclose(out[0, at : at + n].float(), expected, atol=1e-5 if dtype == torch.float32 else 2e-2)
        at += n
    assert torch.equal(kv.layers[0].key_room[3, :, :7].float(), rows[3][0].to(dtype).float())  # idle: untouched


def test_slots_grow_copy_and_keep_bfloat16_states_in_float32_exactly() -> None:
    kv = SlotKV(2, 3, room=4, dtype=torch.float32)
    keys = (torch.arange(3.0)[None, :, None].expand(KV_HEADS, 3, DIM) / 3).to(torch.bfloat16)
    _fill(kv, 0, keys, -keys)
    layer = kv.layers[1]
    assert layer.key_room.dtype == torch.float32 and torch.equal(layer.key_room[0, :, :3], keys.float())
    kv.grow(10)  # more room: the filled columns stay
    assert layer.key_room.shape[2] >= 10 and torch.equal(layer.value_room[0, :, :3], -keys.float())
    kv.copy(0, 2, 2)  # slot 2 takes slot 0's first two columns (a prefix they share)
    assert torch.equal(layer.key_room[2, :, :2], keys[:, :2].float())
    kv.select([2, 0])
    assert kv.slots == 2 and torch.equal(layer.key_room[1, :, :3], keys.float())


def test_rooms_from_a_pool_reuse_its_memory_and_grow_it_when_a_loop_needs_more() -> None:
    pool = RoomPool()
    first = SlotKV(2, 3, room=4, dtype=torch.float32, pool=pool)
    keys = torch.arange(float(KV_HEADS * 3 * DIM)).view(KV_HEADS, 3, DIM)
    _fill(first, 1, keys, -keys)
    buffer = pool.buffers[(0, "keys")]
    assert first.layers[0].key_room.data_ptr() == buffer.data_ptr() and buffer.shape[2] == TILE_KEYS  # whole tiles
    first.grow(TILE_KEYS + 10)  # the pool's buffer is replaced by a larger one; the filled columns come along
    assert pool.buffers[(0, "keys")].shape[2] >= TILE_KEYS + 10
    assert torch.equal(first.layers[1].key_room[1, :, :3], keys)
    assert torch.equal(first.layers[1].value_room[1, :, :3], -keys)
    grown = pool.buffers[(1, "values")]
    second = SlotKV(2, 2, room=6, dtype=torch.float32, pool=pool)  # the next loop: smaller, so no new memory
    _fill(second, 0, keys, keys)
    assert pool.buffers[(1, "values")] is grown and second.layers[1].value_room.data_ptr() == grown.data_ptr()
    assert second.layers[1].value_room.shape == (2, KV_HEADS, TILE_KEYS, DIM)
    assert torch.equal(second.layers[1].value_room[0, :, :3], keys)
