"""The model-free agent metrics: Ragas 0.4.3's tool call accuracy and tool call F1 reproduced
(``vectors/ragas-0.4.3-tool-calls.jsonl``, made by ``vectors/make_tool_call_vectors.py``), hand-worked cases,
their traces and options."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.data import DataError
from localeval.data.load import samples_from_records
from localeval.data.messages import ToolCall
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.metrics.registry import METRICS
from localeval.metrics.tool_calls import accuracy, argument_score, f1, order_key
from localeval.nan import Nan
from localeval.scheduler import Scheduler

VECTORS = Path(__file__).parent / "vectors" / "ragas-0.4.3-tool-calls.jsonl"
CASES = [json.loads(line) for line in VECTORS.read_text(encoding="utf-8").splitlines() if line.strip()]


def _word(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _spec_text(case: dict[str, Any]) -> str:
    return ":".join([case["metric"], *(f"{k}={_word(v)}" for k, v in case["params"].items())])


def _never_asked(name: str, inputs: dict[str, Any], request: Any) -> Any:
    raise AssertionError(f"a model-free metric asked the judge ({name})")


def _run(spec_text: str, records: list[dict[str, Any]]) -> tuple[list[Any], list[dict[str, Any]]]:
    """Records (Ragas' shape) loaded by localeval and scored by the scheduler; the judge is never asked."""
    [spec] = parse_metrics([spec_text])
    engine = ScriptedEngine(_never_asked)
    samples = samples_from_records(records)
    out = Scheduler(engine, None, progress=False).run(samples, [spec])
    assert engine.calls == [] and out.engine_calls == 0 and out.embed_calls == 0
    return out.outcomes[spec.name], out.traces[spec.name]


@pytest.fixture(scope="module")
def replayed() -> dict[int, tuple[Any, dict[str, Any]]]:
    """Every vector case's outcome and trace, one scheduler run per metric spec."""
    by_spec: dict[str, list[int]] = defaultdict(list)
    for i, case in enumerate(CASES):
        by_spec[_spec_text(case)].append(i)
    results = {}
    for spec_text, indices in by_spec.items():
        outcomes, traces = _run(spec_text, [CASES[i]["inputs"] for i in indices])
        results.update({i: (o, tr) for i, o, tr in zip(indices, outcomes, traces, strict=True)})
    return results


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas(index: int, replayed: dict[int, tuple[Any, dict[str, Any]]]) -> None:
    value, trace = replayed[index]
    expected = CASES[index]["expected"]
    if expected is None:
        assert isinstance(value, Nan), f"Ragas gave NaN, localeval {value}"
    else:
        assert isinstance(value, float), f"Ragas gave {expected}, localeval {value}"
        assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-9), (value, expected)
    json.dumps(trace, allow_nan=False)  # run folders write traces as JSON


def test_vectors_cover_every_option_and_edge() -> None:
    seen = {(c["metric"], _spec_text(c)) for c in CASES}
    strict = {f"tool_call_accuracy:strict_order={s}:arg_comparison={a}" for s in ("true", "false")
              for a in METRICS["tool_call_accuracy"].choices["arg_comparison"]}
    assert {s for _, s in seen} == strict | {"tool_call_f1"}
    inputs = [c["inputs"] for c in CASES if c["metric"] == "tool_call_f1"]
    made = [[call for m in i["user_input"] if m.get("tool_calls") for call in m["tool_calls"]] for i in inputs]
    turns = [sum(1 for m in i["user_input"] if m.get("tool_calls")) for i in inputs]
    refs = [i["reference_tool_calls"] for i in inputs]
    assert any(not m and not r for m, r in zip(made, refs, strict=True))
    assert any(not m and r for m, r in zip(made, refs, strict=True))
    assert any(m and not r for m, r in zip(made, refs, strict=True))
    assert any(len(m) > len(r) > 0 for m, r in zip(made, refs, strict=True))
    assert any(0 < len(m) < len(r) for m, r in zip(made, refs, strict=True))
    assert max(turns) >= 3 and len(inputs) >= 150
    values = {c["expected"] for c in CASES}
    assert {0.0, 1.0} <= values and len(values) > 50


