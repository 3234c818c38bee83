"""Batch-invariant kernels: what a token computes depends on its own row alone, not on what shares its pass.

An evaluation's answer to an ask must be a function of the ask (and the judge, its dtype and settings):
not of the other asks in its step, how many there are, how a prompt tail was split across steps, or
whether a prefix was computed for this row or copied from a sibling's slot. A matrix product's kernel
sums in an order that depends on the shapes it is given (a few trailing rows go through another code
path; a longer reduction is split otherwise), so the same row in another batch can come out a few bits
apart, and a greedy judge then picks another token now and then. Every reduction of the flat step is
therefore computed in a shape that a row's own data decide:

* **Linear layers** (:class:`BlockedLinear`): a step's token positions go through in blocks of
  :data:`BLOCK_ROWS` rows; float32 blocks are padded to exactly that many rows (its kernels treat a few
  trailing rows differently), bfloat16 blocks are not (its kernels give a row the same bits in any block
  of up to that many rows).
* **Attention** (:func:`attend`, float32): a key/value head's query heads are packed and padded with zero
  queries to a multiple of :data:`TILE_QUERIES`; the scores are one product over the row's columns; the
  softmax runs over a width rounded up to :data:`TILE_KEYS` with the columns past a query's reach masked
  (their weight is exactly 0); the weighted values are one product of fixed shape per key tile, added tile
  by tile in column order. A column a query cannot see therefore adds exactly nothing, and no reduction's
  length or order depends on the other rows.

``tests/engine/test_invariant.py`` checks these properties bit for bit, and the engine checks them again on
the machine it loads on (:func:`kernels_invariant`) before it says its answers are batch-invariant.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

BLOCK_ROWS = 32  # token positions per linear-layer product
TILE_QUERIES = 8  # packed queries per key/value head come in multiples of this
TILE_KEYS = 128  # key columns per weighted-value product; a row's width is rounded up to a multiple


def round_up(n: int, multiple: int) -> int:
    """``n`` rounded up to a multiple of ``multiple``.

    >>> round_up(1, 128), round_up(128, 128), round_up(129, 128)
    (128, 128, 256)
    """
    return -(-n // multiple) * multiple


def visibility(past: Sequence[int], tokens: int, group: int, device: Any = None) -> torch.Tensor:
    """(rows, queries, width): which columns each packed query sees. Row ``r``'s query ``i`` is token
    ``i % tokens`` of head ``i // tokens`` of its key/value head's group, at column ``past[r] + i % tokens``;
    it sees columns 0 .. that column. Queries are padded to a multiple of :data:`TILE_QUERIES`, the width
    to one of :data:`TILE_KEYS` (past the longest row's last token).

    >>> visibility([2], 2, 1).shape, visibility([2], 2, 1)[0, :3, :5].int().tolist()
    (torch.Size([1, 8, 128]), [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    """
    import torch

    queries = round_up(group * tokens, TILE_QUERIES)
    width = round_up(max(past) + tokens, TILE_KEYS)
    reach = torch.tensor(list(past), device=device)[:, None] + (torch.arange(queries, device=device) % tokens)
    return torch.arange(width, device=device) <= reach[:, :, None]


def pack_queries(query: torch.Tensor, kv_heads: int) -> torch.Tensor:
    """(rows, heads, tokens, dim) -> (rows, kv_heads, padded, dim) float32: the query heads that share a
    key/value head laid one after another, zero queries added up to a multiple of :data:`TILE_QUERIES`."""
    from torch.nn.functional import pad

    rows, heads, tokens, dim = query.shape
    packed = query.float().reshape(rows, kv_heads, heads // kv_heads * tokens, dim)
    extra = round_up(packed.shape[2], TILE_QUERIES) - packed.shape[2]
    return pad(packed, (0, 0, 0, extra)) if extra else packed


def unpack_queries(out: torch.Tensor, heads: int, tokens: int) -> torch.Tensor:
    """The inverse of :func:`pack_queries`: (rows, kv_heads, padded, dim) -> (rows, heads, tokens, dim)."""
    rows, kv_heads, _, dim = out.shape
    return out[:, :, : heads // kv_heads * tokens].reshape(rows, heads, tokens, dim)


def attend(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, visible: torch.Tensor,
           scale: float) -> torch.Tensor:
    """Attention of packed queries (rows, kv_heads, n, dim; float32, ``n`` a multiple of
    :data:`TILE_QUERIES`) over their rows' keys and values (rows, kv_heads, >= width, dim), where
    ``visible`` (rows, n, width) says which columns each query sees. Every column below ``width`` must
    hold finite numbers (a masked one gets weight 0, and 0 times a NaN is NaN). Returns (rows, kv_heads,
    n, dim) float32."""
    import torch

    rows, kv_heads, n, dim = queries.shape
    width = visible.shape[-1]
    tiles = width // TILE_KEYS
    keys, values = keys[:, :, :width].float(), values[:, :, :width].float()
    scores = torch.matmul(queries, keys.transpose(-1, -2)).mul_(scale)
    scores.masked_fill_(~visible[:, None], float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    # one product of fixed shape per key tile: (n x TILE_KEYS) by (TILE_KEYS x dim), added in column order
    tiled = torch.matmul(weights.view(rows, kv_heads, n, tiles, TILE_KEYS).transpose(2, 3),
                         values.reshape(rows, kv_heads, tiles, TILE_KEYS, dim))
    out = tiled[:, :, 0]
    for tile in range(1, tiles):
        out = out + tiled[:, :, tile]
    return out


def blocked_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``x @ weight.T + bias`` with the rows (every dimension but the last) in blocks of :data:`BLOCK_ROWS`;
    float32 blocks padded to exactly that many rows."""
    import torch
    from torch.nn.functional import linear, pad

    rows = x.reshape(-1, x.shape[-1])
    count = rows.shape[0]
    padded = x.dtype == torch.float32
    if count <= BLOCK_ROWS and not (padded and count < BLOCK_ROWS):
        return linear(x, weight, bias)
    blocks = []
    for start in range(0, count, BLOCK_ROWS):
        block = rows[start : start + BLOCK_ROWS]
        short = BLOCK_ROWS - block.shape[0]
        if padded and short:
            blocks.append(linear(pad(block, (0, 0, 0, short)), weight, bias)[: block.shape[0]])
        else:
            blocks.append(linear(block, weight, bias))
    return torch.cat(blocks).reshape(*x.shape[:-1], weight.shape[0])


@functools.cache
def _blocked_linear_class() -> type:
    import torch

    class BlockedLinear(torch.nn.Linear):
        """A linear layer whose product runs in row blocks (:func:`blocked_linear`)."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return blocked_linear(x, self.weight, self.bias)

    return BlockedLinear


def block_linear_layers(model: Any) -> int:
    """Make every plain linear layer of ``model`` compute in row blocks, in place; how many were changed."""
    import torch

    blocked = _blocked_linear_class()
    changed = 0
    for module in model.modules():
        if type(module) is torch.nn.Linear:
            module.__class__ = blocked
            changed += 1
    return changed


def check_kernels(weight: torch.Tensor, seed: int = 0) -> str | None:
    """Check on this machine, with one of the model's own weight matrices, that :func:`blocked_linear` gives
    a row the same bits in every block size from 1 to :data:`BLOCK_ROWS` and past it, and that
    :func:`attend` gives a query the same bits alone, beside others and over a wider row; None when both
    hold, else what failed. (The kernels' code paths depend on the CPU and the library build.)"""
    import torch

    gen = torch.Generator().manual_seed(seed)
    rows = torch.randn(BLOCK_ROWS + 9, weight.shape[1], generator=gen).to(weight.dtype)
    alone = torch.cat([blocked_linear(rows[i : i + 1], weight, None) for i in range(rows.shape[0])])
    for count in (*range(2, BLOCK_ROWS + 1), rows.shape[0]):
        if not torch.equal(blocked_linear(rows[:count], weight, None), alone[:count]):
            return f"linear layers give a row other bits in a block of {count} rows"
    kv_heads, group, dim, columns = 2, 3, 64, 300
    keys, values = (torch.randn(1, kv_heads, 2 * TILE_KEYS + columns, dim, generator=gen) for _ in range(2))
    queries = torch.randn(1, kv_heads * group, columns, dim, generator=gen)

    def attention(lo: int, hi: int, past: int) -> torch.Tensor:
        out = attend(pack_queries(queries[:, :, lo:hi], kv_heads), keys, values,
                     visibility([past], hi - lo, group), dim**-0.5)
        return unpack_queries(out, kv_heads * group, hi - lo)[0]

    for lo, hi in ((0, columns), (100, 103), (250, 290), (7, 8)):
        for t in (lo, hi - 1):
            if not torch.equal(attention(lo, hi, lo)[:, t - lo], attention(t, t + 1, t)[:, 0]):
                return f"attention gives a query other bits beside {hi - lo - 1} others"
    return None
