"""Engine calls: one per batch, cut-off answers asked again with a bigger budget (an engine that grows
budgets in place gets that budget at once), failing batches bisected, a dead engine the end of the run.

A failing call is split in halves down to the single asks that fail, so one bad ask costs only its own
answer (NaN ``engine_error``). An engine that says it died (``JudgeDied``, as the vLLM engine does when its
process is gone), or a call whose every ask failed with the same error, stops the run instead: asking a
dead engine again only turns every later ask into a NaN. The answers received before are in the cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from localeval.engine.base import JudgeEngine, Request, Result, abilities_of
from localeval.errors import JudgeDied
from localeval.progress import RunProgress
from localeval.prompts.base import answer_token_bound
from localeval.scheduler.answers import answer_dict, cut_off, storable
from localeval.scheduler.requests import Pending
from localeval.scheduler.usage import Usage, charge_generation
from localeval.store.cache import AnswerStore
from localeval.store.cache_errors import CacheError

RETRY_FACTOR = 2  # a truncated answer is asked once more with at least this many times the token budget
# Answers are committed ``commit_every`` at a time, but no more often than every COMMIT_SECONDS unless
# COMMIT_MOST are waiting: a judge that takes a second an answer loses at most 16 to a kill, and a fast
# one (scripted, a large vLLM batch) does not pay a transaction every 16 answers.
COMMIT_SECONDS = 0.5
COMMIT_MOST = 4096


class Generation:
    """Sends a round's uncached requests to the engine, stores answers as they come, counts engine calls."""

    def __init__(self, engine: JudgeEngine, cache: AnswerStore, commit_every: int) -> None:
        self.engine = engine
        self.cache = cache
        self.commit_every = commit_every
        self.calls = 0
        self.kept = 0  # answers received from the engine and written to the cache, over this scheduler's life
        self._committed = time.monotonic()

    def generate(self, todo: list[Pending], usage: dict[str, Usage], number: int,
                 shown: RunProgress) -> dict[str, Any]:
        """Answers by key for every pending request of round ``number``, cut-off ones retried once."""
        answers: dict[str, Any] = {}
        retry: list[Pending] = []
        grows = abilities_of(self.engine).grows_in_place
        if grows:  # one attempt, each ask allowed what its retry would get
            todo = [Pending(p.key, self.grown(p.request), p.askers) for p in todo]
        for attempt in (1, 2):
            batch = todo if attempt == 1 else retry
            if not batch:
                break
            requests = [p.request for p in batch]
            store: list[tuple[str, dict[str, Any]]] = []
            reported: set[int] = set()

            def on_result(i: int, result: Result, batch: list[Pending] = batch,
                          store: list[tuple[str, dict[str, Any]]] = store, reported: set[int] = reported,
                          final: bool = attempt == 2 or grows) -> None:
                reported.add(i)
                shown.finished(i)
                answer = answer_dict(result)
                if storable(answer, final):
                    store.append((batch[i].key, answer))
                if len(store) >= self.commit_every and (
                        len(store) >= COMMIT_MOST or time.monotonic() - self._committed >= COMMIT_SECONDS):
                    self.commit(store)

            shown.begin(number, [self.planned_work(r) for r in requests] if shown.enabled else [],
                        retry=attempt == 2)
            started = time.perf_counter()
            try:
                results = self.split(requests, on_result)
                seconds = time.perf_counter() - started
                for i, result in enumerate(results):  # an engine that reports nothing per ask: all at its end
                    if i not in reported:
                        on_result(i, result)
            except JudgeDied as died:
                self.commit(store)
                raise self.died(died.cause) from None
            except BaseException:  # Ctrl-C or any other stop: every answer received is kept for the rerun
                self.commit(store)
                raise
            finally:
                shown.end()
            self.commit(store)
            failure = same_failure(results)
            if failure is not None:
                raise self.died(failure)
            charge_generation(usage, [p.askers[0] for p in batch], results, seconds, retry=attempt == 2)
            retry = []
            for p, result in zip(batch, results, strict=True):
                answer = answer_dict(result)
                if attempt == 1 and not grows and cut_off(answer):
                    bigger = replace(p.request, max_tokens=self.retry_budget(p.request, result.prompt_tokens))
                    retry.append(Pending(p.key, bigger, p.askers))
                    continue
                answers[p.key] = answer
        return answers

    def commit(self, store: list[tuple[str, dict[str, Any]]]) -> None:
        """Write the answers waiting in ``store`` to the cache in one transaction, and empty it."""
        self.cache.put_answers(store)
        self.kept += len(store)
        store.clear()
        self._committed = time.monotonic()

    def died(self, cause: str) -> JudgeDied:
        """The error that ends the run: the engine's cause, and where the answers received so far are."""
        if not self.cache.enabled:
            kept = (f"The {self.kept} answers received this run are lost: the run has no judge cache (--no-cache); "
                    "without --no-cache a rerun of the same command resumes from the answers received")
        else:
            where = f" {self.cache.path}" if self.cache.path is not None else " (the run's, held by the driver)"
            kept = (f"The {self.kept} answers received this run are kept in the judge cache{where}: "
                    "rerun the same command to resume from them")
        return JudgeDied(cause, kept)

    def planned_work(self, request: Request) -> int:
        """An ask's expected cost in tokens: its prompt, as the engine counts it, plus its answer budget
        for every row the engine decodes."""
        prompt = self.engine.count_prompt_tokens(request)
        rows = request.n if request.temperature > 0 else 1
        return int(prompt) + request.planned_tokens * rows

    def grown(self, request: Request) -> Request:
        """``request`` for an engine that grows budgets in place: its retry budget as the most it may
        decode, its own budget as the plan."""
        budget = self.retry_budget(request, int(self.engine.count_prompt_tokens(request)))
        return replace(request, max_tokens=budget, expected_tokens=request.max_tokens)

    def retry_budget(self, request: Request, prompt_tokens: int) -> int:
        """A cut-off answer's second budget: enough for any answer its schema allows, where that fits.

        At least twice the first budget; the schema's bound when there is one (so that a judge
        spelling a reason out letter by letter still reaches its verdict), but no more than the
        judge's context window leaves beside the prompt.
        """
        budget = request.max_tokens * RETRY_FACTOR
        bound = answer_token_bound(request.schema)
        if bound is not None:
            budget = max(budget, bound)
        window = self.engine.context_window
        if window and prompt_tokens:
            budget = min(budget, window - prompt_tokens)
        return max(budget, request.max_tokens)

    def split(self, requests: list[Request], on_result: Callable[[int, Result], None]) -> list[Result]:
        """One engine call; if it raises, split the batch in halves so one bad ask cannot sink a round
        (an engine that says it died is not asked again)."""
        self.calls += 1
        try:
            return self.engine.generate(requests, on_result=on_result)
        except (JudgeDied, CacheError):  # a cache that cannot be written (from on_result) is no bad ask
            raise
        except Exception as error:
            if len(requests) == 1:
                result = Result(choices=[], prompt_tokens=0, error=f"{type(error).__name__}: {error}")
                on_result(0, result)
                return [result]
            half = len(requests) // 2
            left = self.split(requests[:half], on_result)
            right = self.split(requests[half:], lambda i, r: on_result(i + half, r))
            return left + right


def same_failure(results: list[Result]) -> str | None:
    """What a call whose several asks all failed with one error failed with; None where any ask did not.

    Asks the engine answered ``context_too_long`` without sending them are left out: they say nothing of it.
    """
    sent = [r for r in results if not (r.choices and r.choices[0].finish_reason == "context_too_long")]
    errors = {r.error for r in sent}
    error = errors.pop() if len(errors) == 1 else None
    if len(sent) < 2 or error is None:
        return None
    return f"every one of the {len(sent)} asks of an engine call failed with {error}"
