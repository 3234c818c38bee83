"""Records (dicts, rows of a file, ``Sample`` objects) checked and turned into samples.

Every problem is collected, naming the 1-based data row, the user's column and the Ragas field it maps to;
with the metrics' needs given, the rows that lack a needed field are reported too. One ``DataError``
then lists them all in row order.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.data.errors import DataError, Problem, by_row
from localeval.data.messages import read_conversation, read_rubrics, read_tool_calls
from localeval.data.sample import OLD_NAMES, SAMPLE_FIELDS, TEXT_FIELDS, Sample
from localeval.data.validate import FIX_MISSING, Needs, RowFields, needs_problems
from localeval.errors import describe

# Reports a problem of the current row: (column as the file names it, message).
_Report = Callable[[str, str], None]


class Reported:
    """A CSV cell whose problem is already reported: the field is neither read nor reported again."""


REPORTED = Reported()


@dataclass(frozen=True)
class Raw:
    """One record as read, before checks: its 1-based data row and, where it differs, its file line."""

    row: int
    line: int | None
    record: object
    columnar: bool = False  # read from Parquet or a Hugging Face dataset: null object members mean absent


@dataclass(frozen=True)
class _Converted:
    """A record after its checks: its sample (``None`` after problems), id (``None``: invalid), and fields."""

    sample: Sample | None
    sample_id: str | None
    numbered: bool  # the id is the row number
    fields: RowFields


def to_samples(
    raws: list[Raw], source: str, problems: list[Problem], required: Needs | None = None,
    nonempty: Needs | None = None,
) -> list[Sample]:
    """Check and convert every record, then raise one ``DataError`` with all problems by row, if any."""
    samples: list[Sample] = []
    ids: list[tuple[Raw, str | None, bool]] = []  # every record's id (None: invalid), numbered or not
    rows: list[RowFields] = []  # the fields of every record that is a mapping or a Sample
    columns: dict[str, None] | None = {}  # every column of the data, first met first (None: Sample objects)
    for raw in raws:
        if isinstance(raw.record, Sample):
            samples.append(raw.record)
            ids.append((raw, raw.record.id, False))
            rows.append(RowFields(raw.row, raw.line, {n: raw.record.get(n) for n in SAMPLE_FIELDS}, {}))
            columns = None
        elif isinstance(raw.record, Mapping):
            done = _to_sample(raw, raw.record, problems)
            samples += [done.sample] if done.sample is not None else []
            ids.append((raw, done.sample_id, done.numbered))
            rows.append(done.fields)
            if columns is not None:
                columns.update(dict.fromkeys(map(str, raw.record)))
        else:
            message = f"expected an object with the sample's fields, got {describe(raw.record)}"
            problems.append(Problem(raw.row, None, message, raw.line))
    any_field = any(has_fields(raw.record) for raw in raws)
    if not raws and not problems:
        problems.append(Problem(None, None, f"no samples in {source}"))
    elif raws and not any_field:
        first = next((raw.record for raw in raws if isinstance(raw.record, Mapping)), {})
        problems.insert(0, no_fields(", ".join(map(str, first)) or "nothing"))  # the cause of the rest
    _duplicate_ids(ids, problems)
    names = list(columns) if columns is not None else None
    missing = needs_problems(rows, required or {}, nonempty or {}, names) if any_field else []
    if problems or missing:
        raise DataError(by_row([*problems, *missing]), source, FIX_MISSING if missing else None)
    return samples


def _duplicate_ids(ids: list[tuple[Raw, str | None, bool]], problems: list[Problem]) -> None:
    """Report every id that an earlier row already has."""
    first_row: dict[str, int] = {}
    for raw, sample_id, numbered in ids:
        if sample_id is not None and sample_id in first_row:
            why = " (a row without an id takes its row number as id)" if numbered else ""
            message = f"duplicate id {sample_id!r}, also in row {first_row[sample_id]}{why}"
            column = "sample_id" if isinstance(raw.record, Mapping) and "id" not in raw.record else "id"
            problems.append(Problem(raw.row, "id", message, raw.line, column if not numbered else None))
        elif sample_id is not None:
            first_row[sample_id] = raw.row


def no_fields(found: str) -> Problem:
    known = f"{', '.join(SAMPLE_FIELDS)} (old names: {', '.join(OLD_NAMES)})"
    return Problem(None, None, f"no sample field in the data (found {found}); expected some of {known}")


def has_fields(record: object) -> bool:
    """Whether a record (or a CSV header) holds any sample field, under its new or old name."""
    if isinstance(record, Sample):
        return True
    return isinstance(record, Mapping | list) and any(
        str(k) in SAMPLE_FIELDS or str(k) in OLD_NAMES for k in record
    )


def _field_of(column: str) -> str:
    """The sample field a column holds: the column's name, or the new name of an old Ragas name."""
    return "id" if column == "sample_id" else OLD_NAMES.get(column, column)


