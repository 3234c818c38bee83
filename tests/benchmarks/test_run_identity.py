"""benchmarks/identity/run_identity.py: two runs of the same samples compared sample by sample."""

from __future__ import annotations

import json
from pathlib import Path

import benchmarks.identity.run_identity as ri


def _run(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir()
    (folder / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _faith(value, statements, verdicts):
    return {"value": value, "nan_reason": None if value is not None else "truncated",
            "trace": {"statements": statements, "verdicts": verdicts, "reasons": ["r"] * len(verdicts)}}


def test_scores_and_verdict_traces_are_compared_sample_by_sample(tmp_path, capsys):
    a = _run(tmp_path / "a", [
        {"id": "1", "metrics": {"faithfulness": _faith(0.5, ["x", "y"], [1, 0])}},
        {"id": "2", "metrics": {"faithfulness": _faith(1.0, ["x", "x"], [1, 1])}},
        {"id": "3", "metrics": {"faithfulness": _faith(None, [], [])}},
    ])
    b = _run(tmp_path / "b", [  # sample 1 reworded but judged alike; sample 2 cut; sample 3 NaN again
        {"id": "1", "metrics": {"faithfulness": _faith(0.5, ["x.", "y"], [1, 0])}},
        {"id": "2", "metrics": {"faithfulness": _faith(0.0, ["x"], [0])}},
        {"id": "3", "metrics": {"faithfulness": _faith(None, [], [])}},
    ])
    out = tmp_path / "out.json"
    assert ri.main([str(a), str(b), "--json", str(out)]) == 0
    m = json.loads(out.read_text())["metrics"]["faithfulness"]
    assert m["identical_scores"] == 2 and m["identical_verdict_traces"] == 2 and m["samples"] == 3
    assert m["mean_abs_difference"] == 0.5 and m["mean_a"] == 0.75 and m["mean_b"] == 0.25
    assert "2/3" in capsys.readouterr().out


def test_noise_sensitivity_verdicts_count_and_its_statements_do_not():
    trace = {"response_statements": ["a"], "reference_statements": ["b"], "response_by_context": [[1], [0]],
             "reference_by_context": [[1]], "response_in_reference": [1]}
    assert ri.verdict_trace(trace) == [[[1]], [[1], [0]], [1]]  # by key: reference_by_context first


def test_nli_verdicts_are_counted_per_position_and_per_distinct_statement():
    def run(verdicts, by_context):
        return {"1": {"faithfulness": _faith(0.5, ["x", "y", "x", "x"], verdicts),
                      "noise_sensitivity": {"value": 0.0, "trace": {
                          "response_statements": ["p", "p"], "reference_statements": ["q"],
                          "response_by_context": by_context, "reference_by_context": [[1]],
                          "response_in_reference": [1, 1]}}},
                "2": {"faithfulness": _faith(1.0, ["z"], [1])}}

    a = run([0, 1, 1, 1], [[1, 1], [0, 0]])
    b = run([0, 1, 0, 0], [[1, 0], [0, 0]])
    b["2"]["faithfulness"] = _faith(0.0, ["z."], [0])  # another statement list: not compared
    got = ri.item_verdicts(a, b)
    # faithfulness 4 positions (2 identical; firsts x, y both identical), noise sensitivity 2 + 2 + 1 + 2
    assert got == {"positions": 11, "identical": 8, "first_occurrences": 6, "identical_first": 6}
