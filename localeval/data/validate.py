"""Check that samples hold what the chosen metrics need, before any model is loaded."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields

from localeval.data.errors import DataError, Problem
from localeval.data.sample import OLD_NAMES, Sample

_CHECKABLE = tuple(f.name for f in fields(Sample) if f.name != "extra")

# What to do about a field a metric needs but a row lacks; the message of such a DataError ends with it.
FIX_MISSING = (
    "give the rows named above the fields their metrics need, or choose metrics that do not need them "
    "(`localeval metrics` lists what each one needs), or score those samples NaN and go on "
    "(--on-missing nan; in Python on_missing='nan')"
)

Needs = Mapping[str, tuple[str, ...]]  # metric name -> sample fields

CONVERSATION = 'a list of messages, e.g. [{"type": "human", "content": "..."}, {"type": "ai", "content": "..."}]'


@dataclass(frozen=True)
class RowFields:
    """One row's sample fields as read: values (``None``: absent or empty) and the columns that hold them."""

    row: int
    line: int | None
    values: Mapping[str, object]
    columns: Mapping[str, str]  # field -> the column of this row that holds it (its value may be empty)
    reported: frozenset[str] = frozenset()  # fields whose value already has a problem of its own


def validate(samples: Sequence[Sample], required: Needs, nonempty: Needs | None = None) -> None:
    """Raise ``DataError`` naming each (row, field) a metric needs that is missing (``None``) or empty.

    ``required`` maps a metric name to the fields it reads; ``nonempty`` to the list fields it cannot score
    when empty (these must also be present). An empty string is kept: the metric decides what it scores.
    """
    rows = [RowFields(row, None, {n: s.get(n) for n in _CHECKABLE}, {}) for row, s in enumerate(samples, 1)]
    problems = needs_problems(rows, required, nonempty or {})
    if problems:
        raise DataError(problems, fix=FIX_MISSING)


def needs_problems(
    rows: Sequence[RowFields], required: Needs, nonempty: Needs, columns: Sequence[str] | None = None
) -> list[Problem]:
    """Problems of fields the metrics need that rows lack, one per (row, field), in row order.

    ``columns``: every column the data has (given for a file or records, not for ``Sample`` objects);
    a needed field that no column holds is then one problem of the whole data, not one per row.
    """
    _check_tables(required, nonempty)
    needers: dict[str, list[str]] = {}  # field -> metrics that need it present, in the order given
    for metric, names in [*required.items(), *nonempty.items()]:
        for name in names:
            if metric not in needers.setdefault(name, []):
                needers[name].append(metric)
    used = _used_columns(columns) if columns is not None else None
    problems: list[Problem] = []
    absent: list[str] = []  # needed fields no column holds
    for r in rows:
        for name in _CHECKABLE:  # one problem per field, in the sample's field order
            if name in r.reported or name not in needers:
                continue
            value, column = r.values.get(name), r.columns.get(name)
            if value is None and used is not None and name not in used:
                absent += [] if name in absent else [name]
            elif name == "user_input" and r.values.get("conversation") is not None:
                message = f"a conversation, but {', '.join(needers[name])} read the question as text"
                problems.append(Problem(r.row, name, message, r.line, r.columns.get("conversation", "user_input")))
            elif value is None and name == "conversation" and r.values.get("user_input") is not None:
                message = f"user_input holds text, but {', '.join(needers[name])} read a conversation: {CONVERSATION}"
                problems.append(Problem(r.row, name, message, r.line, r.columns.get("user_input", "user_input")))
            elif value is None:
                word = "missing" if column is None else "empty"
                where = column or (used or {}).get(name)
                problems.append(Problem(r.row, name, f"{word}, needed by {', '.join(needers[name])}", r.line, where))
            else:
                empty = [m for m, names in nonempty.items() if name in names]
                if empty and isinstance(value, tuple | list) and not value:
                    message = f"empty list, needed by {', '.join(empty)}"
                    problems.append(Problem(r.row, name, message, r.line, column))
    head = [_absent(name, needers[name], columns or ()) for name in absent]
    return head + problems


def _check_tables(required: Needs, nonempty: Needs) -> None:
    for metric, names in [*required.items(), *nonempty.items()]:
        unknown = [name for name in names if name not in _CHECKABLE]
        if unknown:
            raise ValueError(f"metric {metric!r} names unknown sample field(s) {unknown}; known: {_CHECKABLE}")


def _used_columns(columns: Sequence[str]) -> dict[str, str]:
    """Field -> the first column that holds it (its name, or an old Ragas name)."""
    used: dict[str, str] = {}
    for column in columns:
        name = "id" if column == "sample_id" else OLD_NAMES.get(column, column)
        if name in _CHECKABLE:
            used.setdefault(name, column)
        if name == "user_input":  # it holds the question's text or a conversation
            used.setdefault("conversation", column)
    return used


def _absent(name: str, metrics: list[str], columns: Sequence[str]) -> Problem:
    """The problem of a needed field no column of the data holds, with a guess at a misspelled column."""
    old = [o for o, new in OLD_NAMES.items() if new == name]
    add = f"add a column {name!r}" + (f" (or its old Ragas name {' or '.join(map(repr, old))})" if old else "")
    if name == "conversation":
        add, old = f"add a column 'user_input' holding {CONVERSATION}", []
    others = [c for c in columns if c not in _CHECKABLE and c not in OLD_NAMES]
    close = difflib.get_close_matches(name, others, 1, 0.6) or [
        c for o in old for c in difflib.get_close_matches(o, others, 1, 0.75)
    ]
    guess = f"; did you mean column {close[0]!r}?" if close else ""
    found = f" (the data's columns: {', '.join(columns)})" if columns else ""
    return Problem(None, name, f"no column holds it, needed by {', '.join(metrics)}; {add}{guess}{found}")
