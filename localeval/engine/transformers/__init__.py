"""The transformers judge: ``loading`` (model and tokenizer), ``batching`` (a pure plan of batches),
``kv_cache`` (shared-prefix states, preallocated layers), ``decode`` (the loop), ``engine`` (the engine).

``TransformersEngine`` is imported on first use, so that the pure ``batching`` module loads no torch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localeval.engine.transformers.engine import TransformersEngine

__all__ = ["TransformersEngine"]


def __getattr__(name: str) -> Any:
    if name == "TransformersEngine":
        from localeval.engine.transformers.engine import TransformersEngine

        return TransformersEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
