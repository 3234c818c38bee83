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

    def load_judge(path: object, options: JudgeOptions | None = None, log_dir: object = None) -> ScriptedEngine:
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
    with pytest.raises(OptionError, match=r"thread: no such option \(the transformers engine takes grammar, batch"):
        localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, thread=1)
    with pytest.raises(LocalevalError, match=r"threads 0: .*equal to 1 \(the transformers engine takes"):
        localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, threads=0)
    with pytest.raises(OptionError, match=r"threads: no such option \(the server engine takes server_url, server"):
        localeval.evaluate(ROWS, metrics="faithfulness", progress=False, threads=1,
                           judge_options=JudgeOptions.server("http://box:8000/v1"))
    assert loaded == []


# Each engine's common options as keywords of evaluate: what the API records, and a bad value named with its engine.
COMMON = {
    "vllm": ({"tensor_parallel_size": 2, "dtype": "half", "max_model_len": 4096},
             {"gpu_memory_utilization": 2.0}, "gpu_memory_utilization 2.0: .*the vllm engine takes"),
    "ray-vllm": ({"replicas": 2, "ray_address": "head:6379", "enforce_eager": True},
                 {"replicas": 0}, "replicas 0: .*the ray-vllm engine takes"),
    "server": ({"server_url": ["http://box:8000/v1"], "server_concurrency": 4, "server_kind": "vllm"},
               {"server_url": ["box:8000"]}, "--server-url takes http:// or https:// URLs, not 'box:8000'"),
}


@pytest.mark.parametrize("engine", sorted(COMMON))
def test_every_engines_options_are_keywords_of_evaluate(loaded: list[Any], engine: str) -> None:
    good, bad, said = COMMON[engine]
    localeval.evaluate(ROWS, metrics="faithfulness", judge=None if engine == "server" else "judge-folder",
                       progress=False, engine=engine, **good)
    (options,) = loaded
    assert options.engine == engine and options == JudgeOptions(engine, **good)
    with pytest.raises(OptionError, match=said):
        localeval.evaluate(ROWS, metrics="faithfulness", judge="judge-folder", progress=False, engine=engine, **bad)
    with pytest.raises(OptionError, match=f"batch_size: no such option \\(the {engine} engine takes"):
        localeval.evaluate(ROWS, metrics="faithfulness", progress=False, engine=engine, batch_size=4, **good)
    assert len(loaded) == 1  # the bad ones stopped before a model loaded
