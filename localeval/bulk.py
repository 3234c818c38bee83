"""Every run: the data set goes through the scheduler in chunks, each chunk's scores appended to the run folder
as it ends.

A chunk holds ``RunConfig.chunk_samples`` samples (``chunk_size`` when set, else the engine's default), so a
data set that fits one is scored in one scheduler run. A file larger than ``EAGER_BYTES``, or any file when
``chunk_size`` is set, is read lazily chunk by chunk (``localeval.data.stream``). With a run folder, memory does
not grow with the data set: one chunk's samples and scheduler state are held (a few on Ray), the chunk log makes
the run resumable, and the result reads its rows from the folder. Without one, the chunks' outputs are joined
into one result in memory.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.config import RunConfig
from localeval.data import Sample, as_samples
from localeval.data.stream import sample_chunks, scan_samples
from localeval.errors import LocalevalError
from localeval.metrics.definition import MetricSpec, needs
from localeval.metrics.registry import base_name
from localeval.progress import ChunkProgress
from localeval.report.strata import stratified_summary
from localeval.result import EvaluationResult, FolderRows
from localeval.run_record import open_cache, run_info
from localeval.scheduler.chunked import ChunkScored, ChunkScorer, LocalChunks, chunk_record, merged, totals
from localeval.silence import stderr_is_terminal
from localeval.store.chunks import ChunkLog, ScoresOnDisk
from localeval.store.held_run import check_run_folder, clear_run
from localeval.store.run_folder import RunLock, result_rows, samples_text, scores_text

if TYPE_CHECKING:
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


def check_out(out: Path, source: Source, specs: Sequence[MetricSpec]) -> None:
    """Stop, before any model loads, when ``out`` holds another run's scores (``store.held_run``)."""
    check_run_folder(out, [s.name for s in specs], lambda: (rows for _, rows in source.chunks()), source.count,
                     source.describe() if source.path is not None else None)


def chunk_plan(source: Source, config: RunConfig) -> dict[str, Any]:
    """What decides a run's rows (the head of its chunk log): a rerun under another plan starts over."""
    return {"metrics": list(config.metrics), "settings": config.settings.recorded(), "seed": config.seed,
            "long_context": config.long_context, "on_missing": config.on_missing,
            "judge": config.judge_fingerprint, "embedder": config.embedder_fingerprint,
            "chunk_size": source.size, "data": source.describe()}


def run_chunks(
    source: Source, specs: list[MetricSpec], config: RunConfig, engine: Any, emb: Any, *,
    out: str | Path | None, cache: str | Path | bool, progress: bool, report: bool, replace: bool, started: float,
) -> EvaluationResult:
    """Score ``source`` with loaded models: the run folder locked (and emptied when ``replace``), the judge cache
    opened, then ``evaluate_chunks``."""
    lock = RunLock(Path(out)) if out is not None else contextlib.nullcontext()
    with lock:
        if replace and out is not None:
            clear_run(Path(out))
        store = open_cache(cache, out)
        try:
            return evaluate_chunks(source, specs, config, engine, emb, store=store, out=out, progress=progress,
                                   report=report, info=run_info(specs, config, store, started, engine))
        finally:
            store.close()


def evaluate_chunks(
    source: Source, specs: list[MetricSpec], config: RunConfig, engine: Any, emb: Any, *,
    store: JudgeCache, out: str | Path | None, progress: bool, report: bool, info: dict[str, Any],
) -> EvaluationResult:
    """Score ``source`` chunk by chunk; with ``out``, each finished chunk is written there before the next and
    the result reads its rows from there, else the chunks' outputs are joined into one result in memory.

    A data set that fits one chunk is one scheduler run: the same rounds and engine calls as any run of it.
    """
    names = [s.name for s in specs]
    log = ChunkLog(out, chunk_plan(source, config)) if out is not None else None
    done = log.finished if log is not None else []
    several = source.chunk_count > 1  # one chunk is the whole run: the scheduler's own progress, no chunk lines
    shown = ChunkProgress(source.count, source.chunk_count, sum(r["rows"] for r in done), len(done),
                          enabled=progress and several)
    parts: list[ChunkScored] = []
    inner = progress and (stderr_is_terminal() or not several)
    scorer = _scorer(engine, emb, store, specs, config, inner, source.chunk_count)
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
    result = _folder_result(log, specs, config, {**info, "chunks": {"size": source.size,
                                                                    "count": len(log.finished)}})
    result.save(log.folder)  # its rows are there already: this writes summary.json
    if report and result.sample_count <= REPORT_SAMPLES:
        from localeval.report.html import write_report

        write_report(log.folder)
    return result


def _folder_result(log: ChunkLog, specs: list[MetricSpec], config: RunConfig,
                   info: dict[str, Any]) -> EvaluationResult:
    """The result of a run folder's finished chunks: each metric's values from the chunk log where that is
    enough, else from one pass over scores.jsonl (relevancy and unanswerable rows for the strata, soft scores)."""
    names = [s.name for s in specs]
    relevancy = [n for n in names if base_name(n) == "answer_relevancy"]
    quick = not relevancy and not config.settings.soft  # the log keeps values, not soft scores
    disk = (ScoresOnDisk.from_log(log.finished, names) if quick else None) or ScoresOnDisk(
        log.folder, names, relevancy)
    output = totals(log.finished, names)
    output.outcomes = disk.outcomes
    rows = FolderRows(log.folder, disk.count, disk.soft, _strata(disk))
    return EvaluationResult(rows, specs, output, info)


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


__all__ = ["EAGER_BYTES", "REPORT_SAMPLES", "Source", "check_out", "evaluate_chunks", "open_source", "run_chunks"]
