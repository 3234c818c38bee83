"""The rounds: advance every generator to its next yield, drop duplicate asks, answer them all, send back."""

from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.data.sample import Sample
from localeval.engine.base import JudgeEngine
from localeval.errors import LocalevalError
from localeval.metrics.registry import MetricSpec
from localeval.nan import Nan, NanReason
from localeval.progress import RunProgress
from localeval.prompts.base import DEFAULT_SETTINGS, Settings
from localeval.scheduler.answers import AskFailed, merged, parse_answer, spread, too_long_answer
from localeval.scheduler.generation import Generation
from localeval.scheduler.requests import Pending, RequestMaker
from localeval.scheduler.usage import Usage, charge_embedding
from localeval.steps import Embed, Outcome, Steps
from localeval.store.cache import AnswerStore, JudgeCache


@dataclass
class Job:
    """One generator (a metric on one sample, or any other stepwise task) and where it stands."""

    name: str  # what usage is charged to: the metric's name
    index: int
    gen: Steps
    trace: dict[str, Any] = field(default_factory=dict)
    where: str = ""  # the sample, for messages
    waiting: Any = None  # what the generator last yielded
    outcome: Any = None
    done: bool = False


@dataclass
class RunOutput:
    """Per metric, one outcome and one trace per sample; usage per metric; rounds and engine calls."""

    outcomes: dict[str, list[Outcome]]
    traces: dict[str, list[dict[str, Any]]]
    usage: dict[str, Usage]
    rounds: int
    engine_calls: int
    embed_calls: int
    wall_seconds: float


