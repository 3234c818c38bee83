"""How a run's chunks are scored: the chunk size, the scheduler a configuration asks for, and the chunk scorer
(here, or on Ray replicas)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.config import RunConfig
from localeval.engine.base import abilities_of
from localeval.metrics.definition import MetricSpec
from localeval.scheduler import Scheduler
from localeval.scheduler.chunked import ChunkScorer, LocalChunks
from localeval.store.cache import AnswerStore, JudgeCache


def chunk_samples(config: RunConfig, engine: Any = None) -> int:
    """Samples a chunk holds: as set, else the default of the engine object given or the one configured."""
    if config.chunk_size is not None:
        return config.chunk_size
    if engine is None:
        return type(config.engine.options).engine_type().abilities.chunk_samples
    return abilities_of(engine).chunk_samples


def build_scheduler(config: RunConfig, engine: Any, embedder: Any, cache: AnswerStore | None,
                    progress: bool) -> Scheduler:
    """A scheduler that asks the judge as ``config`` says."""
    return Scheduler(engine, embedder, cache, config.settings, seed=config.seed, progress=progress,
                     long_context=config.long_context)


def chunk_scorer(engine: Any, emb: Any, store: JudgeCache, specs: Sequence[MetricSpec], config: RunConfig,
                 inner_progress: bool, chunk_count: int) -> ChunkScorer:
    """Chunks go to Ray replicas when the judge is a RayEngine and there is more than one; else run here."""
    from localeval.engine.ray_engine import RayEngine

    if isinstance(engine, RayEngine) and chunk_count > 1:
        from localeval.scheduler.ray_chunks import RayChunks

        return RayChunks(engine, emb, store, specs, config)
    return LocalChunks(build_scheduler(config, engine, emb, store, inner_progress), specs)


__all__ = ["build_scheduler", "chunk_samples", "chunk_scorer"]
