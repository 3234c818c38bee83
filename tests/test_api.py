"""The Python API end to end with the scripted judge: run folder, summary, pandas, bad data."""

from __future__ import annotations

import json
import math

import pytest

import localeval
from localeval.data import DataError
from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.scheduler import total_usage

ROWS = [
    {
        "id": "a",
        "question": "Where does the river Alpha flow?",
        "answer": "The river Alpha flows into the northern sea. It is very long.",
        "contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
        "ground_truth": "The river Alpha flows into the northern sea.",
    },
    {
        "id": "b",
        "question": "What colour are bananas?",
        "answer": "I don't know.",
        "contexts": ["Bananas are yellow when ripe."],
        "ground_truth": "Bananas are yellow when ripe.",
    },
]


def test_evaluate_writes_a_run_folder(tmp_path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    result = localeval.evaluate(
        data,
        metrics=["faithfulness", "context_precision", "answer_relevancy", "factual_correctness:mode=precision"],
        judge=ScriptedEngine(rule_script),
        embedder=HashEmbedder(),
        out=tmp_path / "run",
        progress=False,
    )
    rows = [json.loads(line) for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    faith = rows[0]["metrics"]["faithfulness"]
    assert faith["value"] == 0.5 and faith["nan_reason"] is None
    assert faith["trace"]["verdicts"] == [1, 0]
    assert rows[1]["metrics"]["answer_relevancy"]["value"] == 0.0  # noncommittal
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["valid"] == 2
    assert summary["total"]["samples"] == 2 and summary["total"]["engine_calls"] >= 1
    assert (tmp_path / "run" / "judge.sqlite").exists()
    frame = result.to_pandas()
    assert list(frame.index) == ["a", "b"]
    assert frame.loc["a", "faithfulness"] == 0.5
    assert "factual_correctness(mode=precision)" in result.summary()
    table = result.table()
    assert "faithfulness" in table and "samples/s" in table
    usage = table.split("\n\n")[1].splitlines()
    header, rows, last = usage[0], usage[2:-1], usage[-1]
    assert header.split() == ["metric", "asks", "calls", "cached", "prompt", "tok", "compl", "tok", "engine", "s"]
    assert [r.split()[0] for r in rows] == [*result.usage(), "total"]  # full names, none cut
    total = total_usage(result.usage())
    assert rows[-1].split()[1:] == [str(total.asks), str(total.judge_calls), str(total.cache_hits),
                                    str(total.prompt_tokens), str(total.completion_tokens),
                                    f"{total.engine_seconds:.1f}"]
    assert all(len(r) == len(header) for r in rows)  # numbers align right, to the header's end
    assert last.startswith("2 samples in ") and "samples/s)" in last and last.endswith(" engine calls")


def test_nan_is_reported_with_its_reason(tmp_path) -> None:
    def script(label, data, request):
        if label == "statements" and data["answer"] == "I don't know.":
            return {"statements": []}
        return rule_script(label, data, request)

    result = localeval.evaluate(ROWS, metrics="faithfulness", judge=ScriptedEngine(script), progress=False)
    frame = result.to_pandas()
    assert math.isnan(frame.loc["b", "faithfulness"])
    assert frame.loc["b", "faithfulness__nan_reason"] == "no_statements"
    s = result.summary()["faithfulness"]
    assert s.nan_reasons == {"no_statements": 1} and s.valid == 1


def test_bad_rows_fail_before_any_model_is_loaded(monkeypatch) -> None:
    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before the data was checked")

    monkeypatch.setattr("localeval.run.models.load_judge", no_model)
    monkeypatch.setattr("localeval.run.models.load_embedder", no_model)
    rows = [dict(ROWS[0]), {**ROWS[1], "ground_truth": None}, {**ROWS[0], "id": "c", "contexts": []}]
    with pytest.raises(DataError) as caught:
        localeval.evaluate(rows, metrics="context_recall,faithfulness")
    message = str(caught.value)
    assert "row 2" in message and "reference" in message and "context_recall" in message
    assert "row 3" in message and "retrieved_contexts" in message


def test_scripted_judge_is_deterministic() -> None:
    def run():
        return localeval.evaluate(ROWS, metrics="faithfulness,context_recall",
                                  judge=ScriptedEngine(rule_script), progress=False).rows()

    assert run() == run()
