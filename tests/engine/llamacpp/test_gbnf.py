"""The compact grammar sent to llama-server: every schema localeval's prompts ask for is covered, the grammar
admits the compact JSON the in-process engines write and nothing with a blank, and a schema beyond it goes as
``json_schema``."""

from __future__ import annotations

import pytest

from localeval.engine.base import Request
from localeval.engine.server.gbnf import to_gbnf
from localeval.prompts.base import array, binary, obj, text, text_list

VERDICT = obj({"reason": text(60), "verdict": binary()})


def test_a_verdict_schema_becomes_a_grammar_with_no_room_for_blanks() -> None:
    grammar = to_gbnf(VERDICT)
    assert grammar is not None and grammar.splitlines()[1].startswith("root ::= ")
    source, root, char = grammar.splitlines()
    assert source.startswith("# JSON schema: {")  # a comment to llama.cpp
    # every literal is the compact JSON's own text: a brace, a key with its colon, a comma; nothing between them
    assert root == 'root ::= "{" "\\"reason\\":" "\\"" r0{0,60} "\\"" "," "\\"verdict\\":" ( "0" | "1" ) "}"'
    assert char.startswith("r0 ::= ( [^") and "space" not in grammar


def test_a_bounded_list_of_texts_is_bounded_in_the_grammar() -> None:
    grammar = to_gbnf(text_list("statements", 200, 7))
    assert grammar is not None
    assert '"[" ( r' in grammar and "{0,6}" in grammar and "{1,200}" in grammar  # 0..7 items of 1..200 characters
    fixed = to_gbnf(obj({"items": array(binary(), 2, 3)}))
    assert fixed is not None and '"[" r' in fixed and "{1,2}" in fixed  # 2..3 items: one, then one or two more


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^a+$"},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": [], "additionalProperties": False},
    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
])
def test_a_schema_beyond_the_writer_is_left_to_json_schema(schema: dict) -> None:
    assert to_gbnf(schema) is None


@pytest.mark.parametrize("demo", ["rag_demo.jsonl", "agent_demo.jsonl"])
def test_every_prompt_schema_of_the_demos_is_covered(demo: str) -> None:
    import json
    from pathlib import Path

    from localeval.api import as_samples
    from localeval.embed import HashEmbedder
    from localeval.engine.scripted import ScriptedEngine, rule_script
    from localeval.metrics.registry import METRICS, parse_metrics
    from localeval.scheduler import Scheduler

    path = Path(__file__).resolve().parents[3] / "examples" / demo
    fields = set(json.loads(path.read_text().splitlines()[0]))
    fields |= {"conversation"} if demo.startswith("agent") else set()  # the messages in user_input
    engine = ScriptedEngine(rule_script)
    seen: list[dict] = []
    generate = engine.generate

    def recorded(requests, on_result=None):  # type: ignore[no-untyped-def]
        seen.extend(r.schema for r in requests)
        return generate(requests, on_result)

    engine.generate = recorded  # type: ignore[method-assign]
    names = [name for name, d in METRICS.items() if d.judge and set(d.required) <= fields]
    Scheduler(engine, HashEmbedder(), progress=False).run(as_samples(path)[:2], parse_metrics(names))
    assert len(names) >= 3 and len(seen) >= 6
    assert [s for s in seen if to_gbnf(s) is None] == []


def test_the_grammar_names_the_schema_it_was_written_from_and_a_schema_beyond_it_goes_as_json_schema() -> None:
    from localeval.engine.server.dialects import DIALECTS
    from localeval.engine.server.gbnf import schema_of

    grammar = to_gbnf(VERDICT)
    assert grammar is not None and schema_of(grammar) == VERDICT and schema_of("root ::= \"x\"") is None
    ask = Request(messages=(("user", "hi"),), schema=VERDICT)
    assert DIALECTS["llamacpp"].body("judge", ask, 1, 0, False, None)["grammar"] == grammar
    free = {"type": "string", "pattern": "^a+$"}
    body = DIALECTS["llamacpp"].body("judge", Request(messages=(("user", "hi"),), schema=free), 1, 0, False, None)
    assert body["json_schema"] == free and "grammar" not in body
