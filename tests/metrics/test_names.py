"""Misspelled metric names, option names and option values: a guess at what was meant and what is valid."""

from __future__ import annotations

import pytest

from localeval.errors import LocalevalError
from localeval.metrics.registry import (
    ALIASES,
    METRICS,
    column_of,
    option_words,
    parse_metric,
    parse_metrics,
    spelling,
)


def _message(text: str) -> str:
    with pytest.raises(LocalevalError) as info:
        parse_metric(text)
    return str(info.value)


def test_a_misspelled_metric_gets_the_closest_few_names_and_a_pointer_to_the_list() -> None:
    message = _message("faithfullness")
    assert message == ("unknown metric 'faithfullness'; did you mean faithfulness? (`localeval metrics` lists all "
                       f"{len(METRICS) + len(ALIASES)} names, what each needs and its options)")
    assert "context_recall" not in message and "noise_sensitivity_irrelevant" not in message  # not all 44 names
    assert "did you mean context_precision or" in _message("context_precison")
    assert "did you mean bleu_score?" in _message("bleu")  # a name it is part of
    far = _message("zzz")
    assert far == ("unknown metric 'zzz' (`localeval metrics` lists all "
                   f"{len(METRICS) + len(ALIASES)} names, what each needs and its options)")
    noise = _message("noise")
    assert noise.count(" or ") <= 3 and "noise_sensitivity" in noise


def test_a_run_column_name_is_explained_as_the_colon_form() -> None:
    assert _message("factual_correctness(mode=precision,beta=0.5)") == (
        "unknown metric 'factual_correctness(mode=precision,beta=0.5)': write options after colons, "
        "e.g. 'factual_correctness:mode=precision:beta=0.5'")


def test_a_misspelled_option_name_gets_a_guess_and_the_options_with_defaults() -> None:
    assert _message("factual_correctness:mdoe=precision").startswith(
        "metric factual_correctness: unknown option 'mdoe'; did you mean 'mode'? (its options: "
        "mode: f1 | precision | recall (default f1); beta: a number (default 1.0); ")
    assert _message("ndcg:depth=3") == "metric ndcg: unknown option 'depth' (its options: k: 1 or more, or all " \
                                       "(default all ranks))"
    assert _message("faithfulness:k=3") == "metric faithfulness: unknown option 'k' (faithfulness takes no options)"


def test_a_misspelled_option_value_gets_a_guess_and_the_choices() -> None:
    assert _message("factual_correctness:mode=precison") == (
        "metric factual_correctness: option mode='precison' must be one of f1 | precision | recall; "
        "did you mean 'precision'?")
    assert _message("noise_sensitivity:mode=irelevant").endswith("did you mean 'irrelevant' or 'relevant'?")
    assert "did you mean" not in _message("factual_correctness:mode=f2")


@pytest.mark.parametrize(("text", "expected"), [
    ("ndcg:k=0", "metric ndcg: option k='0' must be a whole number, 1 or more, or all, e.g. ndcg:k=2"),
    ("factual_correctness:beta=x", "metric factual_correctness: option beta='x' must be a number, "
                                   "e.g. factual_correctness:beta=0.5"),
    ("factual_correctness:mode", "metric factual_correctness: option 'mode' needs a value, e.g. "
                                 "factual_correctness:mode=recall (mode: f1 | precision | recall (default f1))"),
])
def test_bad_values_say_what_is_expected(text: str, expected: str) -> None:
    assert _message(text) == expected


def test_valid_names_and_options_still_parse() -> None:
    assert parse_metric(" ndcg : k = 5 ").options == {"k": 5}
    assert parse_metric("ndcg:k=all").options == {"k": None}
    assert [s.name for s in parse_metrics("faithfulness,factual_correctness:mode=recall")] == [
        "faithfulness", "factual_correctness(mode=recall)"]


def test_options_in_words() -> None:
    assert option_words(METRICS["ndcg"], "k") == "k: 1 or more, or all (default all ranks)"
    assert option_words(METRICS["factual_correctness"], "mode") == "mode: f1 | precision | recall (default f1)"
    assert option_words(METRICS["answer_relevancy"], "strictness") == "strictness: 1 or more (default 3)"



def test_one_spelling_names_every_column_with_options() -> None:
    """Each metric with options: the column's --metrics spelling parses back to that column, and names it."""
    for name, definition in METRICS.items():
        for key, choices in definition.choices.items():
            column = parse_metric(f"{name}:{key}={choices[-1]}").name
            written = spelling(column)
            assert "(" not in written and parse_metric(written).name == column
            assert column_of(written, ["faithfulness", column]) == column
    assert column_of("factual_correctness:beta=0.5:mode=recall", ["factual_correctness(mode=recall,beta=0.5)"]) == (
        "factual_correctness(mode=recall,beta=0.5)")
    assert column_of("polite:scale=3", ["polite(scale=3)"]) == "polite(scale=3)"  # a criterion's column
    assert column_of("faithfulness", ["context_recall"]) is None
