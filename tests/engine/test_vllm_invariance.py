"""--deterministic on the vLLM engine against a fake ``vllm`` (no GPU): the batch-invariant mode switched on where
the installed vLLM and the GPU have it, a plain error before the model loads where not, what each engine says
of its batch invariance, and a cache key per mode; an engine process gone is a JudgeDied."""

from __future__ import annotations

import os
import queue
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from test_vllm_engine import FakeLLM, fake_vllm_module

from localeval.engine import vllm_invariance, vllm_process
from localeval.engine.base import Invariance, Request, invariance_of
from localeval.engine.build import build_engine
from localeval.engine.options import TransformersOptions
from localeval.engine.ray_engine import _together
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.engine.vllm_engine import VLLMEngine
from localeval.errors import JudgeDied, LocalevalError

MODE = ("model_executor", "determinism", "batch_invariant.py")  # where vLLM 0.32 keeps the mode's kernels


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A fake ``vllm`` (no GPU) that spells structured outputs as vLLM 0.10.2 and later do."""
    module, sampling = fake_vllm_module("structured_outputs")
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", sampling)
    return module


def _machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *, cpu: bool = False, cuda: bool = True,
             capability: tuple[int, int] = (9, 0), home: tuple[str, ...] | None = MODE) -> None:
    """The fake vllm as a package on disk (with the mode's kernels at ``home``), on a CPU build or a GPU."""
    package = tmp_path / "vllm_package"
    if home is not None:
        (package / Path(*home)).parent.mkdir(parents=True)
        (package / Path(*home)).write_text("")
    sys.modules["vllm"].__path__ = [str(package)]  # type: ignore[attr-defined]
    platforms = types.ModuleType("vllm.platforms")
    platforms.current_platform = types.SimpleNamespace(  # type: ignore[attr-defined]
        is_cpu=lambda: cpu, is_cuda=lambda: cuda and not cpu, is_rocm=lambda: False, is_xpu=lambda: False,
        device_name="cuda" if cuda else "tpu", get_device_name=lambda: "NVIDIA T4",
        get_device_capability=lambda: types.SimpleNamespace(major=capability[0], minor=capability[1]))
    envs = types.ModuleType("vllm.envs")
    envs.__getattr__ = lambda name: os.environ.get(name, "0") == "1"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm.platforms", platforms)
    monkeypatch.setitem(sys.modules, "vllm.envs", envs)
    monkeypatch.setenv(vllm_invariance.BATCH_INVARIANT, "0")  # and as it was after the test


def test_deterministic_switches_the_batch_invariant_mode_on_before_the_llm_is_built(
        fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _machine(monkeypatch, tmp_path)
    plain = VLLMEngine(tmp_path)
    engine = VLLMEngine(tmp_path, deterministic=True)
    assert os.environ[vllm_invariance.BATCH_INVARIANT] == "1"
    assert engine.invariance == vllm_invariance.ON and invariance_of(engine).batch_invariant
    assert plain.invariance == vllm_invariance.OFF and not plain.invariance.batch_invariant
    assert "--deterministic" in plain.invariance.note and "--cache" in plain.invariance.note
    assert engine.fingerprint == plain.fingerprint + ":batch-invariant"  # other answers, other cache keys


@pytest.mark.parametrize(("machine", "why"), [
    ({"cpu": True}, "the installed vLLM is its CPU build, which has no batch-invariant mode"),
    ({"capability": (7, 5)}, "this GPU (NVIDIA T4) has compute capability 7.5; the batch-invariant mode of vLLM"),
    ({"capability": (8, 0), "home": ("model_executor", "layers", "batch_invariant.py")}, "needs 9.0 or higher"),
    ({"home": None}, "has no batch-invariant mode; newer versions have it"),
    ({"cuda": False}, "vLLM runs on tpu here; its batch-invariant mode needs an NVIDIA GPU"),
])
def test_where_the_mode_is_missing_the_error_comes_before_the_model_and_says_what_instead(
        fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, machine: dict[str, Any],
        why: str) -> None:
    _machine(monkeypatch, tmp_path, **machine)
    with pytest.raises(LocalevalError) as error:
        VLLMEngine(tmp_path, deterministic=True)
    assert fake_vllm.built == []  # no model was loaded
    message = str(error.value)
    assert message.startswith("--deterministic: ") and why in message
    assert "the transformers engine (`--engine transformers`)" in message and "`--cache FILE`" in message
    assert os.environ[vllm_invariance.BATCH_INVARIANT] == "0"


def test_the_mode_set_in_the_environment_is_what_the_engine_says(
        fake_vllm: types.ModuleType, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _machine(monkeypatch, tmp_path)
    monkeypatch.setenv(vllm_invariance.BATCH_INVARIANT, "1")
    assert VLLMEngine(tmp_path).invariance.batch_invariant
    _machine(monkeypatch, tmp_path / "cpu", cpu=True)
    monkeypatch.setenv(vllm_invariance.BATCH_INVARIANT, "1")  # the CPU build ignores it
    assert not VLLMEngine(tmp_path).invariance.batch_invariant


def test_the_transformers_engine_takes_deterministic_and_is_given_nothing(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    import localeval.engine.transformers as transformers

    seen: list[dict[str, Any]] = []
    monkeypatch.setattr(transformers, "TransformersEngine", lambda folder, **options: seen.append(options))
    build_engine(TransformersOptions(deterministic=True, batch_size=2), tmp_path)
    assert seen[0]["batch_size"] == 2 and "deterministic" not in seen[0]


def test_the_scripted_and_ray_engines_say_their_invariance() -> None:
    assert invariance_of(ScriptedEngine(rule_script)) == Invariance(True, "answers come from a script")
    on, off = Invariance(True, "a"), Invariance(False, "b")
    assert _together([on, on]) == on and _together([on, off]) == off


def test_a_call_whose_engine_process_is_gone_is_a_judge_died(fake_vllm: types.ModuleType, tmp_path: Path) -> None:
    class Dies(FakeLLM):
        def chat(self, *args: Any, **kwargs: Any) -> list[Any]:
            process.exitcode = -9
            raise RuntimeError("EngineCore encountered an issue")

    process = types.SimpleNamespace(name="EngineCore", pid=4242, exitcode=None)
    llm = Dies("structured_outputs")
    llm.llm_engine.engine_core = types.SimpleNamespace(resources=types.SimpleNamespace(
        engine_manager=types.SimpleNamespace(processes=[process])), outputs_queue=queue.Queue())
    engine = VLLMEngine(tmp_path, llm=llm)
    request = Request(messages=(("user", "{}"),), schema={"type": "object"}, max_tokens=8)
    with pytest.raises(JudgeDied, match=r"vLLM's engine process EngineCore \(pid 4242\) was killed by SIGKILL"):
        engine.generate([request])


def test_a_failed_call_leaves_no_request_behind_and_a_dead_process_wakes_the_call() -> None:
    aborted: list[tuple[list[str], bool]] = []
    engine = types.SimpleNamespace(output_processor=types.SimpleNamespace(request_states={"7-a": 1, "8-b": 2}),
                                   abort_request=lambda ids, internal=False: aborted.append((ids, internal)))
    vllm_process.abort_unfinished(types.SimpleNamespace(llm_engine=engine))
    assert aborted == [(["7-a", "8-b"], True)]
    process = types.SimpleNamespace(exitcode=None)
    outputs: queue.Queue[Any] = queue.Queue()
    llm = types.SimpleNamespace(llm_engine=types.SimpleNamespace(engine_core=types.SimpleNamespace(
        resources=types.SimpleNamespace(engine_manager=types.SimpleNamespace(processes=[process])),
        outputs_queue=outputs)))
    with vllm_process.watched(llm):
        process.exitcode = -9
        woken = outputs.get(timeout=10 * vllm_process.WATCH_SECONDS)  # what vLLM's call was waiting on
    assert isinstance(woken, RuntimeError)
    assert vllm_process.exit_text(-9) == "was killed by SIGKILL" and vllm_process.exit_text(3) == "exited with code 3"
