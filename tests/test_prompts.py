"""Answer schemas are bounded by the input, so a looping small judge cannot run away."""

from __future__ import annotations

import pytest

from localeval.prompts import ATTRIBUTION, NLI, AttributionInput, NLIInput, Settings
from localeval.prompts.context_recall import sentence_count


def test_sentence_count():
    assert sentence_count("One. Two? Three! Four") == 4
    assert sentence_count("A line\nand another line.") == 2
    assert sentence_count("") == 1
    assert sentence_count("Dr.Smith came at 3.5 pm.") == 1  # no space after the stop: one sentence


def test_attribution_allows_a_few_more_classifications_than_sentences():
    inp = AttributionInput(question="q", context="c", answer="It rains. It is cold. Wind blows from the north.")
    schema = ATTRIBUTION.schema(inp, Settings())
    items = schema["properties"]["classifications"]
    assert (items["minItems"], items["maxItems"]) == (0, 5)
    long = AttributionInput(question="q", context="c", answer="A fact. " * 100)
    assert ATTRIBUTION.schema(long, Settings())["properties"]["classifications"]["maxItems"] == 40


def test_attribution_budget_covers_the_answer_and_shrinks_without_reasons():
    inp = AttributionInput(question="q", context="c", answer="It rains. It is cold. Wind blows from the north.")
    with_reasons = ATTRIBUTION.max_tokens(inp, Settings())
    without = ATTRIBUTION.max_tokens(inp, Settings(reasons=False))
    assert without < with_reasons < 1000
    assert without >= len(inp.answer) // 3  # the statements restate the answer


def test_nli_asks_exactly_one_verdict_per_statement():
    schema = NLI.schema(NLIInput(context="c", statements=["a", "b", "c"]), Settings(reasons=False))
    verdicts = schema["properties"]["verdicts"]
    assert (verdicts["minItems"], verdicts["maxItems"]) == (3, 3)
    assert list(verdicts["items"]["properties"]) == ["verdict"]


def test_answer_token_bound_counts_bytes_of_the_longest_compact_answer():
    from localeval.prompts.base import BYTES_PER_CHAR, answer_token_bound, array, binary, obj, text

    assert answer_token_bound(binary()) == 1
    assert answer_token_bound(text(5)) == 2 + 5 * BYTES_PER_CHAR
    assert answer_token_bound(array(binary(), 0, 3)) == len("[1,1,1]")
    assert answer_token_bound(obj({"v": binary()})) == len('{"v":1}')
    assert answer_token_bound({"type": "string"}) is None  # no maxLength: no bound
    assert answer_token_bound({"type": "array", "items": binary()}) is None
    assert answer_token_bound({"type": "object", "properties": {"v": binary()}}) is None  # more keys allowed


def test_every_prompt_budget_is_below_its_schema_bound():
    """The budgets are typical lengths; the bound (for a retry) must never be below them."""
    from localeval.prompts import ALL_PROMPTS
    from localeval.prompts.base import answer_token_bound

    for prompt in ALL_PROMPTS:
        for settings in (Settings(), Settings(reasons=False)):
            for example, _ in prompt.examples:
                bound = answer_token_bound(prompt.schema(example, settings))
                assert bound is not None, prompt.name
                assert bound >= prompt.max_tokens(example, settings), prompt.name


def _criterion_prompts():
    from pathlib import Path

    from localeval.metrics.criteria_file import load_criteria
    from localeval.prompts.criteria import criterion_prompt

    example = Path(__file__).resolve().parents[1] / "examples" / "criteria.toml"
    return [criterion_prompt(c) for c in load_criteria(example)]


def test_every_prompt_answers_its_examples_within_its_schema():
    """Every prompt (the criterion prompts too): every example answer fits the schema, the budget the bound."""
    import json

    import jsonschema

    from localeval.prompts import AGENT_PROMPTS, ALL_PROMPTS, ENTITIES, RATING_PROMPTS
    from localeval.prompts.base import answer_token_bound, render_output

    prompts = [*ALL_PROMPTS, *_criterion_prompts()]
    assert {p.name for p in (ENTITIES, *RATING_PROMPTS, *AGENT_PROMPTS)} <= {p.name for p in ALL_PROMPTS}
    assert sum(1 for p in prompts if p.examples) >= 9  # the rating prompts, entities, two example criteria
    for prompt in prompts:
        for settings in (Settings(), Settings(reasons=False)):
            for example, answer in prompt.examples:
                schema = prompt.schema(example, settings)
                jsonschema.validate(json.loads(render_output(answer, settings)), schema)
                bound = answer_token_bound(schema)
                assert bound is not None and bound >= prompt.max_tokens(example, settings), prompt.name
    rated = next(p for p in _criterion_prompts() if p.name == "criterion:cites_context")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"reason": "", "rating": 6}, rated.schema(None, Settings()))
