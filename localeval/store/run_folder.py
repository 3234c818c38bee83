"""The run folder a user reads: scores.jsonl (one row per sample) and summary.json."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError, write_failed, writing

SAMPLES = "samples.jsonl"
SCORES = "scores.jsonl"
SUMMARY = "summary.json"
CACHE = "judge.sqlite"


def _clean(value: Any) -> Any:
    """JSON-safe: NaN and infinities become null, tuples lists, numpy scalars Python numbers."""
    if hasattr(value, "to_record"):  # a conversation's message or a tool call
        return _clean(value.to_record())
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


KEPT = "The judge cache is intact"
RERUN = "rerun the same command to write the results without new judge calls"


def write_atomic(path: Path, text: str, kept: str = KEPT, then: str = RERUN) -> None:
    """Write a file whole or not at all (a full disk leaves the old file, and says so: ``errors.write_failed``)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as error:
        tmp.unlink(missing_ok=True)
        raise write_failed(path, error, kept, then) from error


def write_scores(folder: Path, rows: Iterable[dict[str, Any]]) -> Path:
    """One JSON object per sample."""
    path = folder / SCORES
    write_atomic(path, scores_text(rows))
    return path


def scores_text(rows: Iterable[dict[str, Any]]) -> str:
    """scores.jsonl lines of these rows."""
    return "".join(json.dumps(_clean(r), ensure_ascii=False) + "\n" for r in rows)


def write_samples(folder: Path, samples: Iterable[Any]) -> Path:
    """The samples as scored, so ``rescore`` can recompute without the original data file."""
    path = folder / SAMPLES
    write_atomic(path, samples_text(samples))
    return path


def sample_record(sample: Any) -> dict[str, Any]:
    """A sample as samples.jsonl holds it: its fields that are set, lists as lists, ``extra`` left out; a
    conversation in Ragas' shape, as ``user_input``."""
    return {("user_input" if k == "conversation" else k): _clean(v) for k, v in sample.__dict__.items()
            if v is not None and k != "extra"}


def samples_text(samples: Iterable[Any]) -> str:
    """samples.jsonl lines of these samples (``sample_record`` of each)."""
    return "".join(json.dumps(sample_record(s), ensure_ascii=False) + "\n" for s in samples)


def iter_jsonl(folder: str | Path, name: str) -> Iterator[dict[str, Any]]:
    """The rows of a run folder's JSONL file (scores.jsonl, samples.jsonl), read one at a time."""
    with (Path(folder) / name).open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def result_rows(samples: Sequence[Any], metrics: Sequence[str], output: Any) -> list[dict[str, Any]]:
    """scores.jsonl's rows: per sample its id, then per metric its value, NaN reason and trace."""
    from localeval.nan import Nan

    rows = []
    for i, sample in enumerate(samples):
        cells = {}
        for name in metrics:
            value = output.outcomes[name][i]
            cells[name] = {
                "value": None if isinstance(value, Nan) else value,
                "nan_reason": value.reason if isinstance(value, Nan) else None,
                "trace": output.traces[name][i],
            }
        row: dict[str, Any] = {"id": sample.id, "metrics": cells}
        if sample.answerable is not None:
            row["answerable"] = sample.answerable
        rows.append(row)
    return rows


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
    """An exclusive lock on a run folder: a second process writing the same run is refused.

    The lock file lives only while the run does: it is removed, still locked, when the run ends, so a finished
    run folder holds no ``.lock``. A process that opened the file just before it was removed may then lock the
    removed file; it checks that the path still names the file it locked, and tries again on a fresh one if not.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / ".lock"
        self._file: Any = None

    def __enter__(self) -> RunLock:
        while (handle := self._locked()) is None:
            pass
        handle.seek(0)
        handle.truncate()
        handle.write(f"localeval process {os.getpid()}")
        handle.flush()
        self._file = handle
        return self

    def _locked(self) -> Any:
        """The lock file, open and locked; None when it was removed meanwhile (try again)."""
        import fcntl

        with writing(self.path, "Nothing of the run was written yet", "rerun the same command"):
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
        try:
            current = os.stat(self.path).st_ino
        except FileNotFoundError:
            current = None
        if current != os.fstat(handle.fileno()).st_ino:  # its holder removed it as we opened it
            handle.close()
            return None
        return handle

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self.path.unlink(missing_ok=True)  # removed while still held, then released
            self._file.close()
            self._file = None
