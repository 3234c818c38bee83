"""The repeat guard: where a JSON list that repeats an earlier item is cut, and the tokens that spell the cut."""

from __future__ import annotations

import json

import pytest

from localeval.engine.repeats import RepeatGuard, repeat_cut

CUTS = [
    # a string list: cut before the first item equal to an earlier one, however many follow
    ('{"statements":["A","B","A","', '{"statements":["A","B"]}'),
    ('{"statements":["A","A",', '{"statements":["A"]}'),
    ('{"statements":["A","B","C","B","A","', '{"statements":["A","B","C"]}'),
    # a list of objects, and a list inside an object inside a list
    ('{"c":[{"s":"x","v":1},{"s":"y","v":0},{"s":"x","v":1},{"', '{"c":[{"s":"x","v":1},{"s":"y","v":0}]}'),
    ('{"o":[{"l":["p","q","p",', '{"o":[{"l":["p","q"]}]}'),
    # commas, brackets and escaped quotes inside strings are text
    ('{"s":["a, b","a, b",', '{"s":["a, b"]}'),
    ('{"s":["say \\"x\\", ok]","say \\"x\\", ok]",', '{"s":["say \\"x\\", ok]"]}'),
]
NO_CUT = [
    '{"statements":["A","B","C",',
    '{"statements":["A","B","A"',  # the repeat is not finished: no comma after it yet
    '{"statements":["A","AB","ABC","',  # a longer item is not a repeat
    '{"reason":"A, A, A, A,","verdict":1}',  # repeats inside a string are not list items
    '{"a":["x"],"b":["x"],',  # the same item in two different lists
    '{"c":[{"s":"x","v":1},{"s":"x","v":0},',  # items differ in one field
]


@pytest.mark.parametrize(("text", "cut"), CUTS)
def test_a_list_is_cut_before_its_first_repeated_item_and_closed(text, cut):
    assert repeat_cut(text) == cut
    json.loads(cut)


@pytest.mark.parametrize("text", NO_CUT)
def test_lists_without_a_finished_repeat_are_left_alone(text):
    assert repeat_cut(text) is None


@pytest.fixture(scope="module")
def tokenizer(judge_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(judge_dir, local_files_only=True)


@pytest.mark.model
def test_the_guard_spells_the_cut_with_the_rows_own_tokens_then_the_closing_ones(tokenizer):
    from localeval.engine.grammar import BatchGrammar, make_backend, schema_text
    from localeval.prompts.base import text_list

    text = '{"statements":["Paris is in France.","It is big.","Paris is in France.","'
    tokens = list(tokenizer(text, add_special_tokens=False)["input_ids"])
    guard = RepeatGuard(tokenizer)
    commas = [t for t in tokens if guard.ends_item(t)]
    assert len(commas) == 3 and not guard.ends_item(tokens[0])  # each token holding a comma, and only those
    cut = guard.cut(tokens)
    assert cut == '{"statements":["Paris is in France.","It is big."]}'
    shorter = guard.tokens_for(tokens, cut)
    assert tokenizer.decode(shorter) == cut
    own = tokenizer('{"statements":["Paris is in France.","It is big', add_special_tokens=False)["input_ids"]
    assert shorter[: len(own)] == own  # the row's own tokens are kept up to the cut
    backend = make_backend("xgrammar", tokenizer, 49152, [tokenizer.eos_token_id])
    loose = BatchGrammar(backend, [schema_text(text_list("statements", 80, 10))], 49152)
    assert loose.complete_with(0, shorter)
    assert loose.fill([0]) == [True]  # moved to the answer's end: only the stop token is left
    exact = BatchGrammar(backend, [schema_text({**text_list("statements", 80, 3),
                                                 "properties": {"statements": {
                                                     "type": "array", "items": {"type": "string"},
                                                     "minItems": 3, "maxItems": 3}}})], 49152)
    assert not exact.complete_with(0, shorter)  # a list of fixed length cannot be cut


def test_stop_repeats_reaches_the_transformers_engine_only():
    from localeval.cli.shared import Shared
    from localeval.errors import LocalevalError

    assert "stop_repeats" not in Shared().judge_options(0).extra  # off by default: answers as before
    assert Shared.of(stop_repeats=True).judge_options(0).extra == {"stop_repeats": True}
    with pytest.raises(LocalevalError, match="transformers engine only"):
        Shared.of(engine="vllm", stop_repeats=True).judge_options(0)


@pytest.mark.model
def test_the_guard_is_part_of_the_judges_fingerprint(judge_dir, small_judge):
    """Answers cached without the guard are not served to a run with it (they may differ)."""
    from localeval.engine.transformers import TransformersEngine

    guarded = TransformersEngine(judge_dir, threads=1, stop_repeats=True)
    assert guarded.guard is not None and small_judge.guard is None
    assert guarded.fingerprint == small_judge.fingerprint + ":stop-repeats"
