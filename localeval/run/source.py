"""A run's samples: a list in memory, or a file read chunk by chunk, checked before any model loads.

A file larger than ``EAGER_BYTES``, or any file when a chunk size is asked for, is read lazily chunk by chunk
(``localeval.data.stream``); anything else is read whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.data import Sample, as_samples
from localeval.data.stream import sample_chunks, scan_samples
from localeval.errors import LocalevalError
from localeval.metrics.definition import MetricSpec, needs

EAGER_BYTES = 32 * 2**20  # a data file (or dataset folder) up to this size is read whole


@dataclass
class Source:
    """A run's samples: a list in memory (``rows``), or a file read chunk by chunk (``path``)."""

    count: int
    size: int  # samples a chunk holds
    rows: list[Sample] | None = None
    path: Path | None = None
    stamp: tuple[int, int] | None = None  # the file's size and modification time when it was checked

    @property
    def chunk_count(self) -> int:
        return -(-self.count // self.size)

    def chunks(self, skip: int = 0) -> Iterator[tuple[int, list[Sample]]]:
        """(index, samples) of every chunk from ``skip`` on."""
        if self.path is not None:
            for index, rows in sample_chunks(self.path, self.size, skip=skip):
                if _stamp(self.path) != self.stamp:  # a chunk of another file than the one checked: no result
                    raise LocalevalError(
                        f"{self.path} changed while this run read it, chunk by chunk; the run stopped, before "
                        f"scoring chunk {index + 1} of {self.chunk_count}. Leave the file as it is while a run reads "
                        "it (a copy to change is safe), then rerun the same command with --replace: it starts over on "
                        "the file as it is then, and the judge cache keeps every answer that still applies")
                yield index, rows
            return
        assert self.rows is not None
        for index in range(skip, self.chunk_count):
            yield index, self.rows[index * self.size : (index + 1) * self.size]

    def describe(self) -> dict[str, Any]:
        """What identifies the data in a chunked run's plan."""
        if self.path is not None:
            stat = self.path.stat()
            return {"path": str(self.path.resolve()), "bytes": _bytes(self.path), "modified_ns": stat.st_mtime_ns,
                    "samples": self.count}
        assert self.rows is not None
        return {"records": self.count, "first_id": self.rows[0].id if self.rows else None,
                "last_id": self.rows[-1].id if self.rows else None}


def _stamp(path: Path) -> tuple[int, int]:
    return _bytes(path), path.stat().st_mtime_ns


def _bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


def open_source(data: Any, specs: Sequence[MetricSpec], checked: bool, size: int, explicit: bool) -> Source:
    """The run's samples, checked (every problem in one DataError) before any model is loaded.

    A file is streamed when ``explicit`` (a chunk size was asked for) or when it is larger than ``EAGER_BYTES``.
    ``checked``: also report rows that lack what a metric needs.
    """
    if isinstance(data, str | Path):
        file = Path(data).expanduser()
        if file.exists() and (explicit or _bytes(file) > EAGER_BYTES):
            stamp = _stamp(file)
            count = scan_samples(file, size, *(needs(specs) if checked else (None, None)))
            return Source(count, size, path=file, stamp=stamp)
    rows = as_samples(data, *needs(specs)) if checked else as_samples(data)
    return Source(len(rows), size, rows=rows)


__all__ = ["EAGER_BYTES", "Source", "open_source"]
