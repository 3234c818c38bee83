"""A judge that answers from a script: for tests and examples, no model involved."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from localeval.engine.base import Choice, Engine, Invariance, Request, Result

# A script gets the prompt's name, the ask's input (as a dict) and the request, and returns the
# answer as a JSON-able dict, a list of n such dicts when the request asks for n > 1, or a Choice
# (to script a cut-off answer, or known p(1) at the verdicts: ``soft_choice``). It may raise to
# script an engine failure. A Choice's p(1) reach the caller only when the request is soft.
Script = Callable[[str, dict[str, Any], Request], Any]


class ScriptedEngine(Engine):
    """Answers every request with ``script`` and records every call it receives.

    A prompt's tokens are its words. ``context_window`` (default: none) makes asks whose words plus
    answer budget exceed it come back ``context_too_long`` without reaching the script.
    """

    invariance = Invariance(True, "answers come from a script")

    def __init__(self, script: Script, fingerprint: str = "scripted", context_window: int | None = None) -> None:
        self.script = script
        self._fingerprint = fingerprint
        self.context_window = context_window
        self.calls: list[list[Request]] = []

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def requests(self) -> list[Request]:
        """Every request received, over all calls."""
        return [r for call in self.calls for r in call]

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt's words, over all its messages."""
        return sum(len(content.split()) for _, content in request.messages)

    def generate(
        self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
    ) -> list[Result]:
        self.calls.append(list(requests))
        results = []
        for i, request in enumerate(requests):
            result = self._answer(request)
            if on_result is not None:
                on_result(i, result)
            results.append(result)
        return results

    def _answer(self, request: Request) -> Result:
        prompt_tokens = self.count_prompt_tokens(request)
        if self.context_window is not None and prompt_tokens + request.max_tokens > self.context_window:
            return Result([Choice("", 0, "context_too_long")], prompt_tokens=prompt_tokens)
        data = json.loads(request.messages[-1][1])
        answer = self.script(request.label, data, request)
        answers = answer if isinstance(answer, list) else [answer]
        if len(answers) != request.n:
            raise ValueError(f"script gave {len(answers)} answers for n={request.n} ({request.label})")
        choices = [a if isinstance(a, Choice) else _choice(a) for a in answers]
        if not request.soft:
            choices = [replace(c, verdict_probs=None) for c in choices]
        return Result(choices=choices, prompt_tokens=prompt_tokens)


def _choice(answer: dict[str, Any]) -> Choice:
    text = json.dumps(answer)
    return Choice(text=text, completion_tokens=len(text.split()), finish_reason="stop")


def soft_choice(answer: dict[str, Any], verdict_probs: Sequence[float]) -> Choice:
    """A scripted answer with known p(1) at its 0/1 verdicts, in the order they appear in ``answer``."""
    return replace(_choice(answer), verdict_probs=tuple(float(p) for p in verdict_probs))


def _sentences(text: str) -> list[str]:
    parts = [p.strip() for p in text.replace("\n", " ").split(". ")]
    return [p if p.endswith(".") else p + "." for p in parts if p.strip(" .")]


def _words(text: str) -> set[str]:
    return {w.strip(".,;:!?\"'()").lower() for w in text.split() if len(w) > 3}


def _supported(statement: str, context: str) -> int:
    words = _words(statement)
    return int(bool(words) and len(words & _words(context)) / len(words) >= 0.6)


def rule_script(label: str, data: dict[str, Any], request: Request) -> Any:
    """A deterministic stand-in judge built from word overlap: sentences are statements, a statement
    is supported when most of its words occur in the context. For tests and demos, not for scores.
    Asks for n > 1 answers (sampled questions, votes) get the same answer n times."""
    answer = _rule(label, data)
    return [answer] * request.n if request.n > 1 else answer


def _rule(label: str, data: dict[str, Any]) -> Any:
    if label == "statements":
        return {"statements": _sentences(data["answer"])}
    if label.startswith("claims"):
        return {"claims": _sentences(data["response"])}
    if label == "nli":
        return {"verdicts": [{"reason": "word overlap", "verdict": _supported(s, data["context"])}
                             for s in data["statements"]]}
    if label == "context_usefulness":
        return {"reason": "word overlap", "verdict": _supported(data["answer"], data["context"])}
    if label == "attribution":
        return {"classifications": [{"statement": s, "reason": "word overlap",
                                     "attributed": _supported(s, data["context"])}
                                    for s in _sentences(data["answer"])]}
    if label == "context_relevance":
        return {"reason": "word overlap", "verdict": _supported(data["question"], data["excerpt"])}
    if label == "entities":
        return {"entities": sorted({w for w in data["text"].split() if w[:1].isupper() or w[:1].isdigit()})}
    if label == "question":
        evasive = int(any(p in data["response"].lower() for p in ("don't know", "not sure", "cannot")))
        question = "What is " + " ".join(sorted(_words(data["response"]))[:6]) + "?"
        return {"question": question, "noncommittal": evasive}
    raise ValueError(f"rule_script has no rule for prompt {label!r}")
