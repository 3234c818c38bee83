"""Chunks of a bulk run sent whole to Ray engine replicas: each replica runs a chunk's rounds next to its engine
(``Replica.run`` calls ``replica_score`` in the replica's process).

The driver keeps the run folder and the one judge cache: the cache is held by a small actor pinned to
the driver's node, which every replica asks before it generates and tells each answer as it arrives (so
a replica's answers survive it). The driver keeps two chunks in flight per replica, writes them in order
as they come back, and re-sends the chunk of a replica that died to the replicas left: a lost replica
costs its chunk in flight, less the answers it had already stored.

Why actors and not Ray Data: a long run needs a resumable, ordered stream of chunks whose scores are written
as each one ends, with the cache consulted by key in every round of a chunk (a metric's second ask depends
on its first answer). Ray Data's ``map_batches`` runs a fixed function over blocks it schedules itself,
with no place for the driver's cache between rounds and no order of completion to resume from; retrying
a lost block re-runs it with no memory of the answers already paid for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from localeval.data.sample import Sample
from localeval.errors import LocalevalError
from localeval.metrics.registry import MetricSpec, parse_metrics
from localeval.scheduler.chunked import ChunkScored, score_chunk
from localeval.scheduler.rounds import RunOutput, Scheduler
from localeval.store.cache import JudgeCache

if TYPE_CHECKING:
    from localeval.config import RunConfig

IN_FLIGHT_PER_REPLICA = 2  # chunks queued on each replica: the next one is there when one ends


class CacheServer:
    """The body of the actor that holds the run's judge cache, on the driver's node."""

    def __init__(self, path: str | None) -> None:
        self.cache = JudgeCache(path) if path else JudgeCache.disabled()

    def get_answers(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        return self.cache.get_answers(keys)

    def put_answers(self, items: list[tuple[str, dict[str, Any]]]) -> None:
        self.cache.put_answers(items)

    def get_embeddings(self, keys: list[str]) -> dict[str, np.ndarray]:
        return self.cache.get_embeddings(keys)

    def put_embeddings(self, items: list[tuple[str, np.ndarray]]) -> None:
        self.cache.put_embeddings(items)

    def close(self) -> None:
        self.cache.close()


class RemoteCache:
    """A replica's view of the driver's cache (a ``store.cache.AnswerStore``): every get and put is a call to the
    CacheServer actor; no file is held here."""

    path: Path | None = None

    def __init__(self, server: Any) -> None:
        import ray

        self._ray = ray
        self.server = server

    @property
    def enabled(self) -> bool:
        return True

    def get_answers(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return dict(self._ray.get(self.server.get_answers.remote(list(keys)))) if keys else {}

    def put_answers(self, items: Sequence[tuple[str, dict[str, Any]]]) -> None:
        if items:
            self._ray.get(self.server.put_answers.remote(list(items)))

    def get_embeddings(self, keys: Sequence[str]) -> dict[str, np.ndarray]:
        return dict(self._ray.get(self.server.get_embeddings.remote(list(keys)))) if keys else {}

    def put_embeddings(self, items: Sequence[tuple[str, np.ndarray]]) -> None:
        if items:
            self._ray.get(self.server.put_embeddings.remote(list(items)))


@dataclass(frozen=True)
class ReplicaRun:
    """What a replica keeps between the chunks of one run: the configuration, its scheduler and its metrics."""

    config: RunConfig
    scheduler: Scheduler
    specs: list[MetricSpec]


def replica_score(replica: Any, samples: list[Sample], config: RunConfig, server: Any, embedder: Any) -> RunOutput:
    """A chunk scored on a replica with its own engine; the scheduler is built once per replica and run."""
    held = replica.held
    if not isinstance(held, ReplicaRun) or held.config != config:
        scheduler = Scheduler(replica.engine, embedder, RemoteCache(server), config.settings, seed=config.seed,
                              progress=False, long_context=config.long_context)
        held = replica.held = ReplicaRun(config, scheduler, parse_metrics(list(config.metrics)))
    return score_chunk(held.scheduler, samples, held.specs)


class RayChunks:
    """Chunks scored on the replicas of a RayEngine, yielded in chunk order; a dead replica's chunk is re-sent."""

    def __init__(self, engine: Any, embedder: Any, cache: JudgeCache, specs: Sequence[MetricSpec],
                 config: RunConfig) -> None:
        self.engine = engine
        self.ray = engine._ray
        self.config = config
        self.specs = list(specs)
        self.embedder = self.ray.put(embedder) if embedder is not None else None
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(self.ray.get_runtime_context().get_node_id(), soft=False)
        server = self.ray.remote(num_cpus=0, scheduling_strategy=here)(CacheServer)
        self.server = server.remote(str(cache.path) if cache.enabled else None)
        self.resent: list[int] = []  # chunks sent again after their replica died

    def score(self, chunks: Iterable[tuple[int, list[Sample]]]) -> Iterator[ChunkScored]:
        ray = self.ray
        source = iter(chunks)
        again: deque[tuple[int, list[Sample]]] = deque()
        flight: dict[Any, tuple[Any, int, list[Sample]]] = {}
        order: deque[int] = deque()  # chunks in the order they were taken, which is the order they are written
        ready: dict[int, ChunkScored] = {}
        exhausted = False
        try:
            while True:
                # a chunk sent again goes first, whatever the load: the chunks after it wait for it
                while again or (not exhausted and len(flight) + len(ready) < self._room()):
                    if again:
                        chunk = again.popleft()
                    else:
                        taken = next(source, None)
                        if taken is None:
                            exhausted = True
                            break
                        chunk = taken
                        order.append(chunk[0])
                    self._send(chunk, flight)
                if not flight:
                    break
                done, _ = ray.wait(list(flight), num_returns=1)
                actor, index, samples = flight.pop(done[0])
                try:
                    ready[index] = ChunkScored(index, samples, ray.get(done[0]))
                except ray.exceptions.RayActorError:
                    if actor in self.engine.actors:
                        self.engine.actors.remove(actor)  # a dead replica gets no more work
                    self.resent.append(index)
                    again.append((index, samples))
                    if not self.engine.actors:
                        raise LocalevalError(f"every Ray replica died; chunk {index} and later are not scored. "
                                             "Rerun the same command to go on from the first unfinished "
                                             "chunk") from None
                while order and order[0] in ready:
                    yield ready.pop(order.popleft())
        finally:
            ray.kill(self.server)  # its puts were synchronous: every answer it was told is committed

    def _room(self) -> int:
        """Chunks held at most (in flight or scored and waiting for an earlier one)."""
        return IN_FLIGHT_PER_REPLICA * max(1, len(self.engine.actors))

    def _send(self, chunk: tuple[int, list[Sample]], flight: dict[Any, tuple[Any, int, list[Sample]]]) -> None:
        """Queue ``chunk`` on the live replica with the fewest chunks in flight."""
        if not self.engine.actors:
            raise LocalevalError("no Ray replica is left to score chunks")
        load = {id(a): 0 for a in self.engine.actors}
        for actor, _, _ in flight.values():
            load[id(actor)] = load.get(id(actor), 0) + 1
        actor = min(self.engine.actors, key=lambda a: load[id(a)])
        ref = actor.run.remote(replica_score, chunk[1], self.config, self.server, self.embedder)
        flight[ref] = (actor, chunk[0], chunk[1])


__all__ = ["CacheServer", "RayChunks", "RemoteCache", "replica_score"]
