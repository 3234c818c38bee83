"""How each kind of judge server is asked, and how its answer reads: the schema's spelling, sampling, usage.

Every ask carries its JSON schema in the one spelling its server enforces (the probe proves it does, ``probe.py``):

* ``vllm``: ``structured_outputs: {"json": schema}`` (vLLM 0.10.2 and later); ``vllm-legacy``: ``guided_json``
  (older vLLM; removed in 0.12, where it is accepted and silently ignored);
* ``sglang`` and ``openai`` (any other OpenAI-compatible server): ``response_format: {"type": "json_schema", ...}``;
* ``llamacpp``: the schema as a compact grammar (``grammar``, ``gbnf.py``; llama-server's own conversion of a
  ``json_schema`` lets blanks in), or as ``json_schema`` where the grammar writer does not cover it;
  ``ollama``: ``format`` on Ollama's native ``/api/chat``.

Sampling is spelled out whole (top-p 1, no top-k or min-p, no repetition penalty) so that a server's defaults, or
its model's ``generation_config.json``, do not change a judge's answers. llama.cpp and Ollama take one sample per
request; there ``n`` seeded samples are ``n`` requests with seeds ``seed``, ``seed + 1``, ...
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.engine.base import TOP_LOGPROBS, Request
from localeval.engine.server.gbnf import to_gbnf

KINDS = ("vllm", "vllm-legacy", "sglang", "llamacpp", "ollama", "openai")
OPENAI_CHAT = "/v1/chat/completions"
# Neutral sampling in each family's names (the llama.cpp names are Ollama's options too).
VLLM_SAMPLING = {"top_p": 1.0, "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0}
LLAMA_SAMPLING = {"top_p": 1.0, "top_k": 0, "min_p": 0.0, "repeat_penalty": 1.0}

Step = list[tuple[str, float]]  # the top tokens (text, log-probability) at one generated position


@dataclass(frozen=True)
class Completion:
    """One generation as the server wrote it: its text, its finish reason, its tokens and, when asked, the top
    log-probabilities at each of its tokens."""

    text: str
    finish: str | None
    tokens: int
    steps: list[Step] | None = None


@dataclass(frozen=True)
class Reply:
    """A server's answer to one request: its generations, and its usage (prompt tokens None where unsaid)."""

    completions: list[Completion]
    prompt_tokens: int | None
    cached_tokens: int = 0


@dataclass(frozen=True)
class Dialect:
    """One server kind's spelling: the chat path under the server's root, and how a request and a reply read."""

    kind: str
    path: str
    spelling: str  # how the schema is sent, for messages
    many: bool  # takes n > 1 in one request
    body: Callable[[str, Request, int, int, bool, int | None], dict[str, Any]]
    parse: Callable[[Any], Reply]


def openai_body(schema_field: Callable[[dict[str, Any]], dict[str, Any]], sampling: dict[str, Any]) -> Callable[
        [str, Request, int, int, bool, int | None], dict[str, Any]]:
    """A chat-completions body builder that puts the schema where ``schema_field`` says."""

    def body(model: str, request: Request, n: int, seed: int, logprobs: bool, window: int | None) -> dict[str, Any]:
        data: dict[str, Any] = {"model": model, "messages": messages(request), "max_tokens": request.max_tokens,
                                "temperature": request.temperature, "stream": False, **sampling,
                                **schema_field(request.schema)}
        if n > 1:
            data["n"] = n
        if request.temperature > 0:
            data["seed"] = seed
        if logprobs:
            data.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
        return data

    return body


def ollama_body(model: str, request: Request, n: int, seed: int, logprobs: bool, window: int | None) -> dict[str, Any]:
    """Ollama's native chat: ``num_ctx`` always sent, so that the window the asks were fitted to is the one it uses
    (a longer prompt Ollama would cut silently)."""
    options: dict[str, Any] = {"temperature": request.temperature, "num_predict": request.max_tokens,
                               **LLAMA_SAMPLING, **({"num_ctx": window} if window else {})}
    if request.temperature > 0:
        options["seed"] = seed
    data: dict[str, Any] = {"model": model, "messages": messages(request), "format": request.schema,
                            "stream": False, "options": options}
    if logprobs:
        data.update(logprobs=True, top_logprobs=TOP_LOGPROBS)
    return data


