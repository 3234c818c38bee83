"""Bulk runs: the data set streams through in chunks, each chunk's scores appended to the run folder as it ends.

A run is chunked when its data has more samples than a chunk holds (``RunConfig.chunk_samples``), when
``chunk_size`` is set, or when its file is too large to read whole (``EAGER_BYTES``: it is then read
lazily, see ``localeval.data.stream``). With a run folder, memory does not grow with the data set: only
one chunk's samples and scheduler state are held (a few on Ray), and the summary is computed at the end
from scores.jsonl. Without one, the chunks' outputs are kept and returned as one result.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.config import RunConfig
from localeval.data import Sample, as_samples
from localeval.data.stream import sample_chunks, scan_samples
from localeval.metrics.definition import MetricSpec, needs
from localeval.metrics.registry import base_name
from localeval.progress import ChunkProgress
from localeval.report.aggregate import MetricSummary
from localeval.report.strata import stratified_summary
from localeval.result import EvaluationResult
from localeval.scheduler.chunked import ChunkScored, ChunkScorer, LocalChunks, chunk_record, merged, totals
from localeval.silence import stderr_is_terminal
from localeval.store.chunks import ChunkLog, ScoresOnDisk, iter_score_rows
from localeval.store.held_run import check_run_folder
from localeval.store.run_folder import result_rows, samples_text, scores_text, write_summary

if TYPE_CHECKING:
    import pandas as pd

    from localeval.store.cache import JudgeCache

EAGER_BYTES = 32 * 2**20  # a data file (or dataset folder) up to this size is read whole
REPORT_SAMPLES = 50_000  # report.html, one page that holds every row, is written up to this many samples


@dataclass
class Source:
    """A run's samples: a list in memory (``rows``), or a file read chunk by chunk (``path``)."""

    count: int
    size: int  # samples a chunk holds
    rows: list[Sample] | None = None
    path: Path | None = None

    @property
    def chunk_count(self) -> int:
        return -(-self.count // self.size)

    def chunks(self, skip: int = 0) -> Iterator[tuple[int, list[Sample]]]:
        """(index, samples) of every chunk from ``skip`` on."""
        if self.path is not None:
            yield from sample_chunks(self.path, self.size, skip=skip)
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
            return Source(scan_samples(file, size, *(needs(specs) if checked else (None, None))), size, path=file)
    rows = as_samples(data, *needs(specs)) if checked else as_samples(data)
    return Source(len(rows), size, rows=rows)


def check_out(out: Path, source: Source, specs: Sequence[MetricSpec]) -> None:
    """Stop, before any model loads, when ``out`` holds another run's scores (``store.held_run``)."""
    check_run_folder(out, [s.name for s in specs], lambda: (rows for _, rows in source.chunks()), source.count,
                     source.describe() if source.path is not None else None)


def chunk_plan(source: Source, config: RunConfig) -> dict[str, Any]:
    """What decides a chunked run's rows: a rerun under another plan starts over."""
    return {"metrics": list(config.metrics), "settings": asdict(config.settings), "seed": config.seed,
            "long_context": config.long_context, "on_missing": config.on_missing,
            "judge": config.judge_fingerprint, "embedder": config.embedder_fingerprint,
            "chunk_size": source.size, "data": source.describe()}


@dataclass
class ChunkedResult(EvaluationResult):
    """The result of a chunked run with a run folder: scores are read from its scores.jsonl, not held."""

    folder: Path = field(default_factory=Path)
    count: int = 0
    strata_data: dict[str, Any] = field(default_factory=dict)
    soft_data: dict[str, list[float | None]] = field(default_factory=dict)  # soft scores read back from disk

    summaries: dict[str, MetricSummary] | None = None  # computed once: a bootstrap over a million values is slow

    @property
    def sample_count(self) -> int:
        return self.count

    def soft_scores(self, metric: str) -> list[float | None] | None:
        soft = self.soft_data.get(metric)
        return soft if soft and any(v is not None for v in soft) else None

    def summary(self) -> dict[str, MetricSummary]:
        if self.summaries is None:
            self.summaries = super().summary()
        return self.summaries

    def strata(self) -> dict[str, Any]:
        return self.strata_data

    def rows(self) -> list[dict[str, Any]]:
        """Every row of scores.jsonl (read whole: for a large run, iterate ``iter_rows`` instead)."""
        return list(self.iter_rows())

    def iter_rows(self) -> Iterator[dict[str, Any]]:
        """The rows of scores.jsonl, one at a time."""
        return iter_score_rows(self.folder)

    def to_pandas(self) -> pd.DataFrame:
        """A frame indexed by sample id: one column per metric (NaN where missing) and its reason."""
        import pandas as pd

        data: dict[str, list[Any]] = {"id": []}
        for name in self.metric_names:
            data[name], data[f"{name}__nan_reason"] = [], []
        for row in self.iter_rows():
            data["id"].append(row["id"])
            for name in self.metric_names:
                cell = row["metrics"][name]
                data[name].append(float("nan") if cell["value"] is None else cell["value"])
                data[f"{name}__nan_reason"].append(cell["nan_reason"])
        return pd.DataFrame(data).set_index("id")

    def save(self, folder: str | Path) -> Path:
        """Copy the run's scores, samples and summary into ``folder`` (they are written already)."""
        out = Path(folder)
        if out.resolve() != self.folder.resolve():
            out.mkdir(parents=True, exist_ok=True)
            for name in ("scores.jsonl", "samples.jsonl"):
                shutil.copyfile(self.folder / name, out / name)
            write_summary(out, self.summary_dict())
        return out


def evaluate_chunks(
    source: Source, specs: list[MetricSpec], config: RunConfig, engine: Any, emb: Any, *,
    store: JudgeCache, out: str | Path | None, progress: bool, report: bool, info: dict[str, Any],
) -> EvaluationResult:
    """Score ``source`` chunk by chunk; with ``out``, each finished chunk is written there before the next."""
    names = [s.name for s in specs]
    log = ChunkLog(out, chunk_plan(source, config)) if out is not None else None
    done = log.finished if log is not None else []
    shown = ChunkProgress(source.count, source.chunk_count, sum(r["rows"] for r in done), len(done),
                          enabled=progress)
    parts: list[ChunkScored] = []
    scorer = _scorer(engine, emb, store, specs, config, progress and stderr_is_terminal(), source.chunk_count)
    with contextlib.closing(shown):
        for scored in scorer.score(source.chunks(log.next_chunk if log is not None else 0)):
            if log is None:
                parts.append(scored)
            else:
                rows = result_rows(scored.samples, names, scored.output)
                log.append(samples_text(scored.samples), scores_text(rows),
                           chunk_record(scored.output, scored.samples))
            shown.chunk_done(len(scored.samples))
    if log is None:
        samples = [s for p in parts for s in p.samples]
        return EvaluationResult(samples, specs, merged([p.output for p in parts], names), info)
    relevancy = [n for n in names if base_name(n) == "answer_relevancy"]
    quick = not relevancy and not config.settings.soft  # the log keeps values, not soft scores
    disk = (ScoresOnDisk.from_log(log.finished, names) if quick else None) or ScoresOnDisk(
        log.folder, names, relevancy)
    output = totals(log.finished, names)
    output.outcomes = disk.outcomes
    info = {**info, "chunks": {"size": source.size, "count": len(log.finished)}}
    result = ChunkedResult([], specs, output, info, folder=log.folder, count=disk.count, strata_data=_strata(disk),
                           soft_data=disk.soft)
    write_summary(log.folder, result.summary_dict())
    if report and disk.count <= REPORT_SAMPLES:
        from localeval.report.html import write_report

        write_report(log.folder)
    return result


def _strata(disk: ScoresOnDisk) -> dict[str, Any]:
    """summary.json's strata, as ``stratified_summary`` gives them for every row of the run folder."""
    strata = stratified_summary(disk.strata_rows)
    if len(disk.strata_rows) < disk.count:  # rows left out are all answerable, with no relevancy metric
        strata["answerable"]["n"] += disk.count - len(disk.strata_rows)
    return strata


def _scorer(engine: Any, emb: Any, store: JudgeCache, specs: list[MetricSpec], config: RunConfig,
            inner_progress: bool, chunk_count: int) -> ChunkScorer:
    """Chunks go to Ray replicas when the judge is a RayEngine and there is more than one; else run here."""
    from localeval.engine.ray_engine import RayEngine

    if isinstance(engine, RayEngine) and chunk_count > 1:
        from localeval.scheduler.ray_chunks import RayChunks

        return RayChunks(engine, emb, store, specs, config)
    return LocalChunks(config.scheduler(engine, emb, store, inner_progress), specs)


def plan_of(folder: str | Path) -> dict[str, Any] | None:
    """The plan of a chunked run folder (None: not a chunked run)."""
    path = Path(folder) / "chunks.jsonl"
    if not path.exists():
        return None
    with path.open(encoding="utf-8") as handle:
        head = json.loads(handle.readline() or "{}")
    plan = head.get("plan") if isinstance(head, dict) else None
    return plan if isinstance(plan, dict) else None


__all__ = ["EAGER_BYTES", "REPORT_SAMPLES", "ChunkedResult", "Source", "check_out", "evaluate_chunks", "open_source"]
