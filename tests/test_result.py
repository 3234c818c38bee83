"""One result type for every run: rows held in memory and rows read from a run folder give the same answers,
and the result reads like Ragas' (a frame with the samples' own columns, ``result[metric]``, a one-line repr)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.result import FolderRows, MemoryRows

METRICS = "faithfulness,answer_relevancy,context_precision"
DATA: list[dict[str, Any]] = [
    {"id": "s0", "user_input": "Where does the river Alpha flow?",
     "response": "The river Alpha flows into the northern sea. It is very long.",
     "retrieved_contexts": ["The river Alpha flows into the northern sea.", "Cats sleep a lot."],
     "reference": "The river Alpha flows into the northern sea."},
    {"id": "s1", "user_input": "What colour are ripe bananas?", "response": "I am not sure.",
     "retrieved_contexts": ["Bananas are yellow when ripe."], "reference": "Bananas are yellow when ripe.",
     "answerable": False},
    {"id": "s2", "user_input": "How many bridges does Beta have?", "response": "Beta has four bridges.",
     "retrieved_contexts": ["Beta has four bridges and a harbour."], "reference": "Beta has four bridges."},
]


def script(label: str, data: dict[str, Any], request: Request) -> Any:
    """rule_script, but the judge fails on the statements of the Beta sample (a NaN with a reason)."""
    if label == "statements" and "Beta" in data["answer"]:
        raise RuntimeError("the judge choked")
    return rule_script(label, data, request)


def run(**kwargs: Any) -> localeval.EvaluationResult:
    return localeval.evaluate(DATA, metrics=METRICS, judge=ScriptedEngine(script), embedder=HashEmbedder(),
                              progress=False, report=False, **kwargs)


def test_a_run_in_memory_and_the_same_samples_in_chunks_on_disk_give_the_same_rows_and_summary(
        tmp_path: Path) -> None:
    engine = ScriptedEngine(script)
    one = localeval.evaluate(DATA, metrics=METRICS, judge=engine, embedder=HashEmbedder(), progress=False)
    many = run(chunk_size=1, out=tmp_path / "run")
    assert isinstance(one.source, MemoryRows) and isinstance(many.source, FolderRows)
    assert one.rows() == many.rows() and one.sample_count == many.sample_count == 3
    assert one.summary() == many.summary()
    faith = many.summary()["faithfulness"]
    assert (faith.n, faith.valid, faith.nan_reasons) == (3, 2, {"engine_error": 1})
    assert faith.nan_share == pytest.approx(1 / 3)
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    expected = one.summary_dict()
    assert saved["metrics"] == expected["metrics"] and saved["strata"] == expected["strata"]
    assert saved["strata"]["unanswerable"]["n"] == 1 and saved["strata"]["answerable"]["n"] == 2
    for key in ("samples", "asks", "judge_calls", "prompt_tokens", "completion_tokens"):
        assert saved["total"][key] == expected["total"][key], key
    # three samples fit one chunk: one scheduler run (the failing call is bisected, so more calls than rounds)
    assert one.output.rounds == 2 and one.output.engine_calls == len(engine.calls)
    assert saved["total"]["rounds"] == 3 * one.output.rounds  # a chunk a sample, the same rounds each


@pytest.mark.parametrize("on_disk", [False, True], ids=["in-memory", "run-folder"])
def test_the_frame_holds_each_samples_own_columns_beside_its_scores(tmp_path: Path, on_disk: bool) -> None:
    result = run(out=tmp_path / "run") if on_disk else run()
    frame = result.to_pandas()
    assert list(frame.columns) == [
        "user_input", "retrieved_contexts", "response", "reference", "answerable",
        "faithfulness", "faithfulness__nan_reason", "answer_relevancy", "answer_relevancy__nan_reason",
        "context_precision", "context_precision__nan_reason"]
    assert list(frame.index) == ["s0", "s1", "s2"]
    assert frame.loc["s1", "user_input"] == "What colour are ripe bananas?"
    assert frame.loc["s0", "retrieved_contexts"] == DATA[0]["retrieved_contexts"]
    assert frame.loc["s1", "answerable"] is False and frame.loc["s0", "answerable"] is None  # only s1 sets it
    assert frame.loc["s0", "faithfulness"] == 0.5
    assert math.isnan(frame.loc["s2", "faithfulness"]) and frame.loc["s2", "faithfulness__nan_reason"] == "engine_error"


def test_the_frame_of_a_run_folder_is_the_frame_of_the_same_run_in_memory(tmp_path: Path) -> None:
    assert run(out=tmp_path / "run", chunk_size=2).to_pandas().equals(run().to_pandas())


@pytest.mark.parametrize("on_disk", [False, True], ids=["in-memory", "run-folder"])
def test_indexing_by_metric_gives_its_scores_as_floats_with_nan(tmp_path: Path, on_disk: bool) -> None:
    result = run(out=tmp_path / "run", chunk_size=2) if on_disk else run()
    faith = result["faithfulness"]
    assert faith[:2] == [0.5, 0.0] and math.isnan(faith[2]) and all(isinstance(v, float) for v in faith)
    assert len(result["context_precision"]) == 3
    with pytest.raises(KeyError, match=r"no metric 'context_recall' in this result; the metrics run: "
                                       r"faithfulness, answer_relevancy, context_precision"):
        result["context_recall"]


def test_a_metric_with_options_is_found_as_it_was_asked_for() -> None:
    rows = [{"id": "q", "retrieved_context_ids": ["a", "b", "c"], "reference_context_ids": ["b"]}]
    result = localeval.evaluate(rows, metrics="mrr,ndcg:k=2", progress=False, report=False)
    name = result.metric_names[1]
    assert name != "ndcg:k=2" and result["ndcg:k=2"] == result[name] == [pytest.approx(1 / math.log2(3))]
    assert result["mrr"] == [0.5]


def test_the_repr_is_one_short_line(tmp_path: Path) -> None:
    expected = ("EvaluationResult(3 samples: faithfulness=0.2500 (NaN 33%), answer_relevancy={} (NaN 0%), "
                "context_precision={} (NaN 0%))")
    for result in (run(), run(out=tmp_path / "run", chunk_size=2)):
        means = [f"{sum(result[m]) / 3:.4f}" for m in ("answer_relevancy", "context_precision")]
        assert repr(result) == expected.format(*means)
