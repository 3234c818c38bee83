"""The same ask gets the same answer whatever shares its batch: the bundled judge, whole `localeval evaluate`
processes, in the CPU's default dtype and in float32; and the 1.5B judge (`models prepare
qwen2.5-coder-1.5b-instruct`, opt in with `-m qwen`) in the CPU's default dtype.

Faithfulness of the demo samples is scored alone, beside three other metrics, on the samples in reverse
order, in chunks of 3, and killed mid-run then resumed; every verdict, reason and score must be the same.
Context precision and response relevancy (seeded sampled questions) are compared between two of those
runs as well, and `localeval compare` of two runs of the same data must find no difference and nothing to warn of.
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

import pytest

pytestmark = [pytest.mark.model, pytest.mark.slow]

DEMO = Path(__file__).resolve().parents[1] / "examples" / "rag_demo.jsonl"
OTHERS = "context_precision,answer_relevancy,context_recall"


QWEN = "qwen2.5-coder-1.5b-instruct"


def _command(data: Path, out: Path, metrics: str, dtype: str | None, *extra: str) -> list[str]:
    """``dtype`` is a dtype, None (the CPU's default) or ``judge=NAME`` (that judge in the CPU's default dtype)."""
    command = [sys.executable, "-m", "localeval", "evaluate", str(data), "--metrics", metrics, "--out", str(out),
               "--threads", "1", "--no-progress", *extra]
    if dtype and dtype.startswith("judge="):
        return [*command, "--judge", dtype.removeprefix("judge=")]
    return command + (["--dtype", dtype] if dtype else [])


def _evaluate(*args: object, **kwargs: object) -> Path:
    command = _command(*args, **kwargs)  # type: ignore[arg-type]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(command[command.index("--out") + 1])


def _answers(cache: Path) -> int:
    try:
        with sqlite3.connect(f"file:{cache}?mode=ro", uri=True, timeout=1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])
    except sqlite3.Error:
        return 0


def _killed_and_resumed(data: Path, out: Path, dtype: str | None) -> Path:
    """The run killed (SIGKILL) once a few answers are in its cache, then the same command again."""
    command = _command(data, out, "faithfulness", dtype)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while _answers(out / "judge.sqlite") < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = _answers(out / "judge.sqlite")
    assert 3 <= kept < 12, kept  # 12 asks: 6 statement lists, 6 verdict lists
    return _evaluate(data, out, "faithfulness", dtype)


def _by_id(run: Path, metric: str) -> dict[str, object]:
    rows = [json.loads(line) for line in (run / "scores.jsonl").read_text().splitlines()]
    return {row["id"]: row["metrics"][metric] for row in rows}


def _dtypes() -> list[object]:
    """The CPU's default dtype and float32: once where the default is float32 (a CPU without bfloat16
    dot products), the same runs twice otherwise; then the 1.5B judge in the CPU's default dtype."""
    from localeval.engine.transformers.loading import cpu_default_dtype

    bundled = [None] if str(cpu_default_dtype()) == "torch.float32" else [None, "float32"]
    return [*bundled, pytest.param(f"judge={QWEN}", marks=pytest.mark.qwen, id="qwen-cpu-default")]


@pytest.mark.parametrize("dtype", _dtypes(), ids=lambda d: d or "cpu-default")
def test_every_verdict_and_score_is_the_same_whatever_shares_the_batch(dtype: str | None, models_folder: Path,
                                                                      tmp_path: Path) -> None:
    reversed_data = tmp_path / "reversed.jsonl"
    reversed_data.write_text("".join(reversed(DEMO.read_text().splitlines(keepends=True))))
    alone = _evaluate(DEMO, tmp_path / "alone", "faithfulness", dtype)
    crowded = _evaluate(DEMO, tmp_path / "crowded", f"faithfulness,{OTHERS}", dtype)
    backwards = _evaluate(reversed_data, tmp_path / "backwards", "faithfulness", dtype)
    chunked = _evaluate(DEMO, tmp_path / "chunked", "faithfulness,context_precision,answer_relevancy", dtype,
                        "--chunk-size", "3")
    resumed = _killed_and_resumed(DEMO, tmp_path / "resumed", dtype)

    expected = _by_id(alone, "faithfulness")
    assert len(expected) == 6 and all(score["value"] is not None for score in expected.values())
    assert any(score["trace"]["verdicts"] for score in expected.values())
    for run in (crowded, backwards, chunked, resumed):
        assert _by_id(run, "faithfulness") == expected, run.name  # values, statements, verdicts, reasons
    for metric in ("context_precision", "answer_relevancy"):  # the latter's questions are seeded samples
        assert _by_id(chunked, metric) == _by_id(crowded, metric), metric
    for run in (alone, crowded, backwards, chunked, resumed):  # the fingerprint and the record agree
        record = json.loads((run / "summary.json").read_text())["run"]
        assert record["invariance"]["batch_invariant"] is True, record["invariance"]
        assert record["judge"].split(":")[3:4] == ["invariant"], record["judge"]

    compared = tmp_path / "compare.json"
    done = subprocess.run([sys.executable, "-m", "localeval", "compare", str(alone), str(backwards), "--json",
                           str(compared)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Warnings" not in done.stdout  # same judge, settings and invariance: nothing to warn of
    (row,) = json.loads(compared.read_text())["metrics"]
    assert row["metric"] == "faithfulness" and row["diff"] == 0 and row["paired"] == 6
    assert row["verdict"].startswith("too few pairs")  # 6 demo samples, below compare's minimum for a verdict


def test_a_judge_whose_kernel_check_fails_is_called_invariant_nowhere(models_folder: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the load-time measurement fails, the engine, its fingerprint (part of every cache key) and the run's
    record all say the answers are not batch-invariant, and `compare` warns of it."""
    import localeval
    import localeval.engine.transformers.row_blocks as row_blocks
    from localeval.engine.transformers import TransformersEngine
    from localeval.model_folders import DEFAULT_JUDGE

    monkeypatch.setattr(row_blocks, "_PLANS", {})  # measured afresh in this process, and failing
    monkeypatch.setattr(row_blocks, "plan_rows", lambda weight, bias, seed=0: row_blocks.RowPlan(failure="a fault"))
    engine = TransformersEngine(models_folder / DEFAULT_JUDGE, threads=1)
    assert not engine.invariance.batch_invariant and "a fault" in engine.invariance.note
    assert ":invariant" not in engine.fingerprint
    samples = [json.loads(line) for line in DEMO.read_text().splitlines()[:2]]
    for name in ("a", "b"):
        localeval.evaluate(samples, ["faithfulness"], engine, out=tmp_path / name, progress=False, report=False)
        record = json.loads((tmp_path / name / "summary.json").read_text())["run"]
        assert record["invariance"]["batch_invariant"] is False and "a fault" in record["invariance"]["note"]
        assert record["judge"] == engine.fingerprint
    done = subprocess.run([sys.executable, "-m", "localeval", "compare", str(tmp_path / "a"), str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Warnings" in done.stdout and "batch-invariant" in done.stdout, done.stdout
