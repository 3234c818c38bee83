"""A data set Ragas 0.4.3 wrote with its own writer (``EvaluationDataset.to_jsonl``, in
tests/fixtures/make_ragas_conversations.py) scored by `localeval evaluate` with every agent metric on the
bundled judge, and its report (slow: marked ``model``). tests/data/test_conversations.py loads the same data
set from the other formats Ragas writes.

This checks the path, not the judging: the bundled 135M judge is a toy whose verdicts are no quality figure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.nan import NAN_REASONS

pytestmark = pytest.mark.model
FIXTURES = Path(__file__).parent / "fixtures"
AGENT_METRICS = ("tool_call_accuracy", "tool_call_accuracy:strict_order=false:arg_comparison=levenshtein",
                 "tool_call_f1", "agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference",
                 "topic_adherence", "topic_adherence:mode=recall")


@pytest.fixture(scope="module")
def agent_run(models_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("agents") / "run"
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["evaluate", str(FIXTURES / "ragas_conversations.jsonl"), "--metrics", ",".join(AGENT_METRICS),
                     "--out", str(out), "--no-progress", "--threads", "1"])
    assert code == 0, printed.getvalue()
    return out, printed.getvalue()


def test_every_agent_metric_scores_every_conversation_ragas_wrote(agent_run: tuple[Path, str]) -> None:
    out, printed = agent_run
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 3
    for row in rows:
        assert len(row["metrics"]) == len(AGENT_METRICS)
        for name, cell in row["metrics"].items():
            if cell["value"] is None:  # a NaN carries a reason from the closed list, never a parse failure
                assert cell["reason"] in NAN_REASONS and cell["reason"] != "invalid_output", (name, cell)
            else:
                assert 0.0 <= cell["value"] <= 1.0, (name, cell)
    # the model-free metrics do not depend on the toy judge: the third conversation books 20:30, not 20:00
    third = rows[2]["metrics"]
    assert third["tool_call_accuracy"]["value"] == pytest.approx(2 / 3)
    assert third["tool_call_f1"]["value"] == 0.0
    assert "toy" in printed.lower()  # the bundled judge is named as a toy wherever it scored


def test_the_report_shows_the_conversation_with_its_tool_calls(agent_run: tuple[Path, str]) -> None:
    out, _ = agent_run
    assert main(["report", str(out)]) == 0
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in ("Find me a French restaurant in Lyon", "restaurant_search", "book_table", "Chez Paul",
                 "Booked: Chez Paul, 4 people, 19:30.", "restaurants"):
        assert text in page, text
