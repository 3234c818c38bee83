"""Chunks of a data set scored one after another, each chunk's rounds run by the scheduler as a whole run's are.

Every run is scored this way (``localeval.run.chunk_loop``); a data set that fits one chunk is one scheduler
run. A chunk scorer takes ``(index, samples)`` pairs and yields ``ChunkScored`` in chunk order; the caller writes
each to the run folder before asking for the next, or, without one, joins their outputs (``localeval.run.assemble``).
``LocalChunks`` runs them in this process with one scheduler (one engine, embedder and cache for every chunk);
``localeval.scheduler.ray_chunks.RayChunks`` sends them to engine replicas.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from localeval.data.sample import Sample
from localeval.metrics.registry import MetricSpec
from localeval.scheduler.rounds import RunOutput, Scheduler


@dataclass
class ChunkScored:
    """One chunk scored: its index, samples and the scheduler's output for them (calls: this chunk's own)."""

    index: int
    samples: list[Sample]
    output: RunOutput


class ChunkScorer(Protocol):
    """Scores chunks, yielding them in chunk order."""

    def score(self, chunks: Iterable[tuple[int, list[Sample]]]) -> Iterator[ChunkScored]: ...


def missing_field_skips(samples: Sequence[Sample], specs: Sequence[MetricSpec]) -> set[tuple[str, int]]:
    """(metric, row index) of each sample that lacks a field the metric needs (None, or an empty list)."""
    return {
        (spec.name, i)
        for spec in specs
        for i, sample in enumerate(samples)
        if any(sample.get(f) is None or (f in spec.definition.nonempty and not sample.get(f))
               for f in spec.definition.required)
    }


def score_chunk(scheduler: Scheduler, samples: list[Sample], specs: Sequence[MetricSpec]) -> RunOutput:
    """One chunk's output, with the engine and embedder calls of this chunk alone."""
    calls, embeds = scheduler.engine_calls, scheduler.embed_calls
    output = scheduler.run(samples, specs, skip=missing_field_skips(samples, specs))
    output.engine_calls -= calls
    output.embed_calls -= embeds
    return output


class LocalChunks:
    """Chunks scored in this process, one after another, by one scheduler."""

    def __init__(self, scheduler: Scheduler, specs: Sequence[MetricSpec]) -> None:
        self.scheduler = scheduler
        self.specs = list(specs)

    def score(self, chunks: Iterable[tuple[int, list[Sample]]]) -> Iterator[ChunkScored]:
        for index, samples in chunks:
            yield ChunkScored(index, samples, score_chunk(self.scheduler, samples, self.specs))


__all__ = ["ChunkScored", "ChunkScorer", "LocalChunks", "missing_field_skips", "score_chunk"]
