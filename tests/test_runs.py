"""Runs that survive: resume after SIGKILL, adding a metric, rescore and estimate, NaN reasons."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from localeval import evaluate
from localeval.cli import main
from localeval.engine.base import Choice
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.estimate import estimate
from localeval.nan import NAN_REASONS, Nan
from localeval.rescore import rescore

WORKER = Path(__file__).with_name("runs_worker.py")


def _rows(n: int) -> list[dict]:
    return [
        {
            "id": f"r{i}",
            "user_input": f"What does river {i} flow into?",
            "response": f"River {i} flows into lake {i}. River {i} is cold.",
            "reference": f"River {i} flows into lake {i}.",
            "retrieved_contexts": [f"River {i} flows into lake {i}.", "Owls hunt at night."],
        }
        for i in range(n)
    ]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _scores(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]


def _cached_keys(run: Path) -> int:
    try:
        with sqlite3.connect(run / "judge.sqlite") as db:
            return int(db.execute("SELECT count(*) FROM answers").fetchone()[0])
    except sqlite3.OperationalError:  # the worker is still creating the file
        return 0


@pytest.mark.slow  # a worker subprocess, killed and resumed
def test_resume_after_sigkill_asks_nothing_twice_and_scores_the_same(tmp_path) -> None:
    data = _write(tmp_path / "data.jsonl", _rows(40))  # 40 statement asks + 80 usefulness asks, then 40 NLI
    run = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, str(WORKER), str(data), str(run), "0.01"], env=env)
    deadline = time.time() + 60
    while time.time() < deadline:  # kill once part of the first round is committed
        if (run / "judge.sqlite").exists() and _cached_keys(run) >= 40:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (run / "scores.jsonl").exists(), "the run finished before it was killed; slow it down"
    cached_before = _cached_keys(run)
    assert 0 < cached_before < 160

    log = tmp_path / "run.requests.jsonl"
    log.unlink()
    subprocess.run([sys.executable, str(WORKER), str(data), str(run), "0"], env=env, check=True)
    resumed = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(resumed) == 160 - cached_before  # nothing cached before the kill was asked again

    fresh = tmp_path / "fresh"
    subprocess.run([sys.executable, str(WORKER), str(data), str(fresh), "0"], env=env, check=True)
    strip = lambda rows: [{k: v for k, v in r.items()} for r in rows]  # noqa: E731
    assert strip(_scores(run)) == strip(_scores(fresh))


def test_adding_a_metric_asks_only_for_that_metric(tmp_path) -> None:
    rows, run = _rows(5), tmp_path / "run"
    evaluate(rows, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=run, progress=False)
    engine = ScriptedEngine(rule_script)
    result = evaluate(rows, metrics="faithfulness,context_recall", judge=engine, out=run, progress=False)
    assert {r.label for r in engine.requests} == {"attribution"}
    assert len(engine.requests) == 5
    assert result.usage()["faithfulness"].cache_hits == 10 and result.usage()["faithfulness"].judge_calls == 0


def test_no_cache_and_a_shared_cache(tmp_path) -> None:
    rows = _rows(3)
    shared = tmp_path / "shared.sqlite"
    evaluate(rows, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=tmp_path / "a",
             cache=shared, progress=False)
    engine = ScriptedEngine(rule_script)
    evaluate(rows, metrics="faithfulness", judge=engine, out=tmp_path / "b", cache=shared, progress=False)
    assert engine.requests == [] and not (tmp_path / "b" / "judge.sqlite").exists()
    engine = ScriptedEngine(rule_script)
    evaluate(rows, metrics="faithfulness", judge=engine, out=tmp_path / "c", cache=False, progress=False)
    assert len(engine.requests) == 6 and not (tmp_path / "c" / "judge.sqlite").exists()


def test_rescore_recomputes_from_the_cache_without_a_model(tmp_path, monkeypatch) -> None:
    run = tmp_path / "run"
    first = evaluate(_rows(4), metrics="faithfulness,factual_correctness:mode=precision",
                     judge=ScriptedEngine(rule_script), out=run, progress=False)
    (run / "scores.jsonl").write_text("")  # lost, or written by a buggy score function

    monkeypatch.setattr("localeval.run.models.load_judge", lambda *a, **k: pytest.fail("rescore loaded a model"))
    assert main(["rescore", str(run), "--no-progress"]) == 0
    again = _scores(run)
    assert [r["metrics"] for r in again] == [r["metrics"] for r in first.rows()]
    assert rescore(run).info["rescore_misses"] == 0


def test_estimate_projects_from_a_sample() -> None:
    rows = _rows(30)
    est = estimate(rows, "faithfulness", ScriptedEngine(rule_script), sample=5, progress=False)
    assert est.measured_samples == 5 and est.total_samples == 30
    # faithfulness asks twice per sample: 5 samples measured -> 10 calls -> 60 projected
    assert est.projected["faithfulness"]["judge_calls"] == pytest.approx(60)
    lines = est.table().splitlines()
    assert lines[0] == "measured on 5 of 30 samples (x6.0):"
    assert lines[1].split() == ["metric", "judge", "calls", "prompt", "tok", "compl", "tok", "engine", "s"]
    assert lines[3].split()[:2] == ["faithfulness", "60"] and lines[4].split()[:2] == ["total", "60"]
    assert len(lines[3]) == len(lines[4]) == len(lines[1])  # numbers align right, to the header's end
    assert lines[5].startswith("projected wall time")


# -- every NaN reason, produced by the case that should produce it ------------------------------


def _run_one(metric: str, script, row: dict | None = None, **kwargs) -> Nan | float:
    result = evaluate([row or _rows(1)[0]], metrics=metric, judge=ScriptedEngine(script),
                      embedder=kwargs.pop("embedder", None), progress=False, **kwargs)
    return result.scores(result.metric_names[0])[0]


def _override(label_wanted: str, answer):
    def script(label, data, request):
        if label == label_wanted:
            return answer(request) if callable(answer) else answer
        return rule_script(label, data, request)

    return script


def test_nan_no_statements() -> None:
    assert _run_one("faithfulness", _override("statements", {"statements": []})) == Nan("no_statements")


def test_nan_no_claims() -> None:
    script = _override("claims_low_low", {"claims": []})
    assert _run_one("factual_correctness:mode=precision:empty=nan", script) == Nan("no_claims")
    assert _run_one("factual_correctness:mode=precision", script) == 0.0  # Ragas' own value


def test_nan_no_questions() -> None:
    script = _override("question", lambda r: [{"question": "", "noncommittal": 0}] * r.n)
    never = type("NeverEmbedder", (), {"fingerprint": "never", "embed": lambda self, t: pytest.fail("embedded")})
    assert _run_one("answer_relevancy:empty=nan", script, embedder=never()) == Nan("no_questions")
    assert _run_one("answer_relevancy", script, embedder=never()) == 0.0


def test_nan_truncated() -> None:
    cut = Choice(text='{"statements": ["a', completion_tokens=9, finish_reason="length")
    assert _run_one("faithfulness", _override("statements", cut)) == Nan("truncated")


def test_nan_engine_error() -> None:
    def boom(request):
        raise MemoryError("out of memory")

    assert _run_one("faithfulness", _override("statements", boom)) == Nan("engine_error")


def test_nan_invalid_output() -> None:
    bad = Choice(text="not json", completion_tokens=2, finish_reason="stop")
    assert _run_one("faithfulness", _override("statements", bad)) == Nan("invalid_output")


def test_nan_no_topics() -> None:
    row = {"user_input": [{"type": "human", "content": "Hi there."}, {"type": "ai", "content": "Hello!"}],
           "reference_topics": ["cooking"]}
    assert _run_one("topic_adherence", lambda label, data, request: {"topics": []}, row) == Nan("no_topics")


def test_nan_context_too_long() -> None:
    long = Choice(text="", completion_tokens=0, finish_reason="context_too_long")
    assert _run_one("context_recall", _override("attribution", long)) == Nan("context_too_long")


def test_nan_missing_field() -> None:
    row = {**_rows(1)[0], "reference": None}
    rows = [row, _rows(2)[1]]
    result = evaluate(rows, metrics="context_recall,faithfulness", judge=ScriptedEngine(rule_script),
                      progress=False, on_missing="nan")
    assert result.scores("context_recall")[0] == Nan("missing_field")
    assert isinstance(result.scores("context_recall")[1], float)
    assert isinstance(result.scores("faithfulness")[0], float)  # other metrics of the row still scored


def test_nan_undefined() -> None:
    from localeval.scheduler.rounds import _as_outcome

    assert _as_outcome(float("nan")) == Nan("undefined")


def test_every_reason_is_covered_above() -> None:
    tested = {name.removeprefix("test_nan_") for name in globals() if name.startswith("test_nan_")}
    assert tested == set(NAN_REASONS)


def test_summary_interval_and_counts_by_hand(tmp_path) -> None:
    def script(label, data, request):
        if label == "statements":
            i = int(data["question"].split()[3])
            if i in (1, 3):
                return {"statements": []}
            return {"statements": ["a", "b"] if i % 2 == 0 else ["a"]}
        verdicts = [1, 0] if len(data["statements"]) == 2 else [1]
        return {"verdicts": [{"reason": "", "verdict": v} for v in verdicts]}

    result = evaluate(_rows(5), metrics="faithfulness", judge=ScriptedEngine(script), out=tmp_path / "r",
                      progress=False)
    s = result.summary()["faithfulness"]  # scores: 0.5, NaN, 0.5, NaN, 0.5
    assert (s.n, s.valid, s.nan_count) == (5, 3, 2) and s.nan_reasons == {"no_statements": 2}
    assert s.mean == 0.5 and s.nan_share == 0.4
    assert s.interval == (pytest.approx(0.3), 0.5)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["nan_reasons"] == {"no_statements": 2}
    assert summary["usage"]["faithfulness"]["judge_calls"] == 8
    assert summary["total"]["samples_per_second"] > 0
    assert np.isclose(summary["metrics"]["faithfulness"]["mean_nan_as_zero"], 0.3)
