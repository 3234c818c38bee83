"""Samples read chunk by chunk give what the eager reader gives, and the same errors, found in one pass."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from localeval.data import DataError, load_samples
from localeval.data.stream import sample_chunks, scan_samples

NEEDS = {"faithfulness": ("user_input", "response", "retrieved_contexts")}


def _rows(n: int) -> list[dict]:
    return [{"id": f"s{i}", "user_input": f"q {i}?", "response": f"r {i}.", "retrieved_contexts": [f"c{i}", "d"],
             "reference": "x"} for i in range(n)]


def _write_all(folder: Path, rows: list[dict]) -> list[Path]:
    jsonl = folder / "d.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" + ("\n" if i == 3 else "") for i, r in enumerate(rows)))
    frame = pd.DataFrame(rows)
    frame.to_parquet(folder / "d.parquet")
    frame.assign(retrieved_contexts=frame["retrieved_contexts"].map(json.dumps)).to_csv(folder / "d.csv", index=False)
    return [jsonl, folder / "d.parquet", folder / "d.csv"]


def test_every_format_streams_the_samples_the_eager_reader_gives(tmp_path: Path) -> None:
    rows = _rows(23)
    del rows[5]["id"]  # numbered by its row, as the eager reader numbers it
    for path in _write_all(tmp_path, rows):
        chunks = list(sample_chunks(path, 7))
        assert [i for i, _ in chunks] == [0, 1, 2, 3] and [len(c) for _, c in chunks] == [7, 7, 7, 2], path
        assert [s for _, c in chunks for s in c] == load_samples(path), path
        assert scan_samples(path, 7, NEEDS) == 23
        assert [i for i, _ in sample_chunks(path, 7, skip=2)] == [2, 3]


def test_the_check_pass_reports_every_chunk_and_ids_repeated_across_chunks(tmp_path: Path) -> None:
    rows = [*_rows(12), {"id": "s2", "user_input": "again?"}, {"id": "s11", "user_input": "y", "response": "r.",
                                                                "retrieved_contexts": ["c"]}]
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{not json\n")
    with pytest.raises(DataError) as caught:
        scan_samples(path, 5, NEEDS)
    found = {(p.row, p.message.split(",")[0]) for p in caught.value.problems}
    assert (13, "duplicate id 's2'") in found and (14, "duplicate id 's11'") in found
    assert {p.row for p in caught.value.problems} == {13, 14, 15}
    assert any("not valid JSON" in p.message for p in caught.value.problems if p.row == 15)


def test_a_file_unreadable_as_a_whole_fails_as_the_eager_reader_says(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(gzip.compress(b'{"user_input": "q"}\n'))
    with pytest.raises(DataError) as lazily:
        scan_samples(path, 5)
    with pytest.raises(DataError) as eagerly:
        load_samples(path)
    assert str(lazily.value) == str(eagerly.value) and "gzip-compressed" in str(lazily.value)
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"user_input,response\nq\xff,r\n")
    with pytest.raises(DataError, match="not UTF-8"):
        scan_samples(bad, 5)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DataError, match="no samples"):
        scan_samples(empty, 5)


def test_a_saved_dataset_streams_by_slices(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "saved"
    datasets.Dataset.from_list(_rows(11)).save_to_disk(str(folder))
    chunks = list(sample_chunks(folder, 4))
    assert [len(c) for _, c in chunks] == [4, 4, 3]
    assert [s for _, c in chunks for s in c] == load_samples(folder)
    assert scan_samples(folder, 4, NEEDS) == 11
