"""Validation against what metrics need: pure, no model, one problem per (row, field)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from localeval.data import DataError, Problem, Sample, validate

FULL = Sample(
    id="1",
    user_input="Who wrote Emma?",
    retrieved_contexts=("Emma is a novel by Jane Austen.",),
    response="Jane Austen.",
    reference="Jane Austen wrote Emma.",
)
NEEDS = {
    "faithfulness": ("user_input", "response", "retrieved_contexts"),
    "context_recall": ("user_input", "retrieved_contexts", "reference"),
    "factual_correctness": ("response", "reference"),
}


def problems(samples, required=NEEDS, nonempty=None):
    with pytest.raises(DataError) as info:
        validate(samples, required, nonempty)
    return info.value.problems


def test_complete_samples_pass():
    validate([FULL, FULL], NEEDS, {"faithfulness": ("retrieved_contexts",)})


def test_missing_field_groups_the_metrics_that_need_it():
    samples = [FULL] * 6 + [Sample(id="7", user_input="q", response="r", retrieved_contexts=("c",))]
    (problem,) = problems(samples)
    assert (problem.row, problem.field) == (7, "reference")
    assert str(problem) == "row 7, field 'reference': missing, needed by context_recall, factual_correctness"


def test_one_problem_per_row_and_field():
    found = problems([Sample(id="a"), FULL, Sample(id="c", user_input="q", retrieved_contexts=("c",))])
    assert [(p.row, p.field) for p in found] == [
        (1, "user_input"),
        (1, "retrieved_contexts"),
        (1, "response"),
        (1, "reference"),
        (3, "response"),
        (3, "reference"),
    ]
    assert found[0].message == "missing, needed by faithfulness, context_recall"


def test_empty_list_where_a_metric_needs_items():
    sample = Sample(id="1", user_input="q", retrieved_contexts=(), response="r", reference="")
    (problem,) = problems([sample], nonempty={"context_precision": ("retrieved_contexts",)})
    assert str(problem) == "row 1, field 'retrieved_contexts': empty list, needed by context_precision"


def test_empty_list_is_fine_where_no_metric_needs_items_and_empty_text_is_kept():
    validate([Sample(id="1", user_input="", retrieved_contexts=(), response="", reference="")], NEEDS)


def test_nonempty_field_must_also_be_present():
    (problem,) = problems(
        [Sample(id="1")], required={}, nonempty={"context_precision": ("retrieved_contexts",)}
    )
    assert problem.message == "missing, needed by context_precision"


def test_unknown_field_in_a_metric_table_is_a_programming_error():
    with pytest.raises(ValueError, match="'refrence'"):
        validate([FULL], {"context_recall": ("refrence",)})


@pytest.mark.slow  # a fresh interpreter imports localeval
def test_validation_needs_no_model():
    code = (
        "import sys; from localeval.data import Sample, validate; "
        "validate([Sample(id='1', user_input='q')], {'m': ('user_input',)}); "
        "heavy = {'torch', 'transformers', 'vllm', 'sentence_transformers', 'datasets'} & set(sys.modules); "
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_data_error_survives_pickling():  # errors cross process boundaries (Ray, multiprocessing)
    import pickle

    error = DataError([Problem(3, "response", "expected text, got int 42")], "d.jsonl")
    copy = pickle.loads(pickle.dumps(error))
    assert copy.problems == error.problems and str(copy) == str(error)
    assert str(copy) == "1 problem in d.jsonl:\n  row 3, field 'response': expected text, got int 42"
