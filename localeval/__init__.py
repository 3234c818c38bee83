"""localeval: Ragas' RAG metrics with a local, grammar-constrained judge, run as batches."""

from __future__ import annotations

from typing import Any

from localeval.cpu_threads import prefer_passive_wait

prefer_passive_wait()  # before torch loads: OpenMP reads its wait policy once (docs/cpu.md: Threads)

__version__ = "0.1.0"
__all__ = ["EvaluationResult", "__version__", "evaluate", "gate", "load_samples"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `import localeval` stays light (no torch, no model).
    if name in ("evaluate", "EvaluationResult"):
        from localeval import api

        return getattr(api, name)
    if name == "gate":
        from localeval.report.gate import gate

        return gate
    if name == "load_samples":
        from localeval.data import load_samples

        return load_samples
    raise AttributeError(f"module 'localeval' has no attribute {name!r}")
