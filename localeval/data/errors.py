"""Data errors that name the file, row, column and field, so a user can find and fix each one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localeval.errors import LocalevalError

SHOWN = 20  # problems listed in the message; the rest are counted


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the data: where (1-based data row, field, the user's column) and what.

    ``row`` and ``field`` are ``None`` for problems of the whole file. ``line`` is the line of the file,
    given where it differs from the row (a CSV header, blank lines in JSON lines). ``column`` is the
    name the data gives the field (an old Ragas name such as ``answer`` for ``response``), where known.
    ``record_id`` is the id the record gives itself, where it has one, so a row can be found by either.
    """

    row: int | None
    field: str | None
    message: str
    line: int | None = None
    column: str | None = None
    record_id: str | None = None

    def where(self) -> str:
        """Row, line, column and field, as the message names them (empty for the whole data)."""
        parts = []
        if self.row is not None:
            notes = ([f"line {self.line}"] if self.line is not None else []) + (
                [f"id {self.record_id!r}"] if self.record_id is not None else [])
            parts.append(f"row {self.row}" + (f" ({', '.join(notes)})" if notes else ""))
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if self.column is not None:
            parts.append(column_and_field(self.column, self.field))
        elif self.field is not None:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


def column_and_field(column: str, field: str | None) -> str:
    """``column 'answer' (Ragas field 'response')``, or ``column 'response'`` where the names agree."""
    from localeval.data.sample import SAMPLE_FIELDS

    if field is None or field == column:
        return f"column {column!r}"
    kind = "Ragas field" if field in SAMPLE_FIELDS else "field"
    return f"column {column!r} ({kind} {field!r})"


def by_row(problems: Sequence[Problem]) -> list[Problem]:
    """Problems of the whole data first, then by row; the order found is kept within a row."""
    return sorted(problems, key=lambda p: (p.row is not None, p.row or 0))


class DataError(LocalevalError):
    """The samples cannot be used as they are; ``problems`` lists every reason found, ``fix`` what to do."""

    def __init__(self, problems: Sequence[Problem], source: str | None = None, fix: str | None = None) -> None:
        super().__init__(list(problems), source, fix)
        self.problems: list[Problem] = list(problems)
        self.source = source
        self.fix = fix

    def __str__(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''}" + (f" in {self.source}" if self.source else "")
        lines = [f"{head}:"] + [f"  {p}" for p in self.problems[:SHOWN]]
        if n > SHOWN:
            lines.append(f"  ... and {n - SHOWN} more (the first {SHOWN} are shown)")
        if self.fix:
            lines.append(f"fix: {self.fix}")
        return "\n".join(lines)
