"""The Python API takes the transformers engine's options as keyword arguments (``evaluate(..., threads=1)``),
typed and checked before any model loads, and records them as the CLI's flags do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import localeval
import localeval.api
from localeval.config import JudgeOptions, OptionError
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError

ROWS = [{"id": "a", "user_input": "Where is Paris?", "response": "Paris is in France.",
         "retrieved_contexts": ["Paris is the capital of France."], "reference": "In France."}]


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each JudgeOptions the API loaded a judge folder with (a scripted judge answers)."""
    seen: list[Any] = []
    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path(str(name)))

    def load_judge(path: object, options: JudgeOptions | None = None) -> ScriptedEngine:
        seen.append(options)
        return ScriptedEngine(rule_script)

    monkeypatch.setattr("localeval.run.models.load_judge", load_judge)
    return seen


def test_threads_is_a_keyword_of_evaluate(loaded: list[Any]) -> None:
    result = localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, threads=1)
    assert loaded == [JudgeOptions(threads=1)]
    assert result.info["config"]["engine"]["threads"] == 1


def test_keyword_options_are_recorded_as_the_cli_records_them(loaded: list[Any]) -> None:
    localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, threads=2,
                       batch_size=4, dtype="float32", drafts=0)
    assert loaded == [JudgeOptions(threads=2, batch_size=4, extra={"dtype": "float32", "drafts": 0})]


def test_an_unknown_or_bad_engine_option_stops_before_a_model_loads(loaded: list[Any]) -> None:
    with pytest.raises(OptionError, match=r"thread.*transformers engine takes grammar, batch_size"):
        localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, thread=1)
    with pytest.raises(LocalevalError, match="threads"):
        localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, threads=0)
    with pytest.raises(OptionError, match="give the server engine's in judge_options"):
        localeval.evaluate(ROWS, metrics="faithfulness", progress=False, threads=1,
                           judge_options=JudgeOptions.server("http://box:8000/v1"))
    assert loaded == []
