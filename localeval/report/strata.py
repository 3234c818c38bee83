"""Unanswerable questions as their own stratum, scored by whether the response refused.

Response relevancy scores an honest "I don't know" 0 (all generated questions noncommittal), so
samples the data marks ``answerable: false`` are left out of its mean and counted apart. Whether a
response refused is read from the answer_relevancy trace: refused when every question the judge
generated from it was flagged noncommittal. scores.jsonl holds no response text, so without that
trace (metric not computed, or no question generated) refusal is unknown, never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from localeval.metrics.registry import base_name
from localeval.report.runs import Run, RunLike, Score, as_run, run_from_rows

RELEVANCY = "answer_relevancy"


def refused(score: Score | None) -> bool | None:
    """True when every generated question is noncommittal, False when one is not, None when unknown."""
    if score is None:
        return None
    flags = score.trace.get("noncommittal")
    if not isinstance(flags, list) or not flags:
        return None
    return all(bool(f) for f in flags)


def _relevancy_metrics(run: Run) -> list[str]:
    return [m for m in run.metric_names if base_name(m) == RELEVANCY]


def strata(run: RunLike) -> dict[str, Any]:
    """The answerable stratum's response relevancy and the unanswerable stratum's refusal rate.

    ``{"answerable": {"n", "metrics": {name: MetricSummary dict}}, "unanswerable": {"n", "refused",
    "answered", "unknown", "rate", "samples": [{"id", "refused"}], "note"}}``; ``rate`` is refused
    over the samples whose refusal is known (None when none is).
    """
    r = as_run(run)
    relevancy = _relevancy_metrics(r)
    answerable = [s for s in r.samples if s.answerable is not False]
    unanswerable = [s for s in r.samples if s.answerable is False]
    metrics = {m: r.metric_summary(m, answerable_only=True).to_dict() for m in relevancy}
    verdicts = []
    for sample in unanswerable:
        score = next((sample.metrics[m] for m in relevancy if m in sample.metrics), None)
        verdicts.append({"id": sample.id, "refused": refused(score)})
    yes = sum(1 for v in verdicts if v["refused"] is True)
    no = sum(1 for v in verdicts if v["refused"] is False)
    unknown = len(verdicts) - yes - no
    if not unanswerable:
        note = "no sample is marked answerable: false"
    elif not relevancy:
        note = "refusal is unknown: answer_relevancy, whose trace tells a refusal, was not computed"
    elif unknown:
        note = f"refusal is unknown for {unknown} sample(s): no generated question in the trace"
    else:
        note = "refused: every question generated from the response was judged noncommittal"
    return {
        "answerable": {"n": len(answerable), "metrics": metrics},
        "unanswerable": {
            "n": len(unanswerable),
            "refused": yes,
            "answered": no,
            "unknown": unknown,
            "rate": yes / (yes + no) if yes + no else None,
            "samples": verdicts,
            "note": note,
        },
    }


def stratified_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``strata`` from scores.jsonl rows (``EvaluationResult.rows()``), for summary.json."""
    return strata(run_from_rows(rows))
