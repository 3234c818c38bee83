"""The transformers judge: ``loading`` (model and tokenizer), ``batching`` (a pure plan of batches),
``kv_cache`` (shared-prefix states, preallocated layers), ``decode`` (the loop), ``engine`` (the engine)."""

from localeval.engine.transformers.engine import TransformersEngine

__all__ = ["TransformersEngine"]
