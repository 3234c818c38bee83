"""The run's judge and embedder: both folders found and checked before either model loads, then loaded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.config import JudgeOptions, RunConfig
from localeval.engine.base import Engine, JudgeEngine
from localeval.metrics.definition import MetricSpec
from localeval.model_folders import resolve_model
from localeval.model_folders.gguf_judge import judge_gguf
from localeval.model_folders.location import models_dir
from localeval.silence import quiet, stderr_is_terminal


def load_judge(judge: str | Path | None, options: JudgeOptions | None = None,
               log_dir: str | Path | None = None) -> JudgeEngine:
    """A judge engine from a local model folder (None: the bundled default), the judge server the options name, or
    (llama-cpp) a GGUF file run by a llama-server started here, its log in ``log_dir`` should it fail."""
    from localeval.engine.build import build_engine

    options = options or JudgeOptions()
    model_dir = None if options.engine == "server" else judge_file(judge, options.engine)
    return build_engine(options.options, model_dir, log_dir)


def judge_file(judge: str | Path | None, engine: str) -> Path:
    """The judge's checked local folder, or for the llama-cpp engine its GGUF file (None: the bundled judge's)."""
    if engine == "llama-cpp":
        return judge_gguf(judge, models_dir())
    return resolve_model(judge, "judge")


def load_embedder(embedder: str | Path | None) -> Any:
    """A sentence-transformers embedder from a local folder (None: the bundled default)."""
    from localeval.embed import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(resolve_model(embedder, "embedder"))


def load_models(specs: Sequence[MetricSpec], config: RunConfig, judge: JudgeEngine | None, embedder: Any,
                progress: bool, out: str | Path | None = None) -> tuple[Any, Any]:
    """(judge, embedder): the objects given, else loaded as ``config`` says where a metric needs them (a judge
    server's log, where localeval runs one, goes to ``out`` should it fail). A judge that cannot give p(1) to a soft
    run stops it here, not mid-run."""
    needs_judge = any(s.definition.judge for s in specs)
    needs_embedder = any(s.uses_embedder(config.settings.judge_mode) for s in specs)
    engine, emb = judge, embedder
    served = config.engine.engine == "server"  # the judge a server runs: no folder here
    # Both folders are found and checked before either model is loaded.
    wanted = needs_judge and engine is None and not served
    judge_dir = judge_file(config.judge, config.engine.engine) if wanted else None
    embedder_dir = resolve_model(config.embedder, "embedder") if needs_embedder and emb is None else None
    # progress=False: no loading bars or library warnings either; off a terminal, no loading bars
    with quiet(not progress or not stderr_is_terminal(), bars_only=progress):
        if judge_dir is not None or (served and needs_judge and engine is None):
            engine = load_judge(judge_dir, config.engine, out)
        if embedder_dir is not None:
            emb = load_embedder(embedder_dir)
    if needs_judge and config.settings.soft and isinstance(engine, Engine) and engine.abilities.soft == "checked":
        engine.require_soft()  # a judge that cannot give p(1) stops here, not mid-run
    return engine, emb


__all__ = ["judge_file", "load_embedder", "load_judge", "load_models"]
