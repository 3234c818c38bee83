"""The judge a server already runs (vLLM, SGLang, llama-server, Ollama, any OpenAI-compatible endpoint), asked over
HTTP under a grammar, a round in flight at once: ``ServerEngine`` (``engine.py``), the spellings of each server kind
(``dialects.py``), what a server says of itself (``identity.py``), the schema probe (``probe.py``), prompt lengths
(``tokens.py``), the round on every server's slots (``dispatch.py``), HTTP with its faults (``transport.py``) and the
API key (``auth.py``). httpx is the only library it needs; ``import localeval`` does not load it.
"""

from localeval.engine.server.engine import ServerEngine

__all__ = ["ServerEngine"]
