"""The judged agent metrics: Ragas 0.4.3's vectors replayed, shared and batched asks, schemas, options, traces."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from localeval.data.messages import Message, ToolCall, read_conversation
from localeval.data.sample import Sample
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics import parse_metric, parse_metrics
from localeval.metrics.agents import adherence_score
from localeval.nan import Nan
from localeval.prompts.agents import (
    OUTCOME,
    REFUSED,
    TOPIC_MATCH,
    TOPICS,
    ConversationInput,
    TopicMatches,
    TopicMatchInput,
    vote_matches,
)
from localeval.prompts.base import DEFAULT_SETTINGS, Settings
from localeval.scheduler import Scheduler

AGENTS = Path(__file__).parent / "vectors" / "ragas-0.4.3-agents.jsonl"
CASES = [json.loads(line) for line in AGENTS.read_text().splitlines() if line.strip()]


def _conversation(records: list[dict[str, Any]]) -> Any:
    problems: list[str] = []
    messages = read_conversation(records, problems.append)
    assert messages is not None, problems
    return messages


def _replay(case: dict[str, Any]) -> tuple[Any, ScriptedEngine]:
    """The case through parse_metric, the scheduler and a scripted judge that answers what Ragas' judge did."""
    x = case["inputs"]
    by_topic = {t: (r, o) for t, r, o in zip(x.get("topics", []), x.get("refused", []), x.get("on_topic", []),
                                              strict=True)}

    def script(label: str, data: dict, request: Any) -> Any:
        if x["transcript"] is not None and "conversation" in data:
            assert data["conversation"] == x["transcript"]  # the judge reads Ragas' transcript, to the character
        if label == "agent_goal":
            return {"user_goal": x["user_goal"], "end_state": x["end_state"]}
        if label == "agent_outcome":
            desired = x["reference"] if "reference" in x else x["user_goal"]
            assert data == {"desired": desired, "arrived": x["end_state"]}
            return {"reason": "", "verdict": x["verdict"]}
        if label == "topics":
            return {"topics": x["topics"]}
        if label == "topic_refused":
            return {"reason": "", "refused": by_topic[data["topic"]][0]}
        assert label == "topic_match" and data["reference_topics"] == x["reference_topics"]
        return {"on_topic": [bool(by_topic[t][1]) for t in data["topics"]]}

    sample = Sample(id="case", conversation=_conversation(x["conversation"]), reference=x.get("reference"),
                    reference_topics=tuple(x.get("reference_topics", ())))
    spec = parse_metric(":".join([case["metric"], *(f"{k}={v}" for k, v in case["params"].items())]))
    engine = ScriptedEngine(script)
    out = Scheduler(engine, None, progress=False).run([sample], [spec])
    return out.outcomes[spec.name][0], engine


@pytest.mark.parametrize("case", CASES, ids=[f"{c['metric']}-{i}" for i, c in enumerate(CASES)])
def test_reproduces_ragas_agents(case: dict[str, Any]) -> None:
    value, engine = _replay(case)
    if case["expected"] is None:
        assert isinstance(value, Nan), f"expected NaN, got {value}"
        return
    assert isinstance(value, float), f"expected {case['expected']}, got {value}"
    assert math.isclose(value, case["expected"], rel_tol=0, abs_tol=1e-12), (value, case["expected"])
    if case["metric"] == "topic_adherence":  # the refusals and the classification go out in one round
        assert [sorted({r.label for r in call}) for call in engine.calls] == [["topics"],
                                                                              ["topic_match", "topic_refused"]]


def test_vectors_cover_the_edge_cases() -> None:
    topic = [c for c in CASES if c["metric"] == "topic_adherence"]
    assert {c["params"]["mode"] for c in topic} == {"f1", "precision", "recall"}
    assert len(CASES) >= 300
    scored = [c["inputs"] for c in topic if c["inputs"]["topics"] and c["inputs"]["reference_topics"]]
    assert any(not x["topics"] for x in (c["inputs"] for c in topic))  # no topic extracted: NaN
    assert any(all(x["refused"]) for x in scored) and any(not any(x["on_topic"]) for x in scored)
    assert any(len(set(x["topics"])) < len(x["topics"]) for x in scored)  # a topic listed twice
    assert any(c["inputs"].get("reference") == "" and c["expected"] is None for c in CASES)


