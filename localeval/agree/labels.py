"""Human labels for some samples of a run, read from JSON lines or CSV.

Three row shapes, which may be mixed in one file:

* sample level, long: ``{"id": "q1", "metric": "faithfulness", "label": 0.5}``;
* sample level, wide: ``{"id": "q1", "faithfulness": 1, "context_recall": 0.5}`` (every other column
  is a metric; an empty cell or null is no label; ``note``, ``notes``, ``comment`` and ``annotator``
  columns are ignored);
* verdict level: ``{"id": "q1", "metric": "faithfulness", "index": 2, "label": 0}``: the human's
  verdict on the statement (or chunk) at position ``index``, counted from 0, of the judge's trace.

A sample label is a score in [0, 1]; a verdict label is 0 or 1 (``true``/``false``, ``yes``/``no``
are read as 1/0). Every problem is collected, naming its row and field, before one DataError.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.data.errors import DataError, Problem

IGNORED_COLUMNS = frozenset({"note", "notes", "comment", "comments", "annotator"})
_WORDS = {"true": 1.0, "yes": 1.0, "false": 0.0, "no": 0.0}


@dataclass(frozen=True)
class SampleLabel:
    """A human score for one metric on one sample; ``row`` is the 1-based data row of the file."""

    id: str
    metric: str
    label: float
    row: int


@dataclass(frozen=True)
class VerdictLabel:
    """A human verdict (0/1) on the item at ``index`` of the judge's verdict list."""

    id: str
    metric: str
    index: int
    label: int
    row: int


@dataclass
class Labels:
    """Every label of a file, in file order."""

    source: str
    samples: list[SampleLabel]
    verdicts: list[VerdictLabel]

    @property
    def metrics(self) -> list[str]:
        """The metrics labelled, in the order they first appear."""
        names = [x.metric for x in self.samples] + [x.metric for x in self.verdicts]
        return list(dict.fromkeys(names))


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _number(value: Any) -> float | None:
    """The value as a float (numbers, numeric text, true/false, yes/no), or None when it is none of them."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _WORDS:
            return _WORDS[text]
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _label(value: Any, row: int, field: str, verdict: bool, problems: list[Problem]) -> float | None:
    number = _number(value)
    if number is None or math.isnan(number):
        problems.append(Problem(row, field, f"{value!r} is not a number; write a score in [0, 1] or 0/1"))
    elif verdict and number not in (0.0, 1.0):
        problems.append(Problem(row, field, f"a verdict label is 0 or 1, not {value!r}"))
    elif not 0 <= number <= 1:
        problems.append(Problem(row, field, f"{value!r} is outside [0, 1]; scale the score to [0, 1]"))
    else:
        return number
    return None


def _index(value: Any, row: int, problems: list[Problem]) -> int | None:
    number = _number(value) if not isinstance(value, bool) else None
    if number is None or not number.is_integer() or number < 0:
        problems.append(Problem(row, "index", f"{value!r} is not a position: write 0 for the first statement"))
        return None
    return int(number)


def _parse_row(record: Any, row: int, labels: Labels, problems: list[Problem]) -> None:
    if not isinstance(record, dict):
        problems.append(Problem(row, None, f"expected an object with an id, got {type(record).__name__}"))
        return
    if _empty(record.get("id")):
        problems.append(Problem(row, "id", "missing: every label names the sample id of the run"))
        return
    sample_id = str(record["id"]).strip()
    if "metric" not in record:  # wide: one column per metric
        for field, value in record.items():
            if field == "id" or field in IGNORED_COLUMNS or _empty(value):
                continue
            score = _label(value, row, field, False, problems)
            if score is not None:
                labels.samples.append(SampleLabel(sample_id, field, score, row))
        return
    metric = record["metric"]
    if _empty(metric) or not isinstance(metric, str):
        problems.append(Problem(row, "metric", f"{metric!r} is not a metric name"))
        return
    if _empty(record.get("label")):
        problems.append(Problem(row, "label", "missing: give the human's score or verdict"))
        return
    if _empty(record.get("index")):
        score = _label(record["label"], row, "label", False, problems)
        if score is not None:
            labels.samples.append(SampleLabel(sample_id, metric.strip(), score, row))
        return
    index = _index(record["index"], row, problems)
    verdict = _label(record["label"], row, "label", True, problems)
    if index is not None and verdict is not None:
        labels.verdicts.append(VerdictLabel(sample_id, metric.strip(), index, int(verdict), row))


def _records(path: Path) -> list[tuple[int, int, Any]]:
    """(data row, file line, record) of a JSON lines or CSV file."""
    suffix = path.suffix.lower()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise DataError([Problem(None, None, f"cannot read the labels: {error}")], str(path)) from None
    if suffix == ".json" and text.lstrip().startswith("["):  # one JSON array of objects
        try:
            return [(row, row, record) for row, record in enumerate(json.loads(text), 1)]
        except json.JSONDecodeError as error:
            raise DataError([Problem(None, None, f"not valid JSON ({error.msg})", error.lineno)], str(path)) from None
    if suffix in (".jsonl", ".json"):
        records: list[tuple[int, int, Any]] = []
        for line, content in enumerate(text.split("\n"), 1):
            if content.strip():
                try:
                    records.append((len(records) + 1, line, json.loads(content)))
                except json.JSONDecodeError as error:
                    message = f"not valid JSON ({error.msg}); write one object a line"
                    raise DataError([Problem(None, None, message, line)], str(path)) from None
        return records
    if suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if not reader.fieldnames or "id" not in [f.strip() for f in reader.fieldnames]:
            raise DataError([Problem(None, None, "the CSV header has no id column", 1)], str(path))
        rows = [(line, {k.strip(): v for k, v in r.items() if k is not None}) for line, r in enumerate(reader, 2)]
        return [(i, line, r) for i, (line, r) in enumerate(rows, 1)]
    raise DataError([Problem(None, None, f"unknown file type {suffix or '(none)'!r}; labels are .jsonl or .csv")],
                    str(path))


def read_labels(path: str | Path) -> Labels:
    """The labels of a ``.jsonl``, ``.csv`` or ``.json`` (an array) file; a DataError lists every bad row and field."""
    file = Path(path)
    if not file.is_file():
        raise DataError([Problem(None, None, f"no labels file at {file}")], str(file))
    labels, problems = Labels(str(file), [], []), []
    for row, line, record in _records(file):
        found: list[Problem] = []
        _parse_row(record, row, labels, found)
        problems += [Problem(p.row, p.field, p.message, line if line != row else None) for p in found]
    seen: dict[tuple[str, str, int | None], int] = {}
    keyed: list[tuple[tuple[str, str, int | None], int]] = [((x.id, x.metric, None), x.row) for x in labels.samples]
    keyed += [((x.id, x.metric, x.index), x.row) for x in labels.verdicts]
    for key, row in keyed:
        if key in seen:
            what = f"sample {key[0]!r}, metric {key[1]!r}" + (f", index {key[2]}" if key[2] is not None else "")
            problems.append(Problem(row, None, f"a second label for {what} (first in row {seen[key]})"))
        seen.setdefault(key, row)
    if problems:
        raise DataError(sorted(problems, key=lambda p: p.row or 0), str(file))
    if not labels.samples and not labels.verdicts:
        raise DataError([Problem(None, None, "the file holds no labels")], str(file))
    return labels
