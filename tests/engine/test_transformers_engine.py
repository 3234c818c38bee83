"""The transformers judge on the bundled SmolLM2: answers always parse against their own schema."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from benchmarks.speed.engine_profile import without_prefix_reuse
from localeval.engine.base import JudgeEngine, Request

pytestmark = pytest.mark.model


def _obj(properties: dict, **extra) -> dict:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
        **extra,
    }


VERDICT = _obj({"reason": {"type": "string", "maxLength": 40}, "verdict": {"type": "integer", "enum": [0, 1]}})
NLI = _obj({"statements": {"type": "array", "items": VERDICT, "minItems": 3, "maxItems": 3}})
QUESTIONS = _obj(
    {
        "question": {"type": "string", "maxLength": 50},
        "noncommittal": {"type": "integer", "enum": [0, 1]},
    }
)
STATEMENTS = _obj(
    {"statements": {"type": "array", "items": {"type": "string", "maxLength": 30}, "minItems": 2, "maxItems": 2}}
)
# Every string and array is bounded, so 200 tokens always suffice: finish_reason must be "stop".
SCHEMAS = [VERDICT, NLI, QUESTIONS, STATEMENTS]

CONTEXT = "The Eiffel Tower is in Paris. It was completed in 1889. Paris is the capital of France."


def _ask(schema: dict, text: str, **kw) -> Request:
    messages = (
        ("system", "You are a careful judge. Answer only with JSON."),
        ("user", f"Context: {CONTEXT}\n\n{text}"),
    )
    return Request(messages=messages, schema=schema, max_tokens=kw.pop("max_tokens", 200), **kw)


REQUESTS = [
    _ask(VERDICT, "Statement: the tower is in Paris. Does the statement follow from the context?"),
    _ask(NLI, "Statements: 1. The tower is in Paris. 2. It was built in 1920. 3. Paris is in Spain. Judge each."),
    _ask(QUESTIONS, "Answer: Paris. Write the question this answers."),
    _ask(STATEMENTS, "Answer: The tower, in Paris, was finished in 1889. Split it into two statements."),
    _ask(VERDICT, "Is the answer 'Berlin' correct for 'capital of France'?"),
]


def _check(result, schema: dict) -> None:
    for choice in result.choices:
        assert choice.finish_reason == "stop", choice
        jsonschema.validate(json.loads(choice.text), schema)
        assert choice.completion_tokens > 0


def test_is_a_judge_engine(judge_engine):
    assert isinstance(judge_engine, JudgeEngine)
    assert judge_engine.fingerprint.startswith("transformers:smollm2-135m-instruct@")
    from localeval.engine.transformers.loading import cpu_has_bf16

    default = "bfloat16" if cpu_has_bf16() else "float32"  # the CPU default
    assert judge_engine.fingerprint.endswith(f":{default}:invariant")
    assert judge_engine.context_window == 8192


@pytest.fixture(scope="module")
def answered(judge_engine):
    """REQUESTS answered once in batches of 4, with what on_result reported."""
    seen: dict[int, object] = {}
    results = judge_engine.generate(REQUESTS, on_result=lambda i, r: seen.setdefault(i, r))
    return results, seen


def test_every_answer_parses_against_its_schema(judge_engine, answered):
    results, seen = answered
    assert len(results) == len(REQUESTS)
    assert sorted(seen) == list(range(len(REQUESTS)))
    for request, result, i in zip(REQUESTS, results, range(len(REQUESTS)), strict=True):
        _check(result, request.schema)
        assert seen[i] is result
        assert result.prompt_tokens == judge_engine.count_prompt_tokens(request)
    assert len(json.loads(results[1].choices[0].text)["statements"]) == 3


def test_batch_size_does_not_change_answers_or_order(judge_engine, answered, monkeypatch):
    monkeypatch.setattr(judge_engine, "batch_size", 1)
    one_by_one = [r.choices[0].text for r in judge_engine.generate(REQUESTS)]
    assert one_by_one == [r.choices[0].text for r in answered[0]]


def test_shared_prompt_prefix_is_computed_once(judge_engine):
    asks = [_ask(VERDICT, f"Is {city} in France?") for city in ("Paris", "Lyon", "Berlin")]
    results = judge_engine.generate(asks)
    shared = results[0].cached_prompt_tokens
    assert shared > 20
    assert all(r.cached_prompt_tokens == shared for r in results)
    for result in results:
        _check(result, VERDICT)


def test_max_tokens_reached_is_length(judge_engine):
    (result,) = judge_engine.generate([_ask(NLI, "Judge the statements.", max_tokens=6)])
    (choice,) = result.choices
    assert (choice.finish_reason, choice.completion_tokens) == ("length", 6)


def test_too_long_prompt_is_never_sent(judge_engine, monkeypatch):
    short = Request(messages=(("user", "Is 2+2=4?"),), schema=VERDICT, max_tokens=60)
    long = _ask(VERDICT, "Is the tower in Paris? " * 5, max_tokens=60)
    window = judge_engine.count_prompt_tokens(short) + 60
    monkeypatch.setattr(judge_engine, "context_window", window)
    sent = []
    original = judge_engine._decode
    monkeypatch.setattr(judge_engine, "_decode",
                        lambda rows, finished: (sent.extend(rows), original(rows, finished)))
    first, second = judge_engine.generate([long, short])
    assert first.choices[0].finish_reason == "context_too_long"
    assert (first.choices[0].text, first.choices[0].completion_tokens) == ("", 0)
    assert first.prompt_tokens == judge_engine.count_prompt_tokens(long) > window - 60
    _check(second, VERDICT)
    assert [r.request for r in sent] == [1]


def test_n_samples_are_seeded(judge_engine):
    ask = _ask(VERDICT, "Does the statement 'Paris is in France' follow?", temperature=1.0, n=3, seed=7)
    (first,) = judge_engine.generate([ask])
    (again,) = judge_engine.generate([ask])
    assert len(first.choices) == 3
    _check(first, VERDICT)
    assert [c.text for c in first.choices] == [c.text for c in again.choices]
    assert len({c.text for c in first.choices}) > 1
    (greedy,) = judge_engine.generate([_ask(VERDICT, "Is Paris in France?", n=2)])
    assert len(greedy.choices) == 2 and greedy.choices[0] == greedy.choices[1]


def test_a_failed_batch_leaves_the_engine_usable(judge_engine):
    broken = _ask({"type": "nonsense"}, "Anything.")
    with pytest.raises(RuntimeError):
        judge_engine.generate([REQUESTS[0], broken])
    (result,) = judge_engine.generate([REQUESTS[0]])
    _check(result, VERDICT)


def test_outlines_backend_gives_schema_valid_json(judge_engine):
    engine = copy.copy(judge_engine)  # same model, other grammar
    from localeval.engine.grammar import make_backend  # here: collecting this file must not load torch

    engine.grammar = make_backend("outlines", engine.tokenizer, engine.vocab_size, [engine.tokenizer.eos_token_id])
    asks = [REQUESTS[0], REQUESTS[3]]
    for request, result in zip(asks, engine.generate(asks), strict=True):
        _check(result, request.schema)


def _judge_asks() -> list[Request]:
    """Real NLI and usefulness asks: two prompt kinds, each sharing its instruction and examples."""
    from localeval.prompts import CONTEXT_USEFULNESS, NLI, NLIInput, Settings, UsefulnessInput

    settings = Settings(reasons=False)
    inputs = [
        (NLI, NLIInput(context=CONTEXT, statements=["The tower is in Paris.", "It was built in 1920."])),
        (NLI, NLIInput(context="Oslo is the capital of Norway.", statements=["Oslo is in Norway."])),
        (NLI, NLIInput(context=CONTEXT, statements=["Paris is the capital of France.", "Paris is in Spain.",
                                                    "The tower was completed in 1889."])),
        (CONTEXT_USEFULNESS, UsefulnessInput(question="When was the Eiffel Tower finished?", context=CONTEXT,
                                             answer="In 1889.")),
        (CONTEXT_USEFULNESS, UsefulnessInput(question="What is the capital of Norway?", context=CONTEXT,
                                             answer="Oslo.")),
    ]
    return [Request(messages=p.messages(i, settings), schema=p.schema(i, settings),
                    max_tokens=p.max_tokens(i, settings), label=p.name) for p, i in inputs]


def _verdicts(results) -> list[list[int]]:
    out = []
    for result in results:
        data = json.loads(result.choices[0].text)
        out.append([v["verdict"] for v in data["verdicts"]] if "verdicts" in data else [data["verdict"]])
    return out


def test_prefix_reuse_and_token_budget_batches_give_the_verdicts_of_plain_batches(judge_engine, monkeypatch):
    asks = _judge_asks()
    monkeypatch.setattr(judge_engine, "batch_tokens", None)
    monkeypatch.setattr(judge_engine, "batch_size", 1)
    with without_prefix_reuse():
        plain = judge_engine.generate(asks)
    assert all(r.cached_prompt_tokens == 0 for r in plain)
    monkeypatch.setattr(judge_engine, "batch_size", 16)
    reused = judge_engine.generate(asks)
    assert all(r.cached_prompt_tokens > 100 for r in reused)
    monkeypatch.setattr(judge_engine, "batch_tokens", 600)  # forces the NLI asks into batches of one or two
    budget = judge_engine.generate(asks)
    assert _verdicts(reused) == _verdicts(plain)
    assert _verdicts(budget) == _verdicts(plain)


def test_token_budget_splits_batches_by_rows_times_longest_row(judge_engine, monkeypatch):
    """The engine batches by its own limits (the arithmetic itself: tests/engine/test_batching.py)."""
    from localeval.engine.transformers.decode import Row

    rows = [Row(i, list(range(length)), "{}", answer, 0.0, 0) for i, (length, answer) in
            enumerate([(100, 50), (90, 50), (40, 10), (30, 10), (20, 10), (10, 10)])]

    def batches() -> list[list[int]]:
        with without_prefix_reuse():  # the rows share a prefix; batch them by length only
            return [[r.request for r in b] for b, shared in judge_engine._batches(rows) if shared == 0]

    monkeypatch.setattr(judge_engine, "batch_size", 16)
    monkeypatch.setattr(judge_engine, "batch_tokens", 300)
    # 2 x (100 + 50) = 300 fits; a third row would make 3 x 150; then 4 x (40 + 10) = 200 and so on.
    assert batches() == [[0, 1], [2, 3, 4, 5]]
    monkeypatch.setattr(judge_engine, "batch_size", 3)
    assert batches() == [[0, 1], [2, 3, 4], [5]]
    monkeypatch.setattr(judge_engine, "batch_tokens", None)
    assert [len(b) for b in batches()] == [3, 3]


def test_each_ask_is_reported_the_moment_its_row_finishes(judge_engine, monkeypatch, engine_counts):
    monkeypatch.setattr(judge_engine, "batch_size", len(REQUESTS))
    monkeypatch.setattr(judge_engine, "batch_tokens", None)
    start = engine_counts["decode_steps"]
    steps: dict[int, float] = {}

    def report(i: int, result) -> None:
        steps.setdefault(i, engine_counts["decode_steps"] - start)

    results = judge_engine.generate(REQUESTS, on_result=report)
    last = engine_counts["decode_steps"] - start
    assert sorted(steps) == list(range(len(REQUESTS)))
    assert min(steps.values()) < last  # a short answer was reported while longer rows still decoded
    lengths = [r.choices[0].completion_tokens for r in results]
    shortest, longest = lengths.index(min(lengths)), lengths.index(max(lengths))
    assert steps[shortest] < steps[longest]
