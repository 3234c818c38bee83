"""A fresh clone of the committed HEAD, with nothing beside it, collects every test and passes conformance."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # clones the repository and runs pytest in it twice

ROOT = Path(__file__).resolve().parents[1]
VECTORS = Path("tests") / "metrics" / "vectors" / "ragas-0.4.3-vectors.jsonl"


def _git_head() -> str | None:
    """The commit checked out at ROOT, or None when ROOT is not the top of a git checkout."""
    if shutil.which("git") is None:
        return None
    top = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0 or Path(top.stdout.strip()).resolve() != ROOT:
        return None
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    return head.stdout.strip() if head.returncode == 0 else None


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed HEAD cloned into an empty folder: no data, models or venv beside it."""
    head = _git_head()
    if head is None:
        pytest.skip(f"{ROOT} is not a git checkout (or git is not installed): nothing to clone")
    target = tmp_path_factory.mktemp("alone") / "repo"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", "--detach", head], check=True)
    assert sorted(p.name for p in target.parent.iterdir()) == ["repo"]
    return target


def _run_in(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the clone, importing the clone's code (PYTHONPATH=<clone>)."""
    env = {**os.environ, "PYTHONPATH": str(clone)}
    return subprocess.run([sys.executable, *args], cwd=clone, env=env, capture_output=True, text=True, timeout=600)


def test_the_clone_imports_its_own_code(clone: Path) -> None:
    done = _run_in(clone, "-c", "import localeval; print(localeval.__file__)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert Path(done.stdout.strip()).resolve() == (clone / "localeval" / "__init__.py").resolve()


def test_every_test_is_collected_without_error(clone: Path) -> None:
    done = _run_in(clone, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    not_node_ids = [line for line in output.splitlines() if "::" not in line]  # test names may say "error"
    assert not [line for line in not_node_ids if "error" in line.lower()], output[-3000:]
    # "N tests collected", or "N/M tests collected (K deselected)" where vLLM is absent (its tests deselected)
    summary = re.search(r"^(\d+)(?:/\d+)? tests collected( \(\d+ deselected\))? in ", output, re.MULTILINE)
    assert summary is not None, output[-3000:]
    assert int(summary.group(1)) >= 500


def test_all_conformance_cases_pass(clone: Path) -> None:
    cases = sum(1 for line in (clone / VECTORS).read_text().splitlines() if line.strip())
    assert cases == 250
    done = _run_in(clone, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "tests/metrics/test_conformance.py")
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    passed = re.findall(r"^PASSED tests/metrics/test_conformance\.py::test_reproduces_ragas\[", output, re.MULTILINE)
    assert len(passed) == cases, output[-3000:]
    summary = output.strip().splitlines()[-1]
    assert "passed" in summary and not re.search(r"failed|error|skipped", summary), summary
