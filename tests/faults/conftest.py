"""The fault-injection suite's fixtures: a data file, a scripted judge the ``evaluate`` command loads in place of a
model (no model folder is read), and the command run as a user runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_kit import Ran, rows

from localeval.cli import main
from localeval.engine.scripted import ScriptedEngine, rule_script


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A JSONL file of 12 samples."""
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows(12)), encoding="utf-8")
    return path


@pytest.fixture
def judges(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedEngine]:
    """Every judge ``evaluate`` loaded, in order: each a fresh word-overlap script; no model folder is looked for."""
    loaded: list[ScriptedEngine] = []

    def load(*args: object, **kwargs: object) -> ScriptedEngine:
        loaded.append(ScriptedEngine(rule_script))
        return loaded[-1]

    monkeypatch.setattr("localeval.run.models.load_judge", load)
    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path("scripted"))
    return loaded


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]):
    """Run ``localeval ARGS...``: its exit code, stdout and stderr."""

    def run(*args: object) -> Ran:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run
