"""Batch-invariant kernels: what a token computes depends on its own row alone, not on what shares its pass.

An evaluation's answer to an ask must be a function of the ask (and the judge, its dtype and settings):
not of the other asks in its step, how many there are, how a prompt tail was split across steps, or
whether a prefix was computed for this row or copied from a sibling's slot. A matrix product's kernel
sums in an order that depends on the shapes it is given (a few trailing rows go through another code
path; a longer reduction is split otherwise), so the same row in another batch can come out a few bits
apart, and a greedy judge then picks another token now and then. Every reduction of the flat step is
therefore computed in a shape that a row's own data decide:

* **Linear layers** (``row_blocks.py``): every product has one of a few row counts, measured for each
  weight shape on the machine the model loads on.
* **Attention** (:func:`attend`, float32, PyTorch's fused attention kernel): a key/value head's query
  heads are packed and padded with zero queries to a multiple of :data:`TILE_QUERIES` (so every block of
  queries the kernel multiplies is a multiple of that many rows), and a row's width is rounded up by
  :func:`key_width`, with the columns past a query's reach masked. The kernel reduces keys in blocks of
  :data:`TILE_KEYS` columns in column order, and a masked column or a wholly masked block adds exactly
  nothing (its weight is 0, the running maximum does not move); a last, partial block gives the same bits
  at any width that is a multiple of :data:`KEY_STEP`, except that one of 208 to 368 columns takes another
  path, so such a block is widened to :data:`KEY_TAIL`. No reduction's length or order depends on the
  other rows, on how many queries share the call, or on the thread count (the kernel splits its work
  between threads by blocks, each product runs on one).

``tests/engine/test_invariant.py`` checks these properties bit for bit, and the engine checks them again on
the machine it loads on (:func:`check_attention`, in the model's own attention shape, and
``row_blocks.plan_rows``) before it says its answers are batch-invariant: the
kernels' code paths depend on the CPU, the library build and PyTorch's version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

TILE_QUERIES = 4  # packed queries per key/value head come in multiples of this
TILE_KEYS = 512  # the attention kernel's key block (PyTorch's CPU kernel)
KEY_STEP = 16  # a row's width is a multiple of this ...
KEY_TAIL = 384  # ... and its last partial block, when over 192 columns, this wide


def round_up(n: int, multiple: int) -> int:
    """``n`` rounded up to a multiple of ``multiple``.

    >>> round_up(1, 128), round_up(128, 128), round_up(129, 128)
    (128, 128, 256)
    """
    return -(-n // multiple) * multiple


def key_width(end: int) -> int:
    """The width attention reads for a row whose last query sits at column ``end - 1``: ``end`` rounded
    up to a multiple of :data:`KEY_STEP`, a last partial key block of more than 192 columns widened to
    :data:`KEY_TAIL`. Never past ``end`` rounded up to a whole key block.

    >>> [key_width(e) for e in (1, 100, 193, 300, 384, 385, 600, 700, 730, 1100)]
    [16, 112, 384, 384, 384, 400, 608, 704, 896, 1104]
    """
    width = round_up(end, KEY_STEP)
    blocks, tail = divmod(width, TILE_KEYS)
    return blocks * TILE_KEYS + KEY_TAIL if KEY_TAIL // 2 < tail < KEY_TAIL else width


def visibility(past: Sequence[int], tokens: int, group: int, device: Any = None) -> torch.Tensor:
    """(rows, queries, width): which columns each packed query sees. Row ``r``'s query ``i`` is token
    ``i % tokens`` of head ``i // tokens`` of its key/value head's group, at column ``past[r] + i % tokens``;
    it sees columns 0 .. that column. Queries are padded to a multiple of :data:`TILE_QUERIES`, the width
    is :func:`key_width` past the longest row's last token.

    >>> visibility([2], 2, 1).shape, visibility([2], 2, 1)[0, :3, :5].int().tolist()
    (torch.Size([1, 4, 16]), [[1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 0, 0]])
    """
    import torch

    queries = round_up(group * tokens, TILE_QUERIES)
    width = key_width(max(past) + tokens)
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
    ``visible`` (rows, n, width) says which columns each query sees (``width`` from :func:`key_width`).
    Every column below ``width`` must hold finite numbers (a masked one gets weight 0, and 0 times a NaN
    is NaN). Returns (rows, kv_heads, n, dim) float32."""
    from torch.nn.functional import scaled_dot_product_attention

    width = visible.shape[-1]
    return scaled_dot_product_attention(queries, keys[:, :, :width].float(), values[:, :, :width].float(),
                                        attn_mask=visible[:, None], scale=scale)


def check_attention(kv_heads: int, group: int, dim: int, seed: int = 0) -> str | None:
    """Check on this machine, in the model's own attention shape (``kv_heads`` key/value heads, each shared
    by ``group`` query heads of ``dim`` features), that :func:`attend` gives a query the same bits alone,
    beside others and over a wider row; None when it holds, else what failed. (The kernel's code paths
    depend on the CPU and the library build.)"""
    import torch

    gen = torch.Generator().manual_seed(seed)
    columns = 300
    keys, values = (torch.randn(1, kv_heads, 2 * TILE_KEYS + columns, dim, generator=gen) for _ in range(2))
    queries = torch.randn(1, kv_heads * group, TILE_KEYS + columns, dim, generator=gen)

    def attention(lo: int, hi: int, past: int) -> torch.Tensor:
        out = attend(pack_queries(queries[:, :, lo:hi], kv_heads), keys, values,
                     visibility([past], hi - lo, group), dim**-0.5)
        return unpack_queries(out, kv_heads * group, hi - lo)[0]

    with torch.inference_mode():
        for lo, hi in ((0, columns), (100, 103), (250, 290), (7, 8), (600, 640)):
            for t in (lo, hi - 1):
                if not torch.equal(attention(lo, hi, lo)[:, t - lo], attention(t, t + 1, t)[:, 0]):
                    return f"attention gives a query other bits beside {hi - lo - 1} others"
    return None
