"""Fixtures shared by the whole suite: the bundled models, prepared once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def models_folder() -> Path:
    """``models_dir()`` with both default models built (about 50 s the first time, then instant)."""
    from localeval.model_folders import models_dir, prepare

    prepare()
    return models_dir()


@pytest.fixture(scope="session")
def small_judge(models_folder: Path):
    """The bundled SmolLM2 judge, loaded once per session; batches of 4, one thread (two spin on a busy CPU)."""
    from localeval.engine.transformers import TransformersEngine
    from localeval.model_folders import DEFAULT_JUDGE

    return TransformersEngine(models_folder / DEFAULT_JUDGE, batch_size=4, threads=1)


@pytest.fixture(scope="session")
def small_embedder(models_folder: Path):
    """The bundled MiniLM embedder, loaded once per session."""
    from localeval.embed import SentenceTransformerEmbedder
    from localeval.model_folders import DEFAULT_EMBEDDER

    return SentenceTransformerEmbedder(models_folder / DEFAULT_EMBEDDER)
