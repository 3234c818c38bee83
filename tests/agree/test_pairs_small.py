"""WikiEval pairs in the small-judge mode, and the agree command's --offset, --files and --judge-mode."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localeval.agree.pair_run import run_pairs
from localeval.cli import main
from localeval.cli.agree import _pair_files
from localeval.config import OptionError, RunConfig
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.prompts.base import Settings


def script(label: str, data: dict[str, Any], request: Any) -> Any:
    """rule_script, plus the small mode's check: supported when every word of the statement is in the passage."""
    if label == "statement_check":
        words = lambda text: {w.strip(".,").lower() for w in text.split()}  # noqa: E731
        return {"verdict": int(words(data["statement"]) <= words(data["passage"]))}
    return rule_script(label, data, request)


def test_small_mode_pairs_ask_one_statement_at_a_time_and_say_so() -> None:
    engine = ScriptedEngine(script)
    config = RunConfig(settings=Settings(judge_mode="small"))
    report = run_pairs(None, engine, HashEmbedder(), limit=2, config=config, files=("ff",))
    assert report.settings["judge_mode"] == "small"
    labels = {r.label for r in engine.requests}
    assert labels == {"statements", "statement_check"}
    assert report.files[0].count.pairs == 2
    default = run_pairs(None, ScriptedEngine(script), HashEmbedder(), limit=1, files=("ff",))
    assert "judge_mode" not in default.settings  # the default mode's record is as it was


def test_pair_files_choice() -> None:
    assert _pair_files(None) == ("ff", "ar", "cr")
    assert _pair_files("ff, cr.csv,ff") == ("ff", "cr")
    with pytest.raises(OptionError, match="--files"):
        _pair_files("ff,xx")


def test_agree_passes_offset_files_and_mode(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import localeval.agree.pair_run

    seen: dict[str, Any] = {}

    def run_pairs(folder: Any, judge: Any, embedder: Any, **kwargs: Any) -> None:
        seen.update(kwargs)
        raise OptionError("stop here")

    monkeypatch.setattr(localeval.agree.pair_run, "run_pairs", run_pairs)
    assert main(["agree", "--pairs", "--offset", "25", "--limit", "25", "--files", "ff",
                 "--judge-mode", "small", "--no-progress"]) == 2
    assert seen["offset"] == 25 and seen["limit"] == 25 and seen["files"] == ("ff",)
    assert seen["config"].settings.judge_mode == "small"
    assert main(["agree", "l.csv", str(tmp_path), "--offset", "3"]) == 2  # --pairs options without --pairs
    assert main(["agree", "l.csv", str(tmp_path), "--judge-mode", "small"]) == 2
