"""Chunks of a data set scored one after another, each chunk's rounds run by the scheduler as a whole run's are.

Every run is scored this way (``localeval.bulk``); a data set that fits one chunk is one scheduler run. A chunk
scorer takes ``(index, samples)`` pairs and yields ``ChunkScored`` in chunk order; the caller writes each to the
run folder before asking for the next, or, without one, joins their outputs (``merged``). ``LocalChunks`` runs
them in this process with one scheduler (one engine, embedder and cache for every chunk);
``localeval.scheduler.ray_chunks.RayChunks`` sends them to engine replicas.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from localeval.data.sample import Sample
from localeval.metrics.registry import MetricSpec
from localeval.nan import Nan
from localeval.scheduler.rounds import RunOutput, Scheduler
from localeval.scheduler.usage import Usage


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


def chunk_record(output: RunOutput, samples: Sequence[Sample]) -> dict[str, Any]:
    """What chunks.jsonl keeps of a finished chunk: rows, cost per metric, rounds, calls, seconds, and each
    metric's values (a NaN as its reason), so that the summary need not read scores.jsonl back."""
    values = {name: [v.reason if isinstance(v, Nan) else v for v in outcomes]
              for name, outcomes in output.outcomes.items()}
    return {"rows": len(samples), "usage": {name: u.to_dict() for name, u in output.usage.items()},
            "rounds": output.rounds, "engine_calls": output.engine_calls, "embed_calls": output.embed_calls,
            "seconds": round(output.wall_seconds, 4),
            "unanswerable": sum(1 for s in samples if s.answerable is False), "values": values}


def totals(records: Sequence[dict[str, Any]], metrics: Sequence[str]) -> RunOutput:
    """The cost of every finished chunk together, as a RunOutput without outcomes."""
    usage = {name: Usage() for name in metrics}
    for record in records:
        for name, cost in record["usage"].items():
            if name in usage:
                usage[name].add(Usage(**cost))
    return RunOutput({}, {}, usage, sum(r["rounds"] for r in records), sum(r["engine_calls"] for r in records),
                     sum(r["embed_calls"] for r in records), sum(r["seconds"] for r in records))


def merged(parts: Sequence[RunOutput], metrics: Sequence[str]) -> RunOutput:
    """Chunks' outputs as one run's: outcomes and traces concatenated in chunk order, costs added."""
    usage = {name: Usage() for name in metrics}
    for part in parts:
        for name, cost in part.usage.items():
            usage[name].add(cost)
    return RunOutput(
        {m: [v for p in parts for v in p.outcomes[m]] for m in metrics},
        {m: [t for p in parts for t in p.traces[m]] for m in metrics},
        usage, sum(p.rounds for p in parts), sum(p.engine_calls for p in parts),
        sum(p.embed_calls for p in parts), sum(p.wall_seconds for p in parts),
    )


__all__ = ["ChunkScored", "ChunkScorer", "LocalChunks", "chunk_record", "merged", "missing_field_skips",
           "score_chunk", "totals"]
