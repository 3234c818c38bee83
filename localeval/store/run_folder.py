"""The run folder a user reads: scores.jsonl (one row per sample) and summary.json."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError

SAMPLES = "samples.jsonl"
SCORES = "scores.jsonl"
SUMMARY = "summary.json"
CACHE = "judge.sqlite"


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists, numpy scalars Python numbers."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_atomic(path: Path, text: str) -> None:
    """Write a file whole or not at all (a full disk leaves the old file, and says so)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise LocalevalError(
            f"could not write {path}: {error.strerror or error}. The judge cache is intact; "
            "free some space and rerun the same command to write the results without new judge calls."
        ) from error


def write_scores(folder: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """One JSON object per sample."""
    path = folder / SCORES
    write_atomic(path, "".join(json.dumps(_clean(r), ensure_ascii=False) + "\n" for r in rows))
    return path


def write_samples(folder: Path, samples: Iterable[Any]) -> Path:
    """The samples as scored, so ``rescore`` can recompute without the original data file."""
    path = folder / SAMPLES
    rows = []
    for s in samples:
        row = {k: v for k, v in s.__dict__.items() if v is not None and k != "extra"}
        rows.append(json.dumps(_clean(row), ensure_ascii=False) + "\n")
    write_atomic(path, "".join(rows))
    return path


def write_summary(folder: Path, summary: dict[str, Any]) -> Path:
    path = folder / SUMMARY
    write_atomic(path, json.dumps(_clean(summary), indent=2, ensure_ascii=False) + "\n")
    return path


def read_scores(folder: Path) -> list[dict[str, Any]]:
    path = Path(folder) / SCORES
    if not path.exists():
        raise LocalevalError(f"{folder} is not a run folder: {SCORES} is missing")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def read_summary(folder: Path) -> dict[str, Any]:
    path = Path(folder) / SUMMARY
    if not path.exists():
        raise LocalevalError(f"{folder} is not a run folder: {SUMMARY} is missing")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


class RunLock:
    """An exclusive lock on a run folder: a second process writing the same run is refused."""

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / ".lock"
        self._file: Any = None

    def __enter__(self) -> RunLock:
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise LocalevalError(
                f"{self.path.parent} is in use by {holder}; wait for it to finish or choose another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"localeval process {os.getpid()}")
        handle.flush()
        self._file = handle
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()  # closing releases the lock
            self._file = None
