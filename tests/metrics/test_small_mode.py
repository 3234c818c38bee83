"""The small-judge mode (``Settings(judge_mode="small")``): faithfulness asks one statement at a time against its
closest context sentences, keeps Ragas' ratio, and the default mode and its records stay as they were."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from localeval.api import evaluate
from localeval.config import RunConfig
from localeval.data.sample import Sample
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine
from localeval.metrics.context_relevance import split_sentences
from localeval.metrics.registry import parse_metric
from localeval.nan import Nan
from localeval.prompts.base import Settings
from localeval.scheduler import Scheduler

# Five context sentences on five subjects; a statement shares its words with one of them (HashEmbedder).
CONTEXT = ("Paris is the capital of France. Berlin hosts the German parliament today.\n"
           "Madrid lies on the Manzanares river. Rome was founded in 753 BC by legend. "
           "Vienna is famous for its coffee houses.")
STATEMENTS = ["Paris is the capital of France.", "Rome was founded in 753 BC.", "Oslo has a fjord."]
SUPPORTED = {"Paris is the capital of France.", "Rome was founded in 753 BC."}


def _script(label: str, data: dict[str, Any], request: Request) -> Any:
    if label == "statements":
        return {"statements": [] if data["answer"] == "nothing" else STATEMENTS}
    if label == "statement_check":
        return {"verdict": int(data["statement"] in SUPPORTED)}
    raise AssertionError(f"unexpected ask {label}")


def _run(answer: str = "An answer.", mode: str = "small") -> tuple[ScriptedEngine, Any]:
    engine = ScriptedEngine(_script)
    sample = Sample("s1", "Which capitals?", (CONTEXT,), answer)
    out = Scheduler(engine, HashEmbedder(), settings=Settings(judge_mode=mode), progress=False).run(
        [sample], [parse_metric("faithfulness")])
    return engine, out


def test_one_statement_per_ask_against_its_three_closest_sentences() -> None:
    engine, out = _run()
    checks = [json.loads(r.messages[-1][1]) for r in engine.requests if r.label == "statement_check"]
    assert [c["statement"] for c in checks] == STATEMENTS
    sentences = split_sentences(CONTEXT)
    trace = out.traces["faithfulness"][0]
    for check, picked in zip(checks, trace["evidence"], strict=True):  # three sentences, in the context's order
        assert len(picked) == 3 and picked == sorted(picked)
        assert check["passage"] == " ".join(sentences[i] for i in picked)
    assert "Paris is the capital of France." in checks[0]["passage"]
    assert "Rome was founded in 753 BC by legend." in checks[1]["passage"]
    assert out.outcomes["faithfulness"][0] == pytest.approx(2 / 3)  # supported statements over statements
    assert trace["verdicts"] == [1, 1, 0] and trace["reasons"] == ["", "", ""]


def test_no_statements_is_nan_as_in_the_default_mode() -> None:
    for mode in ("small", "ragas"):
        _, out = _run("nothing", mode)
        assert out.outcomes["faithfulness"][0] == Nan("no_statements")


def test_default_mode_asks_ragas_nli_once() -> None:
    engine = ScriptedEngine(lambda label, data, request: (
        {"statements": STATEMENTS} if label == "statements"
        else {"verdicts": [{"reason": "r", "verdict": 1}] * len(data["statements"])}))
    sample = Sample("s1", "Which capitals?", (CONTEXT,), "An answer.")
    out = Scheduler(engine, None, progress=False).run([sample], [parse_metric("faithfulness")])
    assert [r.label for r in engine.requests] == ["statements", "nli"]
    assert out.outcomes["faithfulness"][0] == 1.0


def test_the_mode_reaches_the_run_record_and_the_default_records_as_before(tmp_path) -> None:
    assert "judge_mode" not in RunConfig().to_dict()["settings"]  # the default records what it did before
    assert RunConfig.from_dict(RunConfig().to_dict()) == RunConfig()
    small = RunConfig(settings=Settings(judge_mode="small"))
    assert small.to_dict()["settings"]["judge_mode"] == "small"
    assert RunConfig.from_dict(small.to_dict()) == small
    result = evaluate([Sample("s1", "Which capitals?", (CONTEXT,), "An answer.")], "faithfulness",
                      judge=ScriptedEngine(_script), embedder=HashEmbedder(), settings=Settings(judge_mode="small"),
                      out=tmp_path / "run", progress=False, report=False)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["run"]["config"]["settings"]["judge_mode"] == "small"
    assert math.isclose(result["faithfulness"][0], 2 / 3)


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="judge mode"):
        Settings(judge_mode="tiny")
