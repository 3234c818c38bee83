"""Grammar backends: bitmask layout, and what each backend lets through (tokenizer only, no model)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from localeval.errors import LocalevalError

if TYPE_CHECKING:
    from localeval.engine.grammar import BatchGrammar

# Importing torch and xgrammar alone takes about 4 s: these tests run in `make test`, not `make test-fast`,
# and import the grammar module inside the tests, so that collecting this file loads neither.
pytestmark = pytest.mark.slow

NLI = {
    "type": "object",
    "properties": {
        "statements": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "maxLength": 10},
                    "verdict": {"type": "integer", "enum": [0, 1]},
                },
                "required": ["reason", "verdict"],
                "additionalProperties": False,
            },
            "minItems": 2,
            "maxItems": 2,
        }
    },
    "required": ["statements"],
    "additionalProperties": False,
}


def test_pack_unpack_round_trip():
    from localeval.engine.grammar import _pack, _unpack

    ids = [0, 1, 31, 32, 33, 63, 100, 4095]
    mask = _pack(ids, 4096 // 32).unsqueeze(0)
    assert _unpack(mask, 4096)[0].nonzero().flatten().tolist() == ids


def test_schema_text_is_compact():
    from localeval.engine.grammar import schema_text

    assert schema_text({"b": 1, "a": [1, 2]}) == '{"b":1,"a":[1,2]}'


@pytest.fixture(scope="module")
def tokenizer(judge_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(judge_dir, local_files_only=True)


def _walk(grammar: BatchGrammar, tokenizer, text: str) -> str:
    """Feed ``text`` token by token through row 0: 'done', 'open' or 'rejected'."""
    from localeval.engine.grammar import _unpack

    vocab = grammar.bitmask.shape[1] * 32
    for token in tokenizer(text, add_special_tokens=False)["input_ids"]:
        (only_stop,) = grammar.fill([0])
        if only_stop or not _unpack(grammar.bitmask[:1], vocab)[0, token]:
            return "rejected"
        grammar.accept(0, token)
    (only_stop,) = grammar.fill([0])
    return "done" if only_stop else "open"


CASES = [
    ('{"statements":[{"reason":"ok","verdict":1},{"reason":"","verdict":0}]}', "done"),
    ('{"statements":[{"reason":"ok","verdict":1}]}', "rejected"),  # minItems
    ('{"statements":[{"reason":"ok","verdict":1},{"reason":"","verdict":0},', "rejected"),  # maxItems
    ('{"statements":[{"reason":"much too long here","verdict":1}', "rejected"),  # maxLength
    ('{"statements":[{"reason":"ok","verdict":2}', "rejected"),  # enum
    ('{"statements":[{"reason":"ok","verdict":1,"x":1}', "rejected"),  # additionalProperties
    ('{"statements":[{"reason":"ok"', "open"),
]


@pytest.mark.model
@pytest.mark.parametrize("backend", ["xgrammar", "outlines"])
def test_backend_honours_schema(tokenizer, backend):
    from localeval.engine.grammar import BatchGrammar, make_backend, schema_text

    grammar_backend = make_backend(backend, tokenizer, 49152, [tokenizer.eos_token_id])
    # both write compact JSON, as vLLM's xgrammar backend does: no blank between tokens
    for text, expected in CASES:
        grammar = BatchGrammar(grammar_backend, [schema_text(NLI)], 49152)
        assert _walk(grammar, tokenizer, text) == expected, (backend, text)
    spaced = json.dumps(json.loads(CASES[0][0]))  # ", " and ": "
    grammar = BatchGrammar(grammar_backend, [schema_text(NLI)], 49152)
    assert _walk(grammar, tokenizer, spaced) == "rejected"


@pytest.mark.model
def test_rows_follow_their_own_schema_and_stop_masks_to_eos(tokenizer):
    import torch

    from localeval.engine.grammar import BatchGrammar, make_backend, schema_text

    backend = make_backend("xgrammar", tokenizer, 49152, [tokenizer.eos_token_id])
    one = {"type": "object", "properties": {"v": {"type": "integer", "enum": [0, 1]}}, "required": ["v"]}
    grammar = BatchGrammar(backend, [schema_text(one), schema_text(NLI)], 49152)
    for token in tokenizer('{"v":1}', add_special_tokens=False)["input_ids"]:
        grammar.fill([0, 1])
        grammar.accept(0, token)
    assert grammar.fill([0, 1]) == [True, False]
    logits = torch.zeros(2, 49152)
    grammar.apply(logits, [0, 1])
    assert (logits[0] == 0).nonzero().flatten().tolist() == [tokenizer.eos_token_id]
    assert grammar.is_stop(tokenizer.eos_token_id)
    with pytest.raises(RuntimeError, match="rejected"):
        grammar.accept(1, tokenizer.eos_token_id)


def test_unknown_backend():
    from localeval.engine.grammar import make_backend

    with pytest.raises(LocalevalError, match="xgrammar, outlines"):
        make_backend("llguidance", object(), 10, [0])  # type: ignore[arg-type]


@pytest.mark.model
@pytest.mark.parametrize("backend", ["xgrammar", "outlines"])
def test_no_control_token_inside_a_string(tokenizer, backend):
    from localeval.engine.grammar import BatchGrammar, _unpack, make_backend, schema_text

    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    grammar = BatchGrammar(make_backend(backend, tokenizer, 49152, [2]), [schema_text(schema)], 49152)
    for token in tokenizer('{"a":"hello', add_special_tokens=False)["input_ids"]:
        grammar.fill([0])
        grammar.accept(0, token)
    grammar.fill([0])
    allowed = _unpack(grammar.bitmask, 49152)[0]
    assert allowed.sum() > 40000  # free text
    assert not allowed[: len(tokenizer.added_tokens_decoder)].any()  # <|im_start|>, <|endoftext|>, ...


def test_schema_text_keeps_property_order() -> None:
    from localeval.engine.grammar import schema_text

    schema = {"type": "object", "properties": {"reason": {"type": "string"}, "verdict": {"type": "integer"}}}
    text = schema_text(schema)
    assert text.index('"reason"') < text.index('"verdict"')  # the judge reasons first, then decides


@pytest.mark.model
def test_the_forced_text_is_what_the_schema_allows_alone_from_here(tokenizer):
    """xgrammar says which text can only come next (a draft that cannot be wrong about the text);
    outlines_core cannot tell, and says nothing."""
    from localeval.engine.grammar import BatchGrammar, make_backend, schema_text

    grammar = BatchGrammar(make_backend("xgrammar", tokenizer, 49152, [tokenizer.eos_token_id]),
                           [schema_text(NLI)], 49152)
    assert grammar.forced(0) == '{"statements":[{"reason":"'
    for token in tokenizer('{"statements":[{"reason":"ok"', add_special_tokens=False)["input_ids"]:
        grammar.fill([0])
        grammar.accept(0, token)
    assert grammar.forced(0) == ',"verdict":'  # the reason is closed: the key of the verdict follows
    outlines = BatchGrammar(make_backend("outlines", tokenizer, 49152, [tokenizer.eos_token_id]),
                            [schema_text(NLI)], 49152)
    assert outlines.forced(0) == ""
