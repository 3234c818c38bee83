"""A run's ``EvaluationResult``: the chunks' outputs joined in memory, or a run folder's finished chunks read back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.metrics.definition import MetricSpec
from localeval.metrics.registry import base_name
from localeval.report.strata import stratified_summary
from localeval.result import EvaluationResult, FolderRows
from localeval.scheduler import RunOutput, Usage
from localeval.store.chunks import ChunkLog, ScoresOnDisk, chunk_totals


def merged(parts: Sequence[RunOutput], metrics: Sequence[str]) -> RunOutput:
    """Chunks' outputs as one run's: outcomes and traces concatenated in chunk order, costs added."""
    usage = {name: Usage() for name in metrics}
    for part in parts:
        for name, cost in part.usage.items():
            usage[name].add(cost)
    return RunOutput(
        {m: [v for p in parts for v in p.outcomes[m]] for m in metrics},
        {m: [t for p in parts for t in p.traces[m]] for m in metrics},
        usage, sum(p.rounds for p in parts), sum(p.engine_calls for p in parts),
        sum(p.embed_calls for p in parts), sum(p.wall_seconds for p in parts),
    )


def folder_result(log: ChunkLog, specs: list[MetricSpec], soft: bool, info: dict[str, Any]) -> EvaluationResult:
    """The result of a run folder's finished chunks: each metric's values from the chunk log where that is
    enough, else from one pass over scores.jsonl (relevancy and unanswerable rows for the strata, soft scores)."""
    names = [s.name for s in specs]
    relevancy = [n for n in names if base_name(n) == "answer_relevancy"]
    quick = not relevancy and not soft  # the log keeps values, not soft scores
    disk = (ScoresOnDisk.from_log(log.finished, names) if quick else None) or ScoresOnDisk(
        log.folder, names, relevancy)
    cost = chunk_totals(log.finished, names)
    output = RunOutput({}, {}, {name: Usage(**fields) for name, fields in cost["usage"].items()}, cost["rounds"],
                       cost["engine_calls"], cost["embed_calls"], cost["seconds"])
    output.outcomes = disk.outcomes
    rows = FolderRows(log.folder, disk.count, disk.soft, _strata(disk))
    return EvaluationResult(rows, specs, output, info)


def _strata(disk: ScoresOnDisk) -> dict[str, Any]:
    """summary.json's strata, as ``stratified_summary`` gives them for every row of the run folder."""
    strata = stratified_summary(disk.strata_rows)
    if len(disk.strata_rows) < disk.count:  # rows left out are all answerable, with no relevancy metric
        strata["answerable"]["n"] += disk.count - len(disk.strata_rows)
    return strata


__all__ = ["folder_result", "merged"]
