"""The CI gate: each kind of rule passes and fails on runs built for it, from Python and the command."""

from __future__ import annotations

import pytest

from localeval.errors import LocalevalError
from localeval.report.gate import gate

GOOD = [0.9, 0.8, 1.0, 0.9, 0.85, 0.95, 0.9, 0.8]
BAD = [0.5, 0.4, 0.6, 0.5, 0.45, 0.55, 0.5, 0.4]


@pytest.fixture
def runs(make_run):
    """baseline; better (same scores, 1 NaN in 8); worse (context_recall regressed, 2 NaN)."""
    base = make_run("base", {"faithfulness": GOOD, "context_recall": GOOD})
    better = make_run("better", {"faithfulness": [*GOOD[:-1], "no_statements"], "context_recall": GOOD})
    two_nan = ["truncated", "no_statements", *GOOD[2:]]
    worse = make_run("worse", {"faithfulness": two_nan, "context_recall": BAD})
    return base, better, worse


def test_floor(runs) -> None:
    base, _, worse = runs
    assert gate(base, min={"faithfulness": 0.8, "context_recall": 0.8}).passed
    result = gate(worse, min={"faithfulness": 0.8, "context_recall": 0.8})
    assert not result.passed
    assert result.failures == ["context_recall: mean 0.49 is under the floor 0.80"]


def test_nan_ceiling_for_all_metrics_or_per_metric(runs) -> None:
    _, better, worse = runs
    assert gate(better, max_nan=0.2).passed
    assert gate(better, max_nan={"faithfulness": 0.125}).passed  # 1 of 8 is exactly the ceiling
    result = gate(worse, max_nan=0.2)
    assert result.failures == [
        "faithfulness: NaN share 25.0% (2/8: no_statements 1, truncated 1) is over the ceiling 20.0%"
    ]
    assert not gate(better, max_nan={"faithfulness": 0.1}).passed


def test_no_worse_than_the_baseline(runs) -> None:
    base, better, worse = runs
    assert gate(better, baseline=base, no_worse=["faithfulness", "context_recall"]).passed
    result = gate(worse, baseline=base, no_worse=["faithfulness", "context_recall"])
    assert len(result.failures) == 1
    assert result.failures[0].startswith("context_recall: detectably worse than the baseline: 0.887 -> 0.487")
    with pytest.raises(LocalevalError, match="baseline"):
        gate(worse, no_worse=["context_recall"])


def test_a_metric_the_run_lacks_is_a_failure(runs, make_run) -> None:
    base, _, _ = runs
    result = gate(base, min={"answer_relevancy": 0.5}, max_nan={"noise_sensitivity": 0.1})
    assert len(result.failures) == 2
    assert result.failures[0] == "answer_relevancy: not in the run (it has: faithfulness, context_recall)"
    options = make_run("opts", {"factual_correctness(mode=precision)": [0.9, 0.9]})
    hint = gate(options, min={"factual_correctness": 0.5}).failures[0]
    assert "did you mean factual_correctness(mode=precision)?" in hint
    assert gate(options, min={"factual_correctness(mode=precision)": 0.5}).passed
    other = make_run("other", {"context_recall": GOOD})
    assert "not in the baseline run" in gate(base, baseline=other, no_worse=["faithfulness"]).failures[0]


def test_all_nan_metric_cannot_meet_a_floor(make_run) -> None:
    run = make_run("nan", {"faithfulness": ["truncated", "truncated"]})
    assert "no valid score (2 of 2 NaN)" in gate(run, min={"faithfulness": 0.1}).failures[0]


def test_in_a_pytest_test(runs) -> None:
    base, _, _ = runs
    result = gate(base, min={"faithfulness": 0.8}, max_nan=0.05)
    assert result, result.message
    assert result.message == "gate passed"


def test_command_exit_codes(runs, cli, capsys) -> None:
    base, better, worse = runs
    ok = cli(["gate", str(better), "--baseline", str(base), "--min", "faithfulness=0.8,context_recall=0.8",
              "--max-nan", "0.2", "--no-worse", "faithfulness", "context_recall"])
    assert ok == 0 and capsys.readouterr().out.strip() == "gate passed"
    rules = (["--min", "context_recall=0.8"], ["--max-nan", "0.2"], ["--max-nan", "0.5,faithfulness=0.2"],
             ["--baseline", str(base), "--no-worse", "context_recall"])
    for extra in rules:
        assert cli(["gate", str(worse), *extra]) == 1, extra
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(("context_recall:", "faithfulness:")), err
    assert cli(["gate", str(worse), "--min", "context_recall=0.8", "--min", "faithfulness=0.99"]) == 1
    assert len(capsys.readouterr().err.strip().splitlines()) == 2  # one line per failed rule
    assert cli(["gate", str(base), "--min", "faithfulness"]) == 1
    assert "metric=value" in capsys.readouterr().err
    assert cli(["gate", str(base), "--no-worse", "faithfulness"]) == 1
    assert "--baseline" in capsys.readouterr().err


def test_no_rule_is_an_error_not_a_pass(runs, cli, capsys) -> None:
    base, _, _ = runs
    for extra in ([], ["--baseline", str(base)], ["--verbose"]):
        assert cli(["gate", str(base), *extra]) == 1, extra
        captured = capsys.readouterr()
        assert "gate passed" not in captured.out
        (line,) = captured.err.strip().splitlines()
        assert line.startswith("localeval: gate: no rule given, so nothing to check")
        assert all(o in line for o in ("--min METRIC=V", "--max-nan", "--baseline RUN --no-worse METRIC"))
    assert cli(["gate", str(base), "--baseline", str(base)]) == 1
    assert "--baseline alone is no rule: add --no-worse METRIC" in capsys.readouterr().err
    for empty in ({}, {"max_nan": {}}, {"baseline": base}):
        with pytest.raises(LocalevalError, match=r"no rule given.*min=\{'faithfulness': 0.8\}"):
            gate(base, **empty)


def test_no_worse_against_a_baseline_of_other_samples(runs, make_run) -> None:
    base, _, _ = runs
    other = make_run("other", {"faithfulness": GOOD}, ids=[f"s{i}" for i in range(8)])
    result = gate(base, baseline=other, no_worse=["faithfulness"])
    (failure,) = result.failures
    assert failure.startswith("faithfulness: cannot check against the baseline: no sample id is in both runs")
    assert "has 8 samples (s0, s1, s2, ...)" in failure and "(q1, q2, q3, ...)" in failure


def test_gate_guesses_a_misspelled_metric_of_the_run(make_run) -> None:
    run = make_run("run", {"faithfulness": [0.9, 0.8], "context_recall": [0.5, 0.5]})
    (failure,) = gate(run, min={"faithfullness": 0.5}).failures
    assert failure == "faithfullness: not in the run; did you mean faithfulness?"
