"""llama.cpp's own server as a local engine: a GGUF judge run by a llama-server localeval starts and stops."""

from localeval.engine.llamacpp.engine import LlamaCppEngine

__all__ = ["LlamaCppEngine"]
