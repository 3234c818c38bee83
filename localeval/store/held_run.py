"""What a run folder holds already, and whether a new run may write its scores there.

A run's scores are never overwritten silently. A run goes on in a folder that holds scores when it scores
the same samples (samples.jsonl as it would write it, byte for byte) on the same metrics or more: adding
metrics to a run, or rerunning the same command to resume it. Anything else stops before a model loads,
with the two ways on: another ``--out`` keeps the run, ``--replace`` deletes it (the judge cache stays).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from localeval.errors import LocalevalError
from localeval.store.chunks import CHUNKS
from localeval.store.run_folder import SAMPLES, SCORES, SUMMARY, sample_record, samples_text

REPORT = "report.html"
REPLACED = (SCORES, SAMPLES, SUMMARY, CHUNKS, REPORT)  # a run's files; the judge cache is not one of them
SHOWN = 3  # sample ids named in a message
BLOCK = 1 << 20

# The samples of the run about to be written: a fresh iterable of sample lists each time it is called.
Chunks = Callable[[], Iterable[Sequence[Any]]]


@dataclass(frozen=True)
class HeldRun:
    """The scores a run folder holds: how many rows, the first ids, the metric columns, the chunked plan's size."""

    samples: int
    ids: list[str]
    metrics: list[str] | None  # None: scores.jsonl's first row cannot be read
    planned: int | None  # a chunked run's plan: the samples it covers (more than ``samples`` when unfinished)


def held_run(folder: Path) -> HeldRun | None:
    """What ``folder`` holds; None when it holds no score row."""
    path = folder / SCORES
    if not path.is_file() or path.stat().st_size == 0:
        return None
    ids: list[str] = []
    metrics: list[str] | None = None
    with path.open("rb") as handle:
        for number, line in enumerate(handle):
            if number >= SHOWN:
                break
            row = _loads(line)
            if number == 0 and isinstance(row, dict) and isinstance(row.get("metrics"), dict):
                metrics = list(row["metrics"])
            if isinstance(row, dict) and "id" in row:
                ids.append(str(row["id"]))
    return HeldRun(_lines(path), ids, metrics, _planned(folder))


def check_run_folder(folder: Path, metrics: Sequence[str], chunks: Chunks, count: int,
                     data: Mapping[str, Any] | None = None) -> None:
    """Raise LocalevalError when ``folder`` holds a run that this one (``count`` samples, ``chunks`` of them,
    scored on ``metrics``) is not the same run of, or a same-data extension of.

    ``data``: what describes a data file in a chunked run's plan (``bulk.Source.describe``); a plan with the
    same description spares reading the file again.
    """
    held = held_run(folder)
    if held is None:
        return
    dropped = [m for m in held.metrics or [] if m not in metrics]
    same = _same_plan(folder, data) or _same_samples(folder, chunks, held, count)
    if same and not dropped and held.metrics is not None:
        return
    raise LocalevalError(_message(folder, held, metrics, chunks, count, same, dropped))


def clear_run(folder: Path) -> None:
    """Delete a run's files from ``folder`` (scores, samples, summary, chunk log, report), keeping its judge cache."""
    for name in REPLACED:
        (folder / name).unlink(missing_ok=True)


def _message(folder: Path, held: HeldRun, metrics: Sequence[str], chunks: Chunks, count: int, same: bool,
             dropped: list[str]) -> str:
    unfinished = (f" (an unfinished chunked run of {held.planned})"
                  if held.planned is not None and held.planned > held.samples else "")
    kept = (f"on {', '.join(held.metrics)}" if held.metrics is not None
            else f"in a {SCORES} whose first row cannot be read")
    why = [] if same else [f"its samples are not this run's: {first_difference(folder, chunks)}"]
    if dropped:
        why.append(f"this run would leave out its {', '.join(dropped)} (a run into the same folder may add "
                   "metrics to the same samples, not leave any out)")
    return (f"{folder} holds another run's scores: {_samples(held.samples, held.ids)}{unfinished} {kept}; this run "
            f"scores {_samples(count, _first_ids(chunks))} on {', '.join(metrics)}. Its scores would be overwritten: "
            f"{'; '.join(why)}. To keep that run, choose another --out; to replace it, pass --replace "
            f"(API: replace=True), which deletes its {', '.join(REPLACED)} and keeps its judge cache")