def test_accuracy_by_hand() -> None:
    weather = ToolCall("weather", {"city": "Paris", "days": 3})
    search = ToolCall("search", {"q": "tower"})
    # in order, names line up; weather: city equal (1), days "3" == str(3) (1) -> 2/2; search 1/1;
    # (1 + 1) / 2 reference calls = 1.0
    assert accuracy([ToolCall("weather", {"city": "Paris", "days": "3"}), search], [weather, search])[0] == 1.0
    # swapped: names ["search", "weather"] != ["weather", "search"] -> 0; free order sorts both the same -> 1.0
    assert accuracy([search, weather], [weather, search])[0] == 0.0
    assert accuracy([search, weather], [weather, search], strict_order=False)[0] == 1.0
    # one argument missing, one differing: city "Paris" vs "paris" 0, days absent 0, units equal 1 -> 1/3
    made = ToolCall("weather", {"city": "paris", "units": "C"})
    ref = ToolCall("weather", {"city": "Paris", "days": 3, "units": "C"})
    assert accuracy([made], [ref])[0] == pytest.approx(1 / 3)
    # Levenshtein: "paris" vs "Paris" one edit in five -> 0.8; (0.8 + 0 + 1) / 3 = 0.6
    assert accuracy([made], [ref], comparison="levenshtein")[0] == pytest.approx(0.6)
    # fewer calls made than expected: names [w] vs [w, s] never line up -> 0 (the coverage penalty is moot)
    assert accuracy([weather], [weather, search])[0] == 0.0
    # both empty 1.0; either side empty 0.0
    assert accuracy([], [])[0] == 1.0 and accuracy([weather], [])[0] == 0.0 and accuracy([], [weather])[0] == 0.0
    # an extra argument costs nothing: only the reference's arguments are counted
    assert argument_score({"city": "Paris", "extra": 1}, {"city": "Paris"}) == 1.0
    # no arguments on either side 1.0; arguments given where the reference has none 0.0
    assert argument_score({}, {}) == 1.0 and argument_score({"a": 1}, {}) == 0.0
    # Python's str: True -> "True", None -> "None", 1.0 -> "1.0" (not "1"), a dict as its repr, key order counts
    assert argument_score({"a": "True", "b": "None", "c": 1}, {"a": True, "b": None, "c": 1.0}) == pytest.approx(2 / 3)
    assert argument_score({"x": {"b": 1, "a": 2}}, {"x": {"a": 2, "b": 1}}) == 0.0


def test_free_order_sorts_argument_values_as_text() -> None:
    # "10" sorts before "9": made [k=10, k=9] and reference [k=9, k=10] both become [k=10, k=9]
    assert order_key(ToolCall("a", {"k": 10, "b": None})) == ("a", "b", "None", "k", "10")
    ten, nine = ToolCall("a", {"k": 10}), ToolCall("a", {"k": 9})
    score, trace = accuracy([nine, ten], [ten, nine], strict_order=False)
    assert score == 1.0 and [c["args"]["k"] for c in trace["made"]] == [10, 9]


def test_f1_by_hand() -> None:
    w, s, b = ToolCall("weather", {"city": "Paris"}), ToolCall("search", {"q": "x"}), ToolCall("book", {})
    # made {w, s, b}, expected {w, s}: precision 2/3, recall 1; F1 = 2 * (2/3) / (5/3) = 0.8
    assert f1([w, s, b], [w, s])[0] == 0.8
    # made {w}, expected {w, s, b}: precision 1, recall 1/3; F1 = (2/3) / (4/3) = 0.5
    assert f1([w], [w, s, b])[0] == 0.5
    # a repeat counts once: made {w} = expected {w} -> 1.0
    assert f1([w, w], [w])[0] == 1.0
    # precision 1/2, recall 1/3: F1 = 2 * (1/6) / (5/6) = 0.4
    assert f1([w, ToolCall("x", {})], [w, s, b])[0] == 0.4
    # precision 1, recall 1/6: F1 = 2 * (1/6) / (7/6) = 2/7 = 0.285714..., rounded to 4 places
    assert f1([w], [w, s, b, ToolCall("c", {}), ToolCall("d", {}), ToolCall("e", {})])[0] == 0.2857
    # values by type, as Python's sets: "1" is not 1, but 1, 1.0 and True are one value; dict key order is free
    assert f1([ToolCall("f", {"n": "1"})], [ToolCall("f", {"n": 1})])[0] == 0.0
    assert f1([ToolCall("f", {"n": True})], [ToolCall("f", {"n": 1.0})])[0] == 1.0
    assert f1([ToolCall("f", {"o": {"a": [1], "b": 2}})], [ToolCall("f", {"o": {"b": 2, "a": [1]}})])[0] == 1.0
    # nothing made and nothing expected: 0.0 (unlike accuracy's 1.0)
    assert f1([], [])[0] == 0.0


