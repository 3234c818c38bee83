"""End to end with the bundled small judge and embedder: ``localeval testset examples/docs --size 4`` writes a
test set that loads and that ``localeval.evaluate`` accepts once a RAG system's answers are filled in."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import localeval
from localeval.cli import main
from localeval.data import load_samples
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.model_folders import DEFAULT_EMBEDDER, DEFAULT_JUDGE, models_dir

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]


def test_the_small_judge_writes_a_checked_test_set_that_evaluate_accepts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in (DEFAULT_JUDGE, DEFAULT_EMBEDDER):
        if not (models_dir() / name).is_dir():
            pytest.skip(f"models/{name} is missing: run `localeval models prepare`")
    out = tmp_path / "testset.jsonl"
    # Kept cheap for two CPU cores: the bundled handbook (9 chunks), no free-text reasons, two query styles,
    # one wave, one thread (on a busy CPU two threads spin for each other). A 135M judge writes references
    # its own NLI cannot confirm (with the default checks it keeps none), so the reference check is off
    # here: this test is about the plumbing, not the judge.
    argv = ["testset", str(ROOT / "examples" / "docs"), "--size", "4", "--out", str(out), "--no-reasons",
            "--styles", "well_formed,short", "--min-support", "0", "--max-waves", "1", "--threads", "1",
            "--graph-out", str(tmp_path / "graph.json"), "--no-progress"]
    started = time.perf_counter()
    assert main(argv) == 0
    first_seconds = time.perf_counter() - started
    printed = capsys.readouterr().out
    assert "rejected:" in printed and "response, retrieved_contexts" in printed

    rows = [json.loads(line) for line in out.read_text().splitlines()]
    samples = load_samples(out)
    assert 1 <= len(samples) <= 4 and len(samples) == len(rows)
    graph = json.loads((tmp_path / "graph.json").read_text())
    chunk_ids = {n["id"] for n in graph["nodes"]}
    for row, sample in zip(rows, samples, strict=True):
        assert sample.user_input and sample.reference
        assert row["synthesizer"] in ("single_hop_specific", "multi_hop_abstract", "multi_hop_specific",
                                      "unanswerable")
        assert sample.answerable is (row["synthesizer"] != "unanswerable")
        assert set(sample.reference_context_ids or ()) <= chunk_ids

    # What a user's RAG system adds; then the test set is scored like any data set.
    for row in rows:
        row["response"] = row["reference"]
        row["retrieved_contexts"] = row["reference_contexts"] or ["No passage was retrieved."]
    scored = localeval.evaluate(rows, metrics="faithfulness,context_recall", judge=ScriptedEngine(rule_script),
                                cache=False, progress=False, report=False)
    assert len(scored.scores("faithfulness")) == len(rows)

    # The same command again reuses the graph and the cache: same rows, no new generation.
    started = time.perf_counter()
    assert main(argv) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == [
        {k: v for k, v in r.items() if k not in ("response", "retrieved_contexts")} for r in rows]
    assert "(reused)" in capsys.readouterr().out
    print(f"small judge: first run {first_seconds:.0f} s, cached rerun {time.perf_counter() - started:.0f} s")
