"""Reading human labels: the three row shapes, CSV and JSON, and errors that name row and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.agree.labels import SampleLabel, VerdictLabel, read_labels
from localeval.data.errors import DataError


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_long_wide_and_verdict_rows(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "labels.jsonl", [
        {"id": "a", "metric": "faithfulness", "label": 0.5},
        {"id": 7, "faithfulness": 1, "context_recall": 0.25, "note": "checked twice", "answer_relevancy": None},
        {"id": "a", "metric": "faithfulness", "index": 1, "label": "no"},
        {"id": "b", "metric": "context_precision", "index": "0", "label": True},
    ])
    labels = read_labels(path)
    assert labels.samples == [SampleLabel("a", "faithfulness", 0.5, 1), SampleLabel("7", "faithfulness", 1.0, 2),
                              SampleLabel("7", "context_recall", 0.25, 2)]
    assert labels.verdicts == [VerdictLabel("a", "faithfulness", 1, 0, 3),
                               VerdictLabel("b", "context_precision", 0, 1, 4)]
    assert labels.metrics == ["faithfulness", "context_recall", "context_precision"]
    assert labels.source == str(path)


def test_csv_wide_with_empty_cells_and_long(tmp_path: Path) -> None:
    wide = tmp_path / "wide.csv"
    wide.write_text("id,faithfulness,context_recall\nq1,1,\nq2,0.5,0\n")
    labels = read_labels(wide)
    assert [(x.id, x.metric, x.label) for x in labels.samples] == [
        ("q1", "faithfulness", 1.0), ("q2", "faithfulness", 0.5), ("q2", "context_recall", 0.0)]
    long = tmp_path / "long.csv"
    long.write_text("id,metric,index,label\nq1,faithfulness,,1\nq1,faithfulness,2,0\n")
    labels = read_labels(long)
    assert labels.samples == [SampleLabel("q1", "faithfulness", 1.0, 1)]
    assert labels.verdicts == [VerdictLabel("q1", "faithfulness", 2, 0, 2)]


def test_a_json_array(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps([{"id": "a", "faithfulness": 0}, {"id": "b", "faithfulness": 1}]))
    assert [x.label for x in read_labels(path).samples] == [0.0, 1.0]


def test_every_bad_row_is_named(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [
        {"metric": "faithfulness", "label": 1},  # 1: no id
        {"id": "a", "metric": "faithfulness", "label": 1.5},  # 2: out of range
        {"id": "b", "faithfulness": "good"},  # 3: not a number
        {"id": "c", "metric": "faithfulness", "index": 0, "label": 0.5},  # 4: a verdict is 0 or 1
        {"id": "c", "metric": "faithfulness", "index": -1, "label": 1},  # 5: no position
        {"id": "d", "metric": "faithfulness"},  # 6: no label
        {"id": "e", "metric": "", "label": 1},  # 7: no metric name
        ["e", 1],  # 8: not an object
        {"id": "a", "metric": "faithfulness", "label": 1.5},  # 9: out of range (row 2 gave no label, so no duplicate)
    ])
    with pytest.raises(DataError) as caught:
        read_labels(path)
    where = [(p.row, p.field) for p in caught.value.problems]
    assert where == [(1, "id"), (2, "label"), (3, "faithfulness"), (4, "label"), (5, "index"), (6, "label"),
                     (7, "metric"), (8, None), (9, "label")]
    message = str(caught.value)
    assert "row 2, field 'label': 1.5 is outside [0, 1]" in message
    assert "row 3, field 'faithfulness': 'good' is not a number" in message
    assert str(path) in message


def test_duplicates_name_both_rows(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "dup.jsonl", [
        {"id": "a", "faithfulness": 1},
        {"id": "a", "metric": "faithfulness", "label": 0},
        {"id": "a", "metric": "faithfulness", "index": 0, "label": 0},
        {"id": "a", "metric": "faithfulness", "index": 0, "label": 1},
    ])
    with pytest.raises(DataError) as caught:
        read_labels(path)
    assert [p.row for p in caught.value.problems] == [2, 4]
    assert "first in row 1" in str(caught.value) and "index 0" in str(caught.value)


def test_blank_lines_give_the_file_line(tmp_path: Path) -> None:
    path = tmp_path / "gaps.jsonl"
    path.write_text('{"id": "a", "faithfulness": 1}\n\n{"id": "b", "faithfulness": 2}\n')
    with pytest.raises(DataError, match=r"row 2 \(line 3\), field 'faithfulness'"):
        read_labels(path)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("missing.jsonl", None, "no labels file"),
    ("labels.txt", "id,faithfulness\n", "labels are .jsonl or .csv"),
    ("broken.jsonl", '{"id": "a", "faithfulness": 1}\n{"id": \n', "line 2: not valid JSON"),
    ("noid.csv", "sample,faithfulness\nq1,1\n", "no id column"),
    ("empty.jsonl", "\n", "holds no labels"),
])
def test_unusable_files(tmp_path: Path, name: str, text: str | None, message: str) -> None:
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(DataError, match=message):
        read_labels(path)
