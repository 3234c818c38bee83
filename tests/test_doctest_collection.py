"""localeval's docstring examples are collected by ``--doctest-modules`` over the package (pyproject's addopts):
every module must import where vLLM and Ray are not installed, since both are optional."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# vLLM and Ray made unimportable, as where they are not installed, then the package's doctests collected.
COLLECT = """
import sys
sys.modules["vllm"] = None
sys.modules["ray"] = None
import pytest
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "localeval"]))
"""


@pytest.mark.slow  # a subprocess that imports every module of the package
def test_the_doctests_of_every_module_are_collected_without_vllm_and_ray() -> None:
    done = subprocess.run([sys.executable, "-c", COLLECT], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}
    assert {"localeval/metrics/faithfulness.py", "localeval/prompts/base.py"} <= collected
