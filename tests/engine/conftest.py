"""Engine-test fixtures, built on the session's models and judge in tests/conftest.py."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
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


@pytest.fixture
def engine_counts() -> Iterator[defaultdict[str, float]]:
    """The transformers engine's steps and tokens, counted from outside while the test runs
    (``benchmarks/speed/engine_profile.py``): a callback during ``generate`` sees the counts so far."""
    from benchmarks.speed.engine_profile import engine_profile

    with engine_profile() as counts:
        yield counts
