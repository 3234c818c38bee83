"""Samples from files (JSON lines, JSON, CSV, Parquet, a saved Hugging Face dataset) and from records.

Every problem of a file is collected before one ``DataError`` is raised (see ``records``): what cannot be
read, what has the wrong type and, when the metrics' needs are given, what the metrics lack, each naming
its 1-based data row, the user's column and the Ragas field. A user fixes the whole file in one pass.
"""

from __future__ import annotations

import ast
import codecs
import csv
import io
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from localeval.data.errors import DataError, Problem
from localeval.data.records import REPORTED, Raw, has_fields, no_fields, to_samples
from localeval.data.sample import LIST_FIELDS, OLD_NAMES, Sample
from localeval.data.validate import Needs
from localeval.errors import describe

SUPPORTED = ".jsonl, .json, .csv, .parquet, or a folder saved by a Hugging Face dataset's save_to_disk"
_HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")
_LIST_EXAMPLE = '["first chunk", "second chunk"]'


def load_samples(
    path: str | Path, required: Needs | None = None, nonempty: Needs | None = None
) -> list[Sample]:
    """Samples from a ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file or a saved HF dataset folder.

    ``required`` and ``nonempty`` (metric -> fields, as ``validate`` takes them): also report every row
    that lacks what a metric needs, together with the problems of reading the file.
    """
    file = Path(path).expanduser()
    problems: list[Problem] = []  # problems of rows; a problem of the whole file raises _Unreadable
    try:
        raws = _read(file, problems)
    except _Unreadable as e:
        raise DataError(e.problems, str(file)) from None
    return to_samples(raws, str(file), problems, required, nonempty)


def samples_from_records(
    records: Iterable[Mapping[str, Any] | Sample],
    source: str = "<records>",
    required: Needs | None = None,
    nonempty: Needs | None = None,
) -> list[Sample]:
    """Samples from dicts (old Ragas names accepted, checked like a file); ``Sample`` objects pass through."""
    to_dict = getattr(records, "to_dict", None)
    if to_dict is not None and hasattr(records, "columns"):  # a pandas DataFrame iterates over its columns
        records = to_dict("records")
    raws = [Raw(row, None, r) for row, r in enumerate(records, 1)]
    return to_samples(raws, source, [], required, nonempty)


# --- reading files --------------------------------------------------------------------------------------


class _Unreadable(Exception):
    """The whole file cannot be read, for the reasons in ``problems``."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__(*problems)
        self.problems = list(problems)


def _stop(message: str, line: int | None = None) -> _Unreadable:
    return _Unreadable(Problem(None, None, message, line))


def _read(file: Path, problems: list[Problem]) -> list[Raw]:
    """The file's records; problems of single rows are added to ``problems``."""
    if file.is_dir():
        return _read_hf_dataset(file)
    if not file.exists():
        raise _stop(f"no such file or folder: {file}" + ("" if file.is_absolute() else f" (in {Path.cwd()})"))
    suffix = file.suffix.lower()
    if suffix in (".jsonl", ".json"):
        return _read_json(_read_text(file, "JSON" if suffix == ".json" else "JSON lines"), suffix, problems)
    if suffix == ".csv":
        return _read_csv(_read_text(file, "CSV"), problems)
    if suffix == ".parquet":
        return _read_parquet(file)
    raise _stop(f"unknown file type {suffix or '(no extension)'!r}; localeval reads {SUPPORTED}")


