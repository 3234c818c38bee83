"""Every benchmark script runs end to end with the scripted judge (no model) and writes its JSON."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(module: str, *args: str) -> str:
    """``python -m benchmarks.MODULE --engine scripted ARGS`` from the repository root, as the README runs it."""
    done = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", "--engine", "scripted", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow  # runs the script in a subprocess
def test_agreement_and_judge_settings(tmp_path):
    out = _run("quality.agreement", "--limit", "2", "--votes", "3", "--out", str(tmp_path / "a.json"))
    assert "ff.csv" in out and "cr.csv" in out
    data = json.loads((tmp_path / "a.json").read_text())
    assert data["settings"]["votes"] == 3 and [f["pairs"] for f in data["files"]] == [2, 2, 2]
    assert data["partial"] is False
    out = _run("quality.judge_settings", "--limit", "2", "--only", "1,2", "--out", str(tmp_path / "s.json"))
    rows = json.loads((tmp_path / "s.json").read_text())["settings"]
    assert [r["name"] for r in rows] == ["default (reasons, all examples, greedy)", "no reasons"]
    assert rows[1]["settings"]["reasons"] is False
    _run("quality.agreement", "--limit", "3", "--out", str(tmp_path / "full.json"))  # the default, on more pairs
    _run("quality.judge_settings", "--limit", "2", "--only", "1,2", "--default-from", str(tmp_path / "full.json"),
         "--out", str(tmp_path / "r.json"))
    reused = json.loads((tmp_path / "r.json").read_text())["settings"]
    assert reused[0]["from"] == str(tmp_path / "full.json")
    assert [f["accuracy"] for f in reused[0]["files"]] == [f["accuracy"] for f in rows[0]["files"]]
    assert [f["pairs"] for f in reused[0]["files"]] == [2, 2, 2] and len(reused) == 2


@pytest.mark.slow  # runs the script in a subprocess
def test_scaling(tmp_path):
    out = _run("speed.scaling", "--sizes", "2,4", "--top-k", "1,2", "--out", str(tmp_path / "s.json"))
    assert "samples/s" in out
    data = json.loads((tmp_path / "s.json").read_text())
    assert all(isinstance(c["nan_reasons"], dict) for c in data["cells"])
    assert data["partial"] is False and [(c["n"], c["top_k"]) for c in data["cells"]] == [(2, 1), (4, 1), (2, 2),
                                                                                          (4, 2)]
    calls = {(c["n"], c["top_k"]): c["judge_calls"] for c in data["cells"]}
    assert calls[(4, 1)] > calls[(2, 1)] and calls[(2, 2)] > calls[(2, 1)]  # more samples, more chunks: more asks


@pytest.mark.slow  # runs the script in a subprocess
def test_speed_vs_ragas_reuses_a_ragas_result_only_for_the_same_samples(tmp_path):
    from benchmarks.harness.clapnq import build_samples, write_jsonl

    samples = write_jsonl(build_samples(2, seed=0, top_k=2, wrong_share=0.3), tmp_path / "samples.jsonl")
    metric = {"ragas_class": "Faithfulness", "values": [None, None], "scored": 2, "valid": 0, "mean": None,
              "nan_count": 2, "nan_share": 1.0, "nan_reasons": {"parse_error": 2}, "calls": 2,
              "prompt_tokens": 100, "completion_tokens": 50, "seconds": 40.0}
    ragas = {"system": "ragas 0.4.3", "samples": 2, "samples_done": 2, "finished": True, "stopped": None,
             "samples_sha256": hashlib.sha256(samples.read_bytes()).hexdigest(), "load_seconds": 1.0,
             "wall_seconds": 40.0, "samples_per_second": 0.05, "judge_calls": 12, "prompt_tokens": 600,
             "completion_tokens": 300, "metrics": {"faithfulness": metric}}
    (tmp_path / "ragas.json").write_text(json.dumps(ragas))
    args = ["--n", "2", "--top-k", "2", "--ragas-result", str(tmp_path / "ragas.json"),
            "--run-dir", str(tmp_path / "run"), "--out", str(tmp_path / "speed.json")]
    out = _run("speed.speed_vs_ragas", *args)
    assert "localeval / Ragas" in out
    result = json.loads((tmp_path / "speed.json").read_text())
    assert result["ragas"]["reused_from"] == str(tmp_path / "ragas.json")
    assert result["ratio_localeval_over_ragas"]["judge_calls"] == pytest.approx(
        result["localeval"]["judge_calls"] / 12, rel=1e-3)
    other = subprocess.run([sys.executable, "-m", "benchmarks.speed.speed_vs_ragas", "--engine", "scripted",
                            *args[:2], "--top-k", "3", *args[4:]], capture_output=True, text=True, cwd=ROOT)
    assert other.returncode != 0 and "measured on other samples" in other.stderr
    assert "== localeval" not in other.stdout  # stopped before localeval's side ran, not after


def test_judge_settings_takes_the_default_row_only_from_a_whole_run_from_the_first_question(tmp_path):
    from benchmarks.quality.judge_settings import _finished, default_row

    path = tmp_path / "agreement.json"
    assert not _finished(path)  # not there yet
    path.write_text('{"partial": tr')  # caught while being written
    assert not _finished(path)
    row = {"file": "ff.csv", "pairs": 2, "scores": [[1.0, 0.0], [0.5, 0.5]], "judge_calls": 4,
           "completion_tokens": 100, "wall_seconds": 10.0}
    data = {"partial": True, "settings": {"reasons": True, "max_examples": None, "votes": 1}, "files": [row]}
    path.write_text(json.dumps(data))
    assert not _finished(path)
    path.write_text(json.dumps({**data, "partial": False}))
    assert _finished(path)
    default = default_row([path], limit=2)
    assert default["files"][0]["accuracy"] == 0.75 and default["files"][0]["judge_calls"] == 4
    path.write_text(json.dumps({**data, "partial": False, "settings": {**data["settings"], "offset": 25}}))
    with pytest.raises(SystemExit, match="question 25"):
        default_row([path], limit=2)
