"""Conformance vectors for the judged agent metrics: Ragas 0.4.3's own classes on scripted answers.

Runs only in Ragas' environment, ``benchmarks/.ragas-venv`` (``bash benchmarks/ragas/setup_ragas.sh``):

    benchmarks/.ragas-venv/bin/python tests/metrics/vectors/make_agent_vectors.py \\
        --out tests/metrics/vectors/ragas-0.4.3-agents.jsonl

``collections.AgentGoalAccuracyWithReference``, ``...WithoutReference`` and ``TopicAdherence`` (modes
f1, precision, recall) run end to end (``ascore``) on a seeded random conversation of human, AI (with tool
calls) and tool messages, with a judge that answers exactly the case's goal, end state and verdict, or
topics, refusals (by topic) and classifications (by topic). ``inputs.transcript`` is the conversation as
Ragas showed it to its judge (None where Ragas raised before asking). Same line format as
``ragas-0.4.3-wide.jsonl``; ``expected`` is Ragas' value, ``null`` where Ragas returned NaN or raised.
"""

from __future__ import annotations

import math
import random
import typing as t

from make_wide_vectors import Case, Plan, ScriptedLLM, bits, plan_build
from make_wide_vectors import main as write_cases
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from ragas.metrics.collections import AgentGoalAccuracyWithoutReference, AgentGoalAccuracyWithReference, TopicAdherence

WORDS = ("book", "table", "flight", "refund", "weather", "Paris", "order 42", "tomorrow", "price", "it's", "\"ok\"")
TOOLS = ("search", "book_table", "lookup_order", "get_weather")


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 7))).capitalize() + rng.choice(".?!")


def conversation(rng: random.Random) -> list[dict[str, t.Any]]:
    """Human and AI turns; some AI turns call tools (content possibly empty), each call answered by a tool."""
    records: list[dict[str, t.Any]] = []
    for _ in range(rng.randint(1, 4)):
        records.append({"type": "human", "content": sentence(rng)})
        if rng.random() < 0.5:
            calls = [{"name": rng.choice(TOOLS), "args": {"query": sentence(rng), "n": rng.randint(1, 9)}}
                     for _ in range(rng.randint(1, 2))]
            records.append({"type": "ai", "content": "" if rng.random() < 0.3 else sentence(rng),
                            "tool_calls": calls})
            records += [{"type": "tool", "content": sentence(rng)} for _ in calls]
        records.append({"type": "ai", "content": sentence(rng)})
    return records


def messages(records: list[dict[str, t.Any]]) -> list[t.Any]:
    out: list[t.Any] = []
    for r in records:
        if r["type"] == "human":
            out.append(HumanMessage(content=r["content"]))
        elif r["type"] == "tool":
            out.append(ToolMessage(content=r["content"]))
        else:
            calls = [ToolCall(name=c["name"], args=c["args"]) for c in r.get("tool_calls", [])]
            out.append(AIMessage(content=r["content"], tool_calls=calls or None))
    return out


def goal_case(rng: random.Random, with_reference: bool) -> Case:
    records = conversation(rng)
    goal, end = f"goal: {sentence(rng)}", f"end state: {sentence(rng)}"
    verdict = rng.randint(0, 1)
    reference = rng.choice(("", " ", f"reference: {sentence(rng)}", f"reference: {sentence(rng)}"))
    inputs: dict[str, t.Any] = {"conversation": records, "user_goal": goal, "end_state": end, "verdict": verdict,
                                "transcript": None}
    if with_reference:
        inputs["reference"] = reference
    desired = reference if with_reference else goal

    def answer(data: dict, model: type) -> dict:
        if "workflow" in data:
            inputs["transcript"] = data["workflow"]
            return {"user_goal": goal, "end_state": end}
        assert data == {"desired_outcome": desired, "arrived_outcome": end}, data
        return {"reason": "scripted", "verdict": str(verdict)}

    llm = ScriptedLLM(answer)
    if with_reference:
        return {}, inputs, AgentGoalAccuracyWithReference(llm=llm), {"user_input": messages(records),
                                                                      "reference": reference}
    return {}, inputs, AgentGoalAccuracyWithoutReference(llm=llm), {"user_input": messages(records)}


def topic_case(rng: random.Random, mode: str, kind: str = "random") -> Case:
    """``kind``: random, zero (no topic extracted), refused (all refused), off (none on topic), mixed
    (at least one of each: answered on and off topic, refused on and off topic), no_reference (empty list)."""
    records = conversation(rng)
    n = {"zero": 0, "mixed": rng.randint(4, 8)}.get(kind, rng.choice((0, *range(1, 9))) if kind == "random"
                                                    else rng.randint(1, 8))
    pool = [f"topic {i}" for i in range(n + 2)]
    repeats = kind == "random" and rng.random() < 0.2  # a judge that lists a topic twice
    topics = [rng.choice(pool) for _ in range(n)] if repeats else pool[:n]
    distinct = list(dict.fromkeys(topics))
    refused = {s: b for s, b in zip(distinct, bits(rng, len(distinct)), strict=True)}
    on_topic = {s: b for s, b in zip(distinct, bits(rng, len(distinct)), strict=True)}
    if kind == "refused":
        refused = dict.fromkeys(distinct, 1)
    elif kind == "off":
        on_topic = dict.fromkeys(distinct, 0)
    elif kind == "mixed":
        for i, s in enumerate(distinct[:4]):
            refused[s], on_topic[s] = i // 2, i % 2
    reference = [] if kind == "no_reference" else [f"reference topic {i}" for i in range(rng.randint(1, 4))]
    inputs: dict[str, t.Any] = {"conversation": records, "reference_topics": reference, "topics": topics,
                                "refused": [refused[s] for s in topics],
                                "on_topic": [on_topic[s] for s in topics], "transcript": None}

    def answer(data: dict, model: type) -> dict:
        if "topic" in data:
            assert data["user_input"] == inputs["transcript"]
            return {"refused_to_answer": bool(refused[data["topic"]])}
        if "reference_topics" in data:
            assert data == {"reference_topics": reference, "topics": topics}, data
            return {"classifications": [bool(on_topic[s]) for s in data["topics"]]}
        inputs["transcript"] = data["user_input"]
        return {"topics": topics}

    metric = TopicAdherence(llm=ScriptedLLM(answer), mode=mode)
    return {"mode": mode}, inputs, metric, {"user_input": messages(records), "reference_topics": reference}


MODES = ("f1", "precision", "recall")
PLAN: Plan = (
    ("agent_goal_accuracy_with_reference", 80, lambda rng: goal_case(rng, True)),
    ("agent_goal_accuracy_without_reference", 60, lambda rng: goal_case(rng, False)),
    ("topic_adherence", 240, lambda rng: topic_case(rng, rng.choice(MODES))),
    *(("topic_adherence", count, lambda rng, m=mode, k=kind: topic_case(rng, m, k))
      for mode in MODES
      for kind, count in (("zero", 3), ("refused", 5), ("off", 5), ("mixed", 8), ("no_reference", 1))),
)


async def ragas_value(metric: t.Any, kwargs: dict) -> float | None:
    """Ragas' score, None for NaN or a raise (NaN in Ragas' evaluate()); the script's own checks propagate."""
    try:
        value = float((await metric.ascore(**kwargs)).value)
    except AssertionError:
        raise
    except Exception:
        return None
    return None if math.isnan(value) else value


if __name__ == "__main__":
    write_cases(plan_build(PLAN, ragas_value), seed=45, description=__doc__)
