"""Samples from files (JSON lines, JSON, CSV, Parquet, a saved Hugging Face dataset) and from records.

Every problem of a file is collected, each naming its 1-based data row and field, before one
``DataError`` is raised: a user fixes the whole file in one pass.
"""

from __future__ import annotations

import ast
import codecs
import csv
import io
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.data.errors import DataError, Problem
from localeval.data.sample import LIST_FIELDS, OLD_NAMES, SAMPLE_FIELDS, TEXT_FIELDS, Sample

SUPPORTED = ".jsonl, .json, .csv, .parquet, or a folder saved by a Hugging Face dataset's save_to_disk"
_HF_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")
_LIST_EXAMPLE = '["first chunk", "second chunk"]'

# Reports a problem of the current row: (column as the file names it, message).
_Report = Callable[[str, str], None]


@dataclass(frozen=True)
class _Raw:
    """One record as read, before checks: its 1-based data row and, where it differs, its file line."""

    row: int
    line: int | None
    record: object


def load_samples(path: str | Path) -> list[Sample]:
    """Samples from a ``.jsonl``, ``.json``, ``.csv`` or ``.parquet`` file or a saved HF dataset folder."""
    file = Path(path).expanduser()
    problems: list[Problem] = []  # problems of rows; a problem of the whole file raises _Unreadable
    try:
        raws = _read(file, problems)
    except _Unreadable as e:
        raise DataError(e.problems, str(file)) from None
    return _to_samples(raws, str(file), problems)


def samples_from_records(
    records: Iterable[Mapping[str, Any] | Sample], source: str = "<records>"
) -> list[Sample]:
    """Samples from dicts (old Ragas names accepted, checked like a file); ``Sample`` objects pass through."""
    to_dict = getattr(records, "to_dict", None)
    if to_dict is not None and hasattr(records, "columns"):  # a pandas DataFrame iterates over its columns
        records = to_dict("records")
    return _to_samples([_Raw(row, None, r) for row, r in enumerate(records, 1)], source, [])


# --- reading files --------------------------------------------------------------------------------------


class _Unreadable(Exception):
    """The whole file cannot be read, for the reasons in ``problems``."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__(*problems)
        self.problems = list(problems)


def _stop(message: str, line: int | None = None) -> _Unreadable:
    return _Unreadable(Problem(None, None, message, line))


def _read(file: Path, problems: list[Problem]) -> list[_Raw]:
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


def _read_json(text: str, suffix: str, problems: list[Problem]) -> list[_Raw]:
    """Records of JSON lines or, in a ``.json`` file, of one JSON array (or one object)."""
    head = text.lstrip()
    if head.startswith("[") and suffix == ".jsonl":
        raise _stop(
            "the file is one JSON array, not JSON lines; rename it to .json or write one object a line"
        )
    if head.startswith("["):
        try:
            return [_Raw(row, None, record) for row, record in enumerate(json.loads(text), 1)]
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
            return [_Raw(1, None, value)]
    raws, row = [], 0
    for line, content in enumerate(text.split("\n"), 1):  # not splitlines: JSON text may hold U+2028
        if content.strip():
            row += 1
            try:
                raws.append(_Raw(row, line if line != row else None, json.loads(content)))
            except json.JSONDecodeError as e:
                problems.append(Problem(None, None, f"not valid JSON: {e.msg} at column {e.colno}", line))
    return raws


def _read_csv(text: str, problems: list[Problem]) -> list[_Raw]:
    """Records of a CSV file with a header; list cells are parsed, empty cells are missing."""
    if text.lstrip().startswith(("{", "[")):
        raise _stop("the file looks like JSON, not CSV; rename it to .jsonl or .json")
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))  # chunks can pass the 128 KiB default
    reader = csv.reader(io.StringIO(text, newline=""))
    raws: list[_Raw] = []
    try:
        header = [name.strip() for name in next(reader, [])]
        doubled = sorted({name for name in header if header.count(name) > 1})
        if doubled:
            raise _stop(f"the header repeats the column(s) {', '.join(map(repr, doubled))}", 1)
        if header and not _has_fields(header):
            raise _Unreadable(_no_fields(f"the header {', '.join(header)}"))
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
                raws.append(_Raw(row, start, record))
            start = reader.line_num + 1
    except csv.Error as e:
        raise _stop(f"not a valid CSV file: {e}", reader.line_num) from None
    return raws


def _csv_cell(name: str, cell: str, row: int, line: int, problems: list[Problem]) -> object:
    """A cell's value: ``None`` when empty; a list, parsed from a JSON (or Python) list, where one belongs."""
    if cell == "":
        return None
    if OLD_NAMES.get(name, name) not in LIST_FIELDS and name != "ground_truths":
        return cell
    written = cell.strip()
    if not written.startswith("["):
        if name == "ground_truths":
            return cell  # a single reference written as plain text
        message = f"expected a list written as a JSON array, e.g. {_LIST_EXAMPLE}, got {_describe(cell)}"
        problems.append(Problem(row, name, message, line))
        return None
    try:
        return json.loads(written)
    except ValueError:
        pass
    try:
        return ast.literal_eval(written)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        message = f"cannot read the list {_describe(cell)}; write it as a JSON array, e.g. {_LIST_EXAMPLE}"
        problems.append(Problem(row, name, message, line))
        return None