def _to_sample(raw: Raw, record: Mapping[Any, Any], problems: list[Problem]) -> _Converted:
    """A record's sample (``None`` after reporting problems), its id and its fields as read."""
    count = len(problems)
    given = _plain(record.get("id" if "id" in record else "sample_id"))
    id_given = given is not None
    own_id = str(given) if isinstance(given, str | int) and not isinstance(given, bool) else None
    own_id = own_id if own_id and own_id != str(raw.row) else None  # named beside the row where it tells more
    reported: set[str] = set()

    def report(column: str, message: str) -> None:
        reported.add(_field_of(column))
        problems.append(Problem(raw.row, _field_of(column), message, raw.line, column, own_id))

    fields: dict[str, Any] = {}
    origin: dict[str, str] = {}  # sample field -> the column it was read from
    held: dict[str, str] = {}  # sample field -> the first column that holds it, empty or not
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
            if name == "user_input" and isinstance(value, list | tuple) and any(
                    isinstance(_plain(v), Mapping) for v in value):
                name = "conversation"  # Ragas' MultiTurnSample: user_input holds the messages
            held.setdefault(name, column)
            if value is REPORTED:
                reported.add(name)
                continue
            before = len(problems)
            converted = _to_field(column, name, value, report, raw.columnar)
            if converted is None:
                reported.update([name] if len(problems) > before else [])  # user_input's report names the field
                continue  # missing (or reported): a missing value never conflicts with a present one
            if name not in fields:
                fields[name], origin[name], held[name] = converted, column, column
            elif fields[name] != converted:
                report(name, f"{origin[name]!r} and {column!r} give different {name!r}; keep one of them")
        else:
            extra[column] = value
    read = RowFields(raw.row, raw.line, fields, held, frozenset(reported))
    if id_given and sample_id is None:
        return _Converted(None, None, False, read)  # the id itself was reported
    sample_id = sample_id or str(raw.row)
    if len(problems) > count or reported:
        return _Converted(None, sample_id, not id_given, read)
    sample = Sample(id=sample_id, answerable=answerable, extra=extra, **fields)
    return _Converted(sample, sample_id, not id_given, read)


def _to_field(column: str, name: str, value: object, report: _Report, columnar: bool = False) -> object:
    """The value of sample field ``name`` read from ``column``; ``None`` when missing or reported."""
    if value is None:
        return None
    if name in _STRUCTURED:
        return _STRUCTURED[name](_deep_plain(value), lambda message: report(column, message), columnar)
    if column == "ground_truths":  # Ragas < 0.2 held the references as a list
        if isinstance(value, str):
            return value
        texts = _to_texts(column, value, False, report)
        return None if not texts else texts[0] if len(texts) == 1 else "\n".join(texts)
    if name in TEXT_FIELDS:
        if isinstance(value, str):
            return value
        also = " (a conversation is a list of messages: objects with 'type' and 'content')" if isinstance(
            value, list | tuple) and name == "user_input" else ""
        report(column, f"expected text, got {describe(value)}{also}")
        return None
    return _to_texts(column, value, name.endswith("_ids"), report)


_STRUCTURED: dict[str, Callable[[Any, Callable[[str], None], bool], object]] = {
    "conversation": read_conversation,
    "reference_tool_calls": lambda v, report, columnar: read_tool_calls(v, report, "", columnar),
    "rubrics": read_rubrics,
}


def _deep_plain(value: object) -> object:
    """``_plain`` all the way down: Parquet's objects and lists come back as dicts of numpy arrays."""
    value = _plain(value)
    if isinstance(value, Mapping):
        return {k: _deep_plain(v) for k, v in value.items()}
    return [_deep_plain(v) for v in value] if isinstance(value, list | tuple) else value


def _to_texts(column: str, value: object, ids: bool, report: _Report) -> tuple[str, ...] | None:
    """A list of texts (ids: numbers become text), or ``None`` after reporting."""
    if not isinstance(value, list | tuple):
        hint = f"; write a list, e.g. [{value!r}]" if isinstance(value, str) and len(value) < 40 else ""
        report(column, f"expected a list of texts, got {describe(value)}{hint}")
        return None
    texts = []
    for i, item in enumerate(map(_plain, value), 1):
        if isinstance(item, str):
            texts.append(item)
        elif ids and isinstance(item, int) and not isinstance(item, bool):
            texts.append(str(item))
        else:
            got = "missing (null)" if item is None else f"expected text, got {describe(item)}"
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
        report(column, f"expected text or a whole number, got {describe(value)}")
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
    report(column, f"expected true or false, got {describe(value)}")
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

