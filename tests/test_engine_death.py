"""A judge engine that dies stops the run: the cause named, the answers so far kept, a non-zero exit, and a
rerun that resumes; an engine error on one ask stays that ask's NaN (scheduler.generation, the CLI)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.data.sample import Sample
from localeval.engine.base import Request, Result
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import JudgeDied, LocalevalError
from localeval.metrics import parse_metrics
from localeval.nan import Nan
from localeval.scheduler import Scheduler
from localeval.store.cache import JudgeCache


def _samples(n: int = 4) -> list[Sample]:
    return [Sample(id=f"s{i}", user_input=f"Where is city {i}?",
                   response=f"City {i} lies on the river Alpha. City {i} has {i} bridges.",
                   reference=f"City {i} lies on the river Alpha.",
                   retrieved_contexts=(f"City {i} lies on the river Alpha.", "Bananas are yellow fruit."))
            for i in range(n)]


def _dies_at(label: str, error: Exception) -> Any:
    """A script that answers every prompt but ``label``, whose every ask raises ``error``."""
    def script(prompt: str, data: dict[str, Any], request: Request) -> Any:
        if prompt == label:
            raise error
        return rule_script(prompt, data, request)
    return script


def test_an_engine_that_fails_every_ask_alike_stops_the_run_with_its_cause(tmp_path: Path) -> None:
    engine = ScriptedEngine(_dies_at("statements", ZeroDivisionError("division by zero")))
    cache = JudgeCache(tmp_path / "judge.sqlite")
    with pytest.raises(JudgeDied) as died:
        Scheduler(engine, cache=cache, progress=False).run(_samples(4), parse_metrics("faithfulness"))
    message = str(died.value)
    assert "every one of the 4 asks of an engine call failed with ZeroDivisionError: division by zero" in message
    assert f"The 0 answers received this run are kept in the judge cache {tmp_path / 'judge.sqlite'}" in message
    assert "rerun the same command to resume" in message
    assert isinstance(died.value, LocalevalError)


def test_answers_before_the_death_are_kept_and_a_rerun_asks_only_the_rest(tmp_path: Path) -> None:
    samples, specs = _samples(4), parse_metrics("faithfulness")  # round 1: statements, round 2: NLI verdicts
    with JudgeCache(tmp_path / "judge.sqlite") as cache, pytest.raises(JudgeDied, match="RuntimeError: gone"):
        Scheduler(ScriptedEngine(_dies_at("nli", RuntimeError("gone"))), cache=cache, progress=False).run(samples,
                                                                                                          specs)
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        assert cache.stats()["answers"] == 4  # the statements of round 1, committed before round 2 died
        working = ScriptedEngine(rule_script)
        out = Scheduler(working, cache=cache, progress=False).run(samples, specs)
    assert {r.label for r in working.requests} == {"nli"} and len(working.requests) == 4
    assert out.usage["faithfulness"].cache_hits == 4
    assert all(isinstance(v, float) for v in out.outcomes["faithfulness"])


def test_answers_given_in_the_call_that_died_are_kept(tmp_path: Path) -> None:
    class DiesMidCall(ScriptedEngine):
        """Answers the first two asks of a call, then its process is gone."""

        def generate(self, requests: list[Request], on_result: Any = None) -> list[Result]:
            if len(requests) > 2:
                super().generate(requests[:2], on_result)
                raise JudgeDied("the engine process was killed by SIGKILL")
            return super().generate(requests, on_result)

    engine = DiesMidCall(rule_script)
    with JudgeCache(tmp_path / "judge.sqlite") as cache:
        with pytest.raises(JudgeDied) as died:
            Scheduler(engine, cache=cache, progress=False, commit_every=1000).run(_samples(4),
                                                                                    parse_metrics("faithfulness"))
        assert cache.stats()["answers"] == 2
    assert len(engine.calls) == 1  # an engine that says it died is not split and asked again
    assert "(the engine process was killed by SIGKILL)" in str(died.value)
    assert "The 2 answers received this run are kept" in str(died.value)


def test_one_bad_ask_stays_its_own_nan_and_the_run_goes_on() -> None:
    def script(prompt: str, data: dict[str, Any], request: Request) -> Any:
        if "City 2" in request.messages[-1][1]:
            raise RuntimeError("boom")
        return rule_script(prompt, data, request)

    out = Scheduler(ScriptedEngine(script), progress=False).run(_samples(4), parse_metrics("faithfulness"))
    values = out.outcomes["faithfulness"]
    assert values[2] == Nan("engine_error") and "boom" in out.traces["faithfulness"][2]["nan_detail"]
    assert all(isinstance(v, float) for i, v in enumerate(values) if i != 2)


def test_asks_that_fail_each_their_own_way_are_not_a_dead_engine() -> None:
    def script(prompt: str, data: dict[str, Any], request: Request) -> Any:
        raise ValueError(f"bad ask {request.messages[-1][1][:40]}")

    out = Scheduler(ScriptedEngine(script), progress=False).run(_samples(3), parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"] == [Nan("engine_error")] * 3


def test_a_round_of_one_ask_that_fails_is_its_nan() -> None:
    engine = ScriptedEngine(_dies_at("statements", RuntimeError("boom")))
    out = Scheduler(engine, progress=False).run(_samples(1), parse_metrics("faithfulness"))
    assert out.outcomes["faithfulness"] == [Nan("engine_error")]


def test_without_a_cache_the_message_says_the_answers_are_lost() -> None:
    engine = ScriptedEngine(_dies_at("nli", RuntimeError("gone")))
    with pytest.raises(JudgeDied, match=r"The 3 answers received this run are lost: the run has no judge cache"):
        Scheduler(engine, progress=False).run(_samples(3), parse_metrics("faithfulness"))


@pytest.fixture
def scripted_cli(monkeypatch: pytest.MonkeyPatch) -> list[ScriptedEngine]:
    """The CLI's judge is the next engine of the list returned (model folders are not looked for)."""
    engines: list[ScriptedEngine] = []
    monkeypatch.setattr("localeval.run.models.resolve_model", lambda name, kind: Path(str(name)))
    monkeypatch.setattr("localeval.run.models.load_judge", lambda path, options=None, log_dir=None: engines.pop(0))
    return engines


def test_the_cli_exits_1_naming_the_cause_and_a_rerun_resumes(scripted_cli: list[ScriptedEngine], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    data, out = tmp_path / "samples.jsonl", tmp_path / "run"
    data.write_text("".join(json.dumps(s.__dict__ | {"retrieved_contexts": list(s.retrieved_contexts)}) + "\n"
                            for s in _samples(3)))
    command = ["evaluate", str(data), "--out", str(out), "--metrics", "faithfulness", "--no-report"]
    working = ScriptedEngine(rule_script)
    scripted_cli.extend([ScriptedEngine(_dies_at("nli", RuntimeError("the engine is gone"))), working])
    assert main(command) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    err = captured.err.splitlines()[-1]  # after the progress lines
    assert err.startswith("localeval: the judge engine died (every one of the 3 asks of an engine call failed "
                          "with RuntimeError: the engine is gone); the run stopped."), err
    assert f"The 3 answers received this run are kept in the judge cache {out / 'judge.sqlite'}" in err
    assert main(command) == 0
    assert {r.label for r in working.requests} == {"nli"}  # the statements came from the cache
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert [row["metrics"]["faithfulness"]["nan_reason"] for row in rows] == [None] * 3
