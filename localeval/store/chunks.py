"""The ``chunks.jsonl`` format, written and read here alone: a run in its run folder, each finished chunk's rows
appended to scores.jsonl, and a log of the finished chunks (a run whose data fits one chunk has one line in it).

``chunks.jsonl`` starts with the run's plan (what decides its scores, the chunk size and the data), then
holds one line per finished chunk: its index, rows, cost, and the sizes scores.jsonl and samples.jsonl
had once its rows were written (and synced). A chunk is finished once its line is there; a rerun with
the same plan cuts both files back to the last finished chunk and goes on from the next one. Another
plan starts over (the judge cache keeps every answer, so that costs no judge call already made).
``chunk_plan`` and ``chunk_record`` say what the head and a chunk's line hold; ``chunk_totals`` and
``ScoresOnDisk.from_log`` read them back.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from localeval.data.sample import Sample
from localeval.errors import LocalevalError, write_failed, writing
from localeval.nan import Nan
from localeval.steps import Outcome
from localeval.store.run_folder import SAMPLES, SCORES, iter_jsonl

CHUNKS = "chunks.jsonl"


class Cost(Protocol):
    """One metric's cost as a chunk's output holds it (``scheduler.Usage``)."""

    def to_dict(self) -> dict[str, float | int]: ...


class ChunkOutput(Protocol):
    """What a chunk's line keeps of the scheduler's output for it (``scheduler.RunOutput``)."""

    @property
    def outcomes(self) -> Mapping[str, Sequence[Outcome]]: ...
    @property
    def usage(self) -> Mapping[str, Any]: ...
    @property
    def rounds(self) -> int: ...
    @property
    def engine_calls(self) -> int: ...
    @property
    def embed_calls(self) -> int: ...
    @property
    def wall_seconds(self) -> float: ...


def chunk_plan(*, metrics: Sequence[str], settings: Mapping[str, Any], seed: int, long_context: str,
               on_missing: str, judge: str | None, embedder: str | None, chunk_size: int,
               data: Mapping[str, Any]) -> dict[str, Any]:
    """The head of a chunk log: what decides a run's rows. A rerun under another plan starts over."""
    return {"metrics": list(metrics), "settings": dict(settings), "seed": seed, "long_context": long_context,
            "on_missing": on_missing, "judge": judge, "embedder": embedder, "chunk_size": chunk_size,
            "data": dict(data)}


def chunk_record(output: ChunkOutput, samples: Sequence[Sample]) -> dict[str, Any]:
    """What chunks.jsonl keeps of a finished chunk: rows, cost per metric, rounds, calls, seconds, and each
    metric's values (a NaN as its reason), so that the summary need not read scores.jsonl back."""
    values = {name: [v.reason if isinstance(v, Nan) else v for v in outcomes]
              for name, outcomes in output.outcomes.items()}
    usage: Mapping[str, Cost] = output.usage
    return {"rows": len(samples), "usage": {name: u.to_dict() for name, u in usage.items()},
            "rounds": output.rounds, "engine_calls": output.engine_calls, "embed_calls": output.embed_calls,
            "seconds": round(output.wall_seconds, 4),
            "unanswerable": sum(1 for s in samples if s.answerable is False), "values": values}


