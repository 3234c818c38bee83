"""Judge engines: transformers (CPU/GPU), vLLM (GPU), scripted (tests)."""

from localeval.engine.base import Choice, JudgeEngine, Request, Result
from localeval.engine.scripted import ScriptedEngine

__all__ = ["Choice", "JudgeEngine", "Request", "Result", "ScriptedEngine"]
