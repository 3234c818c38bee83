"""Drive every (metric, sample) generator in lock step; one engine call per round for all asks.

Each round: advance every generator to its next yield, collect the asks, drop duplicates (the
same prompt asked by two metrics is generated once), answer what the cache holds, send the rest
to the engine in one call and all texts to embed to the embedder in one call, store answers as
they arrive, and send each answer into the generator that asked for it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.data.sample import Sample
from localeval.engine.base import JudgeEngine, Request, Result
from localeval.errors import LocalevalError
from localeval.long_context import POLICIES, TooLong, fit
from localeval.metrics.registry import MetricSpec
from localeval.nan import Nan, NanReason
from localeval.progress import RunProgress
from localeval.prompts.base import DEFAULT_SETTINGS, Settings, answer_token_bound
from localeval.steps import Ask, Embed, Outcome, Steps
from localeval.store.cache import JudgeCache

RETRY_FACTOR = 2  # a truncated answer is asked once more with at least this many times the token budget


class AskFailed(Exception):
    """An answer a generator needs could not be had; the sample's score becomes NaN."""

    def __init__(self, reason: NanReason, detail: str = "") -> None:
        super().__init__(detail or reason)
        self.reason: NanReason = reason


@dataclass
class Usage:
    """What one metric cost."""

    asks: int = 0  # asks its generators made (shared ones counted for every metric)
    judge_calls: int = 0  # generations the engine ran for it (a shared ask counts for the first asker)
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    engine_seconds: float = 0.0
    embed_texts: int = 0
    embed_seconds: float = 0.0
    retries: int = 0

    def add(self, other: Usage) -> None:
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def to_dict(self) -> dict[str, float | int]:
        out: dict[str, float | int] = {n: getattr(self, n) for n in self.__dataclass_fields__}
        out["engine_seconds"] = round(self.engine_seconds, 3)
        out["embed_seconds"] = round(self.embed_seconds, 3)
        return out


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


@dataclass
class _Pending:
    key: str
    request: Request
    askers: list[str]  # metric names, first asker first


