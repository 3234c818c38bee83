"""Fixtures shared by the whole suite: the bundled models, prepared once per session."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray cluster of two CPUs for one test module (the Ray and bulk-on-Ray tests)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A Python file here other than ``test_*.py`` and ``conftest.py`` holds no tests: it is a helper a test imports
    or a script a test runs (some need packages only their own venv has). ``--doctest-modules``, on for
    localeval's docstring examples, would import it as a module to search: it is left out instead."""
    if collection_path.suffix == ".py" and not collection_path.name.startswith("test_"):
        return collection_path.name != "conftest.py"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``qwen`` (the 1.5B judge, minutes) or ``llamacpp`` (a real llama-server, built by ``make
    llama-server``) run only when ``-m`` names them (``make test-qwen``, ``make test-llamacpp``).
    Tests marked ``vllm`` run the real vLLM engine: where vLLM is not installed they are deselected, and
    the header says so (``make test-vllm`` builds the vLLM-on-CPU venv and runs them)."""
    import importlib.util

    for opt_in in ("qwen", "llamacpp"):
        if opt_in not in (config.option.markexpr or ""):
            named = [item for item in items if item.get_closest_marker(opt_in)]
            if named:
                config.hook.pytest_deselected(items=named)
                items[:] = [item for item in items if not item.get_closest_marker(opt_in)]

    if importlib.util.find_spec("vllm") is not None:
        return
    real_vllm = [item for item in items if item.get_closest_marker("vllm")]
    if real_vllm:
        config.hook.pytest_deselected(items=real_vllm)
        items[:] = [item for item in items if not item.get_closest_marker("vllm")]


def pytest_report_header(config: pytest.Config) -> str | None:
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed here: tests marked vllm are deselected (make test-vllm runs them)"
    return None


Recorded = list[tuple[Any, Any]]


def _record(engine: Any) -> Recorded:
    """Each (request, result) ``engine`` answers from now on, in order (its ``generate`` wrapped in place)."""
    answered: Recorded = []
    generate = engine.generate

    def recorded(requests: list[Any], on_result: Callable[[int, Any], None] | None = None) -> list[Any]:
        results = generate(requests, on_result)
        answered.extend(zip(requests, results, strict=True))
        return list(results)

    engine.generate = recorded
    return answered


@pytest.fixture(scope="session")
def recording() -> Callable[[Any], Recorded]:
    """``recording(engine)``: the list each later (request, result) of ``engine`` is appended to (the live server
    tests read every ask and answer of a run from it)."""
    return _record


def _interruptible() -> None:
    """Run in a child before exec: SIGINT back to its default, so the child's Python turns it into
    KeyboardInterrupt even where this test run was started with SIGINT ignored (nohup, a background job)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="session")
def interruptible() -> Callable[[], None]:
    """A ``preexec_fn`` for the processes a test stops with SIGINT."""
    return _interruptible
