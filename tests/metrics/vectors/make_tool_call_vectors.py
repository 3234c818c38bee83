"""Conformance vectors for the model-free agent metrics: Ragas 0.4.3's own classes on fixed and seeded
conversations.

Runs only in Ragas' environment (``bash benchmarks/ragas/setup_ragas.sh``; see README-tool-calls.md):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_tool_call_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-tool-calls.jsonl

Classes: the legacy ``ragas.metrics.ToolCallAccuracy`` with its default ``ExactMatch`` and with
``NonLLMStringSimilarity(distance_measure=...)`` for each measure as ``arg_comparison_metric``, each with
``strict_order`` True and False; ``ragas.metrics.ToolCallF1``. The ``ragas.metrics.collections`` classes
(``ToolCallAccuracy``, exact arguments only, and ``ToolCallF1``) are run too and must agree. Every sample is a
``MultiTurnSample`` of ``HumanMessage``, ``AIMessage`` and ``ToolMessage`` objects (Ragas checks that a tool
message follows an AI message with tool calls). One JSON object a line: ``metric`` (localeval's name),
``params`` (localeval's option names; ``strict_order`` a JSON boolean, ``arg_comparison`` ``exact`` or the
measure), ``inputs`` (the sample in Ragas' record shape, ``MultiTurnSample.to_dict()``: ``user_input`` a list
of messages, ``reference_tool_calls``), ``expected`` (Ragas' value; ``null`` where Ragas raised or returned
NaN, which its ``evaluate()`` scores as NaN).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import typing as t
import warnings
from pathlib import Path

from make_string_vectors import score_or_nan
from ragas.dataset_schema import MultiTurnSample
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from ragas.metrics import NonLLMStringSimilarity, ToolCallAccuracy, ToolCallF1
from ragas.metrics._string import DistanceMeasure
from ragas.metrics.collections import ToolCallAccuracy as NewAccuracy
from ragas.metrics.collections import ToolCallF1 as NewF1

MEASURES = ("levenshtein", "hamming", "jaro", "jaro_winkler")
Call = tuple[str, dict[str, t.Any]]

W = ("weather", {"city": "Paris"})
S = ("search", {"query": "eiffel tower height", "limit": 5})
B = ("book", {"hotel": "Ritz", "nights": 2, "breakfast": True})
N = ("now", {})

# (made calls, one list per AI turn; reference calls): every branch of both metrics by hand.
FIXED: list[tuple[list[list[Call]], list[Call]]] = [
    ([], []),  # nothing made, nothing expected: 1.0
    ([[]], []),  # an AI turn with an empty tool_calls list
    ([], [W]),  # nothing made: 0.0
    ([[W]], []),  # nothing expected: 0.0
    ([[W]], [W]),
    ([[N]], [N]),  # both without arguments
    ([[("now", {"tz": "UTC"})]], [N]),  # the reference without arguments: 0.0
    ([[N]], [("now", {"tz": "UTC"})]),  # an argument not given
    ([[W, S]], [W, S]),
    ([[S, W]], [W, S]),  # permuted: 0 in order, 1 free
    ([[W], [S]], [W, S]),  # over two AI turns
    ([[W], [B], [S]], [S, W, B]),
    ([[("forecast", {"city": "Paris"})]], [W]),  # another name
    ([[W, W]], [W]),  # a repeat: a length mismatch
    ([[W]], [W, W]),
    ([[W]], [W, S]),  # fewer made: coverage penalty, then not aligned
    ([[W, S, B]], [W, S]),
    ([[("search", {"query": "eiffel tower height", "limit": "5"})]], [S]),  # "5" vs 5
    ([[("search", {"query": "eiffel tower height", "limit": 5.0})]], [S]),  # 5.0 vs 5
    ([[("book", {"hotel": "Ritz", "nights": 2, "breakfast": 1})]], [B]),  # 1 vs True
    ([[("book", {"hotel": "Ritz", "nights": 2, "breakfast": "True"})]], [B]),  # "True" vs True
    ([[("f", {"x": None})]], [("f", {"x": "None"})]),
    ([[("f", {"x": None})]], [("f", {"x": None})]),
    ([[("f", {"x": {"a": 1, "b": [1, 2]}})]], [("f", {"x": {"b": [1, 2], "a": 1}})]),  # key order of a dict
    ([[("f", {"x": [1, "1"]})]], [("f", {"x": [1, "1"]})]),
    ([[("f", {"x": [1, 2]})]], [("f", {"x": [2, 1]})]),
    ([[("f", {"x": [], "y": {}})]], [("f", {"x": [], "y": {}})]),
    ([[("f", {"a": 1, "b": 2})]], [("f", {"b": 2, "a": 1})]),  # argument order
    ([[("f", {"a": 1})]], [("f", {"a": 1, "b": 2})]),  # missing argument
    ([[("f", {"a": 1, "b": 2, "c": 3})]], [("f", {"a": 1, "b": 2})]),  # extra argument
    ([[("f", {"q": "Paris"})]], [("f", {"q": "paris"})]),  # case: similarity below 1
    ([[("f", {"q": "Pariss"})]], [("f", {"q": "Paris"})]),  # unequal length (Hamming pads)
    ([[("f", {"q": ""})]], [("f", {"q": ""})]),
    ([[("f", {"q": ""})]], [("f", {"q": "Paris"})]),
    ([[("f", {"q": "Zürich 東京"})]], [("f", {"q": "Zurich 東京"})]),
    ([[("f", {"n": 0.1 + 0.2})]], [("f", {"n": 0.3})]),
    ([[("f", {"n": -0.0})]], [("f", {"n": 0.0})]),
    ([[("a", {"k": 2}), ("a", {"k": 1})]], [("a", {"k": 1}), ("a", {"k": 2})]),  # same name, sorted by args
    ([[("a", {"k": 10}), ("a", {"k": 9})]], [("a", {"k": 9}), ("a", {"k": 10})]),  # "10" sorts before "9"
    ([[("b", {}), ("a", {"z": 1})]], [("a", {"z": 1}), ("b", {})]),
    ([[W, W, S]], [W, S, S]),  # same length, names differ as multisets
]

NAMES = ("search", "weather", "book", "add", "lookup")
KEYS = ("q", "city", "n", "limit", "flag", "opts", "items", "date")
STRINGS = ("Paris", "paris", "Berlin", "1", "True", "None", "3.0", "", "eiffel tower", "2024-05-01", "Zürich")


def _value(rng: random.Random, depth: int = 0) -> t.Any:
    kind = rng.randrange(9 if depth < 2 else 7)
    if kind == 0:
        return rng.choice(STRINGS)
    if kind == 1:
        return rng.choice((0, 1, 3, -2, 10, 2024))
    if kind == 2:
        return rng.choice((1.0, 3.0, 2.5, 0.1, -0.5))
    if kind == 3:
        return rng.choice((True, False))
    if kind == 4:
        return None
    if kind in (5, 6):
        return " ".join(rng.choice(("the", "tower", "hotel", "Paris", "room", "near")) for _ in range(3))
    if kind == 7:
        return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]


def _variant(rng: random.Random, value: t.Any) -> t.Any:
    """A value that equals this one only sometimes: the text of it, a near type, an edited string."""
    choice = rng.randrange(6)
    if choice == 0:
        return str(value)
    if choice == 1 and isinstance(value, bool):
        return int(value)
    if choice == 1 and isinstance(value, int):
        return float(value)
    if choice == 2 and isinstance(value, str) and value:
        i = rng.randrange(len(value))
        return value[:i] + rng.choice("xyzP ") + value[i + 1:]
    if choice == 3 and isinstance(value, dict):
        return dict(reversed(list(value.items())))
    if choice == 4 and isinstance(value, list):
        return list(reversed(value))
    return _value(rng)


def _call(rng: random.Random) -> Call:
    return rng.choice(NAMES[:3]), {k: _value(rng) for k in rng.sample(KEYS, rng.randint(0, 3))}


def _perturb(rng: random.Random, call: Call) -> Call:
    name, args = call[0], dict(call[1])
    for _ in range(rng.randint(1, 2)):
        move = rng.randrange(6)
        if move == 0:
            name = rng.choice(NAMES)
        elif move == 1 and args:
            args.pop(rng.choice(list(args)))
        elif move == 2:
            args[rng.choice(KEYS)] = _value(rng)
        elif move in (3, 4) and args:
            key = rng.choice(list(args))
            args[key] = _variant(rng, args[key])
        elif move == 5:
            args = dict(reversed(list(args.items())))
    return name, args


def random_cases(rng: random.Random, n: int) -> list[tuple[list[list[Call]], list[Call]]]:
    out = []
    for _ in range(n):
        reference = [_call(rng) for _ in range(rng.choice((0, 1, 1, 2, 2, 3, 3, 4)))]
        made = [c if rng.random() < 0.55 else _perturb(rng, c) for c in reference]
        if rng.random() < 0.4:
            rng.shuffle(made)
        if rng.random() < 0.15 and made:
            made.append(rng.choice(made))  # a repeat
        if rng.random() < 0.15:
            made.insert(rng.randint(0, len(made)), _call(rng))
        if rng.random() < 0.15 and made:
            made.pop(rng.randrange(len(made)))
        turns: list[list[Call]] = []
        while made:
            size = rng.randint(1, len(made))
            turns.append(made[:size])
            made = made[size:]
        out.append((turns, reference))
    return out


def conversation(turns: list[list[Call]], rng: random.Random) -> list[HumanMessage | AIMessage | ToolMessage]:
    """A human question, then per turn an AI message with its calls and a tool message for each call (now and
    then a human follow-up between turns), and a closing AI answer."""
    messages: list[HumanMessage | AIMessage | ToolMessage] = [HumanMessage(content="Plan my trip to Paris.")]
    for i, calls in enumerate(turns):
        if i and rng.random() < 0.3:
            messages.append(HumanMessage(content="And then?"))
        content = rng.choice(("", "Let me check.")) if calls else "Nothing to call."
        messages.append(AIMessage(content=content, tool_calls=[ToolCall(name=name, args=a) for name, a in calls]))
        messages += [ToolMessage(content=f"result {j}") for j in range(len(calls))]
    messages.append(AIMessage(content="Here is your plan."))
    return messages


async def _scores(sample: MultiTurnSample) -> list[tuple[str, dict, float | None]]:
    out: list[tuple[str, dict, float | None]] = []
    user_input, reference = sample.user_input, sample.reference_tool_calls or []
    for strict in (True, False):
        exact = await score_or_nan(ToolCallAccuracy(strict_order=strict).multi_turn_ascore(sample))
        new = await score_or_nan(NewAccuracy(strict_order=strict).ascore(user_input, reference))
        if exact != new:
            raise SystemExit(f"accuracy strict={strict}: legacy {exact} != collections {new} on {sample.to_dict()}")
        out.append(("tool_call_accuracy", {"strict_order": strict, "arg_comparison": "exact"}, exact))
        for measure in MEASURES:
            metric = ToolCallAccuracy(strict_order=strict, arg_comparison_metric=NonLLMStringSimilarity(
                distance_measure=DistanceMeasure(measure)))
            out.append(("tool_call_accuracy", {"strict_order": strict, "arg_comparison": measure},
                        await score_or_nan(metric.multi_turn_ascore(sample))))
    f1 = await score_or_nan(ToolCallF1().multi_turn_ascore(sample))
    new_f1 = await score_or_nan(NewF1().ascore(user_input, reference))
    if f1 != new_f1:
        raise SystemExit(f"f1: legacy {f1} != collections {new_f1} on {sample.to_dict()}")
    out.append(("tool_call_f1", {}, f1))
    return out


async def cases(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out: list[dict] = []
    for turns, reference in FIXED + random_cases(rng, n):
        sample = MultiTurnSample(user_input=conversation(turns, rng),
                                 reference_tool_calls=[ToolCall(name=name, args=a) for name, a in reference])
        record = sample.to_dict()
        for metric, params, value in await _scores(sample):
            out.append({"metric": metric, "params": params, "inputs": record, "expected": value})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "ragas-0.4.3-tool-calls.jsonl")
    parser.add_argument("--seed", type=int, default=46)
    parser.add_argument("--random", type=int, default=120, help="how many random conversations")
    args = parser.parse_args()
    os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # read when Ragas would send its usage events
    warnings.simplefilter("ignore")  # Ragas warns of every length mismatch and empty list
    rows = asyncio.run(cases(args.seed, args.random))
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"wrote {len(rows)} cases to {args.out}")


if __name__ == "__main__":
    main()
