"""Scale-out on Ray: each round's asks split over N engine replicas, the answers merged in order.

Each replica is a Ray actor that builds and holds one engine (a VLLMEngine on the GPU Ray gives it,
or any other engine), built by ``localeval.engine.build`` from a picklable ``EngineSpec``. A round
is cut into N contiguous shards of about equal estimated cost, so the asks that share a prompt
prefix mostly land on the same replica and its prefix cache. The fingerprint
is the replicas' own, so the answer cache is shared with single-machine runs of the same engine.

``ray.init(address=...)`` connects to a running cluster (``ray start --head`` here, or
``--address`` elsewhere); without an address it joins the local cluster or starts one. The model
folder must be readable at the same path on every node, and localeval installed there.

Why actors rather than Ray Data's LLM processor (``ray.data.llm.build_processor`` with
``vLLMEngineProcessorConfig(model_source=..., concurrency=N, engine_kwargs=...)``): the processor is a
dataset pipeline with its own chat-template, tokenize and vLLM stages (and ``ray[llm]`` pins its own
vLLM), so the context-window check, structured-output spelling, token accounting and per-answer
callback here would all be re-done there. The actors run the very engine a single machine runs.
One replica per GPU beats tensor parallelism for a judge that fits one GPU.
"""

from __future__ import annotations

import bisect
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from localeval.engine.base import (
    CHARS_PER_TOKEN,
    Engine,
    Invariance,
    JudgeEngine,
    Request,
    Result,
    import_optional,
    invariance_of,
)
from localeval.errors import JudgeDied, LocalevalError

INSTALL_HINT = "pip install 'localeval[ray]'"
COUNT_CACHE_SIZE = 8192  # prompts whose token counts the driver keeps


@runtime_checkable
class SizedFactory(Protocol):
    """An engine factory that says how many GPUs the engine it builds needs (``EngineSpec`` does)."""

    def __call__(self) -> JudgeEngine: ...

    def gpus(self) -> float: ...


