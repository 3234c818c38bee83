"""A prompt's length in the judge server's tokens: counted by its own tokenizer where it offers one and the count
matters (near the window), estimated elsewhere.

An ask is counted exactly only when a cheap upper bound (one token per byte of content, plus the chat template's
own tokens: first a generous allowance, then the template's count) does not fit the window beside its answer
budget, as the in-process vLLM engine does; then by ``/tokenize`` with the messages (vLLM, SGLang) or
llama-server's ``/apply-template`` and ``/tokenize``. An ask well inside the window costs no request at all. A server
without a tokenizer (Ollama, others) gets an estimate of one token per ``ESTIMATE_BYTES`` bytes, on the long side
for English text, and the long-context policy works on that estimate (the engine says so when it starts).
"""

from __future__ import annotations

import functools
from typing import Any

from localeval.engine.base import Request
from localeval.engine.server.identity import CHAT_TOKENIZE, TEMPLATE_TOKENIZE, Identity
from localeval.engine.server.transport import GaveUp, Gone, Refused, Stopped, Transport

ESTIMATE_BYTES = 3  # bytes a token, for an estimate that errs long (English runs about 4 a token)
MESSAGE_TOKENS = 8  # a chat template's own tokens a message, for the estimate
# More than any chat template adds (a few tokens a message, a dated system preamble once): a bound with this
# allowance that fits needs no count from the server.
TEMPLATE_ALLOWANCE = (32, 64)  # tokens a message, tokens once


def estimate(request: Request) -> int:
    """A prompt's length estimated from its bytes, without a tokenizer."""
    size = sum(len(content.encode()) for _, content in request.messages)
    return -(-size // ESTIMATE_BYTES) + MESSAGE_TOKENS * len(request.messages)


class PromptCounter:
    """Counts prompts the way the server at ``transport`` will (``identity`` says how, and its window)."""

    def __init__(self, transport: Transport, identity: Identity) -> None:
        self.transport = transport
        self.identity = identity
        self.exact = bool(identity.tokenizer)
        self.counted = 0  # prompts the server's tokenizer counted
        self._count = functools.lru_cache(maxsize=8192)(self._tokens)
        self._overhead = functools.lru_cache(maxsize=64)(self._template_tokens)

    def __call__(self, request: Request) -> int:
        """The prompt's tokens: the server's count near the window, an estimate elsewhere (see module docstring)."""
        guess = estimate(request)
        window = self.identity.window
        if not self.exact or window is None:
            return guess
        size = sum(len(content.encode()) for _, content in request.messages)
        allowance = TEMPLATE_ALLOWANCE[0] * len(request.messages) + TEMPLATE_ALLOWANCE[1]
        if size + allowance + request.max_tokens <= window:
            return min(guess, size + allowance)
        overhead = self._overhead(tuple(role for role, _ in request.messages))
        if overhead is None:
            return guess
        bound = overhead + size
        if bound + request.max_tokens <= window:
            return min(guess, bound)
        counted = self._count(request.messages)
        return guess if counted is None else counted

    def _tokens(self, messages: tuple[tuple[str, str], ...]) -> int | None:
        """The server's count of a prompt, or None where it could not give one (the estimate stands in)."""
        chat = [{"role": role, "content": content} for role, content in messages]
        try:
            if self.identity.tokenizer == CHAT_TOKENIZE:
                answer: Any = self.transport.post("/tokenize", {"model": self.identity.model, "messages": chat,
                                                                "add_generation_prompt": True,
                                                                "add_special_tokens": False})
                self.counted += 1
                return int(answer["count"])
            if self.identity.tokenizer == TEMPLATE_TOKENIZE:
                prompt = self.transport.post("/apply-template", {"messages": chat})["prompt"]
                answer = self.transport.post("/tokenize", {"content": prompt, "add_special": True,
                                                           "parse_special": True})
                self.counted += 1
                return len(answer["tokens"])
        except (Gone, GaveUp, Refused, Stopped, KeyError, TypeError, ValueError):
            return None
        return None

    def _template_tokens(self, roles: tuple[str, ...]) -> int | None:
        """The chat template's own tokens for this sequence of roles, with empty contents."""
        return self._tokens(tuple((role, "") for role in roles))


__all__ = ["ESTIMATE_BYTES", "PromptCounter", "estimate"]
