"""The scheduler: one engine call per round, shared asks generated once, answers to the right place."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.base import Abilities, Choice
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.metrics import parse_metrics
from localeval.nan import Nan
from localeval.prompts.base import answer_token_bound
from localeval.prompts.nli import REASON_CHARS as NLI_REASON_CHARS
from localeval.scheduler import Scheduler


def _samples(n: int = 5) -> list[Sample]:
    return [
        Sample(
            id=f"s{i}",
            user_input=f"Where is city {i}?",
            response=f"City {i} lies on the river Alpha. City {i} has {i} bridges.",
            reference=f"City {i} lies on the river Alpha. City {i} is old.",
            retrieved_contexts=(f"City {i} lies on the river Alpha.", "Bananas are yellow fruit."),
        )
        for i in range(n)
    ]


def test_one_engine_call_per_round_for_the_whole_data_set() -> None:
    engine = ScriptedEngine(rule_script)
    specs = parse_metrics("faithfulness,context_precision,context_recall,noise_sensitivity,factual_correctness")
    out = Scheduler(engine, progress=False).run(_samples(5), specs)
    # faithfulness, noise sensitivity and factual correctness each have two judge steps.
    assert out.rounds == 2
    assert len(engine.calls) == 2 == out.engine_calls
    # The first round holds every sample's first asks, the second the rest.
    first_labels = {r.label for r in engine.calls[0]}
    assert first_labels == {"statements", "context_usefulness", "attribution", "claims_low_low"}
    assert {r.label for r in engine.calls[1]} == {"nli"}
    assert all(not isinstance(v, Nan) for vs in out.outcomes.values() for v in vs)


def test_an_ask_shared_by_two_metrics_is_generated_once() -> None:
    engine = ScriptedEngine(rule_script)
    samples = _samples(3)
    specs = parse_metrics("context_precision,precision_at_k,faithfulness,noise_sensitivity")
    out = Scheduler(engine, progress=False).run(samples, specs)
    keys = [(r.messages, json.dumps(r.schema, sort_keys=True)) for r in engine.requests]
    assert len(keys) == len(set(keys)), "a request was sent twice"
    usefulness = [r for r in engine.requests if r.label == "context_usefulness"]
    assert len(usefulness) == 3 * 2  # precision_at_k reused every context precision verdict
    assert out.usage["precision_at_k"].judge_calls == 0
    assert out.usage["precision_at_k"].asks == 6
    # Faithfulness and noise sensitivity share the response's statement extraction.
    statements = [r for r in engine.requests if r.label == "statements"]
    assert len(statements) == 3 * 2  # response (shared) and reference, per sample


def test_answers_reach_the_generator_that_asked() -> None:
    def script(label, data, request):
        if label == "statements":
            # sample i's response gets i+1 statements
            i = int(data["question"].split()[-1].rstrip("?"))
            return {"statements": [f"fact {j}" for j in range(i + 1)]}
        return {"verdicts": [{"reason": "", "verdict": int(j == 0)} for j in range(len(data["statements"]))]}

    engine = ScriptedEngine(script)
    out = Scheduler(engine, progress=False).run(_samples(4), parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"] == [1.0, 0.5, 1 / 3, 0.25]
    assert [len(t["statements"]) for t in out.traces["faithfulness"]] == [1, 2, 3, 4]


def test_embeddings_go_in_one_call_per_round() -> None:
    engine = ScriptedEngine(rule_script)
    embedder = HashEmbedder()
    out = Scheduler(engine, embedder, progress=False).run(_samples(4), parse_metrics("answer_relevancy"))
    assert len(embedder.calls) == 1
    assert len(engine.calls) == 1 and all(r.n == 3 for r in engine.requests)
    assert all(isinstance(v, float) for v in out.outcomes["answer_relevancy"])


def test_truncated_answer_is_retried_once_with_a_larger_budget_then_nan() -> None:
    budgets: list[int] = []
    schemas: list[dict] = []

    def script(label, data, request):
        if label == "statements":
            budgets.append(request.max_tokens)
            schemas.append(request.schema)
            if "City 1" in data["answer"]:
                return Choice(text='{"statements": ["cut', completion_tokens=request.max_tokens, finish_reason="length")
            if "City 2" in data["answer"] and len(budgets) <= 4:
                return Choice(text='{"statements": ["cut', completion_tokens=request.max_tokens, finish_reason="length")
        return rule_script(label, data, request)

    engine = ScriptedEngine(script)
    out = Scheduler(engine, progress=False).run(_samples(3), parse_metrics("faithfulness"))
    values = out.outcomes["faithfulness"]
    assert values[1] == Nan("truncated")
    assert isinstance(values[2], float)  # recovered on the retry
    first, retried = budgets[:3], budgets[3:]
    bound = answer_token_bound(schemas[1])
    assert bound is not None and bound > 2 * first[1]  # the schema's bound: the retry cannot be cut off again
    assert len(retried) == 2 and retried[0] == bound
    assert out.usage["faithfulness"].retries == 2


def test_a_reason_spelled_letter_by_letter_gets_its_verdict_on_the_retry() -> None:
    """The bundled judge once wrote "S-A-T-I-N-…" as a reason: two tokens a character, over twice the budget."""
    seen: list[int] = []

    def script(label, data, request):
        if label != "nli":
            return rule_script(label, data, request)
        seen.append(request.max_tokens)
        reason = "-".join("SATIN" * 32)[:NLI_REASON_CHARS]
        needed = 2 * len(reason) + 10 * len(data["statements"])  # a letter and a hyphen each
        if needed > request.max_tokens:
            return Choice(text='{"verdicts": [{"reason": "S-A-T', completion_tokens=request.max_tokens,
                          finish_reason="length")
        return {"verdicts": [{"reason": reason, "verdict": 1} for _ in data["statements"]]}

    out = Scheduler(ScriptedEngine(script), progress=False).run(_samples(1), parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"] == [1.0]
    assert len(seen) == 2 and seen[1] > 2 * seen[0]


def test_the_retry_budget_stops_at_the_context_window() -> None:
    seen: list[tuple[int, int]] = []

    def script(label, data, request):
        if label == "nli":
            prompt = sum(len(content.split()) for _, content in request.messages)
            seen.append((request.max_tokens, prompt))
            return Choice(text='{"verdicts": [', completion_tokens=request.max_tokens, finish_reason="length")
        return rule_script(label, data, request)

    engine = ScriptedEngine(script)
    engine.context_window = 700  # type: ignore[attr-defined]
    out = Scheduler(engine, progress=False).run(_samples(1), parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"] == [Nan("truncated")]
    (first, prompt), (retried, _) = seen
    assert prompt + first < 700 and retried == 700 - prompt and retried > first


class GrowingEngine(ScriptedEngine):
    """A scripted engine that, like the transformers engine, decodes past the planned length in place."""

    abilities = Abilities(grows_in_place=True)


def test_an_engine_that_grows_budgets_gets_the_retry_budget_at_once_and_no_retry() -> None:
    seen: list[tuple[int, int, dict]] = []

    def script(label, data, request):
        if label == "statements":
            seen.append((request.max_tokens, request.expected_tokens, request.schema))
            if "City 1" in data["answer"]:  # cut off even at the grown budget: final, NaN, no second ask
                return Choice(text='{"statements": ["cut', completion_tokens=request.max_tokens, finish_reason="length")
        return rule_script(label, data, request)

    engine = GrowingEngine(script)
    out = Scheduler(engine, progress=False).run(_samples(3), parse_metrics("faithfulness"))
    assert len(seen) == 3 and len(engine.calls) == 2  # statements, then NLI: no retry call
    for budget, planned, schema in seen:
        bound = answer_token_bound(schema)
        assert bound is not None and planned > 0 and budget == max(2 * planned, bound) > planned
    assert all(r.planned_tokens == r.expected_tokens for r in engine.requests)
    values = out.outcomes["faithfulness"]
    assert values[1] == Nan("truncated") and isinstance(values[0], float) and isinstance(values[2], float)
    assert out.usage["faithfulness"].retries == 0


def test_engine_error_on_one_ask_does_not_sink_the_round() -> None:
    def script(label, data, request):
        if "City 3" in request.messages[-1][1]:
            raise RuntimeError("boom")
        return rule_script(label, data, request)

    engine = ScriptedEngine(script)
    samples = _samples(6)
    out = Scheduler(engine, progress=False).run(samples, parse_metrics("faithfulness"))
    values = out.outcomes["faithfulness"]
    assert values[3] == Nan("engine_error")
    assert "boom" in out.traces["faithfulness"][3]["nan_detail"]
    assert all(isinstance(v, float) for i, v in enumerate(values) if i != 3)


def test_judge_free_metrics_need_no_engine() -> None:
    s = Sample(id="a", retrieved_context_ids=("d1", "d2", "d3"), reference_context_ids=("d2", "d9"))
    specs = parse_metrics("id_context_precision,id_context_recall,hit_rate,mrr,ndcg")
    out = Scheduler(None, progress=False).run([s], specs)
    assert out.rounds == 0
    assert out.outcomes["id_context_precision"] == [pytest.approx(1 / 3)]
    assert out.outcomes["id_context_recall"] == [0.5]
    assert out.outcomes["hit_rate"] == [1.0]
    assert out.outcomes["mrr"] == [0.5]


def _repeating_script(verdict_of: dict[str, int], p1_of: dict[str, float] | None = None) -> Any:
    """Statements with repeats ("A. B. A. C. B." -> A, B, A, C, B); NLI verdicts looked up per statement."""
    from localeval.engine.scripted import soft_choice

    def script(label: str, data: dict, request: Any) -> Any:
        if label == "statements":
            return {"statements": [s.strip() + "." for s in data["answer"].split(".") if s.strip()]}
        assert label == "nli"
        verdicts = [{"reason": f"about {s}", "verdict": verdict_of[s]} for s in data["statements"]]
        if p1_of is not None:
            return soft_choice({"verdicts": verdicts}, [p1_of[s] for s in data["statements"]])
        if request.n > 1:
            return [{"verdicts": verdicts}] * request.n
        return {"verdicts": verdicts}

    return script


REPEATING = Sample(id="r", user_input="Q?", response="A. B. A. C. B.", retrieved_contexts=("ctx",))


def test_a_repeated_statement_is_judged_once_and_counted_each_time() -> None:
    engine = ScriptedEngine(_repeating_script({"A.": 1, "B.": 0, "C.": 1}))
    out = Scheduler(engine, progress=False).run([REPEATING], parse_metrics("faithfulness"))
    nli = [r for r in engine.requests if r.label == "nli"]
    assert len(nli) == 1
    assert json.loads(nli[0].messages[-1][1])["statements"] == ["A.", "B.", "C."]  # each once, first-seen order
    assert nli[0].schema["properties"]["verdicts"]["minItems"] == 3  # the schema asks for the distinct ones
    trace = out.traces["faithfulness"][0]
    assert trace["statements"] == ["A.", "B.", "A.", "C.", "B."]
    # every repeat gets its statement's verdict, and the score counts them all: A, A, C of five
    assert out.outcomes["faithfulness"][0] == pytest.approx(3 / 5)


def test_merged_repeats_keep_their_soft_p1_and_votes() -> None:
    from localeval.prompts.base import Settings

    soft = ScriptedEngine(_repeating_script({"A.": 1, "B.": 0, "C.": 1}, {"A.": 0.9, "B.": 0.2, "C.": 0.6}))
    out = Scheduler(soft, settings=Settings(soft=True), progress=False).run([REPEATING], parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"][0] == pytest.approx(3 / 5)
    assert out.traces["faithfulness"][0]["soft_score"] == pytest.approx((0.9 + 0.2 + 0.9 + 0.6 + 0.2) / 5)
    voted = ScriptedEngine(_repeating_script({"A.": 0, "B.": 1, "C.": 1}))
    out = Scheduler(voted, settings=Settings(votes=3), progress=False).run([REPEATING], parse_metrics("faithfulness"))
    assert [r.n for r in voted.requests if r.label == "nli"] == [3]
    assert out.outcomes["faithfulness"][0] == pytest.approx(3 / 5)  # B, C, B


def test_statements_without_repeats_go_out_as_they_are() -> None:
    engine = ScriptedEngine(_repeating_script({"A.": 1, "B.": 0}))
    sample = Sample(id="u", user_input="Q?", response="A. B.", retrieved_contexts=("ctx",))
    Scheduler(engine, progress=False).run([sample], parse_metrics("faithfulness"))
    nli = [r for r in engine.requests if r.label == "nli"]
    assert json.loads(nli[0].messages[-1][1])["statements"] == ["A.", "B."]


def test_judge_every_copy_sends_the_list_as_it_is() -> None:
    from localeval.prompts.base import Settings

    engine = ScriptedEngine(_repeating_script({"A.": 1, "B.": 0, "C.": 1}))
    out = Scheduler(engine, settings=Settings(merge_repeats=False), progress=False).run(
        [REPEATING], parse_metrics("faithfulness"))
    nli = [r for r in engine.requests if r.label == "nli"]
    assert json.loads(nli[0].messages[-1][1])["statements"] == ["A.", "B.", "A.", "C.", "B."]
    assert out.outcomes["faithfulness"][0] == pytest.approx(3 / 5)
