"""What a user reads about bad data: the file, row, their own column and the Ragas field, and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pytest

from localeval.cli import main
from localeval.data import DataError, Problem, load_samples, samples_from_records
from localeval.data.errors import SHOWN

# old Ragas column -> (the Ragas field it is read as, a good value)
ALIASES = {
    "question": ("user_input", "Who wrote Emma?"),
    "answer": ("response", "Jane Austen."),
    "contexts": ("retrieved_contexts", ["Emma is a novel by Jane Austen."]),
    "ground_truth": ("reference", "Jane Austen wrote Emma."),
    "ground_truths": ("reference", ["Jane Austen wrote Emma."]),
}
FORMATS = ("jsonl", "json", "csv", "parquet", "hf")


def _write(folder: Path, fmt: str, rows: list[dict]) -> Path:
    """The rows in one of the formats localeval reads; in CSV a list cell is written as a JSON array."""
    if fmt == "jsonl":
        path = folder / "d.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif fmt == "json":
        path = folder / "d.json"
        path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    elif fmt == "csv":
        path = folder / "d.csv"
        cells = [{k: json.dumps(v) if isinstance(v, list) else v for k, v in r.items()} for r in rows]
        pd.DataFrame(cells).to_csv(path, index=False)
    elif fmt == "parquet":
        path = folder / "d.parquet"
        pd.DataFrame(rows).to_parquet(path)
    else:
        path = folder / "ds"
        datasets.Dataset.from_list(rows).save_to_disk(str(path))
    return path


def _problems(path: Path, needs: dict[str, tuple[str, ...]], nonempty: dict | None = None) -> DataError:
    with pytest.raises(DataError) as info:
        load_samples(path, required=needs, nonempty=nonempty)
    return info.value


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("alias", list(ALIASES))
def test_an_empty_cell_names_the_users_column_and_the_ragas_field(tmp_path, fmt, alias):
    field, good = ALIASES[alias]
    rows = [{"id": f"q{i}", alias: good} for i in (1, 2)] + [{"id": "q3", alias: None}]
    error = _problems(_write(tmp_path, fmt, rows), {"my_metric": (field,)})
    (problem,) = error.problems
    assert (problem.row, problem.field, problem.column) == (3, field, alias)
    line = " (line 4)" if fmt == "csv" else ""  # the CSV header is line 1
    assert str(problem) == f"row 3{line}, column {alias!r} (Ragas field {field!r}): empty, needed by my_metric"
    assert error.source is not None and error.source.endswith(("d." + fmt, "ds"))
    assert "--on-missing nan" in str(error)  # the fix


def test_a_row_without_the_key_is_missing_and_names_the_files_column(tmp_path):
    rows = [{"question": "Q1?", "answer": "A1."}, {"question": "Q2?"}]
    (problem,) = _problems(_write(tmp_path, "jsonl", rows), {"m": ("user_input", "response")}).problems
    assert str(problem) == "row 2, column 'answer' (Ragas field 'response'): missing, needed by m"


def test_a_field_no_column_holds_is_one_problem_that_guesses_the_misspelled_column(tmp_path):
    rows = [{"question": "Q?", "anwser": "A."}] * 30
    (problem,) = _problems(_write(tmp_path, "csv", rows), {"faithfulness": ("user_input", "response")}).problems
    assert problem.row is None and problem.field == "response"
    assert "no column holds it, needed by faithfulness" in problem.message
    assert "add a column 'response' (or its old Ragas name 'answer')" in problem.message
    assert "did you mean column 'anwser'?" in problem.message


def test_new_names_are_named_once(tmp_path):
    rows = [{"user_input": "Q?", "response": "A."}, {"user_input": "Q?", "response": None}]
    (problem,) = _problems(_write(tmp_path, "parquet", rows), {"m": ("response",)}).problems
    assert str(problem) == "row 2, column 'response': empty, needed by m"


def test_type_problems_name_the_old_column_too():
    with pytest.raises(DataError) as info:
        samples_from_records([{"question": "Q?", "answer": 42}])
    (problem,) = info.value.problems
    assert str(problem) == "row 1, column 'answer' (Ragas field 'response'): expected text, got int 42"


def test_sample_objects_have_fields_not_columns():
    from localeval.data import Sample

    with pytest.raises(DataError) as info:
        samples_from_records([Sample(id="a", user_input="Q?")], required={"m": ("response",)})
    assert str(info.value.problems[0]) == "row 1, field 'response': missing, needed by m"


def test_a_malformed_list_cell_does_not_hide_the_other_rows(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(
        "question,contexts,answer\n"
        'Q1?,"[""c""]",\n'  # row 1: no answer
        "Q2?,not a list,A2.\n"  # row 2: the malformed cell
        'Q3?,"[]",A3.\n'  # row 3: no context
        'Q4?,"[""c""]",A4.\n'
        ',"[""c"", ",\n'  # row 5: no question, a list that does not parse, no answer
    )
    faithfulness = {"faithfulness": ("user_input", "retrieved_contexts", "response")}
    error = _problems(path, faithfulness, {"faithfulness": ("retrieved_contexts",)})
    found = [(p.row, p.column) for p in error.problems]
    assert found == [(1, "answer"), (2, "contexts"), (3, "contexts"), (5, "contexts"), (5, "question"),
                     (5, "answer")]
    messages = [p.message for p in error.problems]
    assert "expected a list written as a JSON array" in messages[1]
    assert messages[2] == "empty list, needed by faithfulness" and "cannot read the list" in messages[3]
    assert [p.line for p in error.problems] == [2, 3, 4, 6, 6, 6]


def test_a_bad_json_line_and_missing_fields_are_listed_in_row_order(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"question": "Q1?"}\n{"question": \n{"question": "Q3?", "answer": "A3."}\n')
    error = _problems(path, {"m": ("user_input", "response")})
    assert [(p.row, p.field) for p in error.problems] == [(1, "response"), (2, None)]
    assert str(error.problems[1]).startswith("row 2: not valid JSON")


def test_many_problems_are_capped_with_a_count_of_the_rest(tmp_path):
    rows = [{"question": "Q?", "contexts": "one chunk" if i % 2 else ["c"], "answer": None} for i in range(20)]
    error = _problems(_write(tmp_path, "jsonl", rows), {"m": ("user_input", "retrieved_contexts", "response")})
    assert len(error.problems) == 30  # every row lacks its answer; every other one has a bad list too
    text = str(error).splitlines()
    assert len([t for t in text if t.startswith("  row ")]) == SHOWN
    assert text[-2] == f"  ... and {30 - SHOWN} more (the first {SHOWN} are shown)"
    assert text[-1].startswith("fix: ")


def test_the_fix_is_only_given_for_missing_fields():
    assert DataError([Problem(1, "response", "expected text, got int 4")], "d.jsonl").fix is None
    with pytest.raises(DataError) as info:
        samples_from_records([{"question": "Q?"}, {"question": "Q?", "answer": 4}], required={"m": ("user_input",)})
    assert info.value.fix is None


def test_cli_evaluate_lists_every_problem_on_stderr_before_any_model(tmp_path, monkeypatch, capsys):
    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before the data was checked")

    monkeypatch.setattr("localeval.run.models.load_judge", no_model)
    monkeypatch.setattr("localeval.run.models.load_embedder", no_model)
    path = tmp_path / "d.csv"
    path.write_text('question,contexts,answer\nQ1?,not a list,A1.\nQ2?,"[""c""]",\n')
    code = main(["evaluate", str(path), "--metrics", "faithfulness", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.splitlines()
    assert code == 1
    assert err[0] == f"localeval: 2 problems in {path}:"
    assert err[1].startswith("  row 1 (line 2), column 'contexts' (Ragas field 'retrieved_contexts'): expected a list")
    assert err[2] == "  row 2 (line 3), column 'answer' (Ragas field 'response'): empty, needed by faithfulness"
    assert err[3].startswith("fix: ") and "--on-missing nan" in err[3]
    assert not (tmp_path / "run").exists()