def _read_parquet(file: Path) -> list[_Raw]:
    import pandas as pd  # heavy: imported only when a Parquet file is read

    try:
        frame = pd.read_parquet(file)
    except Exception as e:  # pyarrow raises several types for a file that is not Parquet
        raise _stop(f"cannot read the file as Parquet: {e}") from None
    return [_Raw(row, None, record) for row, record in enumerate(frame.to_dict("records"), 1)]


def _read_hf_dataset(folder: Path) -> list[_Raw]:
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
            return []
        loaded = loaded[splits[0]]
    return [_Raw(row, None, record) for row, record in enumerate(loaded.to_list(), 1)]


# --- checking records ------------------------------------------------------------------------------------


def _to_samples(raws: list[_Raw], source: str, problems: list[Problem]) -> list[Sample]:
    """Check and convert every record, then raise one ``DataError`` with all problems, if any."""
    samples: list[Sample] = []
    ids: list[tuple[_Raw, str | None, bool]] = []  # every record's id (None: invalid), numbered or not
    for raw in raws:
        if isinstance(raw.record, Sample):
            samples.append(raw.record)
            ids.append((raw, raw.record.id, False))
        elif isinstance(raw.record, Mapping):
            sample, sample_id, numbered = _to_sample(raw, raw.record, problems)
            samples += [sample] if sample is not None else []
            ids.append((raw, sample_id, numbered))
        else:
            message = f"expected an object with the sample's fields, got {_describe(raw.record)}"
            problems.append(Problem(raw.row, None, message, raw.line))
    if not raws and not problems:
        problems.append(Problem(None, None, f"no samples in {source}"))
    elif raws and not any(_has_fields(raw.record) for raw in raws):
        first = next((raw.record for raw in raws if isinstance(raw.record, Mapping)), {})
        problems.insert(0, _no_fields(", ".join(map(str, first)) or "nothing"))  # the cause of the rest
    first_row: dict[str, int] = {}
    for raw, sample_id, numbered in ids:
        if sample_id is not None and sample_id in first_row:
            why = " (a row without an id takes its row number as id)" if numbered else ""
            message = f"duplicate id {sample_id!r}, also in row {first_row[sample_id]}{why}"
            problems.append(Problem(raw.row, "id", message, raw.line))
        elif sample_id is not None:
            first_row[sample_id] = raw.row
    if problems:
        raise DataError(problems, source)
    return samples


def _no_fields(found: str) -> Problem:
    known = f"{', '.join(SAMPLE_FIELDS)} (old names: {', '.join(OLD_NAMES)})"
    return Problem(None, None, f"no sample field in the data (found {found}); expected some of {known}")


def _has_fields(record: object) -> bool:
    """Whether a record (or a CSV header) holds any sample field, under its new or old name."""
    if isinstance(record, Sample):
        return True
    return isinstance(record, Mapping | list) and any(
        str(k) in SAMPLE_FIELDS or str(k) in OLD_NAMES for k in record
    )


