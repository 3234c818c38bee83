"""llama.cpp's real llama-server, built by ``make llama-server`` (``localeval models prepare llama-server``) from the
llama-cpp-python 0.3.36 sdist, run by the llama-cpp engine on the bundled judge's own GGUF (SmolLM2-135M Q4_1).

Every test here is marked ``llamacpp``: the root conftest deselects them unless ``-m`` names the mark, and
``make test-llamacpp`` runs them. One thread a server, so that they share a 2-core machine politely.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="session")
def gguf(models_folder: Path) -> Path:
    from localeval.model_folders.gguf_judge import judge_gguf

    return judge_gguf(None, models_folder)


@pytest.fixture(scope="session")
def built(models_folder: Path) -> Path:
    """The llama-server `localeval models prepare llama-server` built (it must be there: ``make test-llamacpp``
    builds it first)."""
    from localeval.engine.llamacpp.process import built_binary

    binary = built_binary()
    assert binary.is_file(), f"{binary} is missing: run `make llama-server` first"
    return binary


@pytest.fixture(scope="module")
def engine(gguf: Path, built: Path) -> Iterator[Any]:
    """The llama-cpp engine on the bundled judge's GGUF, two slots, one thread."""
    from localeval.engine.llamacpp import LlamaCppEngine

    judge = LlamaCppEngine(gguf, threads=1, parallel=2).connect()
    yield judge
    judge.close()
