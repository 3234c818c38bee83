"""The flat step: one forward pass over every busy row's new tokens, laid end to end in one sequence.

Rows in the decode slots need different numbers of new tokens in a step: one (its last token), one
plus its draft tokens (``drafts.py``), or a whole prompt tail (a row just admitted). Padding them to
one width would multiply the matrix products by the longest; instead their tokens go through the model
as one sequence of ``T`` tokens (batch 1), so every linear layer is one product of ``T`` rows (in the
row blocks of ``invariant.py``), and only attention needs to know which row a token belongs to:

* ``rooms.SlotKV`` is the key/value cache: per layer a room of ``slots x kv_heads x columns x head_dim``,
  each row left-aligned in its slot (its ``length`` columns filled). A step writes token ``t`` at
  column ``column[t]`` of slot ``slot[t]``. A row whose draft tokens were refused keeps only the columns
  it accepted: its length is set back and the rest is overwritten by its next step. Rooms start zeroed
  and are a whole number of key blocks wide, so every column attention reads holds a finite number.
* :func:`flat_attention`, registered with transformers as an attention function, computes each token's
  attention over its own row's columns only, with the batch-invariant kernel of ``invariant.py``, row by
  row (a decoding row's last token and drafts in one call, a prompt tail in blocks of queries): a call
  reads only its row's columns, so rows of very different lengths waste nothing on each other. A shared
  prefix computed outside the slots (``kv_cache.PrefixCache``) goes through the same kernel, so a
  prefix's states are the same bits whether computed for a row, copied from a sibling's slot or served
  from the prefix cache.

Which tokens belong where travels as a :class:`FlatStep` passed to the model's forward, which hands it
to the attention function; the cache layers read it from the ``SlotKV`` that owns them. Models
decoded in padded fixed batches (``decode.py``) get transformers' sdpa attention instead. Attention runs
in float32 whatever the weights' dtype (bfloat16 attention on a CPU is slow and less exact), and a
bfloat16 model's slot rooms are float32.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localeval.engine.transformers.invariant import (
    attend,
    key_width,
    pack_queries,
    unpack_queries,
    visibility,
)

if TYPE_CHECKING:
    import torch

ATTENTION = "localeval_flat"  # the registered name
QUERY_CHUNK = 128  # a prompt tail's queries are taken this many at a time (bounds the score matrix)


@dataclass
class FlatStep:
    """Where each of a step's ``T`` tokens goes (its slot and column), and each row's run of them.

    ``segments`` holds (slot, start, count, length) per row: ``count`` tokens from flat index ``start``,
    written after the ``length`` columns the slot held; ``width`` is the columns any token reads.
    ``plans`` keeps what attention lays out once per step and every layer reuses (which columns each
    block of queries sees).
    """

    slot: torch.Tensor
    column: torch.Tensor
    segments: list[tuple[int, int, int, int]]
    width: int
    tokens: int
    plans: dict[tuple[int, int], Any] = field(default_factory=dict)


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


def _visible(step: FlatStep, length: int, count: int, group: int, device: Any) -> torch.Tensor:
    """Which columns a block of ``count`` queries after ``length`` columns sees, built once per step (every
    layer asks again)."""
    key = (length, count)
    if key not in step.plans:
        step.plans[key] = visibility([length], count, group, device)
    found: torch.Tensor = step.plans[key]
    return found


def flat_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, scaling: float | None = None,
                   flat_step: FlatStep | None = None, one_row: bool = False, **kwargs: Any) -> tuple[Any, None]:
    """Attention of a flat step's tokens over their own rows, batch-invariant (``invariant.attend``).

    ``query`` is (1, heads, T, head_dim); ``key``/``value`` the whole slot rooms (slots, kv_heads,
    columns, head_dim), this step's tokens already written. Returns (1, T, heads, head_dim). Outside a flat
    step: with ``one_row`` (a prompt's shared prefix, one row from column 0) the same kernel; otherwise
    (padded fixed batches) transformers' sdpa attention.
    """
    _, heads, tokens, dim = query.shape
    kv_heads = key.shape[1]
    group = heads // kv_heads
    scale = scaling if scaling is not None else dim**-0.5
    if flat_step is None:
        if not one_row:
            from transformers.integrations.sdpa_attention import sdpa_attention_forward

            out, _ = sdpa_attention_forward(module, query.float(), key.float(), value.float(), attention_mask,
                                            scaling=scaling, **kwargs)
            return out.to(query.dtype), None
        return _one_row(query, key, value, scale).to(query.dtype), None
    out = query.new_empty((tokens, heads, dim), dtype=_float32())
    for slot, start, count, length in flat_step.segments:
        for lo in range(0, count, QUERY_CHUNK):
            hi = min(count, lo + QUERY_CHUNK)
            visible = _visible(flat_step, length + lo, hi - lo, group, query.device)
            mixed = attend(pack_queries(query[:, :, start + lo : start + hi], kv_heads), key[slot : slot + 1],
                           value[slot : slot + 1], visible, scale)
            out[start + lo : start + hi] = unpack_queries(mixed, heads, hi - lo)[0].transpose(0, 1)
    return out[None].to(query.dtype), None


def _one_row(query: Any, key: Any, value: Any, scale: float) -> Any:
    """A single row's attention from column 0 (its keys and values are exactly its columns): (1, T, heads, dim)."""
    from torch.nn.functional import pad

    _, heads, tokens, dim = query.shape
    columns = key.shape[2]
    extra = key_width(columns) - columns
    keys, values = pad(key.float(), (0, 0, 0, extra)), pad(value.float(), (0, 0, 0, extra))
    out = query.new_empty((tokens, heads, dim), dtype=_float32())
    for lo in range(0, tokens, QUERY_CHUNK):
        hi = min(tokens, lo + QUERY_CHUNK)
        visible = visibility([columns - tokens + lo], hi - lo, heads // key.shape[1], query.device)
        mixed = attend(pack_queries(query[:, :, lo:hi], key.shape[1]), keys, values, visible, scale)
        out[lo:hi] = unpack_queries(mixed, heads, hi - lo)[0].transpose(0, 1)
    return out[None]


def _float32() -> Any:
    import torch

    return torch.float32


@functools.cache
def register_attention() -> str:
    """Register the attention function, with sdpa's mask, once; its name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(ATTENTION, flat_attention)
    AttentionMaskInterface.register(ATTENTION, sdpa_mask)
    return ATTENTION
