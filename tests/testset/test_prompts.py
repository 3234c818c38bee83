"""The test-set prompts: every few-shot example fits its own schema, and the shapes stop a looping judge."""

from __future__ import annotations

import json

import jsonschema
import pytest

from localeval.prompts.base import Prompt, Settings
from localeval.testset.answer_shapes import join_sentences
from localeval.testset.prompts import (
    SINGLE_HOP,
    STYLE,
    STYLES,
    TESTSET_PROMPTS,
    SingleHopInput,
    StyleInput,
)


@pytest.mark.parametrize("prompt", TESTSET_PROMPTS, ids=lambda p: p.name)
@pytest.mark.parametrize("reasons", [True, False])
def test_every_example_fits_its_schema_and_budget(prompt: Prompt, reasons: bool) -> None:
    settings = Settings(reasons=reasons)
    for example_in, example_out in prompt.examples:
        schema = prompt.schema(example_in, settings)
        data = json.loads(json.dumps(example_out.model_dump(mode="json")))
        if not reasons:
            data.pop("reason", None)
        jsonschema.validate(data, schema)
        assert prompt.max_tokens(example_in, settings) >= len(json.dumps(data)) // 3
    messages = prompt.messages(prompt.examples[0][0], settings)
    assert messages[0][0] == "system" and messages[-1][0] == "user"


def test_a_question_ends_at_its_question_mark_and_a_sentence_at_its_full_stop() -> None:
    schema = SINGLE_HOP.schema(SingleHopInput(context="c", entity="e"), Settings())
    ok = {"question": "How much is a taxi after 22:00?", "reference": ["It costs 0.30 euros a km.", "Tolls too!"]}
    jsonschema.validate(ok, schema)
    for bad in ({**ok, "question": "How much? The answer is 5 euros?"}, {**ok, "question": "No mark"},
                {**ok, "reference": ["One. Two."]}, {**ok, "reference": []}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_web_search_style_needs_no_question_mark() -> None:
    web = STYLE.schema(StyleInput(question="q?", style=STYLES["web_search"]), Settings())
    jsonschema.validate({"question": "taxi limit paris"}, web)
    short = STYLE.schema(StyleInput(question="q?", style=STYLES["short"]), Settings())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"question": "taxi limit paris"}, short)


def test_repeated_sentences_of_a_looping_judge_are_dropped() -> None:
    assert join_sentences(["A is 1.", " A is 1.", "B is 2.", ""]) == "A is 1. B is 2."
