"""Batch invariance, model-free: a row's bits do not depend on what shares its pass (``invariant.py``).

Linear layers and attention alone, then a small random Llama run through flat steps in every layout the
decode loop makes: a prompt alone or beside others, split across steps, its prefix computed by the
prefix cache, copied from a sibling's slot or recomputed, and a decoding token with and without company.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from localeval.engine.transformers.flat import ATTENTION, flat_step, register_attention
from localeval.engine.transformers.invariant import (
    BLOCK_ROWS,
    TILE_KEYS,
    attend,
    block_linear_layers,
    blocked_linear,
    check_kernels,
    key_width,
    pack_queries,
    unpack_queries,
    visibility,
)
from localeval.engine.transformers.kv_cache import PrefixCache
from localeval.engine.transformers.loading import LoadedModel
from localeval.engine.transformers.rooms import SlotKV

DTYPES = [torch.bfloat16, torch.float32]


@pytest.fixture(params=[1, 2], ids=["1-thread", "2-threads"])
def threads(request: pytest.FixtureRequest) -> Iterator[int]:
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("inputs", "outputs"), [(576, 1536), (1536, 576), (576, 4096)])
def test_a_linear_rows_bits_are_the_same_in_every_batch_size(dtype: torch.dtype, inputs: int, outputs: int,
                                                             threads: int) -> None:
    gen = torch.Generator().manual_seed(inputs + outputs)
    weight = (torch.randn(outputs, inputs, generator=gen) * 0.05).to(dtype)
    rows = torch.randn(3 * BLOCK_ROWS + 5, inputs, generator=gen).to(dtype)
    alone = torch.cat([blocked_linear(rows[i : i + 1], weight, None) for i in range(rows.shape[0])])
    for count in range(2, rows.shape[0] + 1):
        assert torch.equal(blocked_linear(rows[:count], weight, None), alone[:count]), count
    shifted = blocked_linear(rows[7:], weight, None)  # every row at another place in its block
    assert torch.equal(shifted, alone[7:])
    assert torch.equal(blocked_linear(rows[None, :40], weight, None)[0], alone[:40])  # (batch, T, features)


def test_linear_layers_of_a_model_are_swapped_in_place() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
    x = torch.randn(70, 4)
    before = model(x)
    assert block_linear_layers(model) == 2
    assert torch.allclose(model(x), before) and type(model[0]).__name__ == "BlockedLinear"


def _attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, past: list[int],
               tokens: int) -> torch.Tensor:
    """(rows, heads, tokens, dim) queries over rows of keys/values, row r's first token at column past[r]."""
    heads, kv_heads = queries.shape[1], keys.shape[1]
    out = attend(pack_queries(queries, kv_heads), keys, values, visibility(past, tokens, heads // kv_heads), 0.125)
    return unpack_queries(out, heads, tokens)


def test_a_querys_attention_bits_do_not_depend_on_its_company(threads: int) -> None:
    gen = torch.Generator().manual_seed(1)
    heads, kv_heads, dim, rows, columns = 9, 3, 64, 5, 1100
    keys, values = (torch.randn(rows, kv_heads, columns + TILE_KEYS, dim, generator=gen).bfloat16().float()
                    for _ in range(2))
    queries = torch.randn(rows, heads, columns, dim, generator=gen).bfloat16().float()

    def alone(r: int, t: int) -> torch.Tensor:
        return _attention(queries[r : r + 1, :, t : t + 1], keys[r : r + 1], values[r : r + 1], [t], 1)[0, :, 0]

    checked = 0
    for tokens, past in [(1, [5, 700, 130, 1000, 64]), (3, [0, 127, 128, 900, 33]), (9, [10, 500, 1000, 2, 255])]:
        company = torch.stack([queries[r, :, p : p + tokens] for r, p in enumerate(past)])
        together = _attention(company, keys, values, past, tokens)
        for r, p in enumerate(past):
            for t in range(tokens):
                assert torch.equal(together[r, :, t], alone(r, p + t)), (tokens, r, p + t)
                checked += 1
    for lo, hi in [(0, 300), (299, 555), (1000, 1100), (64, 65)]:  # a prompt tail's block of queries
        block = _attention(queries[2:3, :, lo:hi], keys[2:3], values[2:3], [lo], hi - lo)[0]
        for t in (lo, (lo + hi) // 2, hi - 1):
            assert torch.equal(block[:, t - lo], alone(2, t)), (lo, hi, t)
            checked += 1
    assert checked == 77


def test_a_querys_bits_are_the_same_at_every_width_a_row_can_be_given(threads: int) -> None:
    """A query that reaches ``reach`` columns, read over any width ``key_width`` gives a longer row (the
    rest masked): the same bits. (A last key block of 208-368 columns would not: ``key_width`` avoids it.)"""
    gen = torch.Generator().manual_seed(3)
    keys, values = (torch.randn(1, 3, 1600, 64, generator=gen) for _ in range(2))
    queries = torch.randn(1, 3, 4, 64, generator=gen)
    widths = sorted({key_width(end) for end in range(1, 1537)})
    checked = 0
    for reach in [*range(1, 1537, 23), 192, 193, 208, 300, 383, 384, 385, 512, 513, 700, 1100]:
        outs = [attend(queries, keys, values, (torch.arange(width) < reach).expand(1, 4, width), 0.125)
                for width in widths if width >= reach]
        assert all(torch.equal(out, outs[0]) for out in outs[1:]), reach
        checked += len(outs)
    assert checked > 2500


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_kernel_check_passes_on_this_machine(dtype: torch.dtype) -> None:
    assert check_kernels((torch.randn(96, 64) * 0.1).to(dtype)) is None


def _tiny_model(dtype: torch.dtype) -> LoadedModel:
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=384, intermediate_size=768, num_hidden_layers=2, num_attention_heads=6,
                         num_key_value_heads=2, vocab_size=320, max_position_embeddings=2048)
    model = LlamaForCausalLM._from_config(config, attn_implementation=register_attention()).to(dtype).eval()
    block_linear_layers(model)
    assert model.config._attn_implementation == ATTENTION
    return LoadedModel(model=model, tokenizer=None, device=torch.device("cpu"), dtype=str(dtype)[6:],
                       vocab_size=320, context_window=2048, stop_ids=[0], pad_token_id=0,
                       cache_kwarg="cache", plain_layers=True)


class _Slots:
    """Decode slots driven by hand: each step's logits at every position, per slot."""

    def __init__(self, loaded: LoadedModel, slots: int) -> None:
        from transformers import DynamicCache

        self.loaded = loaded
        rooms = torch.float32 if loaded.dtype == "bfloat16" else None
        self.kv = SlotKV(loaded.model.config.num_hidden_layers, slots, 1200, rooms)
        self.cache = DynamicCache(config=loaded.model.config)
        self.cache.layers = self.kv.layers
        self.lengths = [0] * slots

    def step(self, chunks: dict[int, list[int]]) -> dict[int, torch.Tensor]:
        step, ids, positions = flat_step(chunks, self.lengths)
        self.kv.step = step
        with torch.inference_mode():
            logits = self.loaded.forward_flat(ids, positions, self.cache, step, list(range(len(ids))))
        self.kv.step = None
        out = {}
        for slot, start, count, _ in step.segments:
            out[slot] = logits[start : start + count]
            self.lengths[slot] += count
        return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_rows_logits_are_the_same_bits_in_every_layout_of_the_decode_loop(dtype: torch.dtype) -> None:
    loaded = _tiny_model(dtype)
    gen = torch.Generator().manual_seed(3)
    prompt = torch.randint(1, 320, (300,), generator=gen).tolist()
    others = [torch.randint(1, 320, (n,), generator=gen).tolist() for n in (180, 420, 40)]
    shared = prompt[:130] + others[0][130:]  # shares a 130-token prefix with the prompt

    alone = _Slots(loaded, 4)
    reference = alone.step({0: prompt})[0]
    decoded = alone.step({0: [17, 18, 19]})[0]  # a last token and two drafts

    crowded = _Slots(loaded, 4)  # the same prompt beside three others, in another slot
    out = crowded.step({0: others[0], 1: others[1], 2: prompt, 3: others[2]})
    assert torch.equal(out[2], reference)
    out = crowded.step({0: [5], 2: [17, 18, 19], 3: [6, 7]})
    assert torch.equal(out[2], decoded)

    split = _Slots(loaded, 2)  # the prompt's tail across two steps, beside a decoding row
    split.step({1: shared})
    first = split.step({0: prompt[:171], 1: [9]})[0]
    second = split.step({0: prompt[171:]})[0]
    assert torch.equal(torch.cat([first, second]), reference)

    copied = _Slots(loaded, 2)  # the prefix copied from a sibling's slot, then the tail
    copied.step({1: shared})
    with torch.inference_mode():
        copied.kv.copy(1, 0, 130)
    copied.lengths[0] = 130
    assert torch.equal(copied.step({0: prompt[130:]})[0], reference[130:])

    cached = _Slots(loaded, 2)  # the prefix computed by the prefix cache (outside the slots), then placed
    states = PrefixCache(loaded, {"prefix_seconds": 0.0, "prefix_tokens": 0.0}).get(tuple(prompt[:130]))
    with torch.inference_mode():
        cached.kv.place(0, states, 130)
    cached.lengths[0] = 130
    assert torch.equal(cached.step({0: prompt[130:]})[0], reference[130:])
    assert torch.equal(cached.step({0: [17, 18, 19]})[0], decoded)


@pytest.mark.model
@pytest.mark.parametrize("dtype", [None, "float32"], ids=["cpu-default", "float32"])
def test_the_bundled_judges_logits_are_the_same_bits_in_every_layout(dtype: str | None, models_folder) -> None:
    """On the real weights (the CPU default dtype, then float32) a prompt's logits and a decoding step's do
    not change beside other rows, nor when the prompt is split across steps (the kernels before
    ``invariant.py`` failed the last two)."""
    from localeval.engine.transformers import TransformersEngine
    from localeval.model_folders import DEFAULT_JUDGE

    loaded = TransformersEngine(models_folder / DEFAULT_JUDGE, threads=1, dtype=dtype).loaded
    gen = torch.Generator().manual_seed(0)
    prompt = torch.randint(100, 40000, (400,), generator=gen).tolist()
    others = [torch.randint(100, 40000, (n,), generator=gen).tolist() for n in (300, 600, 50)]
    alone = _Slots(loaded, 4)
    reference = alone.step({0: prompt})[0]
    decoded = alone.step({0: [17, 18, 19]})[0]
    crowded = _Slots(loaded, 4)
    assert torch.equal(crowded.step({0: others[0], 1: others[1], 2: prompt, 3: others[2]})[2], reference)
    assert torch.equal(crowded.step({0: [5], 1: [6], 2: [17, 18, 19], 3: [6, 7]})[2], decoded)
    split = _Slots(loaded, 1)
    assert torch.equal(torch.cat([split.step({0: prompt[:171]})[0], split.step({0: prompt[171:]})[0]]), reference)
