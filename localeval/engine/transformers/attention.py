"""Attention in float32 for a model whose weights are bfloat16, registered with transformers.

PyTorch's bfloat16 attention on a CPU is slow (its flash kernel took most of a decode step here) and
less exact; the matrix products of the linear layers are where bfloat16 pays. So ``--dtype bfloat16``
keeps the weights in bfloat16 and runs this: query, keys and values cast to float32, PyTorch's
scaled-dot-product attention (transformers' own ``sdpa`` function and mask), the output cast back.
"""

from __future__ import annotations

import functools
from typing import Any

FLOAT32_ATTENTION = "localeval_float32_sdpa"


def float32_attention(module: Any, query: Any, key: Any, value: Any, attention_mask: Any,
                      **kwargs: Any) -> tuple[Any, Any]:
    """transformers' sdpa attention computed in float32; the output in the query's dtype."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    out, weights = sdpa_attention_forward(module, query.float(), key.float(), value.float(), attention_mask, **kwargs)
    return out.to(query.dtype), weights


@functools.cache
def register_float32_attention() -> str:
    """Register the function and its mask (sdpa's) with transformers once; the name to load a model with."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(FLOAT32_ATTENTION, float32_attention)
    AttentionMaskInterface.register(FLOAT32_ATTENTION, sdpa_mask)
    return FLOAT32_ATTENTION
