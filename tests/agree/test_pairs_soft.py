"""Pairwise agreement with soft verdicts: hard and soft accuracy from the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_pairs import _write

from localeval.agree.pair_count import PairCount
from localeval.agree.pair_run import run_pairs
from localeval.agree.pair_table import format_pairs_report
from localeval.config import RunConfig
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, _supported, rule_script, soft_choice
from localeval.prompts.base import Settings

CONTEXT = "The river Alpha flows into the northern sea. Its delta holds many birds."


def script(label: str, data: dict[str, Any], request: Request) -> Any:
    """rule_script's verdicts, with p(1) 0.9 for a statement opening with "Its", 0.6 for another supported
    one, 0.2 for an unsupported one."""
    if label != "nli":
        return rule_script(label, data, request)
    verdicts = [_supported(s, data["context"]) for s in data["statements"]]
    probs = [(0.9 if s.startswith("Its") else 0.6) if v else 0.2 for s, v in zip(data["statements"], verdicts,
                                                                                 strict=True)]
    return soft_choice({"verdicts": [{"reason": "overlap", "verdict": v} for v in verdicts]}, probs)


def test_soft_scores_break_a_tie_of_the_hard_ones(tmp_path: Path) -> None:
    question = "What holds many birds?"
    _write(tmp_path / "ff.csv", [
        {"question": "Where does the river Alpha flow?", "context": CONTEXT,
         "answer": "The river Alpha flows into the northern sea.", "label": "1"},
        {"question": "Where does the river Alpha flow?", "context": CONTEXT,
         "answer": "The river Alpha flows into a southern desert lake.", "label": "0"},
        {"question": question, "context": CONTEXT, "answer": "The delta holds many birds.", "label": "0"},
        {"question": question, "context": CONTEXT, "answer": "Its delta holds many birds.", "label": "1"},
    ])
    soft = run_pairs(tmp_path, ScriptedEngine(script), HashEmbedder(), files=["ff"],
                     config=RunConfig(settings=Settings(soft=True)))
    ff = soft.files[0]
    assert ff.scores == [(1.0, 0.0), (1.0, 1.0)] and ff.accuracy == 0.75  # a win, then a tie
    assert ff.soft_scores == [(0.6, 0.2), (0.9, 0.6)]
    assert ff.soft_count == PairCount(wins=2, losses=0, ties=0, nan_pairs=0)
    data = soft.to_dict()
    assert data["files"][0]["soft_accuracy"] == 1.0 and data["settings"]["soft"] is True
    assert "ff.csv: soft verdicts (p(1) in place of 0/1): accuracy 1.00" in format_pairs_report(soft)
    hard = run_pairs(tmp_path, ScriptedEngine(script), HashEmbedder(), files=["ff"])
    assert hard.files[0].soft_count is None and "soft_accuracy" not in hard.to_dict()["files"][0]
    assert hard.files[0].scores == ff.scores
