"""The chunk loop of every run: the data set goes through the scheduler in chunks, each chunk's scores appended
to the run folder as it ends.

A chunk holds ``run.scheduling.chunk_samples`` samples (``chunk_size`` when set, else the engine's default), so a
data set that fits one is scored in one scheduler run. With a run folder, memory does not grow with the data set:
one chunk's samples and scheduler state are held (a few on Ray), the chunk log makes the run resumable, and the
result reads its rows from the folder. Without one, the chunks' outputs are joined into one result in memory.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.config import RunConfig
from localeval.metrics.definition import MetricSpec
from localeval.progress import ChunkProgress
from localeval.result import EvaluationResult
from localeval.run.assemble import folder_result, merged
from localeval.run.checks import open_cache
from localeval.run.record import run_info
from localeval.run.scheduling import chunk_scorer
from localeval.run.source import Source
from localeval.scheduler.chunked import ChunkScored
from localeval.silence import stderr_is_terminal
from localeval.store.chunks import ChunkLog, chunk_plan, chunk_record
from localeval.store.held_run import clear_run
from localeval.store.run_folder import RunLock, result_rows, samples_text, scores_text

if TYPE_CHECKING:
    from localeval.store.cache import JudgeCache

REPORT_SAMPLES = 50_000  # report.html, one page that holds every row, is written up to this many samples


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
    # the head of the chunk log: what decides this run's rows
    plan = chunk_plan(metrics=config.metrics, settings=config.settings.recorded(), seed=config.seed,
                      long_context=config.long_context, on_missing=config.on_missing, judge=config.judge_fingerprint,
                      embedder=config.embedder_fingerprint, chunk_size=source.size, data=source.describe())
    log = ChunkLog(out, plan) if out is not None else None
    done = log.finished if log is not None else []
    several = source.chunk_count > 1  # one chunk is the whole run: the scheduler's own progress, no chunk lines
    shown = ChunkProgress(source.count, source.chunk_count, sum(r["rows"] for r in done), len(done),
                          enabled=progress and several)
    parts: list[ChunkScored] = []
    inner = progress and (stderr_is_terminal() or not several)
    scorer = chunk_scorer(engine, emb, store, specs, config, inner, source.chunk_count)
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
    result = folder_result(log, specs, config.settings.soft, {**info, "chunks": {"size": source.size,
                                                                   "count": len(log.finished)}})
    result.save(log.folder)  # its rows are there already: this writes summary.json
    if report and result.sample_count <= REPORT_SAMPLES:
        from localeval.report.html import write_report

        write_report(log.folder)
    return result


__all__ = ["REPORT_SAMPLES", "evaluate_chunks", "run_chunks"]