def chunk_totals(records: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> dict[str, Any]:
    """The cost of every finished chunk together: per metric its cost fields added up (``usage``), and
    ``rounds``, ``engine_calls``, ``embed_calls`` and ``seconds`` summed."""
    usage: dict[str, dict[str, Any]] = {name: {} for name in metrics}
    for record in records:
        for name, cost in record["usage"].items():
            if name in usage:
                for field, amount in cost.items():
                    usage[name][field] = usage[name].get(field, 0) + amount
    return {"usage": usage, **{key: sum(r[key] for r in records)
                               for key in ("rounds", "engine_calls", "embed_calls", "seconds")}}


class ChunkLog:
    """The finished chunks of one run folder, under one plan; ``append`` records the next one."""

    def __init__(self, folder: str | Path, plan: Mapping[str, Any]) -> None:
        self.folder = Path(folder)
        with writing(self.folder, "The judge cache is intact", "rerun the same command"):
            self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / CHUNKS
        self.plan = json.loads(json.dumps(dict(plan)))  # as it reads back
        self.finished: list[dict[str, Any]] = self._resume()

    @property
    def next_chunk(self) -> int:
        """The first unfinished chunk."""
        return len(self.finished)

    def _resume(self) -> list[dict[str, Any]]:
        """The finished chunks of an earlier run of this plan, both files cut back to them; else a fresh log."""
        records: list[dict[str, Any]] = []
        lines = self.path.read_text(encoding="utf-8").split("\n") if self.path.exists() else []
        if lines and _loads(lines[0]) == {"plan": self.plan}:
            for line in lines[1:]:
                record = _loads(line)
                if not isinstance(record, dict) or record.get("chunk") != len(records):
                    break  # a line cut short by a kill, and anything after it
                records.append(record)
        try:
            if records:
                last = records[-1]
                _cut(self.folder / SCORES, int(last["scores_bytes"]))
                _cut(self.folder / SAMPLES, int(last["samples_bytes"]))
                self.path.write_text("".join(json.dumps(r) + "\n" for r in [{"plan": self.plan}, *records]),
                                     encoding="utf-8")
            else:
                for name in (SCORES, SAMPLES):  # written again from the first chunk, which creates them
                    (self.folder / name).unlink(missing_ok=True)
                self.path.write_text(json.dumps({"plan": self.plan}) + "\n", encoding="utf-8")
        except OSError as error:
            raise write_failed(self.path, error, "The judge cache and the finished chunks are intact",
                               "rerun the same command to go on from the first unfinished chunk") from error
        except (KeyError, ValueError) as error:
            raise LocalevalError(f"{self.path}: cannot resume the chunked run ({error}); "
                                 f"delete {self.path} to start it over (the judge cache is kept)") from None
        return records

    def append(self, samples_text: str, scores_text: str, record: Mapping[str, Any]) -> None:
        """Write a finished chunk: its samples, its score rows, then its line in the log (each synced)."""
        sizes = {}
        for name, text in ((SAMPLES, samples_text), (SCORES, scores_text)):
            sizes[name] = _append(self.folder / name, text)
        line = {"chunk": self.next_chunk, **record, "scores_bytes": sizes[SCORES], "samples_bytes": sizes[SAMPLES]}
        _append(self.path, json.dumps(line) + "\n")
        self.finished.append(line)


def _loads(line: str) -> Any:
    try:
        return json.loads(line) if line.strip() else None
    except json.JSONDecodeError:
        return None


def _cut(path: Path, size: int) -> None:
    if not path.exists() or path.stat().st_size < size:
        raise ValueError(f"{path.name} is shorter than its finished chunks")
    with path.open("r+b") as handle:
        handle.truncate(size)


def _append(path: Path, text: str) -> int:
    """Append ``text``, flushed and synced; the file's size after it."""
    try:
        with path.open("ab") as handle:
            handle.write(text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
            return handle.tell()
    except OSError as error:
        raise write_failed(path, error, "The judge cache and the finished chunks are intact",
                           "rerun the same command to go on from the first unfinished chunk") from error


class ScoresOnDisk:
    """What a summary needs from scores.jsonl, read in one pass: per metric every value or Nan, in row order,
    and the rows the strata need (unanswerable rows, and response relevancy's values)."""

    def __init__(self, folder: str | Path, metrics: Sequence[str], relevancy: Sequence[str]) -> None:
        self.outcomes: dict[str, list[Outcome]] = {m: [] for m in metrics}
        self.soft: dict[str, list[float | None]] = {m: [] for m in metrics}  # each row's soft score, if any
        self.strata_rows: list[dict[str, Any]] = []
        self.count = 0
        nans: dict[str, Nan] = {}
        values: dict[float, float] = {}  # one object per distinct score: most scores repeat
        for row in iter_jsonl(folder, SCORES):
            self.count += 1
            for name in metrics:
                cell = row["metrics"][name]
                value = cell["value"]
                if value is None:
                    reason: Any = cell["nan_reason"] or "undefined"
                    self.outcomes[name].append(nans.setdefault(reason, Nan(reason)))
                else:
                    self.outcomes[name].append(values.setdefault(value, float(value)))
                self.soft[name].append((cell.get("trace") or {}).get("soft_score"))
            unanswerable = row.get("answerable") is False
            if relevancy or unanswerable:
                kept = {m: {**row["metrics"][m], "trace": row["metrics"][m]["trace"] if unanswerable else {}}
                        for m in relevancy}
                self.strata_rows.append({"id": row["id"], "metrics": kept,
                                         **({"answerable": row["answerable"]} if "answerable" in row else {})})

    @classmethod
    def from_log(cls, records: Sequence[Mapping[str, Any]], metrics: Sequence[str]) -> ScoresOnDisk | None:
        """The same from the values chunks.jsonl keeps, where the strata need no row (no unanswerable sample);
        None when they do, or a record lacks the values."""
        if any("values" not in r or r.get("unanswerable", 1) for r in records):
            return None
        disk = cls.__new__(cls)
        disk.outcomes, disk.strata_rows, disk.count, disk.soft = {m: [] for m in metrics}, [], 0, {}
        nans: dict[str, Nan] = {}
        for record in records:
            disk.count += record["rows"]
            for name in metrics:
                disk.outcomes[name] += [nans.setdefault(v, Nan(v)) if isinstance(v, str) else v  # type: ignore[arg-type]
                                        for v in record["values"][name]]
        return disk


__all__ = ["CHUNKS", "ChunkLog", "ChunkOutput", "ScoresOnDisk", "chunk_plan", "chunk_record", "chunk_totals"]
