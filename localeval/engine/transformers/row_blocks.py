"""Linear layers whose output rows do not depend on the rows beside them, for any judge's shapes.

A matrix product's kernel picks its code path, and with it the order it sums in, from the shapes it is
given: one row may go through a matrix-vector path, a few trailing rows through another, a long reduction
may be split otherwise for a short product than for a tall one. Which shapes take which path depends on
the CPU, the library build, the dtype and the weight's own shape (in bfloat16 on an AVX-512 BF16 machine a
reduction over 1,536 inputs gives a lone row other bits than a row among several, while one over 576 does
not). So nothing about it is fixed in code: for each weight shape of the model, :func:`plan_rows` measures
on this machine, when the model loads, which product sizes agree, and every product then has one of them:

* a layer multiplies at most :data:`BLOCK_ROWS` rows at once; a longer input goes through in blocks of
  that many rows;
* a block of ``c`` rows is padded with zero rows to :meth:`RowPlan.padded`, the smallest of
  :data:`CANDIDATES` at least ``c`` whose product gave its rows the same bits as a full block.

The scheme rests on one property, which the measurement also checks: in a product of a fixed shape a
row's bits depend on neither its place nor the other rows (no kernel sums across rows). Where it fails,
:attr:`RowPlan.failure` says so and the engine does not call its answers batch-invariant.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

BLOCK_ROWS = 32  # the most rows one product takes
CANDIDATES = (1, 2, 3, 4, 8, 12, 16, 24, BLOCK_ROWS)  # product sizes a block may be padded to
VALUES = 1 << 18  # output values each of plan_rows' comparisons covers at the least ...
MAX_ROWS = 8 * BLOCK_ROWS  # ... in at most this many rows (a narrow layer's products are cheap but many)


@dataclass(frozen=True)
class RowPlan:
    """The product sizes that give a row the same bits as a full block (ascending, ending with
    :data:`BLOCK_ROWS`), and what failed where the scheme cannot hold on this machine.

    >>> RowPlan((2, 3, 4, 8, 32)).padded(1), RowPlan((2, 3, 4, 8, 32)).padded(5), RowPlan((32,)).padded(9)
    (2, 8, 32)
    """

    sizes: tuple[int, ...] = (BLOCK_ROWS,)
    failure: str | None = None

    def padded(self, count: int) -> int:
        """The size a block of ``count`` rows (at most :data:`BLOCK_ROWS`) is computed at."""
        return next(size for size in self.sizes if size >= count)


def plan_rows(weight: torch.Tensor, bias: torch.Tensor | None, seed: int = 0) -> RowPlan:
    """Measure, with this weight (and bias) on this machine, which of :data:`CANDIDATES` give rows the bits
    a full block gives them, after checking that a full block gives a row the same bits wherever it sits
    and whatever (random or zero) rows sit beside it.

    A kernel that sums in another order usually changes only the last bits of a float32 sum, which a
    bfloat16 output mostly rounds away: each comparison therefore covers :data:`VALUES` output values
    (more rows for a narrow layer, up to :data:`MAX_ROWS`), so a difference that shows once in a few
    thousand values is still found."""
    import torch
    from torch.nn.functional import linear

    gen = torch.Generator().manual_seed(seed)
    outputs, inputs = weight.shape
    count = min(MAX_ROWS, max(1, -(-VALUES // (outputs * BLOCK_ROWS))) * BLOCK_ROWS)
    data = torch.randn(count, inputs, generator=gen).to(weight.dtype)

    def products(rows: torch.Tensor, size: int) -> torch.Tensor:  # the whole products of ``size`` rows
        return torch.cat([linear(rows[at : at + size], weight, bias)
                          for at in range(0, rows.shape[0] - size + 1, size)])

    with torch.inference_mode():
        full = products(data, BLOCK_ROWS)
        half = BLOCK_ROWS // 2
        places = [(5 * i + 3) % BLOCK_ROWS for i in range(half)]  # 5 is coprime with BLOCK_ROWS
        for company in (torch.randn(BLOCK_ROWS, inputs, generator=gen).to(weight.dtype), torch.zeros_like(data[0:1])):
            mixed = company.expand(BLOCK_ROWS, inputs).repeat(count // half, 1)
            for block in range(count // half):  # each block: half its rows from ``data``, scattered
                mixed[[block * BLOCK_ROWS + p for p in places]] = data[block * half : (block + 1) * half]
            moved = products(mixed, BLOCK_ROWS).reshape(count // half, BLOCK_ROWS, outputs)[:, places]
            if not torch.equal(moved.reshape(count, outputs), full):
                return RowPlan(failure=f"a {tuple(weight.shape)} linear layer gives a row other bits at another "
                                       f"place or beside other rows in a product of {BLOCK_ROWS} rows")
        sizes = tuple(size for size in CANDIDATES if size == BLOCK_ROWS or torch.equal(
            products(data, size), full[: count // size * size]))
    return RowPlan(sizes)


def blocked_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None,
                   plan: RowPlan = RowPlan()) -> torch.Tensor:
    """``x @ weight.T + bias`` with the rows (every dimension but the last) in blocks of at most
    :data:`BLOCK_ROWS`, each padded with zero rows to the size ``plan`` gives it (by default every block
    to a full one)."""
    import torch
    from torch.nn.functional import linear, pad

    rows = x.reshape(-1, x.shape[-1])
    count = rows.shape[0]
    if count <= BLOCK_ROWS and plan.padded(count) == count:
        return linear(x, weight, bias)
    outs = []
    for start in range(0, count, BLOCK_ROWS):
        block = rows[start : start + BLOCK_ROWS]
        extra = plan.padded(block.shape[0]) - block.shape[0]
        out = linear(pad(block, (0, 0, 0, extra)) if extra else block, weight, bias)
        outs.append(out[: block.shape[0]] if extra else out)
    return torch.cat(outs).reshape(*x.shape[:-1], weight.shape[0])


@functools.cache
def _blocked_linear_class() -> type:
    import torch

    class BlockedLinear(torch.nn.Linear):
        """A linear layer whose products run in the row blocks of its :class:`RowPlan`."""

        row_plan: RowPlan

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return blocked_linear(x, self.weight, self.bias, self.row_plan)

    return BlockedLinear


def block_linear_layers(model: Any) -> tuple[int, str | None]:
    """Make every plain linear layer of ``model`` compute in row blocks, in place, with a plan measured once
    per weight shape, dtype and bias; how many layers were changed, and the first measurement that failed
    (None: every one held)."""
    import torch

    blocked = _blocked_linear_class()
    used: list[RowPlan] = []
    for module in model.modules():
        if type(module) is torch.nn.Linear:
            key = (tuple(module.weight.shape), module.weight.dtype, module.bias is not None, torch.get_num_threads())
            if key not in _PLANS:  # a kernel's path follows shapes, dtype and threads, not the weights' values
                _PLANS[key] = plan_rows(module.weight.detach(), None if module.bias is None else module.bias.detach())
            module.__class__ = blocked
            module.row_plan = _PLANS[key]  # type: ignore[assignment]  # a BlockedLinear now
            used.append(_PLANS[key])
    return len(used), next((plan.failure for plan in used if plan.failure), None)


_PLANS: dict[tuple[Any, ...], RowPlan] = {}  # measured in this process: (shape, dtype, bias, threads) -> plan
