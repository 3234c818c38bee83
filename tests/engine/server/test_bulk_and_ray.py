"""The bulk path (chunks written one by one) and Ray replicas take the server engine like any other engine."""

from __future__ import annotations

import json

import pytest

from localeval.api import evaluate
from localeval.config import JudgeOptions
from localeval.embed import HashEmbedder
from localeval.engine.base import Request
from localeval.engine.build import EngineSpec, build_engine
from localeval.engine.options import ServerOptions

DEMO = "examples/rag_demo.jsonl"


def test_a_chunked_run_on_a_server_scores_as_a_whole_one(played, tmp_path) -> None:
    server = played("vllm")
    options = JudgeOptions.server(server.url)
    whole = evaluate(DEMO, metrics="faithfulness,context_precision", embedder=HashEmbedder(), progress=False,
                     judge_options=options)
    chunked = evaluate(DEMO, metrics="faithfulness,context_precision", embedder=HashEmbedder(), progress=False,
                       judge_options=options, chunk_size=2, out=tmp_path / "run")
    assert [json.loads(line)["metrics"] for line in (tmp_path / "run" / "scores.jsonl").read_text().splitlines()] \
        == [row["metrics"] for row in whole.rows()]
    assert chunked.sample_count == 6


def test_the_server_engine_is_built_by_kind_with_its_own_options_and_needs_no_gpu(played) -> None:
    server = played("llamacpp")
    spec = EngineSpec("server", None, {"urls": [server.url], "concurrency": 3})
    assert spec.gpus() == 0.0
    engine = spec()
    assert engine.fingerprint.startswith("server:llamacpp:") and engine.servers[0].concurrency == 3
    assert build_engine(ServerOptions(server_url=[server.url])).fingerprint == engine.fingerprint


@pytest.mark.slow  # a Ray cluster
def test_a_ray_replica_holds_a_server_engine(played, ray_cluster) -> None:
    from localeval.engine.ray_engine import RayEngine

    server = played("vllm")
    engine = RayEngine(1, EngineSpec("server", None, {"urls": [server.url]}))
    try:
        assert engine.fingerprint == "server:vllm:judge:/models/smollm2:0.32.0"
        schema = {"type": "object", "properties": {"verdict": {"type": "integer", "enum": [0, 1]}},
                  "required": ["verdict"]}
        results = engine.generate([Request(messages=(("user", "{}"),), schema=schema)] * 3)
        assert [json.loads(r.choices[0].text) for r in results] == [{"verdict": 0}] * 3
    finally:
        engine.close()
