"""The model-free agent metrics that compare the tool calls of a conversation's AI turns with the reference
tool calls: tool call accuracy (pairs by position, arguments compared as text) and tool call F1 (the calls as
sets). Ragas 0.4.3's arithmetic (``ToolCallAccuracy`` and ``ToolCallF1``), checked against Ragas' own
classes by ``tests/metrics/vectors/ragas-0.4.3-tool-calls.jsonl``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from localeval.data.messages import ToolCall, tool_calls_made
from localeval.data.sample import Sample
from localeval.metrics.strings import MEASURES, similarity
from localeval.nan import Nan
from localeval.steps import Outcome, no_asks

ARG_COMPARISONS = ("exact", *MEASURES)


def argument_score(made: Mapping[str, Any], reference: Mapping[str, Any], comparison: str = "exact") -> float:
    """How well a call's arguments match the reference call's: the mean, over the reference's arguments, of
    the comparison of the two values written as Python's ``str`` writes them (0 for an argument not given).
    Both without arguments: 1.0; the reference without and the call with some: 0.0.

    >>> argument_score({"city": "Paris", "days": 3}, {"city": "Paris", "days": "3", "units": "C"})
    0.6666666666666666
    """
    if not reference and not made:
        return 1.0
    if not reference:
        return 0.0
    total = 0.0
    for name in reference:
        if name in made:
            total += _compare(str(reference[name]), str(made[name]), comparison)
    return total / len(reference)


def _compare(reference: str, made: str, comparison: str) -> float:
    if comparison == "exact":
        return float(reference == made)
    return similarity(reference, made, comparison)


def order_key(call: ToolCall) -> tuple[str, ...]:
    """The order calls are compared in when order is free: by name, then each argument's name and value as
    text, arguments taken by name (so two calls with the same arguments sort together whatever their order)."""
    key = [call.name]
    for name in sorted(call.args):
        key += [name, str(call.args[name])]
    return tuple(key)


def accuracy(made: Sequence[ToolCall], reference: Sequence[ToolCall], strict_order: bool = True,
             comparison: str = "exact") -> tuple[float, dict[str, Any]]:
    """Ragas' tool call accuracy and its trace.

    Both lists empty: 1.0; either one empty: 0.0. Otherwise (calls sorted by ``order_key`` first when order is
    free) the names must line up (equal sequences, or equal once sorted) or the score is 0; the calls are
    paired by position, a pair of the same name scores its ``argument_score``, and the sum is divided by the
    number of reference calls, times the share of reference calls paired when fewer calls were made.
    """
    if not strict_order:
        made, reference = sorted(made, key=order_key), sorted(reference, key=order_key)
    made_names, reference_names = [c.name for c in made], [c.name for c in reference]
    aligned = made_names == reference_names if strict_order else sorted(made_names) == sorted(reference_names)
    scores = [0.0] * len(reference)
    for i, (ref, call) in enumerate(zip(reference, made, strict=False)):
        if ref.name == call.name:
            scores[i] = argument_score(call.args, ref.args, comparison)
    trace = {"made": _records(made), "reference": _records(reference), "aligned": aligned,
             "reference_scores": scores, "made_matched": [i < len(reference) and made[i].name == reference[i].name
                                                          for i in range(len(made))]}
    if not made and not reference:
        trace["aligned"] = True
        return 1.0, trace
    if not made or not reference:
        return 0.0, trace
    total = 0.0
    for value in scores:
        total += value
    total /= len(reference)
    paired = min(len(made), len(reference))
    if paired < len(reference):
        total *= paired / len(reference)
    return total * int(aligned), trace


def hashable(value: Any) -> Any:
    """A value as a set member: objects as frozen sets of (key, value) pairs, lists as tuples, all the way down
    (so ``1``, ``1.0`` and ``True`` are one value, as in Python, and ``"1"`` another)."""
    if isinstance(value, Mapping):
        return frozenset((k, hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(hashable(v) for v in value)
    return value


def f1(made: Sequence[ToolCall], reference: Sequence[ToolCall]) -> tuple[float, dict[str, Any]]:
    """Ragas' tool call F1: the calls made and the reference calls as sets of (name, arguments), repeats counted
    once; precision, recall and their harmonic mean (0.0 when nothing matches or both are empty), rounded to
    four places."""
    made_keys = [(c.name, hashable(c.args)) for c in made]
    reference_keys = [(c.name, hashable(c.args)) for c in reference]
    actual, expected = set(made_keys), set(reference_keys)
    hits, extra, missed = len(actual & expected), len(actual - expected), len(expected - actual)
    precision = hits / (hits + extra) if hits + extra > 0 else 0.0
    recall = hits / (hits + missed) if hits + missed > 0 else 0.0
    score = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    trace = {"made": _records(made), "reference": _records(reference),
             "made_matched": [k in expected for k in made_keys],
             "reference_matched": [k in actual for k in reference_keys]}
    return round(score, 4), trace


def _records(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"name": c.name, "args": dict(c.args)} for c in calls]


def _calls(sample: Sample) -> tuple[list[ToolCall], tuple[ToolCall, ...]] | None:
    if sample.conversation is None or sample.reference_tool_calls is None:
        return None
    return tool_calls_made(sample.conversation), sample.reference_tool_calls


@no_asks
def tool_call_accuracy(sample: Sample, trace: dict, strict_order: str = "true", arg_comparison: str = "exact"
                       ) -> Outcome:
    """The tool calls of the AI turns against the reference calls, pair by pair: 0 unless the names line up
    (in order with `strict_order` true, as multisets with it false), else the mean argument score over the
    reference calls; arguments compared as text, `exact`ly or by a string similarity (`levenshtein`,
    `hamming`, `jaro`, `jaro_winkler`). No calls made and none expected: 1.0."""
    calls = _calls(sample)
    if calls is None:
        return Nan("missing_field")
    score, shown = accuracy(*calls, strict_order == "true", arg_comparison)
    trace.update(shown)
    return score


@no_asks
def tool_call_f1(sample: Sample, trace: dict) -> Outcome:
    """F1 of the tool calls made against the reference calls, each a (name, arguments) pair that must match
    exactly (values by type: "1" is not 1), repeats counted once; rounded to 4 places."""
    calls = _calls(sample)
    if calls is None:
        return Nan("missing_field")
    score, shown = f1(*calls)
    trace.update(shown)
    return score
