"""Samples read lazily, chunk by chunk, so a run's memory does not grow with its data set.

JSON lines are read line by line, CSV row by row, Parquet by record batches and a saved Hugging Face
dataset (memory-mapped) by slices; a ``.json`` array is read whole and cut. A file that is unreadable as a
whole (compressed, binary, not UTF-8) is handed to the eager reader, so its error reads exactly as
``load_samples`` words it. ``scan_samples`` checks the whole file first (every problem in one
``DataError``, duplicate ids across chunks included) and counts its samples.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from localeval.data.errors import DataError, Problem, by_row
from localeval.data.load import _read, _Unreadable, csv_raws, open_hf_dataset
from localeval.data.records import Raw, to_samples
from localeval.data.sample import Sample
from localeval.data.validate import Needs

_BOM = "\ufeff".encode()


class _Eager(Exception):
    """The file needs the eager reader (for its exact error, or a format read whole)."""


def sample_chunks(
    path: str | Path, size: int, required: Needs | None = None, nonempty: Needs | None = None, skip: int = 0
) -> Iterator[tuple[int, list[Sample]]]:
    """(chunk index, its samples) for every chunk of ``size`` records, from chunk ``skip`` on."""
    file = Path(path).expanduser()
    problems: list[Problem] = []
    for index, raws in enumerate(_raw_chunks(file, size, problems)):
        if index >= skip:
            found, problems[:] = list(problems), []
            yield index, to_samples(raws, str(file), found, required, nonempty)
        else:
            problems.clear()


def scan_samples(path: str | Path, size: int, required: Needs | None = None, nonempty: Needs | None = None) -> int:
    """The number of records in the file; raises one DataError with every problem of every chunk."""
    file = Path(path).expanduser()
    problems: list[Problem] = []
    found: list[Problem] = []
    whole: set[str] = set()  # problems of the whole file, which every chunk reports again
    fix: str | None = None
    first_row: dict[str, int] = {}
    count = 0
    for raws in _raw_chunks(file, size, problems):
        count += len(raws)
        chunk_problems, problems[:] = list(problems), []
        try:
            to_samples(raws, str(file), chunk_problems, required, nonempty)
        except DataError as error:
            fix = fix or error.fix
            for problem in error.problems:
                if problem.row is not None or problem.message not in whole:
                    found.append(problem)
                    whole.update([problem.message] if problem.row is None else [])
        found += _repeated_ids(raws, first_row)
    if count == 0:
        to_samples([], str(file), problems, required, nonempty)  # raises: no samples, or why not
    if found:
        raise DataError(by_row(found), str(file), fix)
    return count


def _repeated_ids(raws: list[Raw], first_row: dict[str, int]) -> list[Problem]:
    """Ids of this chunk that an earlier chunk already has (repeats within the chunk ``to_samples`` reports)."""
    found = []
    for raw in raws:
        record = raw.record if isinstance(raw.record, Mapping) else {}
        column = "id" if "id" in record else "sample_id"
        given = record.get(column)
        sample_id = str(given) if isinstance(given, str | int) and not isinstance(given, bool) else None
        sample_id = sample_id if given is not None else str(raw.row)
        if sample_id is not None and sample_id in first_row:
            message = f"duplicate id {sample_id!r}, also in row {first_row[sample_id]}"
            found.append(Problem(raw.row, "id", message, raw.line, column if given is not None else None))
    for raw in raws:
        record = raw.record if isinstance(raw.record, Mapping) else {}
        given = record.get("id" if "id" in record else "sample_id")
        first_row.setdefault(str(given) if given is not None else str(raw.row), raw.row)
    return found


def _raw_chunks(file: Path, size: int, problems: list[Problem]) -> Iterator[list[Raw]]:
    """The file's records in lists of ``size``; row problems go to ``problems``."""
    buffer: list[Raw] = []
    try:
        for raw in _raws(file, problems, size):
            buffer.append(raw)
            if len(buffer) >= size:
                yield buffer
                buffer = []
    except _Unreadable as e:
        raise DataError(e.problems, str(file)) from None
    if buffer:
        yield buffer


def _raws(file: Path, problems: list[Problem], batch: int) -> Iterator[Raw]:
    """Every record, read lazily where the format allows; the eager reader takes over where it must."""
    given = 0
    try:
        suffix = file.suffix.lower()
        if file.is_dir():
            reader = _dataset_raws(file, batch)
        elif not file.exists() or suffix not in (".jsonl", ".csv", ".parquet"):
            raise _Eager
        else:
            reader = {".jsonl": _jsonl_raws, ".csv": _csv_file_raws, ".parquet": _parquet_raws}[suffix](
                file, problems, batch)
        for raw in reader:
            given += 1
            yield raw
    except _Eager:
        problems.clear()
        yield from _read(file, problems)[given:]  # raises _Unreadable for a bad file


def _jsonl_raws(file: Path, problems: list[Problem], batch: int) -> Iterator[Raw]:
    row = 0
    with file.open("rb") as handle:
        head = handle.read(4)
        if head.startswith((b"\x1f\x8b", b"PAR1")):
            raise _Eager
        handle.seek(0)
        for line, data in enumerate(handle, 1):
            if b"\x00" in data:
                raise _Eager
            try:
                text = (data.removeprefix(_BOM) if line == 1 else data).decode("utf-8")
            except UnicodeDecodeError:
                raise _Eager from None
            if not text.strip():
                continue
            if row == 0 and text.lstrip().startswith("["):
                raise _Eager
            row += 1
            try:
                yield Raw(row, line if line != row else None, json.loads(text))
            except json.JSONDecodeError as e:
                problems.append(Problem(row, None, f"not valid JSON: {e.msg} at column {e.colno}",
                                        line if line != row else None))


def _csv_file_raws(file: Path, problems: list[Problem], batch: int) -> Iterator[Raw]:
    try:
        with file.open("r", encoding="utf-8-sig", newline="") as handle:
            first = handle.read(1024)
            if "\x00" in first or first.lstrip().startswith(("{", "[")):
                raise _Eager
            handle.seek(0)
            yield from csv_raws(handle, problems)
    except (UnicodeDecodeError, _Unreadable):
        raise _Eager from None


def _parquet_raws(file: Path, problems: list[Problem], batch: int) -> Iterator[Raw]:
    import pyarrow.parquet as pq  # heavy: imported only when a Parquet file is read

    try:
        parquet = pq.ParquetFile(file)
    except Exception:  # pyarrow raises several types for a file that is not Parquet
        raise _Eager from None
    row = 0
    for records in parquet.iter_batches(batch_size=batch):
        for record in records.to_pylist():
            row += 1
            yield Raw(row, None, record, True)


def _dataset_raws(folder: Path, batch: int) -> Iterator[Raw]:
    loaded = open_hf_dataset(folder)
    if loaded is None:
        return
    row = 0
    for start in range(0, len(loaded), batch):
        columns = loaded[start : start + batch]
        names = list(columns)
        for values in zip(*columns.values(), strict=True):
            row += 1
            yield Raw(row, None, dict(zip(names, values, strict=True)), True)


__all__ = ["sample_chunks", "scan_samples"]
