"""From an ask to the request the engine gets: sampling and votes, the cache key, the long-context policy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from localeval.engine.base import JudgeEngine, Request
from localeval.errors import LocalevalError
from localeval.long_context import POLICIES, TooLong, fit
from localeval.prompts.base import Settings
from localeval.steps import Ask
from localeval.store.cache import JudgeCache


@dataclass
class Pending:
    """A request to generate this round, under its cache key, with the metrics that asked for it."""

    key: str
    request: Request
    askers: list[str]  # metric names, first asker first


class RequestMaker:
    """Turns asks into requests for one engine, settings and seed, under one long-context policy."""

    def __init__(self, engine: JudgeEngine | None, settings: Settings, seed: int, long_context: str) -> None:
        if long_context not in POLICIES:
            raise ValueError(f"long_context must be one of {', '.join(POLICIES)}")
        self.engine = engine
        self.settings = settings
        self.seed = seed
        self.long_context = long_context

    def voted(self, ask: Ask) -> bool:
        """A verdict ask answered by the majority of several sampled answers (Settings.votes)."""
        return ask.n is None and self.settings.votes > 1 and ask.prompt.vote is not None

    def request(self, ask: Ask) -> Request:
        """The ask rendered: messages, schema, budget and sampling."""
        prompt = ask.prompt
        if self.voted(ask):
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
            soft=self.settings.soft,
        )

    def key(self, request: Request) -> str:
        """The request's answer-cache key."""
        fingerprint = self.engine.fingerprint if self.engine is not None else "no-engine"
        # max_tokens is left out: a budget change that still fits gives the same answer. A soft answer
        # also holds p(1) at its verdicts, so it has a key of its own (a hard one keeps its old key).
        soft = ("soft",) if request.soft else ()
        return JudgeCache.key("answer", fingerprint, request.messages, request.schema,
                              request.temperature, request.n, request.seed, *soft)

    def fitted(self, ask: Ask, where: str, trace: dict[str, Any],
               too_long: dict[str, str]) -> tuple[str, Request | None]:
        """The ask's key and request, after the long-context policy; None when it is not to be sent.

        ``where`` names the sample and metric for the error; a cut is noted in ``trace``, and an ask
        left out is noted in ``too_long`` under its key.
        """
        window = self.engine.context_window if self.engine is not None else None
        if self.engine is None or not window:
            request = self.request(ask)
            return self.key(request), request
        try:
            _, request, note = fit(ask, self.request, self.engine.count_prompt_tokens, window, self.long_context)
        except TooLong as error:
            if self.long_context == "error":
                raise LocalevalError(f"{where}: {error}. Use --long-context skip (NaN) or truncate.") from None
            key = self.key(self.request(ask))
            too_long[key] = str(error)
            return key, None
        if note is not None:
            trace.setdefault("truncated_inputs", []).append({"prompt": ask.prompt.name, **note})
        return self.key(request), request