def _records(made: list[list[dict[str, Any]]], reference: list[dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"type": "human", "content": "Trip to Paris?"}]
    for calls in made:
        messages.append({"type": "ai", "content": "", "tool_calls": calls})
        messages += [{"type": "tool", "content": "done"} for _ in calls]
    messages.append({"type": "ai", "content": "Booked."})
    return {"user_input": messages, "reference_tool_calls": reference}


W = {"name": "weather", "args": {"city": "Paris", "when": {"day": 1}}}
S = {"name": "search", "args": {"q": "hotel", "flag": True}}


def test_accuracy_trace_keys() -> None:
    [value], [trace] = _run("tool_call_accuracy:strict_order=false", [_records([[S], [W]], [W, dict(S, args={})])])
    assert set(trace) == {"made", "reference", "aligned", "reference_scores", "made_matched"}
    # free order: both sorted by name first, so search comes before weather on both sides
    assert trace["made"] == [S, W] and trace["reference"] == [dict(S, args={}), W]
    assert trace["aligned"] is True and trace["made_matched"] == [True, True]
    # search: the reference has no arguments but the call has some -> 0.0; weather 1.0; (0 + 1) / 2
    assert trace["reference_scores"] == [0.0, 1.0] and value == 0.5
    [value], [trace] = _run("tool_call_accuracy", [_records([[S, S]], [W])])
    assert value == 0.0 and trace["aligned"] is False
    assert trace["reference_scores"] == [0.0] and trace["made_matched"] == [False, False]


def test_f1_trace_keys() -> None:
    [value], [trace] = _run("tool_call_f1", [_records([[W, S], [W]], [S, dict(W, name="forecast")])])
    assert set(trace) == {"made", "reference", "made_matched", "reference_matched"}
    assert trace["made"] == [W, S, W] and trace["made_matched"] == [False, True, False]
    assert trace["reference_matched"] == [True, False]
    assert value == 0.5  # made {W, S}, expected {S, forecast}: precision 1/2, recall 1/2


def test_definitions() -> None:
    for name in ("tool_call_accuracy", "tool_call_f1"):
        d = METRICS[name]
        assert d.required == ("conversation", "reference_tool_calls") and not d.judge and not d.embedder
        assert d.trace == "tool_calls" and d.role is None and d.summary
    assert parse_metric("tool_call_accuracy").options == {"strict_order": "true", "arg_comparison": "exact"}
    spec = parse_metric("tool_call_accuracy:arg_comparison=jaro_winkler:strict_order=false")
    assert spec.name == "tool_call_accuracy(strict_order=false,arg_comparison=jaro_winkler)"
    assert parse_metric(spec.canonical()) == spec


@pytest.mark.parametrize("spec, words", [
    ("tool_call_accuracy:arg_comparison=fuzzy", ["arg_comparison", "exact | levenshtein | hamming | jaro"]),
    ("tool_call_accuracy:arg_comparison=jaro_winkle", ["jaro_winkler"]),
    ("tool_call_accuracy:strict_order=yes", ["strict_order", "true | false"]),
    ("tool_call_accuracy:order=free", ["unknown option", "strict_order"]),
    ("tool_call_f1:strict_order=false", ["tool_call_f1 takes no options"]),
])
def test_option_errors_say_what_the_option_takes(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as caught:
        parse_metric(spec)
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_evaluate_scores_conversations_and_names_a_row_without_reference_calls() -> None:
    rows = [dict(_records([[W]], [W]), id="a"), dict(_records([], []), id="b")]
    result = localeval.evaluate(rows, metrics="tool_call_accuracy,tool_call_f1", progress=False, report=False)
    values = [{name: m["value"] for name, m in row["metrics"].items()} for row in result.rows()]
    assert values == [{"tool_call_accuracy": 1.0, "tool_call_f1": 1.0},
                      {"tool_call_accuracy": 1.0, "tool_call_f1": 0.0}]
    missing = {k: v for k, v in _records([[W]], [W]).items() if k != "reference_tool_calls"}
    with pytest.raises(DataError) as caught:
        localeval.evaluate([missing], metrics="tool_call_f1", progress=False, report=False)
    [problem] = caught.value.problems
    assert problem.field == "reference_tool_calls" and "tool_call_f1" in problem.message
