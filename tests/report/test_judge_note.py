"""A run the bundled toy judge scored says so: in the printed summary, evaluate's last lines and report.html;
a run with another judge, or with no judge metric, does not."""

from __future__ import annotations

from pathlib import Path

import pytest

import localeval
from localeval.cli import main
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.model_folders import DEFAULT_JUDGE
from localeval.report.html import render_report
from localeval.report.judge_note import TOY_NOTE, toy_judge

DEMO = Path(__file__).resolve().parents[2] / "examples" / "rag_demo.jsonl"
# The fingerprint the transformers engine gives the bundled judge's folder (engine, folder@files, dtype).
TOY = f"transformers:{DEFAULT_JUDGE}@0123456789abcdef:float32"
SERVED_TOY = "server:vllm HuggingFaceTB/SmolLM2-135M-Instruct (vllm 0.11.0)"
REAL = "transformers:qwen2.5-7b-instruct@0123456789abcdef:bfloat16"


ROWS = [
    {"id": "alpha", "user_input": "Where does the river Alpha flow?",
     "response": "The river Alpha flows into the northern sea.",
     "retrieved_contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
     "retrieved_context_ids": ["alpha-1", "cats-1"], "reference_context_ids": ["alpha-1"]},
    {"id": "gamma", "user_input": "What colour are bananas?", "response": "Bananas are yellow when ripe.",
     "retrieved_contexts": ["Bananas are yellow when ripe."], "retrieved_context_ids": ["banana-1"],
     "reference_context_ids": ["banana-1"]},
]


def _judge(fingerprint: str) -> ScriptedEngine:
    return ScriptedEngine(rule_script, fingerprint=fingerprint)


@pytest.mark.parametrize(("judge", "noted"), [(TOY, True), (SERVED_TOY, True), (REAL, False), (None, False)])
def test_the_bundled_judge_is_told_by_its_fingerprint(judge: str | None, noted: bool) -> None:
    assert toy_judge({"judge": judge}) is noted


def test_the_printed_summary_ends_with_the_note_on_a_toy_judge_s_run(tmp_path: Path) -> None:
    toy = localeval.evaluate(ROWS, metrics="faithfulness", judge=_judge(TOY), out=tmp_path / "toy",
                             progress=False, report=False)
    assert toy.table().endswith("\n\n" + TOY_NOTE)
    assert "docs/trusting-the-judge.md" in TOY_NOTE and "--judge NAME" in TOY_NOTE
    real = localeval.evaluate(ROWS, metrics="faithfulness", judge=_judge(REAL), progress=False)
    assert "toy judge" not in real.table()


def test_no_note_where_no_judge_metric_ran() -> None:
    result = localeval.evaluate(ROWS, metrics="mrr,hit_rate", judge=_judge(TOY), progress=False)
    assert result.info["judge"] is None
    assert "toy judge" not in result.table()


def test_the_report_says_it_under_its_title(tmp_path: Path) -> None:
    localeval.evaluate(ROWS, metrics="faithfulness,mrr", judge=_judge(TOY), out=tmp_path / "toy",
                       progress=False)
    page = (tmp_path / "toy" / "report.html").read_text(encoding="utf-8")
    assert "Scored by the bundled toy judge" in page
    assert page.index("Scored by the bundled toy judge") < page.index("<h2 id=summary>")
    localeval.evaluate(ROWS, metrics="faithfulness,mrr", judge=_judge(REAL), out=tmp_path / "real",
                       progress=False, report=False)
    assert "toy judge" not in render_report(tmp_path / "real")


@pytest.mark.parametrize(("judge", "noted"), [(TOY, True), (REAL, False)])
def test_evaluate_s_last_lines_say_it(judge: str, noted: bool, models_folder: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *args, **kwargs: _judge(judge))
    assert main(["evaluate", str(DEMO), "--metrics", "faithfulness", "--out", str(tmp_path / "run"),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith(TOY_NOTE) is noted
    assert out.count(TOY_NOTE) == (1 if noted else 0)  # once, as the last lines (the table leaves it to them)