class Scheduler:
    """Runs metrics over samples with one judge engine, one embedder and one cache."""

    def __init__(
        self,
        engine: JudgeEngine | None,
        embedder: Any | None = None,
        cache: JudgeCache | None = None,
        settings: Settings = DEFAULT_SETTINGS,
        seed: int = 0,
        progress: bool | RunProgress = True,
        commit_every: int = 16,
        long_context: str = "skip",
    ) -> None:
        self.engine = engine
        self.embedder = embedder
        self.cache = cache or JudgeCache.disabled()
        self.settings = settings
        self.seed = seed
        self.progress = progress
        self.commit_every = commit_every
        if long_context not in POLICIES:
            raise ValueError(f"long_context must be one of {', '.join(POLICIES)}")
        self.long_context = long_context
        self.engine_calls = 0
        self.embed_calls = 0
        self._shown = RunProgress(enabled=False)

    # -- the rounds ---------------------------------------------------------------------------

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
                job = Job(spec.name, i, spec.steps(sample, trace), trace, f"sample {sample.id!r}")
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
        for job in jobs:
            if not job.done:
                self._advance(job, None, first=True)
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

    def _advance(self, job: Job, value: Any, first: bool = False) -> None:
        try:
            job.waiting = next(job.gen) if first else job.gen.send(value)
        except StopIteration as stop:
            job.outcome, job.done = stop.value, True
            job.waiting = None

    def _fail(self, job: Job, reason: NanReason, detail: str) -> None:
        job.gen.close()
        job.trace["nan_detail"] = detail
        job.outcome, job.done = Nan(reason), True
        job.waiting = None

    def _round(self, active: list[Job], usage: dict[str, Usage], number: int) -> None:
        pending: dict[str, _Pending] = {}
        wanted: dict[int, list[str]] = {}  # id(job) -> request keys, in the order of its asks
        texts: dict[str, str] = {}
        too_long: dict[str, str] = {}  # request key -> why it was not sent
        for job in active:
            if isinstance(job.waiting, Embed):
                for text in job.waiting.texts:
                    texts.setdefault(self._embed_key(text), text)
                continue
            asks = job.waiting if isinstance(job.waiting, list) else [job.waiting]
            keys = []
            for ask in asks:
                key, request = self._fitted(ask, job, too_long)
                if request is not None:
                    pending.setdefault(key, _Pending(key, request, [])).askers.append(job.name)
                keys.append(key)
                usage[job.name].asks += 1
            wanted[id(job)] = keys
        answers = self._answer(pending, usage, number)
        answers.update({key: _too_long_answer(why) for key, why in too_long.items()})
        vectors = self._embed(texts, active, usage)
        for job in active:
            if isinstance(job.waiting, Embed):
                value: Any = np.stack([vectors[self._embed_key(t)] for t in job.waiting.texts])
                self._advance(job, value)
                continue
            asks = job.waiting if isinstance(job.waiting, list) else [job.waiting]
            try:
                parsed = [self._parse(ask, answers[key]) for ask, key in zip(asks, wanted[id(job)], strict=True)]
            except AskFailed as failed:
                self._fail(job, failed.reason, str(failed))
                continue
            self._advance(job, parsed if isinstance(job.waiting, list) else parsed[0])

    # -- judge answers ------------------------------------------------------------------------

    def _fitted(self, ask: Ask, job: Job, too_long: dict[str, str]) -> tuple[str, Request | None]:
        """The ask's key and request, after the long-context policy; None when it is not to be sent."""
        window = self.engine.context_window if self.engine is not None else None
        if self.engine is None or not window:
            request = self._request(ask)
            return self._key(request), request
        try:
            _, request, note = fit(ask, self._request, self.engine.count_prompt_tokens, window, self.long_context)
        except TooLong as error:
            if self.long_context == "error":
                raise LocalevalError(
                    f"{job.where}, {job.name}: {error}. Use --long-context skip (NaN) or truncate."
                ) from None
            key = self._key(self._request(ask))
            too_long[key] = str(error)
            return key, None
        if note is not None:
            job.trace.setdefault("truncated_inputs", []).append({"prompt": ask.prompt.name, **note})
        return self._key(request), request

    def _voted(self, ask: Ask) -> bool:
        """A verdict ask answered by the majority of several sampled answers (Settings.votes)."""
        return ask.n is None and self.settings.votes > 1 and ask.prompt.vote is not None

    def _request(self, ask: Ask) -> Request:
        prompt = ask.prompt
        if self._voted(ask):
            n, temperature = self.settings.votes, self.settings.temperature
        elif ask.n is None:
            n, temperature = 1, 0.0
        else:  # sampled generations, also when only one is wanted (answer relevancy's strictness=1)
            n, temperature = ask.n, prompt.sampling_temperature
        return Request(
            messages=prompt.messages(ask.input, self.settings),
            schema=prompt.schema(ask.input, self.settings),
            max_tokens=prompt.max_tokens(ask.input, self.settings),
            temperature=temperature,
            n=n,
            seed=self.seed,
            label=prompt.name,
        )

    def _key(self, request: Request) -> str:
        fingerprint = self.engine.fingerprint if self.engine is not None else "no-engine"
        # max_tokens is left out: a budget change that still fits gives the same answer.
        return JudgeCache.key("answer", fingerprint, request.messages, request.schema,
                              request.temperature, request.n, request.seed)

    def _answer(self, pending: dict[str, _Pending], usage: dict[str, Usage], number: int) -> dict[str, Any]:
        if not pending:
            return {}
        answers: dict[str, Any] = dict(self.cache.get_answers(list(pending)))
        for key in answers:
            usage[pending[key].askers[0]].cache_hits += 1
        todo = [p for k, p in pending.items() if k not in answers]
        if todo and self.engine is None:
            raise LocalevalError("these metrics need a judge model, and none was given")
        if todo:
            answers.update(self._generate(todo, usage, number))
        return answers

    def _generate(self, todo: list[_Pending], usage: dict[str, Usage], number: int) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        retry: list[_Pending] = []
        for attempt in (1, 2):
            batch = todo if attempt == 1 else retry
            if not batch:
                break
            requests = [p.request for p in batch]
            store: list[tuple[str, dict[str, Any]]] = []
            reported: set[int] = set()

            def on_result(i: int, result: Result, batch: list[_Pending] = batch,
                          store: list[tuple[str, dict[str, Any]]] = store, reported: set[int] = reported,
                          final: bool = attempt == 2) -> None:
                reported.add(i)
                self._shown.finished(i)
                answer = _answer_dict(result)
                if _storable(answer, final):
                    store.append((batch[i].key, answer))
                if len(store) >= self.commit_every:
                    self.cache.put_answers(store)
                    store.clear()

            self._shown.begin(number, [self._planned_work(r) for r in requests], retry=attempt == 2)
            started = time.perf_counter()
            try:
                results = self._generate_split(requests, on_result)
                seconds = time.perf_counter() - started
                for i, result in enumerate(results):  # an engine that reports nothing per ask: all at its end
                    if i not in reported:
                        on_result(i, result)
            finally:
                self._shown.end()
            self.cache.put_answers(store)
            self._charge(batch, results, seconds, usage, retry=attempt == 2)
            retry = []
            for p, result in zip(batch, results, strict=True):
                answer = _answer_dict(result)
                if attempt == 1 and any(c["finish_reason"] == "length" for c in answer["choices"]):
                    bigger = Request(**{**p.request.__dict__, "max_tokens": self._retry_budget(p.request, result)})
                    retry.append(_Pending(p.key, bigger, p.askers))
                    continue
                answers[p.key] = answer
        return answers

    def _planned_work(self, request: Request) -> int:
        """An ask's expected cost in tokens: its prompt, as the engine counts it, plus its answer budget
        for every row the engine decodes."""
        assert self.engine is not None
        prompt = self.engine.count_prompt_tokens(request)
        rows = request.n if request.temperature > 0 else 1
        return int(prompt) + request.max_tokens * rows

    def _retry_budget(self, request: Request, result: Result) -> int:
        """A cut-off answer's second budget: enough for any answer its schema allows, where that fits.

        At least twice the first budget; the schema's bound when there is one (so that a judge
        spelling a reason out letter by letter still reaches its verdict), but no more than the
        judge's context window leaves beside the prompt.
        """
        budget = request.max_tokens * RETRY_FACTOR
        bound = answer_token_bound(request.schema)
        if bound is not None:
            budget = max(budget, bound)
        window = self.engine.context_window if self.engine is not None else None
        if window and result.prompt_tokens:
            budget = min(budget, window - result.prompt_tokens)
        return max(budget, request.max_tokens)

    def _generate_split(self, requests: list[Request],
                        on_result: Callable[[int, Result], None]) -> list[Result]:
        """One engine call; if it raises, split the batch in halves so one bad ask cannot sink a round."""
        assert self.engine is not None
        self.engine_calls += 1
        try:
            return self.engine.generate(requests, on_result=on_result)
        except Exception as error:
            if len(requests) == 1:
                result = Result(choices=[], prompt_tokens=0, error=f"{type(error).__name__}: {error}")
                on_result(0, result)
                return [result]
            half = len(requests) // 2
            left = self._generate_split(requests[:half], on_result)
            right = self._generate_split(requests[half:], lambda i, r: on_result(i + half, r))
            return left + right

    def _charge(self, batch: list[_Pending], results: list[Result], seconds: float,
                usage: dict[str, Usage], retry: bool) -> None:
        tokens = [r.prompt_tokens + sum(c.completion_tokens for c in r.choices) for r in results]
        total = sum(tokens) or 1
        for p, result, t in zip(batch, results, tokens, strict=True):
            u = usage[p.askers[0]]
            u.judge_calls += 1
            u.retries += int(retry)
            u.prompt_tokens += result.prompt_tokens
            u.cached_prompt_tokens += result.cached_prompt_tokens
            u.completion_tokens += sum(c.completion_tokens for c in result.choices)
            u.engine_seconds += seconds * t / total

    def _parse(self, ask: Ask, answer: dict[str, Any]) -> Any:
        if answer.get("error"):
            raise AskFailed("engine_error", answer["error"])
        choices = answer["choices"]
        reasons = {c["finish_reason"] for c in choices}
        if "context_too_long" in reasons:
            detail = answer.get("detail") or "the ask does not fit the judge's context window"
            raise AskFailed("context_too_long", detail)
        if "length" in reasons:
            raise AskFailed("truncated", "the answer hit the token limit, also on a retry with a larger budget")
        try:
            parsed = [ask.prompt.parse(c["text"]) for c in choices]
            if self._voted(ask) and ask.prompt.vote is not None:
                return ask.prompt.vote(parsed)
        except ValueError as error:
            raise AskFailed("invalid_output", f"{ask.prompt.name}: {error}") from None
        return parsed[0] if ask.n is None else tuple(parsed)

    # -- embeddings ---------------------------------------------------------------------------

    def _embed_key(self, text: str) -> str:
        return JudgeCache.key("embedding", getattr(self.embedder, "fingerprint", "none"), text)

    def _embed(self, texts: dict[str, str], active: list[Job], usage: dict[str, Usage]) -> dict[str, np.ndarray]:
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
            askers = [j.name for j in active if isinstance(j.waiting, Embed)]
            for name in set(askers):
                share = askers.count(name) / len(askers)
                usage[name].embed_texts += round(len(todo) * share)
                usage[name].embed_seconds += seconds * share
        return vectors