def _read_text(file: Path, kind: str) -> str:
    """The file's text; binary data and bytes that are not UTF-8 are errors, never replaced."""
    try:
        data = file.read_bytes()
    except OSError as e:
        raise _stop(f"cannot read the file: {e}") from None
    if data.startswith(b"\x1f\x8b"):
        raise _stop(f"the file is gzip-compressed; decompress it first (expected {kind})")
    if data.startswith(b"PAR1"):
        raise _stop(f"the file is Parquet, not {kind}; rename it to .parquet")
    if b"\x00" in data:
        nul = data.index(b"\x00")
        raise _stop(
            f"not a {kind} file: binary data (a NUL byte at offset {nul}); UTF-16 text: save it as UTF-8"
        )
    bad, line, counted = [], 1, 0
    for offset in _bad_utf8_offsets(data):
        line, counted = line + data.count(b"\n", counted, offset), offset
        message = f"not UTF-8: byte 0x{data[offset]:02x} at offset {offset}; save the file as UTF-8"
        bad.append(Problem(None, None, message, line))
    if bad:
        raise _Unreadable(*bad)
    return data.decode("utf-8").removeprefix("\ufeff")


def _bad_utf8_offsets(data: bytes) -> list[int]:
    """Byte offsets where ``data`` stops being valid UTF-8 (one per bad sequence)."""
    view, offsets, pos = memoryview(data), [], 0
    while pos < len(data):
        try:
            codecs.utf_8_decode(view[pos:], "strict", True)
            break
        except UnicodeDecodeError as e:  # decoding resumes after the bad sequence: linear in the size
            offsets.append(pos + e.start)
            pos += e.end
    return offsets


def _read_json(text: str, suffix: str, problems: list[Problem]) -> list[Raw]:
    """Records of JSON lines or, in a ``.json`` file, of one JSON array (or one object)."""
    head = text.lstrip()
    if head.startswith("[") and suffix == ".jsonl":
        raise _stop(
            "the file is one JSON array, not JSON lines; rename it to .json or write one object a line"
        )
    if head.startswith("["):
        try:
            return [Raw(row, None, record) for row, record in enumerate(json.loads(text), 1)]
        except json.JSONDecodeError as e:
            raise _stop(f"not valid JSON: {e.msg} at column {e.colno}", e.lineno) from None
    if head.startswith("{") and suffix == ".json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = None  # not one object: read it as JSON lines
        if isinstance(value, dict) and value and all(isinstance(v, dict | list) for v in value.values()):
            raise _stop(
                "the file is one JSON object of columns, not one object per sample; write "
                "records (pandas: df.to_json(path, orient='records', lines=True))"
            )
        if isinstance(value, dict):
            return [Raw(1, None, value)]
    raws, row = [], 0
    for line, content in enumerate(text.split("\n"), 1):  # not splitlines: JSON text may hold U+2028
        if content.strip():
            row += 1
            try:
                raws.append(Raw(row, line if line != row else None, json.loads(content)))
            except json.JSONDecodeError as e:
                message = f"not valid JSON: {e.msg} at column {e.colno}"
                problems.append(Problem(row, None, message, line if line != row else None))
    return raws


def _read_csv(text: str, problems: list[Problem]) -> list[Raw]:
    """Records of a CSV file with a header; list cells are parsed, empty cells are missing."""
    if text.lstrip().startswith(("{", "[")):
        raise _stop("the file looks like JSON, not CSV; rename it to .jsonl or .json")
    return list(csv_raws(io.StringIO(text, newline=""), problems))


def csv_raws(lines: Iterable[str], problems: list[Problem]) -> Iterator[Raw]:
    """The records of CSV text given line by line (read lazily); problems of rows go to ``problems``."""
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # chunks can pass the 128 KiB default
    reader = csv.reader(lines)
    try:
        header = [name.strip() for name in next(reader, [])]
        doubled = sorted({name for name in header if header.count(name) > 1})
        if doubled:
            raise _stop(f"the header repeats the column(s) {', '.join(map(repr, doubled))}", 1)
        if header and not has_fields(header):
            raise _Unreadable(no_fields(f"the header {', '.join(header)}"))
        row, start = 0, reader.line_num + 1
        for cells in reader:
            if any(cell.strip() for cell in cells):
                row += 1
                if len(cells) > len(header):
                    message = f"{len(cells)} cells but the header has {len(header)} columns"
                    problems.append(Problem(row, None, message, start))
                record = {
                    name: _csv_cell(name, cells[i] if i < len(cells) else "", row, start, problems)
                    for i, name in enumerate(header)
                }
                yield Raw(row, start, record)
            start = reader.line_num + 1
    except csv.Error as e:
        raise _stop(f"not a valid CSV file: {e}", reader.line_num) from None