CONVERSATION = (
    Message("human", "Book me a table for two at an Italian place tonight, and what's the capital of Peru?"),
    Message("ai", "", (ToolCall("book_table", {"cuisine": "italian", "people": 2}),)),
    Message("tool", "Booked: Da Marco, 20:00"),
    Message("ai", "Done: Da Marco at 20:00. I can only help with restaurants, sorry."),
)
SAMPLE = Sample(id="s", conversation=CONVERSATION, reference="A table for two is booked at an Italian restaurant.",
                reference_topics=("restaurants",))


def _script(label: str, data: dict[str, Any], request: Any) -> Any:
    if label == "agent_goal":
        return {"user_goal": "Book an Italian table for two tonight.", "end_state": "Booked at Da Marco, 20:00."}
    if label == "agent_outcome":
        return {"reason": "met", "verdict": 1}
    if label == "topics":
        return {"topics": ["restaurant booking", "capital of Peru", "restaurant booking"]}
    if label == "topic_refused":
        return {"reason": "", "refused": int("Peru" in data["topic"])}
    return {"on_topic": ["restaurant" in t for t in data["topics"]]}


def _run(metrics: str, sample: Sample = SAMPLE, script: Any = _script) -> tuple[dict, ScriptedEngine]:
    engine = ScriptedEngine(script)
    out = Scheduler(engine, None, progress=False).run([sample], parse_metrics(metrics))
    return {k: (v[0], out.traces[k][0]) for k, v in out.outcomes.items()}, engine


def test_both_goal_metrics_share_the_goal_ask_and_keep_the_trace_keys() -> None:
    scores, engine = _run("agent_goal_accuracy,agent_goal_accuracy_without_reference")
    assert set(scores) == {"agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference"}
    assert [r.label for r in engine.requests].count("agent_goal") == 1
    assert [r.label for r in engine.requests].count("agent_outcome") == 2  # the reference, then the inferred goal
    goal = engine.requests[0].messages[-1][1]
    assert "Human: Book me" in goal and "book_table: {'cuisine': 'italian', 'people': 2}" in goal
    for name, desired in (("agent_goal_accuracy_with_reference", SAMPLE.reference),
                          ("agent_goal_accuracy_without_reference", "Book an Italian table for two tonight.")):
        value, trace = scores[name]
        assert value == 1.0
        assert trace == {"user_goal": "Book an Italian table for two tonight.",
                         "end_state": "Booked at Da Marco, 20:00.", "desired": desired, "verdict": 1, "reason": "met"}
        json.dumps(trace)


def test_topic_adherence_asks_in_two_rounds_and_keeps_the_trace_keys() -> None:
    scores, engine = _run("topic_adherence,topic_adherence:mode=precision,topic_adherence:mode=recall")
    assert len(engine.calls) == 2
    assert [r.label for r in engine.calls[0]] == ["topics"]
    second = sorted(r.label for r in engine.calls[1])
    assert second == ["topic_match", "topic_refused", "topic_refused"]  # the repeated topic asked once
    match = next(r for r in engine.calls[1] if r.label == "topic_match")
    assert match.schema["properties"]["on_topic"]["minItems"] == match.schema["properties"]["on_topic"]["maxItems"] == 2
    value, trace = scores["topic_adherence"]
    assert trace == {"topics": ["restaurant booking", "capital of Peru", "restaurant booking"],
                     "answered": [True, False, True], "on_topic": [True, False, True],
                     "reference_topics": ["restaurants"]}
    json.dumps(trace)
    assert value == pytest.approx(1.0) and value < 1.0  # Ragas' eps
    assert scores["topic_adherence(mode=precision)"][0] == 2 / (2 + 0 + 1e-10)
    assert scores["topic_adherence(mode=recall)"][0] == 2 / (2 + 0 + 1e-10)


def test_no_topic_is_nan_no_topics_and_asks_nothing_more() -> None:
    scores, engine = _run("topic_adherence", script=lambda label, data, request: {"topics": []})
    value, trace = scores["topic_adherence"]
    assert value == Nan("no_topics") and len(engine.calls) == 1
    assert trace == {"topics": [], "answered": [], "on_topic": [], "reference_topics": ["restaurants"]}


