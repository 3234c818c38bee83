"""The whole path with the bundled SmolLM2 judge and MiniLM embedder (slow: marked ``model``).

These check plumbing, not judging quality: the 135M judge is too small to judge well.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import jsonschema
import pytest

from localeval import evaluate
from localeval.cli import main
from localeval.engine.base import Request
from localeval.metrics.registry import parse_metrics
from localeval.nan import NAN_REASONS, Nan
from localeval.prompts import NLI, NLIInput
from localeval.prompts.base import DEFAULT_SETTINGS

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[1]
LLM_METRICS = ("context_precision,context_utilization,precision_at_k,context_recall,faithfulness,answer_relevancy,"
               "factual_correctness,noise_sensitivity,noise_sensitivity_irrelevant")


def _demo(n: int) -> list[dict]:
    rows = [json.loads(line) for line in (ROOT / "examples" / "rag_demo.jsonl").read_text().splitlines()]
    return rows[:n]


@pytest.fixture(scope="module")
def offline_run(small_judge, small_embedder, tmp_path_factory, monkeypatch_module):
    """Every LLM metric on two demo samples, with every socket connection made to fail loudly."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"localeval tried to reach the network: {args}")

    monkeypatch_module.setattr(socket.socket, "connect", refuse)
    monkeypatch_module.setattr(socket, "create_connection", refuse)
    out = tmp_path_factory.mktemp("e2e") / "run"
    result = evaluate(_demo(2), metrics=LLM_METRICS, judge=small_judge, embedder=small_embedder, out=out,
                      progress=False)
    return result, out


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def test_all_llm_metrics_run_and_every_answer_parses(offline_run) -> None:
    result, out = offline_run
    assert result.metric_names == [s.name for s in parse_metrics(LLM_METRICS)]
    for name in result.metric_names:
        for value in result.scores(name):
            if isinstance(value, Nan):
                assert value.reason in NAN_REASONS
                assert value.reason != "invalid_output", f"{name}: an answer did not parse"
            else:
                assert -1.0 <= value <= 1.0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"]["engine_calls"] >= 2 and summary["total"]["completion_tokens"] > 0
    assert (out / "report.html").exists()


def test_offline_switches_are_set(offline_run) -> None:
    import os

    assert os.environ.get("HF_HUB_OFFLINE") == "1" and os.environ.get("TRANSFORMERS_OFFLINE") == "1"


def test_same_command_twice_gives_the_same_scores(small_judge, small_embedder, tmp_path) -> None:
    def once(folder: Path) -> list:
        evaluate(_demo(1), metrics="faithfulness,answer_relevancy", judge=small_judge, embedder=small_embedder,
                 out=folder, cache=False, progress=False)
        return [row["metrics"] for row in map(json.loads, (folder / "scores.jsonl").read_text().splitlines())]

    assert once(tmp_path / "a") == once(tmp_path / "b")


def test_hostile_text_still_gets_schema_valid_verdicts(small_judge) -> None:
    rows = [json.loads(line) for line in (ROOT / "tests" / "fixtures" / "hostile.jsonl").read_text().splitlines()]
    requests = []
    for row in rows[:4]:
        inp = NLIInput(context=row["retrieved_contexts"][0], statements=[row["response"], row["clean_response"]])
        requests.append(Request(NLI.messages(inp), NLI.schema(inp, DEFAULT_SETTINGS),
                                NLI.max_tokens(inp, DEFAULT_SETTINGS), label="nli"))
    for request, result in zip(requests, small_judge.generate(requests), strict=True):
        assert result.choices[0].finish_reason == "stop"
        answer = json.loads(result.choices[0].text)
        jsonschema.validate(answer, request.schema)
        assert len(answer["verdicts"]) == 2


def test_readme_demo_command_runs(models_folder, tmp_path, capsys) -> None:
    code = main(["evaluate", str(ROOT / "examples" / "rag_demo.jsonl"), "--metrics", "faithfulness,mrr,ndcg:k=2",
                 "--out", str(tmp_path / "run"), "--no-progress", "--threads", "1"])
    assert code == 0
    printed = capsys.readouterr().out
    assert "faithfulness" in printed and "ndcg(k=2)" in printed and "samples/s" in printed