def messages(request: Request) -> list[dict[str, str]]:
    return [{"role": role, "content": content} for role, content in request.messages]


def parse_openai(data: Any) -> Reply:
    """A chat-completions answer: ``choices``, ``usage`` (cached tokens from ``prompt_tokens_details``, or
    llama-server's ``timings.cache_n``)."""
    choices = sorted(data.get("choices") or [], key=lambda c: c.get("index", 0))
    usage = data.get("usage") or {}
    steps = [_openai_steps(c.get("logprobs")) for c in choices]
    counts = _spread(usage.get("completion_tokens"), [len(s) if s is not None else None for s in steps])
    completions = [Completion((c.get("message") or {}).get("content") or "", c.get("finish_reason"), tokens, s)
                   for c, tokens, s in zip(choices, counts, steps, strict=True)]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or (data.get("timings") or {}).get(
        "cache_n") or 0
    return Reply(completions, usage.get("prompt_tokens"), int(cached))


def parse_ollama(data: Any) -> Reply:
    """An Ollama ``/api/chat`` answer: ``message``, ``done_reason``, ``prompt_eval_count``, ``eval_count``."""
    steps = _token_steps(data.get("logprobs"))
    finish = data.get("done_reason") or ("stop" if data.get("done") else None)
    tokens = int(data.get("eval_count") or (len(steps) if steps else 0))
    text = (data.get("message") or {}).get("content") or ""
    return Reply([Completion(text, finish, tokens, steps)], data.get("prompt_eval_count"))


def _openai_steps(logprobs: Any) -> list[Step] | None:
    return _token_steps((logprobs or {}).get("content")) if isinstance(logprobs, dict) else None


def _token_steps(entries: Any) -> list[Step] | None:
    """Each position's top tokens from a list of ``{token, logprob, top_logprobs: [{token, logprob}]}``."""
    if not isinstance(entries, list):
        return None
    steps = []
    for entry in entries:
        top = entry.get("top_logprobs") or [entry]
        steps.append([(str(t.get("token", "")), float(t.get("logprob", float("-inf")))) for t in top])
    return steps


def _spread(total: Any, counted: Sequence[int | None]) -> list[int]:
    """Completion tokens per generation: counted from its log-probabilities where it has them, else the usage's
    total shared out evenly."""
    if all(c is not None for c in counted):
        return [int(c or 0) for c in counted]
    total = int(total or 0)
    n = max(1, len(counted))
    return [total // n + (1 if i < total % n else 0) for i in range(len(counted))]


@functools.lru_cache(maxsize=512)
def _grammar(schema: str) -> str | None:
    return to_gbnf(json.loads(schema))


def _llamacpp_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The compact grammar where ``gbnf`` covers the schema, else ``json_schema`` (llama-server takes one of them)."""
    grammar = _grammar(json.dumps(schema))
    return {"grammar": grammar} if grammar is not None else {"json_schema": schema}


def _json_schema(schema: dict[str, Any]) -> dict[str, Any]:
    return {"response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema,
                                                                        "strict": True}}}


DIALECTS = {
    "vllm": Dialect("vllm", OPENAI_CHAT, "structured_outputs", True,
                    openai_body(lambda s: {"structured_outputs": {"json": s}}, VLLM_SAMPLING), parse_openai),
    "vllm-legacy": Dialect("vllm-legacy", OPENAI_CHAT, "guided_json", True,
                           openai_body(lambda s: {"guided_json": s}, VLLM_SAMPLING), parse_openai),
    "sglang": Dialect("sglang", OPENAI_CHAT, "response_format json_schema", True,
                      openai_body(_json_schema, VLLM_SAMPLING), parse_openai),
    "llamacpp": Dialect("llamacpp", OPENAI_CHAT, "grammar (compact JSON; json_schema beyond it)", False,
                        openai_body(_llamacpp_schema, LLAMA_SAMPLING), parse_openai),
    "ollama": Dialect("ollama", "/api/chat", "format", False, ollama_body, parse_ollama),
    "openai": Dialect("openai", OPENAI_CHAT, "response_format json_schema", False,
                      openai_body(_json_schema, {"top_p": 1.0}), parse_openai),
}


__all__ = ["DIALECTS", "KINDS", "Completion", "Dialect", "Reply", "Step"]
