"""Scale-out on Ray: shards of a round over two scripted replicas on a local CPU cluster give the same
scores as one process, share its cache, and a failing ask sinks only itself."""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import localeval
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.build import EngineSpec
from localeval.engine.ray_engine import RayEngine, shard_bounds
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError

METRICS = ["faithfulness", "context_precision", "answer_relevancy"]


def _rows(n: int = 6) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i}",
            "user_input": f"Where is city {i}?",
            "response": f"City {i} lies on the river Alpha. City {i} has {i} bridges." if i % 3 else "I don't know.",
            "retrieved_contexts": [f"City {i} lies on the river Alpha.", "Bananas are yellow fruit."],
            "reference": f"City {i} lies on the river Alpha.",
        }
        for i in range(n)
    ]


def test_shards_are_contiguous_balanced_and_never_empty() -> None:
    assert shard_bounds([1, 1, 1, 1], 2) == [(0, 2), (2, 4)]
    assert shard_bounds([10, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 2) == [(0, 1), (1, 11)]
    assert shard_bounds([1, 1, 1, 1, 1, 1, 10], 2) == [(0, 6), (6, 7)]
    assert shard_bounds([5, 5], 4) == [(0, 1), (1, 2)]
    assert shard_bounds([100, 1, 1], 3) == [(0, 1), (1, 2), (2, 3)]
    assert shard_bounds([], 3) == []
    bounds = shard_bounds([1.0] * 10, 3)
    assert bounds[0][0] == 0 and bounds[-1][1] == 10 and all(a < b for a, b in bounds)
    assert all(prev[1] == nxt[0] for prev, nxt in itertools.pairwise(bounds))


def test_without_ray_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(LocalevalError, match=r"pip install 'localeval\[ray\]'"):
        RayEngine(2, EngineSpec("scripted"))


def test_a_spec_asks_for_one_gpu_per_vllm_replica(monkeypatch: pytest.MonkeyPatch) -> None:
    import localeval.engine.vllm_engine as vllm_engine

    monkeypatch.setattr(vllm_engine, "vllm_on_cpu", lambda: False)
    assert EngineSpec("vllm", "/models/judge", {"tensor_parallel_size": 2}).gpus() == 2.0
    assert EngineSpec("vllm", "/models/judge").gpus() == 1.0
    monkeypatch.setattr(vllm_engine, "vllm_on_cpu", lambda: True)  # a CPU build: replicas on CPU nodes
    assert EngineSpec("vllm", "/models/judge", {"tensor_parallel_size": 2}).gpus() == 0.0
    assert EngineSpec("scripted").gpus() == 0.0
    with pytest.raises(LocalevalError, match="unknown engine kind"):
        EngineSpec("llamacpp")()


@pytest.mark.slow  # starts a local Ray cluster
def test_two_replicas_score_like_one_process_and_share_its_cache(ray_cluster: Any, tmp_path: Path) -> None:
    engine = RayEngine(2, EngineSpec("scripted"))
    try:
        assert engine.fingerprint == ScriptedEngine(rule_script).fingerprint
        cache = tmp_path / "judge.sqlite"
        rows = _rows()
        spread = localeval.evaluate(
            rows, metrics=METRICS, judge=engine, embedder=HashEmbedder(), cache=cache, progress=False
        )
        single = localeval.evaluate(
            rows, metrics=METRICS, judge=ScriptedEngine(rule_script), embedder=HashEmbedder(), progress=False
        )
        assert spread.to_pandas().equals(single.to_pandas())
        assert spread.rows() == single.rows()  # traces too
        assert engine.shard_sizes and all(len(sizes) == 2 for sizes in engine.shard_sizes)
        assert [sum(sizes) for sizes in engine.shard_sizes] == [len(c) for c in _calls(rows)]
        local = ScriptedEngine(rule_script)
        again = localeval.evaluate(
            rows, metrics=METRICS, judge=local, embedder=HashEmbedder(), cache=cache, progress=False
        )
        assert local.calls == []  # every answer came from the cache the replicas filled
        pd.testing.assert_frame_equal(again.to_pandas(), single.to_pandas(), rtol=1e-6)  # embeddings: float32
    finally:
        engine.close()


def _calls(rows: list[dict[str, Any]]) -> list[list[Request]]:
    engine = ScriptedEngine(rule_script)
    localeval.evaluate(rows, metrics=METRICS, judge=engine, embedder=HashEmbedder(), progress=False)
    return engine.calls


@pytest.mark.slow  # starts a local Ray cluster
def test_a_failing_ask_fails_alone(ray_cluster: Any) -> None:
    def script(label: str, data: dict[str, Any], request: Request) -> Any:
        if label == "statements" and "4 bridges" in data["answer"]:
            raise RuntimeError("the judge choked")
        return rule_script(label, data, request)

    engine = RayEngine(2, functools.partial(ScriptedEngine, script))  # a closure travels by value
    try:
        result = localeval.evaluate(_rows(), metrics="faithfulness", judge=engine, progress=False)
        reasons = {row["id"]: row["metrics"]["faithfulness"]["nan_reason"] for row in result.rows()}
        assert reasons == {"s0": None, "s1": None, "s2": None, "s3": None, "s4": "engine_error", "s5": None}
        assert "the judge choked" in result.rows()[4]["metrics"]["faithfulness"]["trace"]["nan_detail"]
        assert len(engine.shard_sizes[0]) > 2  # the failed shard was split again
    finally:
        engine.close()


@pytest.mark.slow  # starts a local Ray cluster
def test_a_replica_that_cannot_build_its_engine_says_why(ray_cluster: Any) -> None:
    with pytest.raises(LocalevalError, match=r"could not build its engine(.|\n)*localeval\[vllm\]"):
        RayEngine(1, EngineSpec("vllm", "/nowhere/judge"), num_gpus_per_replica=0)  # no vLLM on this node


def _windowed(window: int = 2000) -> EngineSpec:
    """Scripted replicas whose judge holds ``window`` words."""
    return EngineSpec("scripted", options={"context_window": window})


def _river(i: int, context: str) -> dict[str, Any]:
    return {"id": f"r{i}", "user_input": f"Where does river {i} flow?", "response": f"River {i} flows into lake {i}.",
            "retrieved_contexts": [context]}


@pytest.fixture
def windowed(ray_cluster: Any) -> Iterator[RayEngine]:
    """Two scripted replicas with a 2000-word window, closed after the test."""
    engine = RayEngine(2, _windowed())
    yield engine
    engine.close()


@pytest.mark.slow  # starts a local Ray cluster
def test_the_replicas_window_and_token_count_reach_the_driver(windowed: RayEngine) -> None:
    request = Request(messages=(("user", "one two three"),), schema={})
    assert windowed.context_window == 2000
    assert windowed.count_prompt_tokens(request) == ScriptedEngine(rule_script).count_prompt_tokens(request) == 3


@pytest.mark.slow  # starts a local Ray cluster
def test_long_context_error_on_ray_names_sample_and_metric(windowed: RayEngine) -> None:
    rows = [_river(0, "River 0 flows into lake 0."), _river(1, "x " * 50_000)]
    with pytest.raises(LocalevalError, match=r"sample 'r1', faithfulness: .*window is 2000"):
        localeval.evaluate(rows, metrics="faithfulness", judge=windowed, progress=False, long_context="error")


@pytest.mark.slow  # starts a local Ray cluster
def test_long_context_truncate_on_ray_cuts_and_records_it(windowed: RayEngine) -> None:
    long_context = "River 1 flows into lake 1. " + "Filler sentence here. " * 2000
    result = localeval.evaluate([_river(1, long_context)], metrics="faithfulness", judge=windowed,
                                progress=False, long_context="truncate")
    assert result.scores("faithfulness")[0] == 1.0
    cut = result.output.traces["faithfulness"][0]["truncated_inputs"]
    assert cut[0]["field"] == "context" and cut[0]["kept_chars"] < cut[0]["from_chars"] == len(long_context)
    assert windowed.prompt_tokens > 0 and all(sum(sizes) > 0 for sizes in windowed.shard_sizes)
