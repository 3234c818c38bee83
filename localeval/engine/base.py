"""The engine boundary: a round of requests in, the same number of results out, same order."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from localeval.errors import LocalevalError

FinishReason = Literal["stop", "length", "error", "context_too_long"]
CHARS_PER_TOKEN = 4  # a rough prompt-length estimate where no tokenizer is at hand
# Top log-probabilities asked for at each step where p(1) is read (vLLM's default max_logprobs, OpenAI's cap).
TOP_LOGPROBS = 20


@dataclass(frozen=True)
class Request:
    """One rendered ask: chat messages, the JSON schema the answer must follow, sampling."""

    messages: tuple[tuple[str, str], ...]  # (role, content) pairs
    schema: dict[str, Any]
    max_tokens: int = 512
    temperature: float = 0.0
    n: int = 1
    seed: int = 0
    label: str = ""  # the prompt's name, for logs and scripted engines; not sent to the model
    soft: bool = False  # also record p(1) at each binary decision (Choice.verdict_probs)
    # The answer's typical length, for planning batches (0: max_tokens). An engine that grows a row's
    # budget in place (``Abilities.grows_in_place``) is sent the retry budget as max_tokens and this as the plan.
    expected_tokens: int = 0

    @property
    def planned_tokens(self) -> int:
        """The answer length batches are planned by: ``expected_tokens`` when set, else ``max_tokens``."""
        return self.expected_tokens or self.max_tokens


@dataclass(frozen=True)
class Choice:
    """One generation for a request."""

    text: str
    completion_tokens: int
    finish_reason: FinishReason
    # With Request.soft: p(1) at each binary decision of the answer, in text order (a decode step whose
    # allowed tokens all start with "0" or "1", both kinds allowed), renormalised over the allowed tokens.
    verdict_probs: tuple[float, ...] | None = None


@dataclass
class Result:
    """The engine's answer to one request: ``n`` choices and the prompt's token count."""

    choices: list[Choice]
    prompt_tokens: int
    cached_prompt_tokens: int = 0
    error: str | None = None  # set when finish_reason is "error"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invariance:
    """Whether an engine's greedy answer to an ask depends only on the ask (the judge, its dtype and settings
    fixed), not on the other asks that share its batch, their order or how many there are."""

    batch_invariant: bool
    note: str  # what holds, or why not and what the user gets instead (shown in the summary and report)


@dataclass(frozen=True)
class Abilities:
    """What an engine's type says it can do, so that no caller has to probe for it.

    ``chunk_samples``: samples a bulk run's chunk holds by default (docs/bulk-runs.md): enough asks for full
    batches and long rounds, few enough that the scheduler's state (about 24 KB a sample) stays small.
    ``grows_in_place``: a row decodes past its planned length (``Request.planned_tokens``) up to ``max_tokens``
    without restarting, so the scheduler sends each ask with the budget a cut-off answer would be retried with
    and retries nothing. ``soft``: "always" (p(1) comes with every soft ask), "checked" (the engine's
    ``require_soft`` says, before the run, whether it can give p(1)).
    """

    chunk_samples: int = 4096
    grows_in_place: bool = False
    soft: Literal["always", "checked"] = "always"


class Engine:
    """The base of localeval's own engines: their ``abilities`` and batch invariance, declared by the type."""

    abilities: ClassVar[Abilities] = Abilities()

    @property
    def invariance(self) -> Invariance:
        """Whether an answer depends on what shares its batch (an engine that knows says so)."""
        return Invariance(False, f"the {type(self).__name__} does not say whether an answer depends on its batch")

    def require_soft(self) -> None:
        """A LocalevalError, before the run, where this judge cannot give p(1) (``Abilities.soft`` "checked")."""


def abilities_of(engine: object) -> Abilities:
    """The abilities ``engine``'s type declares (an engine object from elsewhere: the defaults)."""
    return type(engine).abilities if isinstance(engine, Engine) else Abilities()


def invariance_of(engine: object) -> Invariance:
    """What ``engine`` says of its batch invariance (an engine object from elsewhere: that it does not say)."""
    if isinstance(engine, Engine):
        return engine.invariance
    return Invariance(False, f"the {type(engine).__name__} does not say whether an answer depends on its batch")


@runtime_checkable
class JudgeEngine(Protocol):
    """A judge model behind one method (localeval's own engines also derive from ``Engine``, which says what
    they can do)."""

    @property
    def fingerprint(self) -> str:
        """Identifies model and engine settings that change answers (used as a cache key)."""
        ...

    @property
    def context_window(self) -> int | None:
        """Tokens the judge's window holds, prompt and answer together; None where there is no limit."""
        ...

    def count_prompt_tokens(self, request: Request) -> int:
        """The request's prompt length in the judge's tokens (an estimate where the engine has no tokenizer)."""
        ...

    def generate(
        self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
    ) -> list[Result]:
        """Answer every request; one result per request, in the same order.

        ``on_result(i, result)`` is called as each request's answer is ready, so the caller can
        store answers and show progress before the whole round is done. An engine reports each ask
        the moment it completes where it can (the transformers engine: when a row's JSON closes),
        else after each batch; results it never reports are taken as finished when the call returns.
        An engine that can answer nothing more (its process gone) raises ``errors.JudgeDied``, which ends
        the run; any other error is taken as the batch's, and the scheduler splits the batch to find the ask.
        """
        ...


def estimate_prompt_tokens(request: Request) -> int:
    """A prompt's length in tokens estimated from its characters, for engines without a tokenizer."""
    return sum(len(content) for _, content in request.messages) // CHARS_PER_TOKEN


def import_optional(module: str, missing: str) -> Any:
    """The optional module ``module``, or a LocalevalError saying ``missing`` (what to install, where)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise LocalevalError(missing) from error
