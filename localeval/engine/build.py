"""Engines are built here, and only here: the API's ``load_judge`` and every Ray replica call it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.engine.base import JudgeEngine
from localeval.engine.options import EngineOptions, LlamaCppOptions, RayOptions, ServerOptions
from localeval.errors import LocalevalError

REPLICA_ENGINES = ("vllm", "transformers", "scripted", "server")  # what one Ray replica may hold


def build_engine(options: EngineOptions, model_dir: str | Path | None = None,
                 log_dir: str | Path | None = None) -> JudgeEngine:
    """The engine ``options`` are for, on the model in ``model_dir``, with the arguments they give it.

    ``RayOptions`` run ``replicas`` vLLM replicas on the Ray cluster at ``ray_address``; ``ServerOptions`` ask a
    judge server (no model folder), connected here (``ServerEngine.connect``); ``LlamaCppOptions`` start a
    llama-server on the GGUF file ``model_dir`` names, its log in ``log_dir`` (the run folder) should it fail.
    """
    arguments = options.arguments()
    if isinstance(options, ServerOptions):
        return EngineSpec("server", None, arguments)()
    if isinstance(options, LlamaCppOptions):
        from localeval.engine.llamacpp.engine import LlamaCppEngine

        return LlamaCppEngine(_model_dir(options.engine, model_dir), **arguments, log_dir=log_dir).connect()
    if isinstance(options, RayOptions):
        from localeval.engine.ray_engine import RayEngine

        spec = EngineSpec("vllm", str(Path(_model_dir(options.engine, model_dir)).resolve()),  # replicas run elsewhere
                          arguments)
        return RayEngine(options.replicas, spec, address=options.ray_address)
    return EngineSpec(options.engine, str(model_dir) if model_dir is not None else None, arguments)()


@dataclass(frozen=True)
class EngineSpec:
    """An engine to build, maybe on another machine: ``kind`` (vllm, transformers, scripted) and its arguments.

    A spec is a picklable factory: calling it builds the engine, on whatever machine calls it.
    """

    kind: str
    model_dir: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> JudgeEngine:
        if self.kind == "vllm":
            from localeval.engine.vllm_engine import VLLMEngine

            return VLLMEngine(_model_dir(self.kind, self.model_dir), **self.options)
        if self.kind == "transformers":
            from localeval.engine.transformers import TransformersEngine

            return TransformersEngine(_model_dir(self.kind, self.model_dir), **self.options)
        if self.kind == "server":
            from localeval.engine.server import ServerEngine

            return ServerEngine(**self.options).connect()
        if self.kind == "scripted":
            from localeval.engine.scripted import ScriptedEngine, rule_script

            return ScriptedEngine(rule_script, **self.options)
        raise LocalevalError(f"unknown engine kind {self.kind!r} for a Ray replica; "
                             f"use {', '.join(REPLICA_ENGINES)}")

    def gpus(self) -> float:
        """GPUs one replica of this engine needs: none but a vLLM replica's, and none where the vLLM
        installed here is a CPU build (its replicas run on CPU nodes)."""
        if self.kind != "vllm":
            return 0.0
        from localeval.engine.vllm_engine import vllm_on_cpu

        return 0.0 if vllm_on_cpu() else float(self.options.get("tensor_parallel_size", 1))


def _model_dir(kind: str, model_dir: str | Path | None) -> str | Path:
    if not model_dir:
        raise LocalevalError(f"a {kind} engine needs a model folder")
    return model_dir


__all__ = ["REPLICA_ENGINES", "EngineSpec", "build_engine"]