def _answer_dict(result: Result) -> dict[str, Any]:
    return {
        "choices": [{"text": c.text, "completion_tokens": c.completion_tokens,
                     "finish_reason": c.finish_reason} for c in result.choices],
        "prompt_tokens": result.prompt_tokens,
        "cached_prompt_tokens": result.cached_prompt_tokens,
        "error": result.error,
    }


def _too_long_answer(why: str) -> dict[str, Any]:
    return {"choices": [{"text": "", "completion_tokens": 0, "finish_reason": "context_too_long"}],
            "prompt_tokens": 0, "cached_prompt_tokens": 0, "error": None, "detail": why}


def _storable(answer: dict[str, Any], final: bool) -> bool:
    """What is cached: complete answers, and answers still cut off after the retry (deterministic,
    so a rerun would only repeat them). Engine errors, first cut-off answers and asks too long for
    the window are not: the next run asks again (perhaps with a larger window)."""
    if answer["error"]:
        return False
    reasons = {c["finish_reason"] for c in answer["choices"]}
    return reasons <= {"stop"} or (final and reasons <= {"stop", "length"})


def _as_outcome(value: Any) -> Outcome:
    if isinstance(value, Nan):
        return value
    value = float(value)
    return Nan("undefined") if math.isnan(value) else value


def total_usage(usages: dict[str, Usage]) -> Usage:
    """The total of several metrics' usage."""
    total = Usage()
    for u in usages.values():
        total.add(u)
    return total


__all__ = ["AskFailed", "Job", "RunOutput", "Scheduler", "Usage", "total_usage"]
