"""Check that samples hold what the chosen metrics need, before any model is loaded."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields

from localeval.data.errors import DataError, Problem
from localeval.data.sample import Sample

_CHECKABLE = tuple(f.name for f in fields(Sample) if f.name != "extra")


def validate(
    samples: Sequence[Sample],
    required: Mapping[str, tuple[str, ...]],
    nonempty: Mapping[str, tuple[str, ...]] | None = None,
) -> None:
    """Raise ``DataError`` naming each (row, field) a metric needs that is missing (``None``) or empty.

    ``required`` maps a metric name to the fields it reads; ``nonempty`` to the list fields it cannot score
    when empty (these must also be present). An empty string is kept: the metric decides what it scores.
    """
    nonempty = nonempty or {}
    for metric, names in [*required.items(), *nonempty.items()]:
        unknown = [name for name in names if name not in _CHECKABLE]
        if unknown:
            raise ValueError(
                f"metric {metric!r} names unknown sample field(s) {unknown}; known: {_CHECKABLE}"
            )
    problems: list[Problem] = []
    for row, sample in enumerate(samples, 1):
        missing: dict[str, list[str]] = {}  # field -> metrics that need it, in the order given
        empty: dict[str, list[str]] = {}
        for metric, names in [*required.items(), *nonempty.items()]:
            for name in names:
                if sample.get(name) is None and metric not in missing.setdefault(name, []):
                    missing[name].append(metric)
        for metric, names in nonempty.items():
            for name in names:
                value = sample.get(name)
                if value is not None and len(value) == 0:
                    empty.setdefault(name, []).append(metric)
        for name in _CHECKABLE:  # one problem per field, in the sample's field order
            if missing.get(name):
                problems.append(Problem(row, name, f"missing, needed by {', '.join(missing[name])}"))
            if empty.get(name):
                problems.append(Problem(row, name, f"empty list, needed by {', '.join(empty[name])}"))
    if problems:
        raise DataError(problems)
