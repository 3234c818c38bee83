"""The llama-cpp engine against the real llama-server (built from the llama-cpp-python 0.3.36 sdist) on the bundled
judge's GGUF: found as llama.cpp with its window, slots and tokenizer; every prompt's grammar gives compact JSON
that matches its schema; soft verdicts refused for the reason the probe measures; ``--deterministic`` answers
independent of what else is asked; and from the command line: the demo scored, the key nowhere, no server left
after any way a run ends, a server killed mid-run stopping the run with its log kept and the rerun resuming alike.

Run by ``make test-llamacpp``; deselected unless ``-m llamacpp`` names them.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from localeval.api import as_samples
from localeval.embed import HashEmbedder
from localeval.engine.base import Request, Result
from localeval.errors import LocalevalError
from localeval.metrics.registry import METRICS, parse_metrics
from localeval.nan import Nan
from localeval.scheduler import Scheduler
from localeval.store.cache import JudgeCache

pytestmark = pytest.mark.llamacpp

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "rag_demo.jsonl"
RAG_METRICS = [name for name, d in METRICS.items() if d.judge and set(d.required) <= set(
    json.loads(DEMO.read_text().splitlines()[0]))]



def test_the_server_is_found_as_llamacpp_with_its_window_slots_tokenizer_and_build(engine: Any, gguf: Path) -> None:
    identity = engine.identity
    assert (identity.kind, identity.window, identity.slots, identity.tokenizer) == ("llamacpp", 8192, 2, "template")
    assert engine.notes == []  # a tokenizer, a window and compact JSON: nothing to warn of
    sha = hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert engine.fingerprint == (f"llama-cpp:{gguf.name}:sha256={sha[:16]}:MOSTLY_Q4_1:{engine.build}:threads1:slots2")
    assert engine.build.endswith(".0c1e570")  # the llama.cpp commit the sdist vendors
    assert not engine.invariance.batch_invariant


def test_every_prompt_kind_decodes_to_compact_json_that_matches_its_schema(engine: Any, recording: Any) -> None:
    answered = recording(engine)
    out = Scheduler(engine, HashEmbedder(), progress=False).run(as_samples(DEMO)[:3], parse_metrics(RAG_METRICS))
    assert len({q.label for q, _ in answered}) >= 8  # the demo's prompt kinds
    finished = 0
    for request, result in answered:
        assert result.error is None
        for choice in result.choices:
            if choice.finish_reason == "stop":
                value = json.loads(choice.text)
                jsonschema.validate(value, request.schema)
                assert choice.text == json.dumps(value, separators=(",", ":"), ensure_ascii=False)
                finished += 1
    assert finished >= 0.9 * sum(len(r.choices) for _, r in answered)
    for name, outcomes in out.outcomes.items():
        assert Nan("invalid_output") not in outcomes and Nan("engine_error") not in outcomes, name


def test_prompt_tokens_near_the_window_come_from_the_servers_template_and_tokenizer(engine: Any) -> None:
    request = Request(messages=(("system", "Answer 1."), ("user", "Count me. " * 40)),
                      schema={"type": "integer", "enum": [1]}, max_tokens=4)
    counted = engine.counter._count(request.messages)  # what an ask near the window is measured by
    result = engine.generate([request])[0]
    assert result.choices[0].text == "1" and counted == result.prompt_tokens > 80 and engine.counter.counted >= 1


def test_soft_verdicts_are_refused_with_the_reason_the_probe_measures(engine: Any) -> None:
    with pytest.raises(LocalevalError, match=r"reports log-probabilities taken before its grammar's mask"):
        engine.require_soft()


def test_deterministic_answers_do_not_depend_on_what_else_is_asked(gguf: Path, built: Path, recording: Any) -> None:
    from localeval.engine.llamacpp import LlamaCppEngine

    answered: list[tuple[Request, Result]] = []
    batched = LlamaCppEngine(gguf, threads=1, parallel=2).connect()
    try:
        answered = recording(batched)
        Scheduler(batched, HashEmbedder(), progress=False).run(as_samples(DEMO)[:2], parse_metrics(
            ["faithfulness", "context_precision"]))
    finally:
        batched.close()
    asks = [q for q, _ in answered][:12]
    alone = LlamaCppEngine(gguf, threads=1, deterministic=True).connect()
    try:
        assert alone.invariance.batch_invariant and alone.fingerprint.endswith(":alone")
        together = [r.choices[0].text for r in alone.generate(asks)]
        reversed_ = [r.choices[0].text for r in alone.generate(asks[::-1])][::-1]
        one_by_one = [alone.generate([q])[0].choices[0].text for q in asks[:4]]
    finally:
        alone.close()
    assert together == reversed_ and together[:4] == one_by_one


def _command(data: Path, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "localeval", "evaluate", str(data), "--out", str(out), "--engine", "llama-cpp",
            "--threads", "1", *more]


def _servers_of(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid), "-f", "llama-server"], capture_output=True, text=True)
    return [int(p) for p in found.stdout.split()]


def _gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if "\nState:\tZ" in Path(f"/proc/{pid}/status").read_text():
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


def _kept(cache: Path) -> int:
    if not cache.exists():
        return 0
    with JudgeCache(cache) as store:
        return int(store.stats()["answers"])


def test_the_demo_is_scored_from_the_command_line_with_no_server_log_or_key_left(tmp_path: Path, built: Path,
                                                                               gguf: Path) -> None:
    out = tmp_path / "run"  # the README's command: --judge the bundled judge's GGUF file
    run = subprocess.Popen(_command(DEMO, out, "--judge", str(gguf)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    servers: list[int] = []
    deadline = time.monotonic() + 60
    while not servers and run.poll() is None and time.monotonic() < deadline:
        servers = _servers_of(run.pid)
        time.sleep(0.05)
    key = ""
    if servers:
        environ = Path(f"/proc/{servers[0]}/environ").read_bytes().split(b"\0")
        key = next(v for v in environ if v.startswith(b"LLAMA_API_KEY=")).split(b"=", 1)[1].decode()
        assert key.encode() not in Path(f"/proc/{servers[0]}/cmdline").read_bytes()
    stdout, stderr = run.communicate(timeout=900)
    assert run.returncode == 0, stderr[-3000:]
    assert "note: the bundled toy judge (smollm2-135m-instruct) scored this run" in stdout  # its GGUF is the toy too
    assert servers and key and all(_gone(p) for p in servers)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["judge"].startswith("llama-cpp:SmolLM2-135M-Instruct.Q4_1.gguf:sha256=")
    for metric, stats in summary["metrics"].items():
        assert stats["nan_reasons"].get("invalid_output", 0) == 0 and stats["nan_reasons"].get(
            "engine_error", 0) == 0, metric
    assert not (out / "llama-server.log").exists()
    files = b"".join(p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file())
    assert key.encode() not in files


@pytest.mark.parametrize(("how", "when"), [(signal.SIGKILL, "loading"), (signal.SIGTERM, "loading"),
                                           (signal.SIGINT, "scoring"), (signal.SIGTERM, "scoring"),
                                           (signal.SIGKILL, "scoring")])
def test_no_server_outlives_a_run_however_it_is_stopped(how: signal.Signals, when: str, tmp_path: Path,
                                                        built: Path, interruptible: Any) -> None:
    out = tmp_path / "run"
    run = subprocess.Popen(_command(DEMO, out, "--metrics", "faithfulness"), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True, preexec_fn=interruptible)
    servers: list[int] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and run.poll() is None:
        servers = servers or _servers_of(run.pid)
        if servers and (when == "loading" or _kept(out / "judge.sqlite") > 0):
            break
        time.sleep(0.05)
    assert servers and run.poll() is None, run.stderr.read() if run.stderr else ""
    run.send_signal(how)
    _, stderr = run.communicate(timeout=60)
    assert all(_gone(p) for p in servers), f"llama-server outlived a run stopped by {how.name} while {when}"
    if how != signal.SIGKILL:
        assert run.returncode == 130 and "Traceback" not in stderr, stderr[-3000:]


def test_a_server_killed_mid_run_stops_it_with_its_log_kept_and_the_rerun_resumes_alike(tmp_path: Path,
                                                                                        built: Path) -> None:
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(DEMO.read_text().splitlines(keepends=True)[:3]))
    more = ("--metrics", "faithfulness", "--deterministic")
    reference = subprocess.run(_command(data, tmp_path / "reference", *more), capture_output=True, text=True,
                               timeout=900)
    assert reference.returncode == 0, reference.stderr[-3000:]
    out = tmp_path / "run"
    run = subprocess.Popen(_command(data, out, *more), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while run.poll() is None and _kept(out / "judge.sqlite") < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # round 1 kept (its 3 statement lists): round 2 is in flight
    servers = _servers_of(run.pid)
    assert servers and run.poll() is None
    os.kill(servers[0], signal.SIGKILL)
    _, stderr = run.communicate(timeout=300)
    assert run.returncode == 1, stderr[-3000:]
    assert "llama-server was killed by SIGKILL" in stderr and "Traceback" not in stderr, stderr[-3000:]
    assert f"its log is kept at {out / 'llama-server.log'}" in stderr and (out / "llama-server.log").is_file()
    resumed = subprocess.run(_command(data, out, *more), capture_output=True, text=True, timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert (out / "scores.jsonl").read_text() == (tmp_path / "reference" / "scores.jsonl").read_text()