def _to_sample(
    raw: _Raw, record: Mapping[Any, Any], problems: list[Problem]
) -> tuple[Sample | None, str | None, bool]:
    """A record's sample (``None`` after reporting problems), its id (``None``: invalid), numbered or not."""
    count = len(problems)
    id_given = _plain(record.get("id" if "id" in record else "sample_id")) is not None

    def report(column: str, message: str) -> None:
        problems.append(Problem(raw.row, column, message, raw.line))

    fields: dict[str, Any] = {}
    origin: dict[str, str] = {}  # sample field -> the column it was read from
    extra: dict[str, Any] = {}
    sample_id: str | None = None
    answerable: bool | None = None
    for key, cell in record.items():
        column, value = str(key), _plain(cell)
        if column == "id" or (column == "sample_id" and "id" not in record):
            sample_id = _to_id(column, value, report)
        elif column == "answerable":
            answerable = _to_bool(column, value, report)
        elif column == "extra" and isinstance(value, Mapping):  # a record written from a Sample
            extra.update(value)
        elif column in SAMPLE_FIELDS or column in OLD_NAMES:
            name = OLD_NAMES.get(column, column)
            converted = _to_field(column, name, value, report)
            if converted is None:
                continue  # missing (or reported): a missing value never conflicts with a present one
            if name not in fields:
                fields[name], origin[name] = converted, column
            elif fields[name] != converted:
                report(name, f"{origin[name]!r} and {column!r} give different {name!r}; keep one of them")
        else:
            extra[column] = value
    if id_given and sample_id is None:
        return None, None, False  # the id itself was reported
    sample_id = sample_id or str(raw.row)
    if len(problems) > count:
        return None, sample_id, not id_given
    return Sample(id=sample_id, answerable=answerable, extra=extra, **fields), sample_id, not id_given


def _to_field(column: str, name: str, value: object, report: _Report) -> object:
    """The value of sample field ``name`` read from ``column``; ``None`` when missing or reported."""
    if value is None:
        return None
    if column == "ground_truths":  # Ragas < 0.2 held the references as a list
        if isinstance(value, str):
            return value
        texts = _to_texts(column, value, False, report)
        return None if not texts else texts[0] if len(texts) == 1 else "\n".join(texts)
    if name in TEXT_FIELDS:
        if isinstance(value, str):
            return value
        report(column, f"expected text, got {_describe(value)}")
        return None
    return _to_texts(column, value, name.endswith("_ids"), report)


def _to_texts(column: str, value: object, ids: bool, report: _Report) -> tuple[str, ...] | None:
    """A list of texts (ids: numbers become text), or ``None`` after reporting."""
    if not isinstance(value, list | tuple):
        hint = f"; write a list, e.g. [{value!r}]" if isinstance(value, str) and len(value) < 40 else ""
        report(column, f"expected a list of texts, got {_describe(value)}{hint}")
        return None
    texts = []
    for i, item in enumerate(map(_plain, value), 1):
        if isinstance(item, str):
            texts.append(item)
        elif ids and isinstance(item, int) and not isinstance(item, bool):
            texts.append(str(item))
        else:
            got = "missing (null)" if item is None else f"expected text, got {_describe(item)}"
            report(column, f"item {i}: {got}")
            return None
    return tuple(texts)


def _to_id(column: str, value: object, report: _Report) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer():  # pandas makes whole ids floats next to NaN
        return str(int(value))
    if isinstance(value, str):
        report(column, "empty id; give each sample an id, or leave the id out to number the rows")
    else:
        report(column, f"expected text or a whole number, got {_describe(value)}")
    return None


def _to_bool(column: str, value: object, report: _Report) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "1", "yes", "false", "0", "no", ""):
            return None if not text else text in ("true", "1", "yes")
    report(column, f"expected true or false, got {_describe(value)}")
    return None


def _plain(value: object) -> object:
    """A plain Python value: numpy arrays become lists, numpy scalars Python ones, NaN and NA ``None``."""
    if isinstance(value, np.ndarray):
        return [_plain(item) for item in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    pandas = sys.modules.get("pandas")  # a pandas value can only exist once pandas is imported
    if pandas is not None and value is pandas.NA:
        return None
    return value


def _describe(value: object) -> str:
    """A value for a message: its type and a short repr, e.g. ``int 42``."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