def _csv_cell(name: str, cell: str, row: int, line: int, problems: list[Problem]) -> object:
    """A cell's value: ``None`` when empty; a list, parsed from a JSON (or Python) list, where one belongs."""
    if cell == "":
        return None
    field = OLD_NAMES.get(name, name)
    written = cell.strip()
    if field in _WRITTEN_OBJECTS or (field == "user_input" and written.startswith("[{")):
        value = _written(written)  # Ragas' to_csv writes these as Python's repr
        return cell if value is _UNREADABLE else value  # a plain text: its field then says why it does not fit
    if field not in LIST_FIELDS and name != "ground_truths":
        return cell
    if not written.startswith("["):
        if name == "ground_truths":
            return cell  # a single reference written as plain text
        message = f"expected a list written as a JSON array, e.g. {_LIST_EXAMPLE}, got {describe(cell)}"
        problems.append(Problem(row, field, message, line, name))
        return REPORTED
    value = _written(written)
    if value is _UNREADABLE:
        message = f"cannot read the list {describe(cell)}; write it as a JSON array, e.g. {_LIST_EXAMPLE}"
        problems.append(Problem(row, field, message, line, name))
        return REPORTED
    return value


_WRITTEN_OBJECTS = ("reference_tool_calls", "rubrics")
_UNREADABLE = object()


def _written(text: str) -> object:
    """A list or object a CSV cell holds, written as JSON or as Python's repr; ``_UNREADABLE`` if neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return _UNREADABLE


def _read_parquet(file: Path) -> list[Raw]:
    import pandas as pd  # heavy: imported only when a Parquet file is read

    try:
        frame = pd.read_parquet(file)
    except Exception as e:  # pyarrow raises several types for a file that is not Parquet
        raise _stop(f"cannot read the file as Parquet: {e}") from None
    return [Raw(row, None, record, True) for row, record in enumerate(frame.to_dict("records"), 1)]


def _read_hf_dataset(folder: Path) -> list[Raw]:
    loaded = open_hf_dataset(folder)
    return [] if loaded is None else [Raw(row, None, r, True) for row, r in enumerate(loaded.to_list(), 1)]


def open_hf_dataset(folder: Path) -> Any:
    """The saved Hugging Face dataset (memory-mapped, one split) in ``folder``; None for an empty DatasetDict."""
    if not any((folder / marker).exists() for marker in _HF_MARKERS):
        raise _stop(
            f"a folder, but no saved Hugging Face dataset (none of {', '.join(_HF_MARKERS)} in it); "
            f"localeval reads {SUPPORTED}"
        )
    import datasets  # heavy: imported only when a dataset folder is read

    try:
        loaded = datasets.load_from_disk(str(folder))
    except Exception as e:  # datasets raises several types for a damaged folder
        raise _stop(f"cannot read the folder as a saved Hugging Face dataset: {e}") from None
    if isinstance(loaded, datasets.DatasetDict):
        splits = list(loaded)
        if len(splits) > 1:
            raise _stop(
                f"the dataset has {len(splits)} splits ({', '.join(splits)}); "
                f"pass the folder of one of them, e.g. {folder / splits[0]}"
            )
        if not splits:
            return None
        loaded = loaded[splits[0]]
    return loaded


def as_samples(
    data: str | Path | Iterable[Sample | Mapping[str, Any]], required: Needs | None = None,
    nonempty: Needs | None = None,
) -> list[Sample]:
    """Samples from a file or folder path, or from a list of samples or dicts.

    ``required`` and ``nonempty`` (metric -> fields): a row lacking what a metric needs is reported in the same
    DataError as the rows that cannot be read, in row order.
    """
    if isinstance(data, str | Path):
        return load_samples(data, required, nonempty)
    return samples_from_records(data, required=required, nonempty=nonempty)
