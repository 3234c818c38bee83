"""compare_runs on hand-made runs: differences, intervals, verdicts, and what is left out of the pairing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from localeval.errors import LocalevalError
from localeval.report.compare import (
    BETTER,
    MIN_PAIRS,
    SAME,
    TOO_FEW,
    WORSE,
    compare_metric,
    compare_runs,
    comparison_to_dict,
    format_comparison,
)
from localeval.report.runs import run_from_rows


def test_differences_means_and_a_better_verdict(make_run) -> None:
    a = make_run("a", {"faithfulness": [0.2, 0.4, 0.6, 0.8] * 3})
    b = make_run("b", {"faithfulness": [0.5, 0.6, 0.9, 1.0] * 3})
    m = compare_runs(a, b).get("faithfulness")
    assert m is not None
    assert (m.mean_a, m.mean_b, m.diff) == pytest.approx((0.5, 0.75, 0.25))
    assert m.paired == 12 and m.excluded == 0
    # The differences are 0.3, 0.2, 0.3, 0.2: every resampled mean lies within [0.2, 0.3].
    assert m.ci is not None and 0.2 - 1e-9 <= m.ci[0] <= 0.25 <= m.ci[1] <= 0.3 + 1e-9
    assert m.verdict == BETTER
    assert compare_runs(b, a).get("faithfulness").verdict == WORSE  # type: ignore[union-attr]


def test_no_detectable_change_when_the_interval_holds_zero(make_run) -> None:
    a = make_run("a", {"context_recall": [0.5] * 12})
    b = make_run("b", {"context_recall": [0.6, 0.4, 0.7, 0.3, 0.5, 0.5] * 2})
    m = compare_runs(a, b).get("context_recall")
    assert m is not None and m.diff == pytest.approx(0.0)
    assert m.ci is not None and m.ci[0] < 0 < m.ci[1]
    assert m.verdict == SAME
    same = compare_runs(a, a).get("context_recall")
    assert same is not None and same.ci == (0.0, 0.0) and same.verdict == SAME


def test_lower_is_better_for_noise_sensitivity(make_run) -> None:
    a = make_run("a", {"noise_sensitivity": [0.5, 0.4, 0.6, 0.5] * 3})
    b = make_run("b", {"noise_sensitivity": [0.1, 0.0, 0.2, 0.1] * 3})
    m = compare_runs(a, b).get("noise_sensitivity")
    assert m is not None and m.diff == pytest.approx(-0.4) and not m.higher_is_better
    assert m.verdict == BETTER


def test_missing_and_nan_samples_are_counted_and_left_out(make_run) -> None:
    ids = ["q1", "q2", "q3", "q4"]
    a = make_run("a", {"faithfulness": [1.0, "no_statements", 0.5, 0.0, 0.9]}, ids=[*ids, "q5"])
    b = make_run("b", {"faithfulness": [0.5, 0.7, "truncated", 0.5, 0.1]}, ids=[*ids, "q6"])
    m = compare_runs(a, b).get("faithfulness")
    assert m is not None
    assert (m.paired, m.missing, m.nan, m.excluded) == (2, 2, 2, 4)  # q1, q4 paired; q5, q6; q2, q3
    assert (m.mean_a, m.mean_b, m.diff) == pytest.approx((0.5, 0.5, 0.0))
    assert "4 (2 missing, 2 NaN)" in format_comparison(compare_runs(a, b))


def test_too_few_pairs_and_metrics_on_one_side(make_run) -> None:
    a = make_run("a", {"faithfulness": [0.5, "no_statements"], "context_recall": [1.0, 1.0]})
    b = make_run("b", {"faithfulness": [0.9, 0.9], "answer_relevancy": [0.3, 0.2]})
    c = compare_runs(a, b)
    assert [m.metric for m in c.metrics] == ["faithfulness"]
    assert c.only_a == ["context_recall"] and c.only_b == ["answer_relevancy"]
    assert c.metrics[0].verdict == TOO_FEW and c.metrics[0].ci is None
    text = format_comparison(c)
    assert "only in A: context_recall" in text and "only in B: answer_relevancy" in text
    data = json.loads(json.dumps(comparison_to_dict(c)))
    assert data["metrics"][0]["paired"] == 1 and data["metrics"][0]["excluded"] == 1


def _rows(values: np.ndarray) -> list[dict]:
    return [{"id": f"q{i}", "metrics": {"m": {"value": float(v)}}} for i, v in enumerate(values)]


def test_interval_contains_the_true_difference() -> None:
    # B = A + 0.05 + noise: the true mean difference is 0.05.
    covered, detected, trials = 0, 0, 60
    for trial in range(trials):
        rng = np.random.default_rng(trial)
        a = rng.uniform(0.2, 0.8, size=60)
        b = a + 0.05 + rng.normal(0, 0.1, size=60)
        m = compare_metric(run_from_rows(_rows(a)), run_from_rows(_rows(b)), "m", resamples=1000, seed=trial)
        assert m.ci is not None and m.diff is not None
        assert m.ci[0] <= m.diff <= m.ci[1]
        covered += m.ci[0] <= 0.05 <= m.ci[1]
        detected += m.verdict == BETTER
    assert covered / trials >= 0.85  # nominal 95%; a percentile bootstrap runs a little narrow
    assert detected / trials >= 0.85  # se = 0.1/sqrt(60) = 0.013, so 0.05 is ~4 se from 0


def test_duplicate_ids_cannot_be_paired(make_run) -> None:
    a = make_run("a", {"faithfulness": [0.5, 0.5]}, ids=["q1", "q1"])
    with pytest.raises(LocalevalError, match="twice"):
        compare_runs(a, a)


def test_compare_command_writes_html_and_json(make_run, cli, tmp_path, capsys) -> None:
    a = make_run("a", {"faithfulness": [0.2, 0.4, 0.6, 0.8] * 3})
    b = make_run("b", {"faithfulness": [0.5, 0.6, 0.9, 1.0] * 3})
    code = cli(["compare", str(a), str(b), "--html", str(tmp_path / "c.html"),
                    "--json", str(tmp_path / "c.json")])
    assert code == 0
    out = capsys.readouterr().out
    assert "B better" in out and "+0.250" in out
    assert json.loads((tmp_path / "c.json").read_text())["metrics"][0]["verdict"] == BETTER
    html = (tmp_path / "c.html").read_text()
    assert "<svg" in html and "B better" in html and "http" not in html.replace("http://www.w3.org", "")
    assert cli(["compare", str(a), str(tmp_path / "nowhere")]) == 1
    assert "no run folder" in capsys.readouterr().err


def test_runs_with_no_shared_id_fail_with_both_sides_named(make_run, cli, capsys) -> None:
    a = make_run("a", {"faithfulness": [0.2, 0.4, 0.6, 0.8]})
    b = make_run("b", {"faithfulness": [0.5, 0.6]}, ids=["1", "2"])
    with pytest.raises(LocalevalError, match="no sample id is in both runs"):
        compare_runs(a, b)
    assert cli(["compare", str(a), str(b)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # no table of "too few pairs"
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("localeval: no sample id is in both runs")
    assert f"{a} has 4 samples (q1, q2, q3, ...)" in line
    assert f"{b} has 2 samples (1, 2) (row numbers: its data had no id column)" in line
    assert "Compare two runs of the same data set" in line


def test_one_shared_id_is_enough_to_compare(make_run) -> None:
    a = make_run("a", {"faithfulness": [0.2, 0.4]}, ids=["x", "y"])
    b = make_run("b", {"faithfulness": [0.5, 0.6]}, ids=["y", "z"])
    m = compare_runs(a, b).get("faithfulness")
    assert m is not None and (m.paired, m.missing, m.verdict) == (1, 2, TOO_FEW)


def test_too_few_pairs_for_a_verdict_say_so_and_name_the_minimum(make_run, cli, tmp_path, capsys) -> None:
    """Two pairs whose differences are equal: a zero-width interval, and no verdict from it."""
    a = make_run("a", {"faithfulness": [0.0, 0.333]})
    b = make_run("b", {"faithfulness": [0.333, 0.666]})
    m = compare_runs(a, b).get("faithfulness")
    assert m is not None and m.paired == 2 and m.diff == pytest.approx(0.333)
    assert (m.verdict, m.ci) == (TOO_FEW, None)
    assert cli(["compare", str(a), str(b), "--json", str(tmp_path / "c.json"), "--html", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "B better" not in out and "too few pairs (< 10)" in out
    assert "A verdict needs at least 10 pairs" in out and "Too few pairs to tell: faithfulness (2)" in out
    data = json.loads((tmp_path / "c.json").read_text())
    assert data["min_pairs"] == MIN_PAIRS == 10 and data["metrics"][0]["verdict"] == TOO_FEW
    assert "at least 10 pairs" in (tmp_path / "c.html").read_text()
    nine = compare_runs(make_run("a9", {"faithfulness": [0.1] * 9}), make_run("b9", {"faithfulness": [0.9] * 9}))
    ten = compare_runs(make_run("a10", {"faithfulness": [0.1] * 10}), make_run("b10", {"faithfulness": [0.9] * 10}))
    assert nine.metrics[0].verdict == TOO_FEW and ten.metrics[0].verdict == BETTER


def _faith(value: float, statement: str, reason: str) -> dict:
    return {"value": value, "trace": {"statements": [statement], "verdicts": [int(value)], "reasons": [reason]}}


def test_the_samples_that_moved_most_come_with_both_scores_and_the_judge_s_reasons() -> None:
    ids = [f"q{i}" for i in range(12)]
    a = run_from_rows([{"id": i, "metrics": {"faithfulness": _faith(1.0, f"S{i}.", "the context says so")}}
                       for i in ids])
    moved_b = {"q3": 0.0, "q7": 0.5, "q1": 0.5}
    b = run_from_rows([{"id": i, "metrics": {"faithfulness": _faith(moved_b.get(i, 1.0), f"S{i}.",
                                                                     "nothing supports it" if i in moved_b
                                                                     else "the context says so")}}
                       for i in ids])
    c = compare_runs(a, b, moved=2)
    top = c.moved["faithfulness"]
    assert [(m.id, m.a, m.b, m.change) for m in top] == [("q3", 1.0, 0.0, -1.0), ("q1", 1.0, 0.5, -0.5)]
    assert top[0].reasons_a == ["Sq3.: 1 (the context says so)"]
    assert top[0].reasons_b == ["Sq3.: 0 (nothing supports it)"]
    text = format_comparison(c)
    assert "Samples that moved most" in text
    assert "q3: 1.000 -> 0.000 (-1.000)" in text and "A: Sq3.: 1 (the context says so)" in text
    assert "B: Sq3.: 0 (nothing supports it)" in text and "q7" not in text  # two shown
    data = json.loads(json.dumps(comparison_to_dict(c)))
    assert data["moved"]["faithfulness"][0] == {
        "metric": "faithfulness", "id": "q3", "a": 1.0, "b": 0.0, "change": -1.0,
        "reasons_a": ["Sq3.: 1 (the context says so)"], "reasons_b": ["Sq3.: 0 (nothing supports it)"]}
    assert compare_runs(a, a).moved == {"faithfulness": []}
    assert "moved most" not in format_comparison(compare_runs(a, a))


def test_compare_shows_the_moved_samples_in_text_json_and_html(tmp_path, cli, capsys) -> None:
    import localeval
    from localeval.engine.scripted import ScriptedEngine, rule_script

    demo = Path(__file__).parents[2] / "examples" / "rag_demo.jsonl"
    rows = [json.loads(line) for line in demo.read_text(encoding="utf-8").splitlines()]
    changed = [{**r, "response": "I do not know."} if r["id"] == "q3" else r for r in rows]
    for name, data in (("a", rows), ("b", changed)):
        localeval.evaluate(data, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=tmp_path / name,
                           progress=False, report=False)
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", str(tmp_path / "c.json"),
                "--html", str(tmp_path / "c.html")]) == 0
    out = capsys.readouterr().out
    assert "q3: 1.000 -> 0.000 (-1.000)" in out and "B: I do not know.: 0" in out
    assert json.loads((tmp_path / "c.json").read_text())["moved"]["faithfulness"][0]["id"] == "q3"
    html = (tmp_path / "c.html").read_text()
    assert "Samples that moved most" in html and "<td>q3</td>" in html and "judge's reasons in B" in html
    assert cli(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--moved", "0"]) == 0
    assert "moved most" not in capsys.readouterr().out
