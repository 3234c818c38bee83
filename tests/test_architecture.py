"""ARCHITECTURE.md's arrows are import contracts (pyproject.toml, ``[tool.importlinter]``) that ``make check`` runs:
an import that goes up a layer or closes a circle fails them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
pytestmark = pytest.mark.skipif(not LINT.exists(), reason="import-linter is not installed (pip install -e '.[dev]')")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on the package under ``tree``, with the project's own contracts."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tree, env=env,
                          capture_output=True, text=True, check=False)


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "localeval", tmp_path / "localeval", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_the_package_keeps_its_contracts() -> None:
    run = _lint(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_an_upward_import_breaks_the_layers(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    (tree / "localeval" / "data" / "upward.py").write_text("from localeval.api import evaluate\n")
    run = _lint(tree)
    assert run.returncode != 0
    assert "localeval.data is not allowed to import localeval.api" in run.stdout


def test_a_circle_breaks_the_contracts(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    definition = tree / "localeval" / "metrics" / "definition.py"
    definition.write_text(definition.read_text() + "\nfrom localeval.metrics import registry  # noqa: E402\n")
    run = _lint(tree)
    assert run.returncode != 0
    assert "No cycles are allowed in localeval.metrics" in run.stdout


def test_architecture_md_lists_the_contracts_layers() -> None:
    """The layer list in ARCHITECTURE.md is the contract's, line for line."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in config if c["type"] == "layers"]
    text = (ROOT / "ARCHITECTURE.md").read_text()
    block = re.search(r"```text\n# layers, top to bottom\n(.*?)```", text, re.S)
    assert block is not None, "ARCHITECTURE.md lost its layer block"
    assert block.group(1).split("\n")[:-1] == layers


def test_no_module_is_longer_than_one_sitting() -> None:
    """A file does one thing and is short enough to read in one sitting: 300 lines at most."""
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "localeval").rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 300}
    assert not long, long
