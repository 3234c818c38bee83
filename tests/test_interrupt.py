"""Ctrl-C during evaluate: exit 130, what was kept and the command that resumes; the unfinished run folder read
back says to resume it; the same command then finishes the run."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.progress import RunProgress

DEMO = str(Path(__file__).resolve().parents[1] / "examples" / "rag_demo.jsonl")


class CtrlC(ScriptedEngine):
    """Answers ``answers`` asks by the word-overlap script, then the user presses Ctrl-C."""

    def __init__(self, answers: int) -> None:
        super().__init__(self._answer_or_stop)
        self.left = answers

    def _answer_or_stop(self, label: str, data: dict[str, Any], request: Any) -> Any:
        if self.left == 0:
            raise KeyboardInterrupt
        self.left -= 1
        return rule_script(label, data, request)


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch, models_folder: Path) -> list[ScriptedEngine]:
    """The judges evaluate loads, in order: one interrupted after 4 answers, then one that answers everything."""
    judges: list[ScriptedEngine] = [CtrlC(4), ScriptedEngine(rule_script)]
    monkeypatch.setattr("localeval.run.models.load_judge", lambda *args, **kwargs: judges.pop(0))
    return judges


def test_an_interrupted_run_says_what_was_kept_and_how_to_resume(judge: list[ScriptedEngine], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    argv = ["evaluate", DEMO, "--metrics", "faithfulness", "--out", str(out), "--no-report"]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "round 1 stopped: 4/6 asks" in err and "round 1 done" not in err
    assert err.endswith(f"localeval: interrupted. The judge's answers so far are kept in {out / 'judge.sqlite'}; "
                        "to resume, run the same command again:\n"
                        f"  localeval evaluate {DEMO} --metrics faithfulness --out {out} --no-report\n")
    with sqlite3.connect(out / "judge.sqlite") as kept:  # every answer given before Ctrl-C, none lost
        assert kept.execute("SELECT COUNT(*) FROM answers").fetchone() == (4,)

    assert main(["report", str(out)]) == 1  # the unfinished folder is not "not a run folder"
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"localeval: the run in {out} did not finish (it has no summary.json yet): run the same "
                    f"`localeval evaluate ... --out {out}` command again to resume it, then read it")

    assert main(argv) == 0  # the same command finishes it
    assert main(["report", str(out)]) == 0
    assert judge == []


@pytest.mark.parametrize(("flags", "kept"), [(["--no-cache"], None), (["--cache", "shared.sqlite"], "shared.sqlite")])
def test_the_message_names_the_cache_the_run_kept(judge: list[ScriptedEngine], flags: list[str], kept: str | None,
                                                  tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = [str(tmp_path / f) if f.endswith(".sqlite") else f for f in flags]
    assert main(["evaluate", DEMO, "--metrics", "faithfulness", "--out", str(tmp_path / "run"), "--no-progress",
                 *flags]) == 130
    line = capsys.readouterr().err.splitlines()[0]
    if kept is None:
        assert line == ("localeval: interrupted; this run kept no judge cache (--no-cache), so running it again "
                        "starts over")
    else:
        assert line.startswith(f"localeval: interrupted. The judge's answers so far are kept in {tmp_path / kept};")


def test_a_call_that_stops_part_way_is_not_reported_done() -> None:
    stream = io.StringIO()
    progress = RunProgress(stream=stream, interactive=False, ticker=False)
    progress.begin(1, [10, 10, 10])
    progress.finished(0)
    progress.end()
    progress.begin(2, [10])
    progress.finished(0)
    progress.end()
    lines = stream.getvalue().splitlines()
    assert lines[-2].startswith("round 1 stopped: 1/3 asks in ")
    assert lines[-1].startswith("round 2 done: 1/1 asks in ")
