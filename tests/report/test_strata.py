"""Unanswerable samples: their own stratum, scored by refusal, out of the answerable relevancy mean."""

from __future__ import annotations

import json

import pytest

from localeval.report.runs import Score
from localeval.report.strata import refused, strata, stratified_summary

AR = "answer_relevancy"


def _trace(*flags: int) -> dict:
    return {"questions": [f"q{i}?" for i in range(len(flags))], "noncommittal": list(flags)}


def test_refusal_is_read_from_the_noncommittal_flags() -> None:
    assert refused(Score(0.0, None, _trace(1, 1, 1))) is True
    assert refused(Score(0.4, None, _trace(1, 0, 1))) is False
    assert refused(Score(0.0, None, _trace())) is None  # no question generated
    assert refused(Score(None, "engine_error", {})) is None
    assert refused(None) is None


def test_strata_split_the_run(make_run) -> None:
    values = [0.9, 0.7, 0.0, 0.3, 0.0, 0.0]
    traces = [_trace(0, 0, 0), _trace(0, 0, 0), _trace(1, 1, 1), _trace(1, 0, 0), _trace(), _trace(1, 1)]
    answerable = [True, None, False, False, False, False]
    run = make_run("r", {AR: values}, traces={AR: traces}, answerable=answerable)
    st = strata(run)
    ans = st["answerable"]
    assert ans["n"] == 2 and ans["metrics"][AR]["mean"] == pytest.approx(0.8)
    un = st["unanswerable"]
    assert (un["n"], un["refused"], un["answered"], un["unknown"]) == (4, 2, 1, 1)
    assert un["rate"] == pytest.approx(2 / 3)
    assert [s["refused"] for s in un["samples"]] == [True, False, None, True]
    assert "unknown for 1 sample" in un["note"]
    json.dumps(st)  # ready for summary.json


def test_without_answer_relevancy_refusal_is_unknown(make_run) -> None:
    run = make_run("r", {"faithfulness": [0.5, 0.5]}, answerable=[True, False])
    un = strata(run)["unanswerable"]
    assert (un["n"], un["unknown"], un["rate"]) == (1, 1, None)
    assert un["note"].startswith("refusal is unknown")
    assert strata(run)["answerable"]["metrics"] == {}


def test_no_unanswerable_sample(make_run) -> None:
    st = strata(make_run("r", {"answer_relevancy(strictness=5)": [0.5, 0.7]}))
    assert st["unanswerable"]["n"] == 0 and st["unanswerable"]["rate"] is None
    assert st["answerable"]["metrics"]["answer_relevancy(strictness=5)"]["mean"] == pytest.approx(0.6)


def test_stratified_summary_from_evaluation_rows(scripted_run) -> None:
    rows = [json.loads(line) for line in (scripted_run / "scores.jsonl").read_text().splitlines()]
    st = stratified_summary(rows)
    assert st["answerable"]["n"] == 3
    assert st["unanswerable"]["samples"] == [{"id": "<b>d&amp;</b>", "refused": True}]
    assert st["unanswerable"]["rate"] == 1.0
    all_mean = sum(r["metrics"][AR]["value"] for r in rows) / 4
    assert st["answerable"]["metrics"][AR]["mean"] > all_mean  # the refusal's 0 is left out
