"""The CI gate: each kind of rule passes and fails on runs built for it, from Python and the command."""

from __future__ import annotations

import re
import shlex

import pytest

from localeval.errors import LocalevalError
from localeval.report.gate import GateRuleError, gate

GOOD = [0.9, 0.8, 1.0, 0.9, 0.85, 0.95, 0.9, 0.8]
BAD = [0.5, 0.4, 0.6, 0.5, 0.45, 0.55, 0.5, 0.4]


@pytest.fixture
def runs(make_run):
    """16 samples (a verdict needs 10 pairs): baseline; better (same scores, 1 NaN in 16); worse (context_recall
    regressed, 4 NaN)."""
    base = make_run("base", {"faithfulness": GOOD * 2, "context_recall": GOOD * 2})
    better = make_run("better", {"faithfulness": [*GOOD, *GOOD[:-1], "no_statements"], "context_recall": GOOD * 2})
    two_nan = ["truncated", "no_statements", *GOOD[2:]]
    worse = make_run("worse", {"faithfulness": two_nan * 2, "context_recall": BAD * 2})
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
    assert gate(better, max_nan={"faithfulness": 0.0625}).passed  # 1 of 16 is exactly the ceiling
    result = gate(worse, max_nan=0.2)
    assert result.failures == [
        "faithfulness: NaN share 25.0% (4/16: no_statements 2, truncated 2) is over the ceiling 20.0%"
    ]
    assert not gate(better, max_nan={"faithfulness": 0.05}).passed


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
    other = make_run("other", {"context_recall": GOOD})
    assert "not in the baseline run" in gate(base, baseline=other, no_worse=["faithfulness"]).failures[0]


def test_a_metric_named_otherwise_than_the_run_names_it_is_a_rule_error(make_run) -> None:
    options = make_run("opts", {"factual_correctness(mode=precision)": [0.9, 0.9]})
    with pytest.raises(GateRuleError, match=r"did you mean factual_correctness:mode=precision\?"):
        gate(options, min={"factual_correctness": 0.5})
    assert gate(options, min={"factual_correctness(mode=precision)": 0.5}).passed


def test_a_metric_is_named_as_evaluate_metrics_names_it(make_run, cli, capsys) -> None:
    """One spelling: --metrics factual_correctness:mode=precision, and the same words in every gate rule."""
    run = make_run("opts", {"factual_correctness(mode=precision,beta=0.5)": [0.9, 0.9], "ndcg(k=2)": [1.0, 1.0]})
    assert gate(run, min={"factual_correctness:mode=precision:beta=0.5": 0.5, "ndcg:k=2": 0.9},
                max_nan={"factual_correctness:beta=0.5:mode=precision": 0.0}).passed  # options in any order
    assert cli(["gate", str(run), "--min", "factual_correctness:mode=precision:beta=0.5=0.5",
                "--max-nan", "ndcg:k=2=0"]) == 0
    assert cli(["gate", str(run), "--min", "factual_correctness:mode=precision:beta=0.5=0.95"]) == 1
    assert capsys.readouterr().err.startswith("factual_correctness:mode=precision:beta=0.5: mean 0.90 is under")


def test_a_suggestion_is_a_word_a_shell_takes_as_it_is(make_run, cli, capsys) -> None:
    run = make_run("opts", {"factual_correctness(mode=precision)": [0.9, 0.9]})
    assert cli(["gate", str(run), "--min", "factual_correctness=0.5"]) == 2
    err = capsys.readouterr().err
    [suggested] = re.findall(r"did you mean (\S+)\?", err)
    assert shlex.split(suggested) == [suggested] and not set(suggested) & set("()[]{}<>|&;$`'\"\\*? ")
    assert cli(["gate", str(run), "--min", f"{suggested}=0.5"]) == 0


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
    assert cli(["gate", str(worse), "--min", "answer_relevancy=0.5"]) == 1  # a metric the run lacks fails it
    assert capsys.readouterr().err.startswith("answer_relevancy: not in the run")


@pytest.mark.parametrize(("rule", "said"), [
    (["--min", "faithfullness=0.8"], "'faithfullness' is not a metric of the run; did you mean faithfulness?"),
    (["--min", "faithfulness=high"], "--min 'faithfulness=high': 'high' is not a number (write metric=0.8)"),
    (["--min", "faithfulness=1.5"], "--min for faithfulness: 1.5 must be a number from -1.0 to 1.0"),
    (["--min", "faithfulness"], "--min 'faithfulness': write metric=value"),
    (["--max-nan", "0.1,0.2"], "--max-nan: one ceiling for all metrics, got 0.1, 0.2"),
    (["--max-nan", "context_recal=0.1"], "'context_recal' is not a metric of the run; did you mean context_recall?"),
    (["--no-worse", "faithfulness"], "no_worse needs a baseline run to compare with (--baseline RUN)"),
])
def test_a_rule_that_cannot_be_checked_is_a_usage_error(runs, cli, capsys, rule: list[str], said: str) -> None:
    """Exit 2 and one line that says what to write instead; a failed gate is 1, so CI tells them apart."""
    _, _, worse = runs
    assert cli(["gate", str(worse), *rule]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("localeval: ") and said in line
    assert captured.out == ""


def test_no_rule_is_an_error_not_a_pass(runs, cli, capsys) -> None:
    base, _, _ = runs
    for extra in ([], ["--baseline", str(base)], ["--verbose"]):
        assert cli(["gate", str(base), *extra]) == 2, extra
        captured = capsys.readouterr()
        assert "gate passed" not in captured.out
        (line,) = captured.err.strip().splitlines()
        assert line.startswith("localeval: gate: no rule given, so nothing to check")
        assert all(o in line for o in ("--min METRIC=V", "--max-nan", "--baseline RUN --no-worse METRIC"))
    assert cli(["gate", str(base), "--baseline", str(base)]) == 2
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
    with pytest.raises(GateRuleError) as raised:
        gate(run, min={"faithfullness": 0.5})
    assert str(raised.value) == ("gate: 'faithfullness' is not a metric of the run; did you mean faithfulness? "
                                 "(name each metric as evaluate --metrics does)")
    with pytest.raises(GateRuleError, match=r"'bogus' is not a metric of the run; it has: faithfulness, "
                                            r"context_recall"):
        gate(run, max_nan={"bogus": 0.1})