def test_an_empty_reference_is_missing_without_an_ask() -> None:
    empty = Sample(id="s", conversation=CONVERSATION, reference="", reference_topics=())
    scores, engine = _run("agent_goal_accuracy,topic_adherence", empty)
    assert {k: v for k, (v, _) in scores.items()} == {"agent_goal_accuracy_with_reference": Nan("missing_field"),
                                                      "topic_adherence": Nan("missing_field")}
    assert not engine.requests


def test_adherence_score_is_ragas_arithmetic() -> None:
    eps = 1e-10
    answered, on_topic = [True, True, False, False, True], [True, False, True, False, True]
    p, r = 2 / (2 + 1 + eps), 2 / (2 + 1 + eps)
    assert adherence_score(answered, on_topic, "precision") == p
    assert adherence_score(answered, on_topic, "recall") == r
    assert adherence_score(answered, on_topic) == 2 * (p * r) / (p + r + eps)
    assert adherence_score([False, False], [True, True]) == 0.0  # all refused
    assert adherence_score([True, True], [False, False], "precision") == 0.0  # none on topic


def test_schemas_bound_every_answer() -> None:
    outcome = OUTCOME.schema(None, DEFAULT_SETTINGS)  # type: ignore[arg-type]
    assert outcome["properties"]["verdict"]["enum"] == [0, 1]
    assert list(OUTCOME.schema(None, Settings(reasons=False))["properties"]) == ["verdict"]  # type: ignore[arg-type]
    assert REFUSED.schema(None, DEFAULT_SETTINGS)["properties"]["refused"]["enum"] == [0, 1]  # type: ignore[arg-type]
    matches = TOPIC_MATCH.schema(TopicMatchInput(reference_topics=["a"], topics=["x", "y", "z"]), DEFAULT_SETTINGS)
    assert matches["properties"]["on_topic"] == {"type": "array", "items": {"type": "boolean"}, "minItems": 3,
                                                 "maxItems": 3}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"on_topic": [True, False]}, matches)
    turns = "\n".join(f"Human: q{i}\nAI: a{i}" for i in range(30))
    assert TOPICS.schema(ConversationInput(conversation=turns), DEFAULT_SETTINGS)["properties"]["topics"][
        "maxItems"] == 40
    # every example of these prompts fits its schema: tests/test_prompts.py checks every prompt's


def test_votes_take_the_majority_per_topic() -> None:
    votes = [TopicMatches(on_topic=v) for v in ([True, False], [True, True], [False, True])]
    assert vote_matches(votes).on_topic == [True, True]
    assert vote_matches(votes[:2]).on_topic == [True, False]  # a tie counts as off topic


@pytest.mark.parametrize(("spec", "words"), [
    ("topic_adherence:mode=f2", ["mode='f2'", "f1", "precision", "recall"]),
    ("topic_adherence:mdoe=recall", ["did you mean 'mode'"]),
    ("agent_goal_accuracy:mode=f1", ["mode"]),
])
def test_option_errors_say_what_the_option_takes(spec: str, words: list[str]) -> None:
    with pytest.raises(LocalevalError) as error:
        parse_metric(spec)
    assert all(w in str(error.value) for w in words), str(error.value)


def test_alias_and_definitions() -> None:
    spec = parse_metric("agent_goal_accuracy")
    assert spec.name == spec.base == "agent_goal_accuracy_with_reference"
    assert spec.definition.required == ("conversation", "reference") and spec.definition.trace == "goal"
    without = parse_metric("agent_goal_accuracy_without_reference").definition
    assert without.required == ("conversation",) and without.role is None
    topics = parse_metric("topic_adherence").definition
    assert topics.required == ("conversation", "reference_topics") and topics.nonempty == ("reference_topics",)
    assert topics.trace == "topics" and topics.options == {"mode": "f1"}


def test_soft_goal_verdict_records_p1() -> None:
    from localeval.engine.scripted import soft_choice

    def script(label: str, data: dict[str, Any], request: Any) -> Any:
        if label == "agent_outcome":
            return soft_choice({"reason": "", "verdict": 1}, [0.8])
        return _script(label, data, request)

    engine = ScriptedEngine(script)
    out = Scheduler(engine, None, settings=Settings(soft=True), progress=False).run(
        [SAMPLE], parse_metrics("agent_goal_accuracy_without_reference"))
    trace = out.traces["agent_goal_accuracy_without_reference"][0]
    assert out.outcomes["agent_goal_accuracy_without_reference"][0] == 1.0
    assert trace["soft_score"] == pytest.approx(0.8) and trace["verdict"] == 1
