"""Proof, before a run, that a judge server enforces the schema it is sent, and that it can give soft verdicts.

The probe asks for a greeting under a schema no model follows by chance: an object with one key of random letters
whose only allowed value is another random word, and a 0/1 verdict. A server that decodes under the schema can
only answer that object; one that accepts the schema and ignores it (vLLM's removed ``guided_json``, a field a
server does not know) answers a greeting, and the run stops there, naming the URL and the fix: localeval never
runs a judge unconstrained. The answer's blanks say whether the server's grammar lets free whitespace in.

``--soft`` asks the same with log-probabilities: they must be taken after the grammar's mask, so that at the
verdict every token with mass starts with 0 or 1 (``engine.soft.p1_from_logprobs`` finds one binary decision).
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from localeval.engine.base import Request, Result
from localeval.errors import LocalevalError

PROBE_TOKENS = 48
FIXES = {
    "vllm": "upgrade the server to vLLM 0.10.2 or later (it takes structured_outputs), or name the spelling it does "
            "enforce: --server-kind vllm-legacy (guided_json) or --server-kind openai (response_format)",
    "vllm-legacy": "this vLLM ignores guided_json (vLLM 0.12 removed it and accepts it silently): use "
                   "--server-kind vllm, which sends structured_outputs",
    "openai": "name the server's kind (--server-kind vllm, sglang, llamacpp or ollama) so that the schema goes "
              "the way it enforces, or use a server that enforces response_format json_schema",
}
FIX_OTHER = "upgrade the server to a version that enforces it, or name its kind with --server-kind"
COMPACT_FIX = ("vLLM: start it with --structured-outputs-config.backend xgrammar "
               "--structured-outputs-config.disable_any_whitespace true")


def probe_request(rng: Callable[[int], str] | None = None) -> tuple[Request, dict[str, str]]:
    """The probe ask and the part of the answer its schema forces (its random key and value)."""
    word = rng or _letters
    key, value = "k" + word(7), "v" + word(7)
    schema = {"type": "object",
              "properties": {key: {"type": "string", "enum": [value]}, "verdict": {"type": "integer", "enum": [0, 1]}},
              "required": [key, "verdict"], "additionalProperties": False}
    messages = (("system", "You are a friendly assistant."), ("user", "Say hello to me in a few words."))
    return Request(messages=messages, schema=schema, max_tokens=PROBE_TOKENS, label="probe"), {key: value}


def prove_enforced(ask: Callable[[Request], Result], url: str, kind: str, spelling: str) -> bool:
    """Stop (LocalevalError) unless the server answers the probe under its schema; whether its JSON is compact."""
    request, forced = probe_request()
    result = ask(request)
    choice = result.choices[0] if result.choices else None
    if choice is None:
        raise LocalevalError(f"the judge server at {url} could not answer the schema probe: {result.error}")
    answer = _parsed(choice.text)
    if not _follows(answer, forced):
        (key, value), = forced.items()
        raise LocalevalError(
            f"the judge server at {url} ({kind}) accepts a JSON schema sent as {spelling} but does not enforce it: "
            f"asked for an object whose key {key!r} must be {value!r}, it answered {choice.text[:160]!r}. "
            f"localeval never asks a judge unconstrained. Fix: {FIXES.get(kind, FIX_OTHER)}")
    return choice.text == json.dumps(answer, separators=(",", ":"), ensure_ascii=False)


def soft_problem(ask: Callable[[Request], Result], url: str) -> str | None:
    """Why ``--soft`` cannot work with the server at ``url``; None where it can."""
    request, _ = probe_request()
    result = ask(replace(request, soft=True))
    choice = result.choices[0] if result.choices else None
    if choice is not None and choice.verdict_probs is not None and len(choice.verdict_probs) == 1:
        return None
    said = "returns no log-probabilities" if choice is None or choice.verdict_probs is None else (
        "returns log-probabilities taken before its grammar's mask, or with blanks allowed around the verdict")
    return (f"--soft needs the judge server's log-probabilities at each 0/1 verdict, over the tokens its grammar "
            f"allows there; the server at {url} {said}. Run without --soft, or use a vLLM server started with "
            f"compact JSON ({COMPACT_FIX})")


def _follows(answer: Any, forced: dict[str, str]) -> bool:
    if not isinstance(answer, dict) or set(answer) != {*forced, "verdict"}:
        return False
    return all(answer[k] == v for k, v in forced.items()) and answer["verdict"] in (0, 1)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _letters(n: int) -> str:
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(n))


__all__ = ["COMPACT_FIX", "probe_request", "prove_enforced", "soft_problem"]