class Scheduler:
    """Runs metrics over samples with one judge engine, one embedder and one cache."""

    def __init__(
        self,
        engine: JudgeEngine | None,
        embedder: Any | None = None,
        cache: AnswerStore | None = None,
        settings: Settings = DEFAULT_SETTINGS,
        seed: int = 0,
        progress: bool | RunProgress = True,
        commit_every: int = 16,
        long_context: str = "skip",
    ) -> None:
        self.engine = engine
        self.embedder = embedder
        self.cache: AnswerStore = cache if cache is not None else JudgeCache.disabled()
        self.settings = settings
        self.seed = seed
        self.progress = progress
        self.commit_every = commit_every
        self.requests = RequestMaker(engine, settings, seed, long_context)
        self.long_context = long_context
        self.generation = Generation(engine, self.cache, commit_every) if engine is not None else None
        self.embed_calls = 0
        self._shown = RunProgress(enabled=False)

    @property
    def engine_calls(self) -> int:
        """Calls made to the engine so far (a failing batch split in halves counts each half)."""
        return self.generation.calls if self.generation is not None else 0

    def run(
        self, samples: Sequence[Sample], specs: Sequence[MetricSpec], skip: set[tuple[str, int]] | None = None
    ) -> RunOutput:
        """Score every sample with every metric; (metric name, sample index) pairs in ``skip`` lack a
        field the metric needs and score ``Nan("missing_field")`` without asking anything."""
        start = time.perf_counter()
        usage = {s.name: Usage() for s in specs}
        jobs: list[Job] = []
        for spec in specs:
            for i, sample in enumerate(samples):
                trace: dict[str, Any] = {}
                steps = spec.steps(sample, trace, self.settings.judge_mode)
                job = Job(spec.name, i, steps, trace, f"sample {sample.id!r}")
                if skip and (spec.name, i) in skip:
                    job.gen.close()
                    job.outcome, job.done = Nan("missing_field"), True
                jobs.append(job)
        rounds = self._drive(jobs, usage)
        outcomes: dict[str, list[Outcome]] = {s.name: [Nan("undefined")] * len(samples) for s in specs}
        traces: dict[str, list[dict[str, Any]]] = {s.name: [{}] * len(samples) for s in specs}
        for job in jobs:
            outcomes[job.name][job.index] = _as_outcome(job.outcome)
            traces[job.name][job.index] = job.trace
        return RunOutput(outcomes, traces, usage, rounds, self.engine_calls, self.embed_calls,
                         time.perf_counter() - start)

    def run_tasks(self, tasks: Sequence[tuple[str, Generator[Any, Any, Any]]]) -> tuple[list[Any], dict[str, Usage]]:
        """Drive any generators that yield asks (test-set generation, agreement checks) in rounds.

        Returns each generator's return value (or a Nan when an ask it needed failed) and usage by name.
        """
        usage = {name: Usage() for name, _ in tasks}
        jobs = [Job(name, i, gen, where=f"task {i}") for i, (name, gen) in enumerate(tasks)]
        self._drive(jobs, usage)
        return [j.outcome for j in jobs], usage

    def _drive(self, jobs: list[Job], usage: dict[str, Usage]) -> int:
        with _fewer_collections():
            return self._drive_rounds(jobs, usage)

    def _drive_rounds(self, jobs: list[Job], usage: dict[str, Usage]) -> int:
        for job in jobs:
            if not job.done:
                _advance(job, None, first=True)
        rounds = 0
        shown = self.progress if isinstance(self.progress, RunProgress) else RunProgress(enabled=bool(self.progress))
        self._shown = shown
        try:
            while active := [j for j in jobs if not j.done]:
                rounds += 1
                self._round(active, usage, rounds)
        finally:
            shown.close()
        return rounds

    def _round(self, active: list[Job], usage: dict[str, Usage], number: int) -> None:
        pending: dict[str, Pending] = {}
        # id(job) -> per ask, in its order: the ask as sent (repeats merged), where its items went, its request key
        sent: dict[int, list[tuple[Any, list[int] | None, str]]] = {}
        texts: dict[str, str] = {}
        too_long: dict[str, str] = {}  # request key -> why it was not sent
        for job in active:
            if isinstance(job.waiting, Embed):
                for text in job.waiting.texts:
                    texts.setdefault(self._embed_key(text), text)
                continue
            asks = job.waiting if isinstance(job.waiting, list) else [job.waiting]
            sent[id(job)] = []
            for ask, where in (merged(a) if self.settings.merge_repeats else (a, None) for a in asks):
                key, request = self.requests.fitted(ask, f"{job.where}, {job.name}", job.trace, too_long)
                if request is not None:
                    pending.setdefault(key, Pending(key, request, [])).askers.append(job.name)
                sent[id(job)].append((ask, where, key))
                usage[job.name].asks += 1
        answers = self._answer(pending, usage, number)
        answers.update({key: too_long_answer(why) for key, why in too_long.items()})
        vectors = self._embed(texts, active, usage)
        for job in active:
            if isinstance(job.waiting, Embed):
                value: Any = np.stack([vectors[self._embed_key(t)] for t in job.waiting.texts])
                _advance(job, value)
                continue
            try:
                parsed = [spread(ask, parse_answer(ask, answers[key], self.requests.voted(ask), self.settings), where)
                          for ask, where, key in sent[id(job)]]
            except AskFailed as failed:
                _fail(job, failed.reason, str(failed))
                continue
            _advance(job, parsed if isinstance(job.waiting, list) else parsed[0])

    def _answer(self, pending: dict[str, Pending], usage: dict[str, Usage], number: int) -> dict[str, Any]:
        """Answers by key: from the cache where it holds them, else from the engine."""
        if not pending:
            return {}
        answers: dict[str, Any] = dict(self.cache.get_answers(list(pending)))
        for key in answers:
            usage[pending[key].askers[0]].cache_hits += 1
        todo = [p for k, p in pending.items() if k not in answers]
        if todo and self.generation is None:
            raise LocalevalError("these metrics need a judge model, and none was given")
        if todo and self.generation is not None:
            answers.update(self.generation.generate(todo, usage, number, self._shown))
        return answers

    def _embed_key(self, text: str) -> str:
        return JudgeCache.key("embedding", getattr(self.embedder, "fingerprint", "none"), text)

    def _embed(self, texts: dict[str, str], active: list[Job], usage: dict[str, Usage]) -> dict[str, np.ndarray]:
        """Vectors by key: from the cache where it holds them, else from one embedder call."""
        if not texts:
            return {}
        vectors = dict(self.cache.get_embeddings(list(texts)))
        todo = [k for k in texts if k not in vectors]
        if todo:
            if self.embedder is None:
                raise LocalevalError("answer_relevancy needs an embedding model, and none was given")
            started = time.perf_counter()
            self.embed_calls += 1
            matrix = np.asarray(self.embedder.embed([texts[k] for k in todo]))  # keep its dtype
            seconds = time.perf_counter() - started
            new = list(zip(todo, matrix, strict=True))
            self.cache.put_embeddings(new)
            vectors.update(new)
            charge_embedding(usage, [j.name for j in active if isinstance(j.waiting, Embed)], len(todo), seconds)
        return vectors


# A round makes and keeps many objects (generators, traces, parsed answers) that are freed by reference
# counting, not by the cycle collector; at Python's default threshold (700) the collector walks the whole
# live set again and again, some 20-30% of a large run's time. This threshold is kept while rounds run.
GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """The cycle collector's first threshold raised to GC_THRESHOLD (never lowered), restored afterwards."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _advance(job: Job, value: Any, first: bool = False) -> None:
    try:
        job.waiting = next(job.gen) if first else job.gen.send(value)
    except StopIteration as stop:
        job.outcome, job.done = stop.value, True
        job.waiting = None


def _fail(job: Job, reason: NanReason, detail: str) -> None:
    job.gen.close()
    job.trace["nan_detail"] = detail
    job.outcome, job.done = Nan(reason), True
    job.waiting = None


def _as_outcome(value: Any) -> Outcome:
    if isinstance(value, Nan):
        return value
    value = float(value)
    return Nan("undefined") if math.isnan(value) else value