def first_difference(folder: Path, chunks: Chunks) -> str:
    """Where the folder's samples and this run's part first: the sample and the field, or the count."""
    path = folder / SAMPLES
    held: list[Any] = []
    if path.is_file():
        with path.open("rb") as handle:
            held = [row for row in map(_loads, handle) if row is not None]
    number = 0
    for chunk in chunks():
        for sample in chunk:
            record = sample_record(sample)
            new = json.loads(json.dumps(record, ensure_ascii=False))
            if number >= len(held):
                return f"this run has more samples: its sample {number + 1}, {_id(new)}, is not in the folder"
            old = held[number] if isinstance(held[number], dict) else {}
            number += 1
            if old == new:
                continue
            if old.get("id") != new.get("id"):
                return f"sample {number} is {_id(old)} in the folder and {_id(new)} in this run"
            fields = [repr(k) for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]
            return f"sample {number} ({_id(new)}) has another {' and '.join(fields[:SHOWN])} in this run"
    if number < len(held):
        return f"the folder has more samples: its sample {number + 1}, {_id(held[number])}, is not in this run"
    return "they differ in how they were written"


def _id(row: object) -> str:
    return f"id {str(row.get('id'))!r}" if isinstance(row, dict) else "an unreadable row"


def _samples(count: int, ids: list[str]) -> str:
    listed = ", ".join(ids) + (", ..." if count > len(ids) else "")
    return f"{count} sample{'s' if count != 1 else ''}" + (f" ({listed})" if ids else "")


def _first_ids(chunks: Chunks) -> list[str]:
    ids: list[str] = []
    iterator = iter(chunks())
    try:
        for chunk in iterator:
            ids += [str(s.id) for s in chunk[: SHOWN - len(ids)]]
            if len(ids) >= SHOWN:
                break
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            close()  # a file read chunk by chunk is closed now, not when the generator is collected
    return ids


def _same_plan(folder: Path, data: Mapping[str, Any] | None) -> bool:
    """A chunked run's plan describes this very data file (its path, size and time)."""
    plan = _plan(folder)
    return data is not None and "path" in data and plan is not None and plan.get("data") == dict(data)


def _same_samples(folder: Path, chunks: Chunks, held: HeldRun, count: int) -> bool:
    """The folder's samples are this run's, all of them or (an unfinished chunked run of as many) the first ones."""
    path = folder / SAMPLES
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        match = _match(handle, (samples_text(chunk).encode("utf-8") for chunk in chunks()))
    return match == "same" or (match == "prefix" and held.planned == count)


def _match(held: BinaryIO, new: Iterable[bytes]) -> str:
    """Whether the held file is the new bytes whole ("same"), their beginning ("prefix"), or neither ("other")."""
    for data in new:
        part = held.read(len(data))
        if part != data:
            return "prefix" if data.startswith(part) and not held.read(1) else "other"
    return "other" if held.read(1) else "same"


def _plan(folder: Path) -> dict[str, Any] | None:
    path = folder / CHUNKS
    if not path.is_file():
        return None
    with path.open("rb") as handle:
        head = _loads(handle.readline())
    plan = head.get("plan") if isinstance(head, dict) else None
    return plan if isinstance(plan, dict) else None


def _planned(folder: Path) -> int | None:
    data = (_plan(folder) or {}).get("data")
    count = data.get("samples", data.get("records")) if isinstance(data, dict) else None
    return count if isinstance(count, int) else None


def _lines(path: Path) -> int:
    """Rows of a JSONL file, counted without parsing them (a last row cut short by a kill counts too)."""
    count, last = 0, b"\n"
    with path.open("rb") as handle:
        while block := handle.read(BLOCK):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def _loads(line: bytes) -> Any:
    try:
        return json.loads(line) if line.strip() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
