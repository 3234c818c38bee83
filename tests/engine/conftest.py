"""Engine-test fixtures, built on the session's models and judge in tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def judge_dir(models_folder: Path) -> Path:
    """The bundled judge's folder."""
    from localeval.model_folders import DEFAULT_JUDGE

    return models_folder / DEFAULT_JUDGE


@pytest.fixture(scope="session")
def judge_engine(small_judge):
    """The session's one loaded judge (``small_judge``), under the name the engine tests use."""
    return small_judge
