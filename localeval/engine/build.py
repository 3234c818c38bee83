"""Engines are built here, and only here: the API's ``load_judge`` and every Ray replica call it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.engine.base import JudgeEngine
from localeval.errors import LocalevalError

JUDGE_ENGINES = ("transformers", "vllm", "ray-vllm", "server")  # what a judge runs on (server: no model folder)
REPLICA_ENGINES = ("vllm", "transformers", "scripted", "server")  # what one Ray replica may hold
TRANSFORMERS_ONLY = ("grammar", "batch_size", "batch_tokens", "threads")  # options other engines do not take
# Options the transformers engine does without: its answers never depend on the batch (--deterministic).
NOT_TRANSFORMERS = ("deterministic",)


def build_engine(kind: str, model_dir: str | Path | None, options: Mapping[str, Any] | None = None, *,
                 replicas: int = 1, ray_address: str | None = None) -> JudgeEngine:
    """The engine ``kind`` on the model in ``model_dir``, given ``options`` (its constructor's arguments).

    Options only the transformers engine takes (``TRANSFORMERS_ONLY``) are dropped for the others, and those it
    does without (``NOT_TRANSFORMERS``) for it;
    ``ray-vllm`` runs ``replicas`` vLLM replicas on the Ray cluster at ``ray_address``; ``server`` asks a judge
    server and takes only its own options (``ServerEngine``'s arguments), no model folder.
    """
    options = dict(options or {})
    if kind == "server":
        return EngineSpec("server", None, options)()
    if kind == "ray-vllm":
        from localeval.engine.ray_engine import RayEngine

        spec = EngineSpec("vllm", str(Path(_model_dir(kind, model_dir)).resolve()),  # replicas run elsewhere
                          _for_kind("vllm", options))
        return RayEngine(replicas, spec, address=ray_address)
    if kind in JUDGE_ENGINES:
        return EngineSpec(kind, str(model_dir) if model_dir is not None else None, _for_kind(kind, options))()
    raise LocalevalError(f"unknown engine {kind!r}; available: {', '.join(JUDGE_ENGINES)}")


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

            return ServerEngine(**self.options)
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


def _for_kind(kind: str, options: dict[str, Any]) -> dict[str, Any]:
    if kind == "transformers":
        return {k: v for k, v in options.items() if k not in NOT_TRANSFORMERS}
    return {k: v for k, v in options.items() if k not in TRANSFORMERS_ONLY}


def _model_dir(kind: str, model_dir: str | Path | None) -> str | Path:
    if not model_dir:
        raise LocalevalError(f"a {kind} engine needs a model folder")
    return model_dir


__all__ = ["JUDGE_ENGINES", "REPLICA_ENGINES", "EngineSpec", "build_engine"]
