"""A run records whether its judge is batch-invariant; the printed summary and report.html say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import localeval
import localeval.api
from localeval.cli import main
from localeval.engine.base import Invariance
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.report.invariance import NO_JUDGE, run_invariance
from localeval.rescore import rescore

ROWS = [{"id": "a", "user_input": "Where does the river Alpha flow?",
         "response": "The river Alpha flows into the northern sea.",
         "retrieved_contexts": ["The river Alpha flows into the northern sea."],
         "retrieved_context_ids": ["alpha-1"], "reference_context_ids": ["alpha-1"]}]


class Batched(ScriptedEngine):
    invariance = Invariance(False, "bfloat16 rows round with their batch")


class Alone(ScriptedEngine):
    invariance = Invariance(True, "float32 kernels fixed per row")


def summary(run: Path) -> dict:
    return json.loads((run / "summary.json").read_text())


def test_a_run_that_is_not_batch_invariant_says_so_everywhere(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = localeval.evaluate(ROWS, metrics="faithfulness", judge=Batched(rule_script), out=out, progress=False)
    record = {"batch_invariant": False, "note": "bfloat16 rows round with their batch"}
    assert summary(out)["run"]["invariance"] == record
    last = result.table().splitlines()[-1]
    assert last.startswith("warning: the judge is not batch-invariant (bfloat16 rows round with their batch)")
    assert "one shared --cache FILE" in last
    page = (out / "report.html").read_text()
    assert "<div class=finding><b>The judge is not batch-invariant</b> (bfloat16 rows round with their batch)" in page
    assert rescore(out).info["invariance"] == record  # rescore keeps the run's record
    assert summary(out)["run"]["invariance"] == record


def test_a_batch_invariant_run_shows_one_quiet_line(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = localeval.evaluate(ROWS, metrics="faithfulness", judge=Alone(rule_script), out=out, progress=False)
    assert summary(out)["run"]["invariance"] == {"batch_invariant": True, "note": "float32 kernels fixed per row"}
    assert "batch-invariant" not in result.table()
    page = (out / "report.html").read_text()
    assert "Batch-invariant judge: yes (float32 kernels fixed per row)." in page and "not batch-invariant" not in page


def test_a_run_without_a_judge_is_batch_invariant(tmp_path: Path) -> None:
    out = tmp_path / "run"
    localeval.evaluate(ROWS, metrics="mrr", judge=Batched(rule_script), out=out, progress=False)
    assert summary(out)["run"]["invariance"] == {"batch_invariant": True, "note": NO_JUDGE}


def test_a_run_record_without_invariance_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "run"
    localeval.evaluate(ROWS, metrics="faithfulness", judge=Batched(rule_script), out=out, progress=False)
    data = summary(out)
    del data["run"]["invariance"]
    with pytest.raises(LocalevalError, match="another localeval version"):
        run_invariance(data["run"])


def test_the_command_prints_the_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path(str(name)))
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *args, **kwargs: Batched(rule_script))
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(ROWS[0]) + "\n")
    argv = ["evaluate", str(data), "--out", str(tmp_path / "run"), "--metrics", "faithfulness", "--judge", "j",
            "--no-progress", "--no-report"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "warning: the judge is not batch-invariant (bfloat16 rows round with their batch)" in out
