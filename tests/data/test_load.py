"""Loading samples from every supported format, old Ragas names, ids, and every error a user can meet."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import datasets
import numpy as np
import pandas as pd
import pytest

from localeval.data import DataError, Problem, Sample, load_samples, samples_from_records, validate
from localeval.data.sample import PLAIN_FIELDS

EXAMPLE = Path(__file__).parents[2] / "examples" / "rag_demo.jsonl"

ROWS = [
    {
        "id": "a",
        "user_input": "Who wrote Emma?",
        "retrieved_contexts": ["Emma is a novel by Jane Austen.", "Austen was born in 1775."],
        "response": "Jane Austen.",
        "reference": "Jane Austen wrote Emma.",
        "retrieved_context_ids": ["d1", "d2"],
        "reference_context_ids": ["d1"],
        "topic": "books",
    },
    {"id": "b", "user_input": "Capital of France?", "response": "Paris.", "retrieved_contexts": []},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def problems_of(path: Path) -> list[Problem]:
    with pytest.raises(DataError) as info:
        load_samples(path)
    return info.value.problems


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, problems
    return problems[0]


def check_rows(samples: list[Sample]) -> None:
    """The samples of ROWS, however they were stored."""
    a, b = samples
    assert a.id == "a" and b.id == "b"
    assert a.user_input == "Who wrote Emma?"
    assert a.retrieved_contexts == ("Emma is a novel by Jane Austen.", "Austen was born in 1775.")
    assert a.retrieved_context_ids == ("d1", "d2") and a.reference_context_ids == ("d1",)
    assert a.reference == "Jane Austen wrote Emma." and a.extra["topic"] == "books"
    assert b.reference is None and b.reference_context_ids is None and b.retrieved_contexts == ()


# --- formats --------------------------------------------------------------------------------------------


def test_jsonl(tmp_path):
    check_rows(load_samples(write_jsonl(tmp_path / "d.jsonl", ROWS)))


def test_jsonl_skips_blank_lines_and_names_the_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n" + json.dumps(ROWS[0]) + "\n\n" + json.dumps({"id": "b", "response": 7}) + "\n")
    problem = only(problems_of(path))
    assert (problem.row, problem.field, problem.line) == (2, "response", 4)
    assert str(problem) == "row 2 (line 4, id 'b'), column 'response': expected text, got int 7"


def test_json_list_and_json_lines_in_a_json_file(tmp_path):
    (tmp_path / "list.json").write_text(json.dumps(ROWS, indent=2))
    check_rows(load_samples(tmp_path / "list.json"))
    check_rows(load_samples(write_jsonl(tmp_path / "lines.json", ROWS)))
    (tmp_path / "one.json").write_text(json.dumps(ROWS[0], indent=2))
    assert [s.id for s in load_samples(tmp_path / "one.json")] == ["a"]


def test_csv_with_json_and_python_lists(tmp_path):
    path = tmp_path / "d.csv"
    pd.DataFrame(
        {
            "id": ["a", "b"],
            "user_input": ["Who wrote Emma?", "Capital of France?"],
            "retrieved_contexts": [json.dumps(ROWS[0]["retrieved_contexts"]), "[]"],
            "response": ["Jane Austen.", "Paris."],
            "reference": ["Jane Austen wrote Emma.", ""],
            "retrieved_context_ids": ["['d1', 'd2']", ""],  # a Python literal, as str(list) writes it
            "reference_context_ids": ['["d1"]', ""],
            "topic": ["books", ""],
        }
    ).to_csv(path, index=False)
    samples = load_samples(path)
    check_rows(samples)
    assert samples[1].extra["topic"] is None  # an empty cell is missing


def test_csv_ids_default_to_row_numbers_and_answerable_strings(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('user_input,answerable\n"What is 2+2?",true\nWhy?,0\nHow?,\n')
    samples = load_samples(path)
    assert [s.id for s in samples] == ["1", "2", "3"]
    assert [s.answerable for s in samples] == [True, False, None]


def test_csv_cell_errors_name_row_line_and_column(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('id,user_input,retrieved_contexts\nq1,Why?,just one chunk\nq2,How?,"[""a"", \n')
    first, second = problems_of(path)
    assert (first.row, first.line, first.field) == (1, 2, "retrieved_contexts")
    assert "expected a list written as a JSON array" in first.message
    assert (second.row, second.field) == (
        2,
        "retrieved_contexts",
    ) and "cannot read the list" in second.message
    assert str(first).startswith("row 1 (line 2), column 'retrieved_contexts': ")


def test_csv_row_with_too_many_cells(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("user_input,response\nWhy?,Because.\nHow?,Thus.,extra\n")
    problem = only(problems_of(path))
    assert (problem.row, problem.line) == (2, 3) and "3 cells but the header has 2 columns" in problem.message


def test_parquet(tmp_path):
    path = tmp_path / "d.parquet"
    pd.DataFrame(ROWS).to_parquet(path)
    check_rows(load_samples(path))


def test_parquet_numbers_and_nan(tmp_path):
    path = tmp_path / "d.parquet"
    frame = pd.DataFrame(
        {"id": [1, 2], "user_input": ["Why?", None], "retrieved_context_ids": [[3, 4], None]}
    )
    frame.to_parquet(path)
    one, two = load_samples(path)
    assert (one.id, one.retrieved_context_ids) == ("1", ("3", "4"))
    assert (two.id, two.user_input, two.retrieved_context_ids) == ("2", None, None)


def test_hugging_face_dataset_folder(tmp_path):
    datasets.Dataset.from_list(ROWS).save_to_disk(str(tmp_path / "ds"))
    check_rows(load_samples(tmp_path / "ds"))


def test_hugging_face_dataset_dict_with_one_split(tmp_path):
    datasets.DatasetDict({"test": datasets.Dataset.from_list(ROWS)}).save_to_disk(str(tmp_path / "dd"))
    check_rows(load_samples(str(tmp_path / "dd")))


def test_hugging_face_dataset_dict_with_several_splits_names_them(tmp_path):
    ds = datasets.Dataset.from_list(ROWS)
    datasets.DatasetDict({"train": ds, "test": ds}).save_to_disk(str(tmp_path / "dd"))
    message = only(problems_of(tmp_path / "dd")).message
    assert "2 splits (train, test)" in message and str(tmp_path / "dd" / "train") in message
    check_rows(load_samples(tmp_path / "dd" / "test"))  # one split's folder loads


def test_folder_that_is_not_a_dataset(tmp_path):
    assert "a folder, but no saved Hugging Face dataset" in only(problems_of(tmp_path)).message


# --- old Ragas names and ids --------------------------------------------------------------------------


def test_old_ragas_names_are_mapped(tmp_path):
    old = {"question": "Q?", "answer": "A.", "contexts": ["c1", "c2"], "ground_truth": "R."}
    (sample,) = samples_from_records([old])
    assert (sample.user_input, sample.response, sample.retrieved_contexts, sample.reference) == (
        "Q?",
        "A.",
        ("c1", "c2"),
        "R.",
    )


@pytest.mark.parametrize(
    ("truths", "reference"), [(["only"], "only"), (["one", "two"], "one\ntwo"), ([], None)]
)
def test_old_ground_truths_list(truths, reference):
    (sample,) = samples_from_records([{"question": "Q?", "ground_truths": truths}])
    assert sample.reference == reference


def test_old_ground_truths_in_csv(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text('question,ground_truths\nQ1?,"[""a"", ""b""]"\nQ2?,plain text\n')
    assert [s.reference for s in load_samples(path)] == ["a\nb", "plain text"]


def test_old_and_new_names_together():
    same = {"question": "Q?", "user_input": "Q?", "response": "A."}
    assert samples_from_records([same])[0].user_input == "Q?"
    with pytest.raises(DataError) as info:
        samples_from_records([same, {"user_input": "Q1?", "question": "Q2?"}])
    problem = only(info.value.problems)
    assert (problem.row, problem.field) == (2, "user_input")
    assert "'user_input'" in problem.message and "'question'" in problem.message


def test_old_name_missing_does_not_conflict():
    (sample,) = samples_from_records([{"question": None, "user_input": "Q?"}])
    assert sample.user_input == "Q?"


def test_ids_from_id_sample_id_numbers_and_row_numbers():
    samples = samples_from_records(
        [{"id": "x", "user_input": "a"}, {"sample_id": 7, "user_input": "b"}, {"user_input": "c"}]
    )
    assert [s.id for s in samples] == ["x", "7", "3"]


def test_duplicate_ids_name_both_rows(tmp_path):
    rows = [{"id": "a", "user_input": "1"}, {"id": "b", "user_input": "2"}, {"id": "a", "user_input": "3"}]
    problem = only(problems_of(write_jsonl(tmp_path / "d.jsonl", rows)))
    assert (problem.row, problem.field) == (3, "id") and "duplicate id 'a', also in row 1" in problem.message


def test_duplicate_ids_are_found_in_rows_with_other_problems_too(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("id,user_input,retrieved_contexts\nq1,Why?,chunk\nq1,How?,\"['a', None]\"\n")
    found = [(p.row, p.field) for p in problems_of(path)]
    assert found == [(1, "retrieved_contexts"), (2, "retrieved_contexts"), (2, "id")]


def test_missing_ids_are_numbered_and_a_bad_id_is_no_duplicate():
    samples = samples_from_records([{"id": float("nan"), "user_input": "a"}, {"id": None, "sample_id": "s"}])
    assert [s.id for s in samples] == ["1", "2"]  # sample_id is only read where there is no id column
    assert samples[1].extra == {"sample_id": "s"}
    with pytest.raises(DataError) as info:
        samples_from_records([{"id": True, "user_input": "a"}, {"id": "1", "user_input": "b"}])
    problem = only(info.value.problems)
    assert (problem.row, problem.field) == (1, "id") and "expected text or a whole number" in problem.message


def test_duplicate_of_a_row_number_id_explains_it():
    with pytest.raises(DataError) as info:
        samples_from_records([{"id": "2", "user_input": "a"}, {"user_input": "b"}])
    assert "takes its row number as id" in only(info.value.problems).message


def test_answerable_values():
    samples = samples_from_records(
        [{"user_input": "a", "answerable": v} for v in (True, "False", 1, "yes", None)]
    )
    assert [s.answerable for s in samples] == [True, False, True, True, None]
    with pytest.raises(DataError) as info:
        samples_from_records([{"user_input": "a", "answerable": "maybe"}])
    assert only(info.value.problems).field == "answerable"


# --- type checks ---------------------------------------------------------------------------------------


def test_number_where_text_is_expected(tmp_path):
    rows = [{"user_input": "q", "response": "r"}] * 3 + [{"user_input": "q", "response": 42}]
    problem = only(problems_of(write_jsonl(tmp_path / "d.jsonl", rows)))
    assert str(problem) == "row 4, column 'response': expected text, got int 42"


def test_list_where_text_is_expected_and_string_where_list_is_expected():
    with pytest.raises(DataError) as info:
        samples_from_records([{"user_input": ["a", "b"], "retrieved_contexts": "one chunk"}])
    text, texts = info.value.problems
    assert (text.row, text.field) == (1, "user_input") and "expected text, got list" in text.message
    assert (texts.row, texts.field) == (1, "retrieved_contexts")
    assert "expected a list of texts, got str 'one chunk'" in texts.message


def test_null_and_numbers_inside_lists():
    with pytest.raises(DataError) as info:
        samples_from_records(
            [
                {"user_input": "q", "retrieved_contexts": ["a", None]},
                {"user_input": "q", "reference_contexts": ["a", 3]},
                {"user_input": "q", "retrieved_context_ids": [1, True]},
            ]
        )
    null, number, boolean = info.value.problems
    assert (null.row, null.field, null.message) == (1, "retrieved_contexts", "item 2: missing (null)")
    assert (number.row, number.field) == (2, "reference_contexts") and "got int 3" in number.message
    assert (boolean.row, boolean.field) == (3, "retrieved_context_ids") and "got bool True" in boolean.message


def test_numeric_ids_in_id_lists_become_text():
    (sample,) = samples_from_records([{"user_input": "q", "retrieved_context_ids": [1, 2]}])
    assert sample.retrieved_context_ids == ("1", "2")


def test_all_problems_of_a_file_are_collected(tmp_path):
    rows = [{"id": i, "user_input": i} for i in range(1, 26)]  # 25 rows, each with a number as question
    problems = problems_of(write_jsonl(tmp_path / "d.jsonl", rows))
    assert [p.row for p in problems] == list(range(1, 26))
    with pytest.raises(DataError) as info:
        load_samples(tmp_path / "d.jsonl")
    text = str(info.value)
    assert text.startswith(f"25 problems in {tmp_path / 'd.jsonl'}:")
    assert "row 20, column 'user_input'" in text and "row 21," not in text
    assert text.endswith("... and 5 more (the first 20 are shown)")


# --- problems of the whole file -------------------------------------------------------------------------


def test_file_not_found(tmp_path):
    assert "no such file or folder" in only(problems_of(tmp_path / "missing.jsonl")).message


@pytest.mark.parametrize(
    ("name", "content"), [("e.jsonl", ""), ("e.json", "[]"), ("e.csv", "user_input,response\n")]
)
def test_no_samples(tmp_path, name, content):
    (tmp_path / name).write_text(content)
    assert only(problems_of(tmp_path / name)).message == f"no samples in {tmp_path / name}"


def test_invalid_json_line_is_named_and_other_lines_still_checked(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"user_input": "a"}\n{"user_input": "b",\n{"user_input": 5}\n')
    bad_json, bad_type = problems_of(path)
    assert bad_json.row == 2 and str(bad_json).startswith("row 2: not valid JSON")
    assert (bad_type.row, bad_type.field) == (3, "user_input")


def test_invalid_json_array(tmp_path):
    (tmp_path / "d.json").write_text('[\n  {"user_input": "a"},\n  {"user_input": }\n]')
    problem = only(problems_of(tmp_path / "d.json"))
    assert problem.line == 3 and "not valid JSON" in problem.message


def test_json_array_in_a_jsonl_file(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps(ROWS, indent=2))
    assert "one JSON array, not JSON lines" in only(problems_of(tmp_path / "d.jsonl")).message


def test_json_object_of_columns(tmp_path):
    (tmp_path / "d.json").write_text(pd.DataFrame(ROWS).to_json())
    assert "orient='records'" in only(problems_of(tmp_path / "d.json")).message


@pytest.mark.parametrize("name", ["g.jsonl", "g.csv"])
def test_binary_garbage(tmp_path, name):
    (tmp_path / name).write_bytes(bytes(range(256)) * 4)
    assert "binary data" in only(problems_of(tmp_path / name)).message


def test_text_that_is_not_a_csv_of_samples(tmp_path):
    (tmp_path / "d.csv").write_text("hello world\nthis is prose, not a table\n")
    assert (
        "no sample field in the data (found the header hello world)"
        in only(problems_of(tmp_path / "d.csv")).message
    )


def test_json_named_csv(tmp_path):
    write_jsonl(tmp_path / "d.csv", ROWS)
    assert "looks like JSON" in only(problems_of(tmp_path / "d.csv")).message


def test_gzip_and_parquet_with_a_wrong_name(tmp_path):
    (tmp_path / "z.jsonl").write_bytes(gzip.compress(b'{"user_input": "a"}\n'))
    assert "gzip" in only(problems_of(tmp_path / "z.jsonl")).message
    pd.DataFrame(ROWS).to_parquet(tmp_path / "p.csv")
    assert "rename it to .parquet" in only(problems_of(tmp_path / "p.csv")).message


def test_not_parquet(tmp_path):
    (tmp_path / "d.parquet").write_text("user_input\nWhy?\n")
    assert "cannot read the file as Parquet" in only(problems_of(tmp_path / "d.parquet")).message


@pytest.mark.parametrize("name", ["latin.jsonl", "latin.csv"])
def test_non_utf8_bytes_name_line_and_offset(tmp_path, name):
    head = "user_input,response\n" if name.endswith(".csv") else ""
    row = '{"user_input": "Café?"}\n' if name.endswith(".jsonl") else "Café?,Oui.\n"
    data = (head + row).encode("utf-8") + row.encode("latin-1")  # the second row is Latin-1
    (tmp_path / name).write_bytes(data)
    problem = only(problems_of(tmp_path / name))
    offset = data.index(b"\xe9")
    assert problem.line == data.count(b"\n", 0, offset) + 1
    assert f"not UTF-8: byte 0xe9 at offset {offset}" in problem.message


def test_unknown_extension_lists_supported(tmp_path):
    (tmp_path / "d.xlsx").write_text("x")
    message = only(problems_of(tmp_path / "d.xlsx")).message
    assert "'.xlsx'" in message and all(
        s in message for s in (".jsonl", ".json", ".csv", ".parquet", "save_to_disk")
    )


# --- records from Python ------------------------------------------------------------------------------


def test_records_samples_pass_through_and_dataframes():
    given = Sample(id="s", user_input="q")
    samples = samples_from_records([given, {"id": "t", "user_input": "r"}])
    assert samples[0] is given and samples[1].id == "t"
    check_rows(samples_from_records(pd.DataFrame(ROWS)))  # numpy arrays and NaN from pandas


def test_records_numpy_values():
    (sample,) = samples_from_records(
        [
            {
                "id": np.int64(4),
                "user_input": "q",
                "retrieved_contexts": np.array(["a", "b"]),
                "x": np.float64("nan"),
            }
        ]
    )
    assert (sample.id, sample.retrieved_contexts, sample.extra["x"]) == ("4", ("a", "b"), None)


def test_records_that_are_not_mappings():
    with pytest.raises(DataError) as info:
        samples_from_records([{"user_input": "q"}, ["not", "a", "dict"]], source="my list")
    problem = only(info.value.problems)
    assert problem.row == 2 and "expected an object" in problem.message and info.value.source == "my list"


def test_no_records():
    with pytest.raises(DataError, match="no samples in <records>"):
        samples_from_records([])


# --- the demo data set --------------------------------------------------------------------------------


def test_demo_data_set_loads_and_is_complete():
    samples = load_samples(EXAMPLE)
    assert [s.id for s in samples] == [f"q{i}" for i in range(1, 7)]
    every = tuple(f for f in PLAIN_FIELDS if f not in ("reference_contexts", "reference_topics"))
    validate(samples, {"demo": every})
    assert all(2 <= len(s.retrieved_contexts or ()) <= 3 for s in samples)
    assert any("don't know" in (s.response or "") for s in samples)
