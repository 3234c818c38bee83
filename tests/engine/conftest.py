"""Shared fixtures for engine tests: the default models, prepared once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def prepared_models() -> Path:
    """``models_dir()`` with both default models built (about 50 s the first time, then instant)."""
    from localeval.models import models_dir, prepare

    prepare()
    return models_dir()


@pytest.fixture(scope="session")
def judge_dir(prepared_models: Path) -> Path:
    from localeval.models import DEFAULT_JUDGE

    return prepared_models / DEFAULT_JUDGE


@pytest.fixture(scope="session")
def judge_engine(judge_dir: Path):
    """The bundled SmolLM2 judge on xgrammar; one thread: on a busy CPU two threads spin for each other."""
    from localeval.engine.transformers_engine import TransformersEngine

    return TransformersEngine(judge_dir, batch_size=4, threads=1)
