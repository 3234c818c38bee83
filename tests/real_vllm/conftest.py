"""The real vLLM engine (the CPU build here) on the bundled judge, started once for the whole directory.

Every test module here is marked ``vllm`` (``pytestmark``): the suite's root conftest deselects them where
vLLM is not installed. The engine runs in float32 with a 2,048-token window, so that its answers can be set beside the
transformers engine's, which runs the bundled judge in float32 too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

WINDOW = 2048


@pytest.fixture(scope="session")
def judge_dir(models_folder: Path) -> Path:
    from localeval.model_folders import DEFAULT_JUDGE

    return models_folder / DEFAULT_JUDGE


@pytest.fixture(scope="session")
def vllm_judge(judge_dir: Path) -> Iterator[Any]:
    """The VLLMEngine on the bundled judge: float32, eager (the CPU default), seeded, no progress bars."""
    from localeval.engine.vllm_engine import VLLMEngine

    engine = VLLMEngine(judge_dir, dtype="float32", max_model_len=WINDOW, seed=0, progress=False)
    yield engine
    engine.close()
