"""One run configuration: saved whole in summary.json, read back whole by rescore, taken by estimate."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_runs import _rows  # the same small rows

from localeval import evaluate
from localeval.config import JudgeOptions, RunConfig, build_config
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.estimate import estimate_run
from localeval.nan import Nan
from localeval.prompts.base import Settings
from localeval.rescore import rescore

METRICS = "faithfulness,context_precision,answer_relevancy,factual_correctness:mode=precision"


def _flip(answer: Any) -> Any:
    """The same answer with every 0/1 verdict turned over."""
    if isinstance(answer, dict):
        return {k: 1 - v if k == "verdict" else _flip(v) for k, v in answer.items()}
    return [_flip(v) for v in answer] if isinstance(answer, list) else answer


def _split_votes(label: str, data: dict[str, Any], request: Request) -> Any:
    """rule_script's answer, except that of three sampled votes one disagrees (so the majority matters)."""
    answer = rule_script(label, data, replace(request, n=1))
    return answer if request.n == 1 else [answer, _flip(answer), *[answer] * (request.n - 2)]


def _metrics(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{name: (m["value"], m["nan_reason"]) for name, m in r["metrics"].items()} for r in rows]


def test_a_voted_run_rescores_to_the_same_scores_with_no_judge_call(tmp_path: Path, monkeypatch) -> None:
    run = tmp_path / "run"
    engine = ScriptedEngine(_split_votes)
    settings = Settings(votes=3, temperature=0.7)
    first = evaluate(_rows(3), metrics=METRICS, judge=engine, embedder=HashEmbedder(), out=run, settings=settings,
                     seed=5, progress=False, report=False)
    assert {r.n for r in engine.requests} == {1, 3}  # verdicts were voted, extractions were not
    assert all(not isinstance(v, Nan) for name in first.metric_names for v in first.scores(name))
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *a, **k: pytest.fail("rescore loaded a model"))
    monkeypatch.setattr("localeval.run.models.load_embedder", lambda *a, **k: pytest.fail("rescore loaded a model"))
    again = rescore(run)
    assert again.info["rescore_misses"] == 0
    assert _metrics(again.rows()) == _metrics(first.rows())
    assert RunConfig.from_run_record(again.info).settings == settings  # the record survives a rescore


def test_summary_holds_the_whole_config_and_it_round_trips(tmp_path: Path) -> None:
    options = JudgeOptions(engine="vllm", trust_remote_code=True, seed=7, extra={"dtype": "bfloat16"})
    engine, embedder = ScriptedEngine(rule_script, fingerprint="judge-x"), HashEmbedder()
    evaluate(_rows(2), metrics=METRICS, judge=engine, embedder=embedder, out=tmp_path,
             settings=Settings(reasons=False, max_examples=1, votes=3, temperature=0.5), seed=7,
             on_missing="nan", long_context="truncate", judge_options=options, progress=False, report=False)
    saved = json.loads((tmp_path / "summary.json").read_text())["run"]["config"]
    config = RunConfig.from_dict(saved)
    assert config.settings == Settings(reasons=False, max_examples=1, votes=3, temperature=0.5)
    assert (config.seed, config.on_missing, config.long_context) == (7, "nan", "truncate")
    assert config.engine == options
    assert config.judge_fingerprint == "judge-x" and config.embedder_fingerprint == embedder.fingerprint
    assert config.metrics == ("faithfulness", "context_precision", "answer_relevancy",
                              "factual_correctness:mode=precision")
    assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_estimate_runs_the_config_it_is_given() -> None:
    engine = ScriptedEngine(rule_script)
    config = build_config("faithfulness", settings=Settings(votes=3, temperature=0.6), seed=2)
    est = estimate_run(_rows(20), config, judge=engine, sample=4, progress=False)
    assert est.measured_samples == 4 and est.total_samples == 20
    assert {(r.n, r.temperature) for r in engine.requests if r.label != "statements"} == {(3, 0.6)}
    assert est.projected["faithfulness"]["judge_calls"] == pytest.approx(8 * 5)


def test_a_run_record_without_its_config_is_refused(tmp_path: Path) -> None:
    evaluate(_rows(3), metrics="faithfulness", judge=ScriptedEngine(rule_script), out=tmp_path, progress=False,
             report=False)
    summary_file = tmp_path / "summary.json"
    summary = json.loads(summary_file.read_text())
    del summary["run"]["config"]
    summary_file.write_text(json.dumps(summary))
    with pytest.raises(LocalevalError, match="another localeval version"):
        rescore(tmp_path)


def test_a_bad_on_missing_is_refused() -> None:
    with pytest.raises(ValueError, match="on_missing"):
        RunConfig(on_missing="skip")
