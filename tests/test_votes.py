"""Majority of n sampled verdicts (Settings.votes): one request with n, each verdict decided by the majority."""

from __future__ import annotations

import pytest

from localeval.config import RunConfig
from localeval.data.sample import Sample
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError
from localeval.metrics.registry import parse_metric
from localeval.prompts.base import Settings
from localeval.prompts.votes import majority
from localeval.scheduler import Scheduler

SAMPLE = Sample(id="s", user_input="Where is the tower?", response="It is in Paris. It is blue.",
                reference="The tower is in Paris.", retrieved_contexts=("The tower stands in Paris.", "Cats purr."))


def test_majority_and_ties():
    assert majority([1, 1, 0]) == 1
    assert majority([0, 0, 1]) == 0
    assert majority([1, 0]) == 0  # a tie is not a yes
    assert majority([1]) == 1


def test_settings_reject_votes_without_sampling():
    with pytest.raises(ValueError, match="temperature"):
        Settings(votes=3, temperature=0.0)
    with pytest.raises(ValueError, match="votes"):
        Settings(votes=0)
    with pytest.raises(ValueError, match="max_examples"):
        Settings(max_examples=-1)


def _run(metric: str, script, settings: Settings):
    engine = ScriptedEngine(script)
    spec = parse_metric(metric)
    out = Scheduler(engine, None, settings=settings, progress=False).run([SAMPLE], [spec])
    return out.outcomes[spec.name][0], out.traces[spec.name][0], engine


def test_faithfulness_takes_each_statements_majority():
    votes = [[1, 0], [1, 1], [0, 0]]  # majority per statement: 1 (2 of 3), 0 (1 of 3)

    def script(label, data, request):
        if label == "statements":
            assert request.n == 1 and request.temperature == 0  # extraction is never voted
            return {"statements": ["The tower is in Paris.", "The tower is blue."]}
        assert (request.n, request.temperature) == (3, 0.5)
        return [{"verdicts": [{"reason": f"vote {k}", "verdict": v} for v in vs]} for k, vs in enumerate(votes)]

    value, trace, engine = _run("faithfulness", script, Settings(votes=3, temperature=0.5))
    assert value == 0.5
    assert trace["verdicts"] == [1, 0]
    assert trace["reasons"] == ["vote 0", "vote 0"]  # the first answer of the majority, per statement
    assert len(engine.requests) == 2  # one request with n = 3, not three requests


def test_context_precision_votes_per_chunk():
    answers = {"The tower stands in Paris.": [1, 0, 1], "Cats purr.": [0, 1, 0]}

    def script(label, data, request):
        assert request.n == 3
        return [{"reason": "", "verdict": v} for v in answers[data["context"]]]

    value, trace, _ = _run("context_precision", script, Settings(votes=3))
    assert trace["verdicts"] == [1, 0]
    assert value == pytest.approx(1.0, abs=1e-9)


def test_one_vote_is_the_greedy_answer():
    def script(label, data, request):
        assert (request.n, request.temperature) == (1, 0.0)
        return {"reason": "", "verdict": 1}

    value, _, _ = _run("context_precision", script, Settings())
    assert value == pytest.approx(1.0, abs=1e-9)


def test_evaluate_and_estimate_take_the_judge_settings_from_the_command_line(monkeypatch, capsys):
    import localeval.api
    import localeval.estimate
    from localeval.cli import main

    seen: list[Settings] = []

    def fake_run(data: object, config: RunConfig, **kwargs: object) -> None:
        seen.append(config.settings)
        raise LocalevalError("stopped after reading the command line")

    monkeypatch.setattr(localeval.api, "evaluate_run", fake_run)
    monkeypatch.setattr(localeval.estimate, "estimate_run", fake_run)
    for command in ("evaluate", "estimate"):
        extra = ["--out", "runs/x"] if command == "evaluate" else []
        assert main([command, "data.jsonl", *extra, "--no-reasons", "--max-examples", "1",
                     "--votes", "3", "--temperature", "0.5", "--judge-every-copy"]) == 1
        settings = seen[-1]
        assert (settings.reasons, settings.max_examples, settings.votes, settings.temperature) == (False, 1, 3, 0.5)
        assert settings.merge_repeats is False
    assert main(["evaluate", "data.jsonl", "--out", "x", "--max-examples", "-2"]) == 2  # a usage error
    assert "max_examples" in capsys.readouterr().err
    assert main(["evaluate", "data.jsonl", "--out", "runs/x"]) == 1
    defaults = seen[-1]
    assert (defaults.reasons, defaults.max_examples, defaults.votes, defaults.merge_repeats) == (True, None, 1, True)
