"""Fixtures: test documents in a folder, the scripted judge, the fake embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.embed import HashEmbedder
from localeval.engine.scripted import ScriptedEngine

from .fakes import DOCS, handbook_script


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def engine() -> ScriptedEngine:
    return ScriptedEngine(handbook_script)


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()
