"""Continuous batching on the bundled judge: the same answers as batches of one, with fuller steps, as one token
at a time without draft tokens, and as prompts computed in full without shared prefixes."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from benchmarks.speed.engine_profile import without_prefix_reuse
from localeval.engine.base import Request

pytestmark = pytest.mark.model

DEMO = Path(__file__).resolve().parents[2] / "examples" / "rag_demo.jsonl"


@pytest.fixture(scope="module")
def judge_engine(judge_dir):
    """The bundled judge in float32, the dtype in which a row's greedy answer does not depend on the batch's
    layout; in bfloat16 it now and then does (the last test)."""
    from localeval.engine.transformers import TransformersEngine

    return TransformersEngine(judge_dir, batch_size=4, threads=1, dtype="float32")


def _first_asks(metric: str, count: int) -> list[Request]:
    """The first ``count`` asks a metric makes on the demo data, rendered as the scheduler sends them."""
    from localeval.data import load_samples
    from localeval.metrics.registry import parse_metrics
    from localeval.scheduler import Scheduler

    render = Scheduler(None, progress=False)
    (spec,) = parse_metrics(metric)
    asks: list[Request] = []
    for sample in load_samples(DEMO):
        first = next(spec.steps(sample, {}))
        asks += [render.requests.request(ask) for ask in (first if isinstance(first, list) else [first])]
    return asks[:count]


def _nli_asks() -> list[Request]:
    """NLI asks over one and three statements (the second step of faithfulness, built directly)."""
    from localeval.prompts import NLI, NLIInput, Settings

    context = "The Eiffel Tower is in Paris. It was completed in 1889. Paris is the capital of France."
    inputs = [NLIInput(context=context, statements=["The tower is in Paris."]),
              NLIInput(context=context, statements=["It was built in 1920.", "Paris is in France.",
                                                    "The tower was completed in 1889."])]
    settings = Settings()
    return [Request(messages=NLI.messages(i, settings), schema=NLI.schema(i, settings),
                    max_tokens=NLI.max_tokens(i, settings), label=NLI.name) for i in inputs]


@pytest.fixture(scope="module")
def asks() -> list[Request]:
    """13 asks of six prompts: lengths from about 200 to 450 tokens, budgets from 20 to 391 tokens,
    one cut short by its budget, and seeded samples (response relevancy's questions, n = 3)."""
    attribution = _first_asks("context_recall", 2)
    out = [*_first_asks("faithfulness", 2), *_first_asks("context_precision", 3),
           *_first_asks("answer_relevancy", 2), attribution[0],
           dataclasses.replace(attribution[1], max_tokens=20), *_first_asks("factual_correctness", 2),
           *_nli_asks()]
    assert len({a.label for a in out}) == 6 and any(a.temperature > 0 and a.n == 3 for a in out)
    return out


def _answers(results) -> list[list[tuple[str, str, int]]]:
    return [[(c.text, c.finish_reason, c.completion_tokens) for c in r.choices] for r in results]


def test_continuous_batches_answer_as_batches_of_one(judge_engine, asks, monkeypatch, engine_counts):
    monkeypatch.setattr(judge_engine, "batch_size", 4)
    reported: dict[int, object] = {}
    batched = judge_engine.generate(asks, on_result=lambda i, r: reported.setdefault(i, r))
    steps, rows = engine_counts["decode_steps"], engine_counts["decode_tokens"]
    monkeypatch.setattr(judge_engine, "batch_size", 1)
    alone = judge_engine.generate(asks)
    assert _answers(batched) == _answers(alone)
    assert sorted(reported) == list(range(len(asks))) and all(reported[i] is r for i, r in enumerate(batched))
    finishes = [c.finish_reason for r in batched for c in r.choices]
    assert finishes.count("length") == 1 and finishes.count("stop") == len(finishes) - 1
    for choice in (c for r in batched for c in r.choices if c.finish_reason == "stop"):
        json.loads(choice.text)
    sampled = [r for a, r in zip(asks, batched, strict=True) if a.temperature > 0]
    assert all(len({c.text for c in r.choices}) > 1 for r in sampled)  # n seeded samples, not one answer
    # 19 rows (6 of them samples) in 4 slots: every step is full while rows wait, so the steps are at most
    # the full ones (rows / 4) plus the drain after the last admission (at most the longest answer)
    longest = max(c.completion_tokens for r in batched for c in r.choices)
    assert steps <= rows / 4 + longest


def test_draft_tokens_give_the_answers_of_one_token_at_a_time_in_fewer_steps(judge_engine, asks, monkeypatch,
                                                                              engine_counts):
    """Greedy rows feed the grammar's forced text and prompt-lookup guesses after their last token; the
    model keeps the guesses it would have picked itself, so the answers are unchanged."""
    monkeypatch.setattr(judge_engine, "batch_size", 4)
    counts = ("draft_tokens", "draft_accepted", "flat_steps")
    before = {k: engine_counts[k] for k in counts}
    drafted = judge_engine.generate(asks)
    used = {k: engine_counts[k] - before[k] for k in counts}
    monkeypatch.setattr(judge_engine, "drafts", 0)
    before = {k: engine_counts[k] for k in counts}
    single = judge_engine.generate(asks)
    assert _answers(drafted) == _answers(single)
    assert engine_counts["draft_tokens"] == before["draft_tokens"]  # none without drafts
    greedy = sum(c.completion_tokens for a, r in zip(asks, single, strict=True) if a.temperature <= 0
                 for c in r.choices[:1])
    assert used["draft_accepted"] > greedy / 3  # a third of the greedy answers' tokens came as drafts
    assert used["flat_steps"] < engine_counts["flat_steps"] - before["flat_steps"]


def test_asks_of_one_sample_take_their_shared_prefix_from_a_slot(judge_engine, asks, engine_counts):
    """Context precision asks one question per passage of a sample: each copies the instruction, examples,
    question and reference of the first one's slot, and only its passage is computed; without prefix
    reuse every prompt is computed in full, to the same answers."""
    useful = [a for a in asks if a.label == "context_usefulness"]
    assert len(useful) == 3
    before = engine_counts["prefix_reused_tokens"]
    shared = judge_engine.generate(useful)
    reused = engine_counts["prefix_reused_tokens"] - before
    prompts = [judge_engine.count_prompt_tokens(a) for a in useful]
    before = engine_counts["prefix_reused_tokens"]
    with without_prefix_reuse():
        alone = judge_engine.generate(useful)
    assert engine_counts["prefix_reused_tokens"] == before
    assert _answers(shared) == _answers(alone)
    assert reused > sum(prompts) / 2  # most of the three prompts came from a slot or the prefix cache


def test_a_row_past_its_planned_length_decodes_on_to_the_answer_it_gets_with_the_whole_budget(
        judge_engine, asks, monkeypatch):
    """The engine grows budgets in place: planned at 20 tokens, the cut-short ask runs on in its slot
    beside the others to the same answer as when its whole budget is planned, and nothing is cut."""
    monkeypatch.setattr(judge_engine, "batch_size", 4)
    assert judge_engine.abilities.grows_in_place
    cut = next(a for a in asks if a.max_tokens == 20)
    some = [cut, *asks[:5]]  # beside statements and usefulness verdicts
    short = 0
    whole = [dataclasses.replace(a, max_tokens=600) if i == short else a for i, a in enumerate(some)]
    planned = [dataclasses.replace(a, expected_tokens=20) if i == short else a for i, a in enumerate(whole)]
    grown, reference = judge_engine.generate(planned), judge_engine.generate(whole)
    assert _answers(grown) == _answers(reference)
    (choice,) = grown[short].choices
    assert choice.finish_reason == "stop" and choice.completion_tokens > 20
    json.loads(choice.text)


def _repeating_asks() -> list[Request]:
    """Statement asks for answers that say the same thing again and again (the bundled judge copies them)."""
    from localeval.prompts import STATEMENTS, Settings, StatementsInput

    settings = Settings()
    answers = ["Paris is the capital of France. " * 6, "The Nile flows north. It is long. " * 5]
    inputs = [StatementsInput(question="Tell me about it.", answer=a.strip()) for a in answers]
    return [Request(messages=STATEMENTS.messages(i, settings), schema=STATEMENTS.schema(i, settings),
                    max_tokens=STATEMENTS.max_tokens(i, settings), label=STATEMENTS.name) for i in inputs]


def test_the_repeat_guard_cuts_only_lists_that_repeat_an_item(judge_engine, asks, monkeypatch):
    from localeval.engine.repeats import RepeatGuard, repeat_cut

    monkeypatch.setattr(judge_engine, "batch_size", 4)
    every = [*asks[:5], *_repeating_asks()]  # statements and usefulness verdicts, then two that repeat
    plain = judge_engine.generate(every)
    monkeypatch.setattr(judge_engine, "guard", RepeatGuard(judge_engine.tokenizer))
    guarded = judge_engine.generate(every)
    cut = 0
    for p, g in zip(plain, guarded, strict=True):
        for a, b in zip(p.choices, g.choices, strict=True):
            if b.text == a.text:
                assert repeat_cut(a.text) is None or a.text.startswith('{"verdicts"')  # NLI: one per statement
                continue
            cut += 1  # the guarded answer is the plain one ended before its first repeated item
            assert b.text == repeat_cut(a.text) and b.finish_reason == "stop"
            assert b.completion_tokens < a.completion_tokens
            json.loads(b.text)
    assert cut >= 2  # both repeating answers, maybe more


def test_a_token_budget_does_not_hold_rows_out_of_free_slots(judge_engine, asks, monkeypatch, engine_counts):
    """Flat steps pad nothing, so rows are their only limit: a budget that would hold every padded batch
    to one row (rows x (prompt tail + answer budget) within 300 tokens) leaves the steps and answers as
    they are without it."""
    monkeypatch.setattr(judge_engine, "batch_size", 4)
    counts = ("flat_steps", "decode_tokens")

    def run(budget: int | None) -> tuple[list, dict[str, float]]:
        monkeypatch.setattr(judge_engine, "batch_tokens", budget)
        before = {k: engine_counts[k] for k in counts}
        results = judge_engine.generate(asks)
        return _answers(results), {k: engine_counts[k] - before[k] for k in counts}

    free, free_counts = run(None)
    tight, tight_counts = run(300)
    assert tight == free and tight_counts == free_counts
    assert free_counts["decode_tokens"] > 2 * free_counts["flat_steps"]  # more than two busy rows a step


def test_in_bfloat16_most_answers_keep_to_one_layout_but_not_all(judge_dir, asks):
    """bfloat16 (the CPU default where the CPU has BF16 units) rounds each layer's output: attention's
    last-bit differences between layouts (a query in a prompt block or in a decoding row, a prefix computed
    apart or in the step) then change a pick now and then, so batches of 4 and of 1 answer most asks, not
    all, alike (float32: every one, above). The README states this figure.

    The first nine asks (four prompt kinds, the seeded one and the one cut short among them): where the CPU has no
    BF16 units, bfloat16 runs on slow reference kernels."""
    from localeval.engine.transformers import TransformersEngine

    some = asks[:9]
    assert len({a.label for a in some}) >= 4 and any(a.n == 3 for a in some) and any(a.max_tokens == 20 for a in some)
    engine = TransformersEngine(judge_dir, batch_size=4, threads=1, dtype="bfloat16")
    batched = engine.generate(some)
    engine.batch_size = 1
    alone = engine.generate(some)
    same = sum(a == b for a, b in zip(_answers(batched), _answers(alone), strict=True))
    assert same >= len(some) - 2, (same, len(some))
    for choice in (c for r in [*batched, *alone] for c in r.choices if c.finish_reason == "stop"):
        json.loads(choice.text)