class Replica:
    """The body of one Ray actor: builds its engine once, then answers shards."""

    def __init__(self, factory: Callable[[], JudgeEngine]) -> None:
        self.engine = factory()
        self.held: Any = None  # what a function run here keeps between calls (a bulk run: its scheduler)

    def describe(self) -> tuple[str, int | None, Invariance]:
        """The engine's fingerprint, context window and batch invariance."""
        return self.engine.fingerprint, self.engine.context_window, invariance_of(self.engine)

    def count_prompt_tokens(self, request: Request) -> int:
        return self.engine.count_prompt_tokens(request)

    def generate(self, requests: list[Request]) -> list[Result]:
        return self.engine.generate(requests)

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(self, *args)`` run in this replica, next to its engine (a bulk run scores chunks so)."""
        return function(self, *args)


def import_ray() -> Any:
    """The ray module, or an error that says how to install it."""
    return import_optional("ray", f"Scaling out on Ray needs Ray, which is not installed here: run `{INSTALL_HINT}` "
                                  "on every machine of the cluster.")


class RayEngine(Engine):
    """``replicas`` copies of one engine on a Ray cluster, behind :class:`~localeval.engine.base.JudgeEngine`."""

    def __init__(
        self,
        replicas: int,
        engine_factory: Callable[[], JudgeEngine],
        *,
        address: str | None = None,
        num_gpus_per_replica: float | None = None,
        num_cpus_per_replica: float = 1.0,
    ) -> None:
        if replicas < 1:
            raise LocalevalError(f"replicas must be at least 1, got {replicas}")
        ray = import_ray()
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address or None, ignore_reinit_error=True)
        if num_gpus_per_replica is None:
            num_gpus_per_replica = engine_factory.gpus() if isinstance(engine_factory, SizedFactory) else 0.0
        gpus = ray.cluster_resources().get("GPU", 0)
        if num_gpus_per_replica * replicas > gpus:  # not fatal: an autoscaling cluster may add GPUs
            warnings.warn(f"{replicas} replicas of {num_gpus_per_replica:g} GPUs each wait for more GPUs than "
                          f"the Ray cluster has now ({gpus:g})", stacklevel=2)
        actor = ray.remote(num_gpus=num_gpus_per_replica, num_cpus=num_cpus_per_replica)(Replica)
        self.actors: list[Any] = [actor.remote(engine_factory) for _ in range(replicas)]
        try:
            described = ray.get([a.describe.remote() for a in self.actors])  # waits for every engine
        except ray.exceptions.RayError as error:
            self.close()
            raise LocalevalError(f"a Ray replica could not build its engine: {error}") from error
        fingerprints = {fingerprint for fingerprint, _, _ in described}
        if len(fingerprints) != 1:
            raise LocalevalError(
                f"the replicas disagree on the engine ({', '.join(sorted(fingerprints))}): the model folder "
                "differs between nodes (its fingerprint covers path, file names, sizes and modification times); "
                "copy it to the same path on every node with `rsync -a`, which keeps the times"
            )
        self._fingerprint = fingerprints.pop()
        windows = [window for _, window, _ in described if window]
        self._context_window = min(windows) if windows else None
        self._invariance = _together([invariance for _, _, invariance in described])
        self._counts: dict[tuple[tuple[str, str], ...], int] = {}  # messages -> a replica's count
        self.shard_sizes: list[list[int]] = []  # per generate call, the size of each shard sent
        self.prompt_tokens = 0
        self.cached_prompt_tokens = 0

    @property
    def invariance(self) -> Invariance:
        """The replicas' batch invariance (``_together``)."""
        return self._invariance

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def context_window(self) -> int | None:
        """The replicas' context window (the smallest, should their settings differ), asked once at start."""
        return self._context_window

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt's tokens as a replica's own engine counts them; one round trip per distinct prompt."""
        if request.messages not in self._counts:
            if not self.actors:
                raise LocalevalError("no Ray replica is left to count prompt tokens")
            if len(self._counts) >= COUNT_CACHE_SIZE:
                self._counts.clear()
            self._counts[request.messages] = int(self._ray.get(self.actors[0].count_prompt_tokens.remote(request)))
        return self._counts[request.messages]

    @property
    def prefix_cache_hit_rate(self) -> float:
        """The share of prompt tokens the replicas' prefix caches served, over this engine's lifetime."""
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def generate(
        self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
    ) -> list[Result]:
        """Answer every request, in order: one shard per replica in parallel, a shard's answers
        reported as it comes back. A shard that fails is split again over the replicas, down to the
        single ask that fails, which is answered with its error."""
        results: list[Result | None] = [None] * len(requests)
        sizes: list[int] = []
        self.shard_sizes.append(sizes)

        def deliver(i: int, result: Result) -> None:
            results[i] = result
            self.prompt_tokens += result.prompt_tokens
            self.cached_prompt_tokens += result.cached_prompt_tokens
            if on_result is not None:
                on_result(i, result)

        self._run(list(range(len(requests))), requests, deliver, sizes)
        return [r for r in results if r is not None]

    def close(self) -> None:
        """Stop the replicas (the cluster itself is left running)."""
        for actor in self.actors:
            self._ray.kill(actor)  # a replica may have died already: killing it again is harmless
        self.actors = []

    def _run(self, indices: list[int], requests: list[Request], deliver: Callable[[int, Result], None],
             sizes: list[int]) -> None:
        if not self.actors:
            raise JudgeDied("no Ray replica is left to answer")
        weights = [_cost(requests[i]) for i in indices]
        pending: dict[Any, tuple[Any, list[int]]] = {}
        for actor, (start, end) in zip(self.actors, shard_bounds(weights, len(self.actors)), strict=False):
            shard = indices[start:end]
            sizes.append(len(shard))
            pending[actor.generate.remote([requests[i] for i in shard])] = (actor, shard)
        failed: list[tuple[list[int], Exception]] = []
        while pending:
            done, _ = self._ray.wait(list(pending), num_returns=1)
            actor, shard = pending.pop(done[0])
            try:
                answers = self._ray.get(done[0])
            except Exception as error:
                if isinstance(error, self._ray.exceptions.RayActorError) and actor in self.actors:
                    self.actors.remove(actor)  # a dead replica gets no more work
                failed.append((shard, error))
                continue
            for i, result in zip(shard, answers, strict=True):
                deliver(i, result)
        if failed and not self.actors:
            raise JudgeDied(f"every Ray replica died; the last said {type(failed[-1][1]).__name__}: {failed[-1][1]}")
        for shard, problem in failed:
            if len(shard) == 1:
                for i in shard:
                    deliver(i, Result(choices=[], prompt_tokens=0, error=f"{type(problem).__name__}: {problem}"))
            else:
                self._run(shard, requests, deliver, sizes)


def _together(replicas: list[Invariance]) -> Invariance:
    """The replicas' batch invariance: theirs where they agree (the same engine built alike), else the first
    that is not invariant."""
    variant = [i for i in replicas if not i.batch_invariant]
    return variant[0] if variant else replicas[0] if replicas else Invariance(False, "no Ray replica")


def _cost(request: Request) -> float:
    """A rough cost of one ask in tokens: its prompt, estimated from characters, plus its generation budget."""
    return sum(len(content) for _, content in request.messages) / CHARS_PER_TOKEN + request.n * request.max_tokens


def shard_bounds(weights: Sequence[float], parts: int) -> list[tuple[int, int]]:
    """Cut ``weights`` into at most ``parts`` contiguous, non-empty ranges ``[start, end)`` of about equal sum."""
    n = len(weights)
    parts = min(parts, n)
    if parts <= 0:
        return []
    cumulative = list(itertools.accumulate(weights))
    total = cumulative[-1]
    cuts = [0]
    for k in range(1, parts):
        target = total * k / parts
        i = bisect.bisect_left(cumulative, target)  # first item whose running sum reaches the target
        before = cumulative[i - 1] if i > 0 else 0.0
        end = i + 1 if i < n and cumulative[i] - target <= target - before else i
        cuts.append(min(max(end, cuts[-1] + 1), n - (parts - k)))  # leave one item for each later shard
    cuts.append(n)
    return list(itertools.pairwise(cuts))


__all__ = ["INSTALL_HINT", "RayEngine", "Replica", "SizedFactory", "import_ray", "shard_bounds"]
