"""Data errors that name the row and the field, so a user can find and fix each one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localeval.errors import LocalevalError

_SHOWN = 20  # problems listed in the message; the rest are counted


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the data: where (1-based data row, field) and what.

    ``row`` and ``field`` are ``None`` for problems of the whole file. ``line`` is the line of the file,
    given where it differs from the row (a CSV header, blank lines in JSON lines).
    """

    row: int | None
    field: str | None
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = []
        if self.row is not None:
            where.append(f"row {self.row}" + (f" (line {self.line})" if self.line is not None else ""))
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class DataError(LocalevalError):
    """The samples cannot be used as they are; ``problems`` lists every reason found."""

    def __init__(self, problems: Sequence[Problem], source: str | None = None) -> None:
        super().__init__(list(problems), source)
        self.problems: list[Problem] = list(problems)
        self.source = source

    def __str__(self) -> str:
        n = len(self.problems)
        head = f"{n} problem{'s' if n != 1 else ''}" + (f" in {self.source}" if self.source else "")
        lines = [f"{head}:"] + [f"  {p}" for p in self.problems[:_SHOWN]]
        if n > _SHOWN:
            lines.append(f"  ... and {n - _SHOWN} more")
        return "\n".join(lines)
